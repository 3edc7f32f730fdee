"""Checks of the series' two converted modules, fs/fuse and fs/btrfs, on
what the guest did to them, read by analysis/ on the host.

The guest's tests (tests/guest/80-fuse.sh, 85-btrfs.sh; the builtin-fs
configuration's tests/configs/builtin-fs.sh) only load, fail, unload and
check the state the kernel shows; each pair's init and exit, as the
initexit events (or, built in, initcall_debug's lines) recorded them, is
judged here from the capture scripts/run brought home (scenario.dat,
dmesg.txt), through analysis/loads.py.  Nothing here reads event text.

Each check returns a list of problems, empty when the kernel did what the
conversion promises; tests/boot/test_modcheck_selftest.py shows each one
failing on a broken capture.
"""

from __future__ import annotations

import os
import sys
from typing import Callable, NamedTuple, Optional, Sequence

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))

from analysis.loads import Call, ModuleLoad  # noqa: E402
from analysis.model import KernelNotice  # noqa: E402


class Step(NamedTuple):
    """One setup step of a converted module: its number (the priority's
    offset), its init and its exit."""

    n: int
    init: str
    exit: str


#: fs/fuse's steps in load order; FUSE_INIT_PRIO(step) =
#: INITCALL_PRIO_DEVICE + step (the band of its entry, fuse_init, which
#: stands where stock's module_init(fuse_init) stood), the same as a module.
FUSE_STEPS = (
    Step(0, "fuse_inode_cache_init", "fuse_inode_cache_exit"),
    Step(1, "fuseblk_init", "fuseblk_exit"),
    Step(2, "fuse_fs_init", "fuse_fs_exit"),
    Step(3, "fuse_req_cache_init", "fuse_req_cache_exit"),
    Step(4, "fuse_miscdev_init", "fuse_miscdev_exit"),
    Step(5, "fuse_sysfs_init", "fuse_sysfs_exit"),
    Step(6, "fuse_sysfs_conn_init", "fuse_sysfs_conn_exit"),
    Step(7, "fuse_ctl_init", "fuse_ctl_cleanup"),
)


def run_file(name: str, row: str, var: str = "INITEXIT_RUN_DIR", runner: str = "") -> str:
    """NAME in the output folder of the boot that ``var`` names (set by
    scripts/check-configs --only ROW, or by ``runner``, e.g. scripts/test);
    a clear failure without it."""
    import pytest  # only the tests that read a boot need it

    value = os.environ.get(var)
    if not value:
        pytest.fail(f"{var} is not set: {runner or f'scripts/check-configs --only {row}'} runs this")
    path = os.path.join(value, name)
    if not os.path.isfile(path):
        pytest.fail(f"{path} missing: the boot did not bring it home")
    return path


def fuse_prio(step: Step) -> int:
    return step.n


#: Built in, the initcall that runs fuse's steps (module_init_exit_entry(),
#: a device initcall: priority 0) and btrfs's (late_init_exit_entry(): 1000).
FUSE_ENTRY = ("fuse_init", 0)
BTRFS_ENTRY = ("init_btrfs_fs", 1000)


#: fs/btrfs's steps: enum btrfs_init_step (fs/btrfs/super.c), in the order
#: of stock's mod_init_seq[] (tests/boot/test_conversions.py checks that
#: against the stock source); an entry without an exit has
#: btrfs_nothing_to_undo; step 19, the sanity tests, exists only with
#: CONFIG_BTRFS_FS_RUN_SANITY_TESTS (not set here).
BTRFS_STEPS = (
    Step(0, "btrfs_props_init", "btrfs_nothing_to_undo"),
    Step(1, "btrfs_init_sysfs", "btrfs_exit_sysfs"),
    Step(2, "btrfs_init_compress", "btrfs_exit_compress"),
    Step(3, "btrfs_init_cachep", "btrfs_destroy_cachep"),
    Step(4, "btrfs_init_dio", "btrfs_destroy_dio"),
    Step(5, "btrfs_transaction_init", "btrfs_transaction_exit"),
    Step(6, "btrfs_ctree_init", "btrfs_ctree_exit"),
    Step(7, "btrfs_free_space_init", "btrfs_free_space_exit"),
    Step(8, "extent_state_init_cachep", "extent_state_free_cachep"),
    Step(9, "extent_buffer_init_cachep", "extent_buffer_free_cachep"),
    Step(10, "btrfs_bioset_init", "btrfs_bioset_exit"),
    Step(11, "extent_map_init", "extent_map_exit"),
    Step(12, "ordered_data_init", "ordered_data_exit"),
    Step(13, "btrfs_delayed_inode_init", "btrfs_delayed_inode_exit"),
    Step(14, "btrfs_auto_defrag_init", "btrfs_auto_defrag_exit"),
    Step(15, "btrfs_delayed_ref_init", "btrfs_delayed_ref_exit"),
    Step(16, "btrfs_prelim_ref_init", "btrfs_prelim_ref_exit"),
    Step(17, "btrfs_interface_init", "btrfs_interface_exit"),
    Step(18, "btrfs_print_mod_info", "btrfs_nothing_to_undo"),
    Step(20, "register_btrfs", "unregister_btrfs"),
)


def btrfs_prio(step: Step) -> int:
    """BTRFS_INIT_PRIO(step) = INITCALL_PRIO_LATE + step: the band of its
    entry, init_btrfs_fs, which stands where stock's
    late_initcall(init_btrfs_fs) stood."""
    return 1000 + step.n


EBUSY, EPERM = 16, 1


class Want(NamedTuple):
    """What one load must show: every step up to ``fail_at`` (None: all,
    and the load succeeds) called in order, the failing one returning
    ``-error``; then the unwind's exits, or (``unloaded``) the unload's,
    in exact reverse."""

    what: str
    fail_at: Optional[str] = None
    error: int = 0
    unloaded: bool = True


def expected(steps: Sequence[Step], prio: Callable[[Step], int], want: Want) -> ModuleLoad:
    """The load ``want`` describes, as analysis.loads.module_loads() gives it."""
    n = len(steps) if want.fail_at is None else [s.init for s in steps].index(want.fail_at) + 1
    inits = tuple(Call(i, prio(s), s.init, -want.error if i == n - 1 and want.fail_at else 0)
                  for i, s in enumerate(steps[:n]))
    before = tuple(s.exit for s in reversed(steps[:n - 1]))
    if want.fail_at is None:
        return ModuleLoad("", 0, inits, tuple(s.exit for s in reversed(steps)) if want.unloaded else (), ())
    return ModuleLoad("", 0, inits, (), before)


def _show(calls: Sequence[Call]) -> str:
    return " ".join(f"{c.idx}:{c.func}@{c.prio}={c.ret}" for c in calls) or "none"


def check_loads(module: str, loads: Sequence[ModuleLoad], steps: Sequence[Step],
                prio: Callable[[Step], int], wants: Sequence[Want]) -> list[str]:
    """The capture's loads of ``module``, one per ``wants`` entry in that
    order: each with one pair per step in order (index, priority, function,
    return), and the unload's or unwind's exits in exact reverse."""
    problems = []
    if len(loads) != len(wants):
        problems.append(f"{module}: {len(loads)} load(s) in the capture, the guest's test makes {len(wants)} "
                        f"({', '.join(w.what for w in wants)})")
    for k, (got, want) in enumerate(zip(loads, wants)):
        exp = expected(steps, prio, want)
        where = f"{module} load #{k + 1} ({want.what})"
        if got.inits != exp.inits:
            problems.append(f"{where}: pair inits {_show(got.inits)}; want {_show(exp.inits)}")
        if got.unload != exp.unload:
            problems.append(f"{where}: unload exits {' '.join(got.unload) or 'none'}; "
                            f"want {' '.join(exp.unload) or 'none'}")
        if got.unwind != exp.unwind:
            problems.append(f"{where}: unwind exits {' '.join(got.unwind) or 'none'}; "
                            f"want {' '.join(exp.unwind) or 'none'}")
    return problems


#: tests/guest/80-fuse.sh's loads of fuse, in order: a load and unload,
#: then for each file system name initexit_fs_squat holds (fuseblk, fuse,
#: fusectl) a load that fails with EBUSY at the step registering it and a
#: load and unload once the name is free again.
FUSE_TEST_LOADS = (
    Want("load, unload"),
    Want("fuseblk taken", "fuseblk_init", EBUSY), Want("fuseblk free again"),
    Want("fuse taken", "fuse_fs_init", EBUSY), Want("fuse free again"),
    Want("fusectl taken", "fuse_ctl_init", EBUSY), Want("fusectl free again"),
)

#: tests/guest/85-btrfs.sh's load and unload of btrfs.
BTRFS_TEST_LOADS = (Want("load, unload"),)

#: tests/guest/85-btrfs.sh booted with initcall_blacklist=register_btrfs:
#: two loads, each failing at the last step with EPERM, every step before
#: it set up again by the second (nothing of the first was left behind).
BTRFS_BLACKLISTED_LOADS = (
    Want("register_btrfs blacklisted", "register_btrfs", EPERM),
    Want("register_btrfs blacklisted, again", "register_btrfs", EPERM),
)


def check_fuse_test(loads: Sequence[ModuleLoad]) -> list[str]:
    return check_loads("fuse", loads, FUSE_STEPS, fuse_prio, FUSE_TEST_LOADS)


def check_btrfs_test(loads: Sequence[ModuleLoad]) -> list[str]:
    return check_loads("btrfs", loads, BTRFS_STEPS, btrfs_prio, BTRFS_TEST_LOADS)


def check_btrfs_blacklisted(loads: Sequence[ModuleLoad]) -> list[str]:
    return check_loads("btrfs", loads, BTRFS_STEPS, btrfs_prio, BTRFS_BLACKLISTED_LOADS)


#: lib/test_initexit_modules/test_initexit_mod_fail.c (the series' test
#: module): eight pairs f0..f7 at priorities -30..40, f3 its
#: module_init()/module_exit() at 0; fail_at=K fails fK with -(200 + K).
MOD_FAIL_STEPS = tuple(Step(n, f"f{n}_init", f"f{n}_exit") for n in range(8))


def mod_fail_prio(step: Step) -> int:
    return 10 * (step.n - 3)


#: tests/configs/unload-off.sh (CONFIG_MODULE_UNLOAD=n): a load with
#: fail_at=5 unwinds f4..f0, module_exit()'s f3 included, then a load
#: that succeeds and stays (no unload in this configuration).
UNLOAD_OFF_LOADS = (
    Want("fail_at=5", "f5_init", 205),
    Want("a good load, never unloaded", unloaded=False),
)


def check_unload_off(loads: Sequence[ModuleLoad]) -> list[str]:
    return check_loads("test_initexit_mod_fail", loads, MOD_FAIL_STEPS, mod_fail_prio, UNLOAD_OFF_LOADS)


def check_builtin(modname: str, calls: Sequence[Call], steps: Sequence[Step],
                  prio: Callable[[Step], int], entry: tuple[str, int]) -> list[str]:
    """Built in: the object's entry (name, priority) called once at boot,
    then inside it each step (initcall_debug's lines of KBUILD_MODNAME
    ``modname``, in the order they started), in order, at its priority,
    each returning 0."""
    got = [(c.func, c.prio, c.ret) for c in calls]
    want = [(entry[0], entry[1], 0)] + [(s.init, prio(s), 0) for s in steps]
    if got == want:
        return []
    return [f"built-in {modname}: calls {' '.join(f'{f}@{p}={r}' for f, p, r in got) or 'none'}; "
            f"want {' '.join(f'{f}@{p}={r}' for f, p, r in want)}"]


def check_boot_object(name: str, got: ModuleLoad, steps: Sequence[Step], prio: Callable[[Step], int],
                      want: Want) -> list[str]:
    """Built in, from the boot trace (analysis.loads.boot_object): the
    object's pair inits as ``want`` says (each step up to ``fail_at`` in
    order at its priority, the failing one returning ``-error``), then its
    failure's unwind: the exits of the steps before it, at once and in
    exact reverse; no exit otherwise. The index is not compared: at boot
    it counts the pairs of every object linked before."""
    exp = expected(steps, prio, want)
    problems = []
    strip = [(c.prio, c.func, c.ret) for c in got.inits]
    want_inits = [(c.prio, c.func, c.ret) for c in exp.inits]
    if strip != want_inits:
        problems.append(f"built-in {name} ({want.what}): pair inits "
                        f"{' '.join(f'{f}@{p}={r}' for p, f, r in strip) or 'none'}; "
                        f"want {' '.join(f'{f}@{p}={r}' for p, f, r in want_inits)}")
    if got.unwind != exp.unwind:
        problems.append(f"built-in {name} ({want.what}): unwind exits {' '.join(got.unwind) or 'none'}; "
                        f"want {' '.join(exp.unwind) or 'none'}")
    if got.unload:
        problems.append(f"built-in {name} ({want.what}): exits outside an unwind: {' '.join(got.unload)}")
    return problems


def check_builtin_failed(modname: str, origin: str, calls: Sequence[Call], notices: Sequence[KernelNotice],
                         steps: Sequence[Step], prio: Callable[[Step], int], entry: tuple[str, int],
                         fail_at: str, error: int) -> list[str]:
    """Built in, from a kernel log alone (no trace: the cross boots): the
    step ``fail_at`` failed with ``-error`` at boot. initcall_debug's lines
    show the entry returning ``-error`` and each step before it called in
    order at its priority, returning 0 (a blacklisted step has no line);
    the series' messages say the step failed, ``unwinding`` its object,
    and skip every later step."""
    n = [s.init for s in steps].index(fail_at)
    problems = []
    got = [(c.func, c.prio, c.ret) for c in calls]
    want = [(entry[0], entry[1], -error)] + [(s.init, prio(s), 0) for s in steps[:n]]
    if fail_at in [c.func for c in calls]:
        want.append((fail_at, prio(steps[n]), -error))
    if got != want:
        problems.append(f"built-in {modname}, {fail_at} failing: calls "
                        f"{' '.join(f'{f}@{p}={r}' for f, p, r in got) or 'none'}; "
                        f"want {' '.join(f'{f}@{p}={r}' for f, p, r in want)}")
    mine = [x for x in notices if x.origin == origin]
    failed = [(x.func, x.value, x.why) for x in mine if x.kind == "failed"]
    if failed != [(fail_at, -error, "unwinding")]:
        problems.append(f"built-in {modname}: the kernel's failure messages {failed}; "
                        f"want [({fail_at!r}, {-error}, 'unwinding')]")
    skipped = [x.func for x in mine if x.kind == "skipped"]
    if skipped != [s.init for s in steps[n + 1:]]:
        problems.append(f"built-in {modname}: skipped {skipped}; want {[s.init for s in steps[n + 1:]]}")
    return problems


def check_no_failure(notices: Sequence[KernelNotice], names: Sequence[str]) -> list[str]:
    """No built-in pair of an object whose origin contains one of ``names``
    failed, was skipped, blacklisted or unwound (the series' ``initexit:``
    messages, as analysis/parse.py reads them)."""
    return [f"the kernel said: {n.text}" for n in notices
            if n.kind not in ("ordered", "run-init") and any(x in n.origin for x in names)]

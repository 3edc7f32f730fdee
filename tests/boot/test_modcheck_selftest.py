"""Each check of tests/boot/modcheck.py must fail on a wrong capture.

The fixtures are real scenario traces (tests/boot/fixtures/README.md):
modules-scenario.report.txt is the guest-tests boot's, from its first load
of fuse to btrfs's module_free (tests/guest/80-fuse.sh and 85-btrfs.sh);
blacklist-scenario.report.txt is the blacklist boot's whole scenario
(85-btrfs.sh with initcall_blacklist=register_btrfs).  Each test first
shows the check passes on the real capture, then breaks the capture the
way a wrong kernel would and shows the check catches it.  The built-in
case (the builtin-fs configuration's dmesg) is a kernel log written in the
series' initcall_debug format, the lines as the patched boot prints them
(fixtures/patched-dmesg.txt).
"""

from __future__ import annotations

import pathlib
import re
from typing import Callable

import pytest

import modcheck  # first: it puts the repository root on sys.path for analysis/
from analysis.build import build_capture  # noqa: E402
from analysis.loads import ModuleLoad, boot_calls, boot_object, module_loads  # noqa: E402
from analysis.parse import parse_dmesg, parse_trace_report  # noqa: E402

FIX = pathlib.Path(__file__).resolve().parent / "fixtures"
MODULES = (FIX / "modules-scenario.report.txt").read_text()
BLACKLIST = (FIX / "blacklist-scenario.report.txt").read_text()


def loads(report: str, module: str) -> list[ModuleLoad]:
    return module_loads(build_capture(parse_trace_report(report, "scenario.report.txt")), module)


def drop(report: str, pattern: str, count: int = 0) -> str:
    """The report without the lines matching ``pattern`` (the first
    ``count`` of them; 0: all)."""
    out, n = [], 0
    for line in report.splitlines(keepends=True):
        if re.search(pattern, line) and (count == 0 or n < count):
            n += 1
            continue
        out.append(line)
    assert n, pattern
    return "".join(out)


def sub(report: str, old: str, new: str, count: int = 0) -> str:
    assert old in report, old
    return report.replace(old, new, count or -1)


def last_load_dropped(report: str, module: str) -> str:
    """The report without its last load of ``module`` (module_load to
    module_free, by the loading task's lines)."""
    lines = report.splitlines(keepends=True)
    start = max(i for i, line in enumerate(lines) if re.search(rf"module_load: +{module} ", line))
    end = next(i for i in range(start, len(lines)) if re.search(rf"module_free: +{module}$", lines[i].rstrip()))
    return "".join(lines[:start] + lines[end + 1:])


def test_fuse_passes_on_the_real_capture() -> None:
    assert modcheck.check_fuse_test(loads(MODULES, "fuse")) == []


FUSE_BROKEN: dict[str, Callable[[str], str]] = {
    # The unload runs fuse_miscdev_exit before fuse_sysfs_exit.
    "unload-order": lambda r: sub(sub(sub(r, "func=fuse_sysfs_exit reason=unload", "func=TMP reason=unload", 2),
                                      "func=fuse_miscdev_exit reason=unload", "func=fuse_sysfs_exit reason=unload", 2),
                                  "func=TMP reason=unload", "func=fuse_miscdev_exit reason=unload", 2),
    # The failure at fuse_fs_init unwinds fuseblk_exit only.
    "unwind-drops-an-exit": lambda r: drop(r, r"origin=fuse .*func=fuse_inode_cache_exit (failed_idx=2|reason=unwind)"),
    # A step at the wrong priority.
    "wrong-prio": lambda r: sub(r, "idx=3 prio=3 func=fuse_req_cache_init", "idx=3 prio=4 func=fuse_req_cache_init", 2),
    # The squatted name makes the step fail with another error.
    "wrong-error": lambda r: sub(r, "func=fuse_fs_init ret=-16", "func=fuse_fs_init ret=-12"),
    # A load the guest made is not in the capture.
    "load-missing": lambda r: last_load_dropped(r, "fuse"),
    # The unload runs no exit for the last step.
    "unload-skips-the-last-step": lambda r: drop(r, r"origin=fuse .*func=fuse_ctl_cleanup reason=unload", 2),
}


@pytest.mark.parametrize("case", sorted(FUSE_BROKEN))
def test_fuse_fails_on_a_broken_capture(case: str) -> None:
    assert modcheck.check_fuse_test(loads(FUSE_BROKEN[case](MODULES), "fuse")) != []


def test_btrfs_passes_on_the_real_capture() -> None:
    assert modcheck.check_btrfs_test(loads(MODULES, "btrfs")) == []


BTRFS_BROKEN: dict[str, Callable[[str], str]] = {
    # Two steps in the other order (their names swapped on every line).
    "init-order": lambda r: sub(sub(sub(r, "func=btrfs_init_dio ", "func=TMP "), "func=btrfs_init_cachep ",
                                    "func=btrfs_init_dio "), "func=TMP ", "func=btrfs_init_cachep "),
    # One step fewer.
    "step-missing": lambda r: drop(r, r"origin=btrfs .*func=btrfs_auto_defrag_init "),
    # The unload skips one exit.
    "unload-drops-an-exit": lambda r: drop(r, r"origin=btrfs .*func=extent_map_exit reason=unload"),
    # A step returns an error the load ignores.
    "ret": lambda r: sub(r, "func=btrfs_print_mod_info ret=0", "func=btrfs_print_mod_info ret=-5"),
}


@pytest.mark.parametrize("case", sorted(BTRFS_BROKEN))
def test_btrfs_fails_on_a_broken_capture(case: str) -> None:
    assert modcheck.check_btrfs_test(loads(BTRFS_BROKEN[case](MODULES), "btrfs")) != []


def test_btrfs_blacklisted_passes_on_the_real_capture() -> None:
    assert modcheck.check_btrfs_blacklisted(loads(BLACKLIST, "btrfs")) == []
    # ... and the unblacklisted expectation does not hold there.
    assert modcheck.check_btrfs_test(loads(BLACKLIST, "btrfs")) != []


BLACKLIST_BROKEN: dict[str, Callable[[str], str]] = {
    # The second load's unwind leaves btrfs_exit_sysfs out.
    "second-unwind-drops-an-exit":
        lambda r: drop(r, r"modload-1184 .*origin=btrfs .*func=btrfs_exit_sysfs (failed_idx=19|reason=unwind)"),
    # The blacklisted step fails with another error.
    "wrong-error": lambda r: sub(r, "func=register_btrfs ret=-1 ", "func=register_btrfs ret=-22 ", 1),
    # The unwind runs forward.
    "unwind-forward": lambda r: sub(sub(sub(r, "func=btrfs_exit_compress reason=unwind", "func=TMP reason=unwind"),
                                        "func=btrfs_destroy_cachep reason=unwind",
                                        "func=btrfs_exit_compress reason=unwind"),
                                    "func=TMP reason=unwind", "func=btrfs_destroy_cachep reason=unwind"),
    # Only one of the two loads.
    "load-missing": lambda r: last_load_dropped(r, "btrfs"),
}


@pytest.mark.parametrize("case", sorted(BLACKLIST_BROKEN))
def test_btrfs_blacklisted_fails_on_a_broken_capture(case: str) -> None:
    assert modcheck.check_btrfs_blacklisted(loads(BLACKLIST_BROKEN[case](BLACKLIST), "btrfs")) != []


# -- unload off (scripts/check-configs' unload-off configuration) ---------------

UNLOAD_OFF = (FIX / "unload-off-scenario.report.txt").read_text()


def test_unload_off_passes_on_the_real_loads() -> None:
    assert modcheck.check_unload_off(loads(UNLOAD_OFF, "test_initexit_mod_fail")) == []


UNLOAD_OFF_BROKEN: dict[str, Callable[[str], str]] = {
    # The unwind leaves module_exit() out (the loader dropped it with
    # CONFIG_MODULE_UNLOAD=n).
    "module-exit-not-unwound": lambda r: drop(r, r"func=f3_exit (failed_idx=5|reason=unwind)"),
    # The unwind runs forward.
    "unwind-forward": lambda r: sub(sub(sub(r, "func=f4_exit reason=unwind", "func=TMP reason=unwind"),
                                        "func=f0_exit reason=unwind", "func=f4_exit reason=unwind"),
                                    "func=TMP reason=unwind", "func=f0_exit reason=unwind"),
    # The failure stops nothing: f6 runs after f5 failed.
    "init-after-failure": lambda r: sub(r, "func=f5_init ret=-205 ", "func=f5_init ret=0 ", 1),
}


@pytest.mark.parametrize("case", sorted(UNLOAD_OFF_BROKEN))
def test_unload_off_fails_on_broken_loads(case: str) -> None:
    assert modcheck.check_unload_off(loads(UNLOAD_OFF_BROKEN[case](UNLOAD_OFF), "test_initexit_mod_fail")) != []


# -- built in (scripts/check-configs' builtin-fs configuration) ----------------

def builtin_dmesg(calls: list[tuple[str, str, int, int]]) -> str:
    """A boot log with the series' initcall_debug lines for (modname, func,
    prio, ret), as fixtures/patched-dmesg.txt has them, after a real boot's
    head."""
    head = (FIX / "patched-dmesg.txt").read_text(errors="replace").splitlines(keepends=True)[:40]
    out, t = list(head), 5.0
    for mod, func, prio, ret in calls:
        out.append(f"[{t:12.6f}] calling  {func}+0x0/0x40 @ 1 prio={prio} modname={mod}\n")
        out.append(f"[{t + 0.0001:12.6f}] initcall {func}+0x0/0x40 returned {ret} after 37 usecs prio={prio} modname={mod}\n")
        t += 0.001
    return "".join(out)


def good_builtin() -> list[tuple[str, str, int, int]]:
    return ([("fuse", *modcheck.FUSE_ENTRY, 0)]
            + [("fuse", s.init, modcheck.fuse_prio(s), 0) for s in modcheck.FUSE_STEPS]
            + [("btrfs", *modcheck.BTRFS_ENTRY, 0)]
            + [("btrfs", s.init, modcheck.btrfs_prio(s), 0) for s in modcheck.BTRFS_STEPS])


def builtin_problems(dmesg: str) -> list[str]:
    cap = build_capture(parse_dmesg(dmesg, "dmesg.txt"))
    return (modcheck.check_builtin("fuse", boot_calls(cap, "fuse"), modcheck.FUSE_STEPS, modcheck.fuse_prio,
                                   modcheck.FUSE_ENTRY)
            + modcheck.check_builtin("btrfs", boot_calls(cap, "btrfs"), modcheck.BTRFS_STEPS, modcheck.btrfs_prio,
                                     modcheck.BTRFS_ENTRY)
            + modcheck.check_no_failure(cap.parsed.notices, ("fuse", "btrfs")))


def test_builtin_passes_on_the_boot_log() -> None:
    assert builtin_problems(builtin_dmesg(good_builtin())) == []


def _swap(calls: list[tuple[str, str, int, int]], a: int, b: int) -> list[tuple[str, str, int, int]]:
    calls = list(calls)
    calls[a], calls[b] = calls[b], calls[a]
    return calls


BUILTIN_BROKEN: dict[str, Callable[[], str]] = {
    "order": lambda: builtin_dmesg(_swap(good_builtin(), 2, 3)),
    "twice": lambda: builtin_dmesg(good_builtin() + [good_builtin()[0]]),
    "missing": lambda: builtin_dmesg(good_builtin()[:-1]),
    "prio": lambda: builtin_dmesg([(m, f, p + (f == "btrfs_init_dio"), r) for m, f, p, r in good_builtin()]),
    "ret": lambda: builtin_dmesg([(m, f, p, -12 if f == "fuse_ctl_init" else r) for m, f, p, r in good_builtin()]),
    "never-returned": lambda: drop(builtin_dmesg(good_builtin()), r"initcall fuse_sysfs_init\+"),
    "unwound": lambda: builtin_dmesg(good_builtin()) + (
        "[    6.000000] initexit: fs/btrfs/btrfs: btrfs_init_sysfs (prio 1002) failed with -12, "
        "unwinding fs/btrfs/btrfs\n"),
}


@pytest.mark.parametrize("case", sorted(BUILTIN_BROKEN))
def test_builtin_fails_on_a_broken_boot_log(case: str) -> None:
    assert builtin_problems(BUILTIN_BROKEN[case]()) != []


# -- built in, a middle step failed at boot (scripts/test's builtin-unwind) ----
# fixtures/builtin-unwind-*: initcall_blacklist=fuse_miscdev_init,btrfs_bioset_init.

UNWIND_REPORT = (FIX / "builtin-unwind-boot.report.txt").read_text()
UNWIND_DMESG = (FIX / "builtin-unwind-dmesg.txt").read_text(errors="replace")
UNWIND_WANT = {"fuse": ("fs/fuse/fuse", modcheck.FUSE_STEPS, modcheck.fuse_prio, modcheck.FUSE_ENTRY,
                        "fuse_miscdev_init"),
               "btrfs": ("fs/btrfs/btrfs", modcheck.BTRFS_STEPS, modcheck.btrfs_prio, modcheck.BTRFS_ENTRY,
                         "btrfs_bioset_init")}


def unwind_trace_problems(report: str) -> list[str]:
    cap = build_capture(parse_trace_report(report, "boot.report.txt"))
    out = []
    for name, (origin, steps, prio, _, fail_at) in UNWIND_WANT.items():
        out += modcheck.check_boot_object(name, boot_object(cap, origin), steps, prio,
                                          modcheck.Want(f"{fail_at} fails", fail_at, 1))
    return out


def unwind_log_problems(dmesg: str) -> list[str]:
    cap = build_capture(parse_dmesg(dmesg, "dmesg.txt"))
    out = []
    for name, (origin, steps, prio, entry, fail_at) in UNWIND_WANT.items():
        out += modcheck.check_builtin_failed(name, origin, boot_calls(cap, name), cap.parsed.notices,
                                             steps, prio, entry, fail_at, 1)
    return out


def test_builtin_unwind_passes_on_the_boot_trace_and_log() -> None:
    assert unwind_trace_problems(UNWIND_REPORT) == []
    assert unwind_log_problems(UNWIND_DMESG) == []


UNWIND_TRACE_BROKEN: dict[str, Callable[[str], str]] = {
    # The v1 boot path on an architecture without RUNTIME_DISCARD_EXIT: no exit runs.
    "no unwind": lambda r: drop(r, r"initexit_(unwind|exit_start|exit_finish): .*origin=fs/fuse/fuse"),
    "first exit lost": lambda r: drop(r, r"func=fuse_inode_cache_exit"),
    "the failing step returns 0": lambda r: sub(r, "func=btrfs_bioset_init ret=-1", "func=btrfs_bioset_init ret=0"),
    "unwind forward": lambda r: sub(sub(sub(r, "func=fuse_req_cache_exit", "func=TMP"),
                                        "func=fuse_inode_cache_exit", "func=fuse_req_cache_exit"),
                                    "func=TMP", "func=fuse_inode_cache_exit"),
}


@pytest.mark.parametrize("case", sorted(UNWIND_TRACE_BROKEN))
def test_builtin_unwind_fails_on_a_broken_boot_trace(case: str) -> None:
    assert unwind_trace_problems(UNWIND_TRACE_BROKEN[case](UNWIND_REPORT)) != []


UNWIND_LOG_BROKEN: dict[str, Callable[[str], str]] = {
    "entry returns 0": lambda d: sub(d, "fuse_init+0x0/0x10 returned -1", "fuse_init+0x0/0x10 returned 0"),
    "not unwinding": lambda d: sub(d, ", unwinding fs/btrfs/btrfs", ", nothing to unwind"),
    "later step not skipped": lambda d: drop(d, r"skipping fuse_ctl_init "),
    "a step's line lost": lambda d: drop(d, r"calling  fuseblk_init\+"),
}


@pytest.mark.parametrize("case", sorted(UNWIND_LOG_BROKEN))
def test_builtin_unwind_fails_on_a_broken_boot_log(case: str) -> None:
    assert unwind_log_problems(UNWIND_LOG_BROKEN[case](UNWIND_DMESG)) != []

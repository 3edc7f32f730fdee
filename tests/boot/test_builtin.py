"""fs/fuse and fs/btrfs built in (kconfig/variants/builtin-fs.config), on
the captures of scripts/test's builtin rows (tests/plan.tsv): issue 34's
points 2, 3 and 5 on x86_64.

  INITEXIT_BUILTIN_RUN_DIR            the patched kernel, a clean boot
  INITEXIT_BUILTIN_UNWIND_RUN_DIR     the same, initcall_blacklist=
                                      fuse_miscdev_init,btrfs_bioset_init:
                                      a middle step of each fails (-EPERM)
  INITEXIT_BUILTIN_BLACKLIST_RUN_DIR  the same, initcall_blacklist=
                                      fuse_init,init_btrfs_fs: stock's entry
                                      names, which must stop each whole
  INITEXIT_STOCK_BUILTIN_RUN_DIR      stock 6.12 with the same configuration

Every call is read from the captures through analysis/ (the boot trace's
initexit events, initcall_debug's lines); what the kernel lists after the
boot (file systems, misc devices, /sys/fs, slab caches) is the guest's
builtin-fs-state.txt (tests/configs/builtin-fs.sh).  A missing variable
or folder is a failure, not a skip: scripts/test always sets them.
"""

from __future__ import annotations

import pathlib

import initcall_debug
import modcheck
from analysis.load import load_capture
from analysis.loads import boot_calls, boot_object
from analysis.model import Capture

FUSE, BTRFS = "fs/fuse/fuse", "fs/btrfs/btrfs"
#: The middle steps the unwind row fails (tests/plan.tsv's builtin-unwind).
FUSE_FAIL, BTRFS_FAIL = "fuse_miscdev_init", "btrfs_bioset_init"
EPERM = 1

#: The converted objects' entries and their steps, for the order test.
CONVERTED = {
    modcheck.FUSE_ENTRY[0]: [s.init for s in modcheck.FUSE_STEPS],
    modcheck.BTRFS_ENTRY[0]: [s.init for s in modcheck.BTRFS_STEPS],
}

#: What the clean boot lists and a boot with both entries blacklisted does
#: not: each step's registration that the guest can see by name.
REGISTERED = {
    "filesystem fuse", "filesystem fuseblk", "filesystem fusectl", "filesystem btrfs",
    "misc fuse", "misc btrfs-control", "sysfs fuse", "sysfs btrfs",
    "slab fuse_inode", "slab fuse_request", "slab btrfs_inode", "slab btrfs_trans_handle",
    "slab btrfs_extent_buffer", "slab btrfs_extent_state", "slab btrfs_free_space",
    "dev fuse", "dev btrfs-control",
}


def run_path(var: str, name: str) -> pathlib.Path:
    return pathlib.Path(modcheck.run_file(name, "", var, "scripts/test (tests/plan.tsv's builtin rows)"))


def trace(var: str) -> Capture:
    return load_capture(str(run_path(var, "boot.report.txt")))


def dmesg(var: str) -> str:
    return run_path(var, "dmesg.txt").read_text(errors="replace")


def state(var: str) -> set[str]:
    return set(run_path(var, "guest/builtin-fs-state.txt").read_text().split("\n")) - {""}


def test_builtin_steps_run_once_each_in_order_inside_the_entry() -> None:
    cap = trace("INITEXIT_BUILTIN_RUN_DIR")
    want = modcheck.Want("a clean boot", unloaded=False)
    assert modcheck.check_boot_object("fuse", boot_object(cap, FUSE), modcheck.FUSE_STEPS,
                                      modcheck.fuse_prio, want) == []
    assert modcheck.check_boot_object("btrfs", boot_object(cap, BTRFS), modcheck.BTRFS_STEPS,
                                      modcheck.btrfs_prio, want) == []


def test_converting_keeps_stocks_boot_order() -> None:
    # Issue 34 point 2: the patched kernel's initcall_debug calls equal
    # stock's, but for the converted objects' own lines, which stand
    # where stock's fuse_init and init_btrfs_fs stood.
    assert initcall_debug.check_converted_keep_order(
        dmesg("INITEXIT_STOCK_BUILTIN_RUN_DIR"), dmesg("INITEXIT_BUILTIN_RUN_DIR"), CONVERTED) == []


def test_failed_middle_step_unwinds_the_objects_earlier_steps() -> None:
    # Issue 34 point 5: fuse_miscdev_init and btrfs_bioset_init fail with
    # -EPERM (initcall_blacklist=); each object's earlier steps unwind at
    # once, in reverse; its later steps never run.
    cap = trace("INITEXIT_BUILTIN_UNWIND_RUN_DIR")
    assert modcheck.check_boot_object("fuse", boot_object(cap, FUSE), modcheck.FUSE_STEPS, modcheck.fuse_prio,
                                      modcheck.Want(f"{FUSE_FAIL} fails", FUSE_FAIL, EPERM)) == []
    assert modcheck.check_boot_object("btrfs", boot_object(cap, BTRFS), modcheck.BTRFS_STEPS, modcheck.btrfs_prio,
                                      modcheck.Want(f"{BTRFS_FAIL} fails", BTRFS_FAIL, EPERM)) == []


def test_failed_entry_returns_the_steps_error() -> None:
    # The entries' own initcall_debug lines: each returns the failing
    # step's -EPERM, as stock's ladder returned its error.
    cap = load_capture(str(run_path("INITEXIT_BUILTIN_UNWIND_RUN_DIR", "dmesg.txt")))
    for obj, entry in (("fuse", modcheck.FUSE_ENTRY[0]), ("btrfs", modcheck.BTRFS_ENTRY[0])):
        got = [(c.func, c.ret) for c in boot_calls(cap, obj) if c.func == entry]
        assert got == [(entry, -EPERM)], f"{obj}: its entry's calls {got}"


def test_unwound_boot_leaves_what_a_blacklisted_boot_leaves() -> None:
    # Nothing of fuse or btrfs is left by the unwind: the kernel lists the
    # same names as after a boot in which neither ran at all.
    unwound = state("INITEXIT_BUILTIN_UNWIND_RUN_DIR")
    never = state("INITEXIT_BUILTIN_BLACKLIST_RUN_DIR")
    assert unwound == never, (f"left by the unwind: {sorted(unwound - never)}; "
                              f"missing after it: {sorted(never - unwound)}")


def test_clean_boot_lists_what_the_steps_register() -> None:
    # The names the comparison above looks at: a clean boot lists each,
    # a boot with both entries blacklisted none of them.
    clean = state("INITEXIT_BUILTIN_RUN_DIR")
    never = state("INITEXIT_BUILTIN_BLACKLIST_RUN_DIR")
    assert REGISTERED <= clean, f"not in the clean boot's state: {sorted(REGISTERED - clean)}"
    assert not REGISTERED & never, f"there with both entries blacklisted: {sorted(REGISTERED & never)}"


def test_stocks_entry_names_in_initcall_blacklist_stop_the_objects() -> None:
    # Issue 34 point 3: initcall_blacklist=fuse_init,init_btrfs_fs, as a
    # stock boot line names them, still stops fuse and btrfs whole: no
    # step, no entry call.
    cap = trace("INITEXIT_BUILTIN_BLACKLIST_RUN_DIR")
    for origin in (FUSE, BTRFS):
        assert boot_object(cap, origin).inits == (), f"{origin}'s pairs ran"
    log = load_capture(str(run_path("INITEXIT_BUILTIN_BLACKLIST_RUN_DIR", "dmesg.txt")))
    assert boot_calls(log, "fuse") == [] and boot_calls(log, "btrfs") == []

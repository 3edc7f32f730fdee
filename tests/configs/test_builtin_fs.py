"""fs/fuse and fs/btrfs built in (scripts/check-configs' builtin-fs
configuration): their pairs in the boot path, from the boot's
initcall_debug lines (dmesg.txt, brought home by scripts/run) read through
analysis/ (analysis/loads.py), against tests/boot/modcheck.py's steps.

scripts/test's builtin row and scripts/check-configs' builtin-fs boot run
this with INITEXIT_RUN_DIR set to the boot's output folder (a missing
variable or file is a failure); tests/boot/test_modcheck_selftest.py shows
the same checks failing on broken boot logs in every scripts/test.
"""

from __future__ import annotations

import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "boot"))
import modcheck  # noqa: E402  (puts the repository root on sys.path for analysis/)
from analysis.load import load_capture  # noqa: E402
from analysis.loads import boot_calls  # noqa: E402
from analysis.model import Capture  # noqa: E402


def boot_log() -> Capture:
    return load_capture(modcheck.run_file("dmesg.txt", "builtin-fs"))


def test_builtin_fuse_steps_called_once_in_order_at_their_priority() -> None:
    # Its entry fuse_init (a device initcall, where stock's
    # module_init(fuse_init) stood), then FUSE_INIT_PRIO(step) =
    # INITCALL_PRIO_DEVICE + step inside it.
    cap = boot_log()
    assert modcheck.check_builtin("fuse", boot_calls(cap, "fuse"), modcheck.FUSE_STEPS, modcheck.fuse_prio,
                                  modcheck.FUSE_ENTRY) == []


def test_builtin_btrfs_steps_called_once_in_order_at_their_priority() -> None:
    # Its entry init_btrfs_fs (a late initcall, where stock's
    # late_initcall(init_btrfs_fs) stood), then BTRFS_INIT_PRIO(step) =
    # INITCALL_PRIO_LATE + step inside it.
    cap = boot_log()
    assert modcheck.check_builtin("btrfs", boot_calls(cap, "btrfs"), modcheck.BTRFS_STEPS, modcheck.btrfs_prio,
                                  modcheck.BTRFS_ENTRY) == []


def test_builtin_fuse_and_btrfs_neither_fail_nor_unwind() -> None:
    assert modcheck.check_no_failure(boot_log().parsed.notices, ("fuse", "btrfs")) == []

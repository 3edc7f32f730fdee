"""fs/fuse built in on arm64 and 32-bit arm (scripts/check-configs'
arm64-builtin-fs and arm-builtin-fs): their consoles, the kernel log with
initcall_debug's lines and the init's KTAP (tests/configs/cross-init.c),
read through analysis/ (no trace on these boots).

scripts/check-configs runs this on each of the two boots with
INITEXIT_RUN_DIR set to its output folder and INITEXIT_BUILTIN_MODE to
present (a clean boot) or absent (initcall_blacklist=fuse_miscdev_init: a
middle step fails with -EPERM); a missing variable or file is a failure.
The checks are tests/boot/modcheck.py's, shown failing on broken logs by
tests/boot/test_modcheck_selftest.py in every scripts/test.
"""

from __future__ import annotations

import os
import pathlib
import sys

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "boot"))
import modcheck  # noqa: E402  (puts the repository root on sys.path for analysis/)
from analysis.load import load_capture  # noqa: E402
from analysis.loads import boot_calls  # noqa: E402

FAIL_AT, EPERM = "fuse_miscdev_init", 1


def mode() -> str:
    value = os.environ.get("INITEXIT_BUILTIN_MODE", "")
    if value not in ("present", "absent"):
        pytest.fail(f"INITEXIT_BUILTIN_MODE={value!r}: present or absent (scripts/check-configs sets it)")
    return value


def test_fuse_steps_at_boot() -> None:
    cap = load_capture(modcheck.run_file("dmesg.txt", "arm-builtin-fs"))
    calls = boot_calls(cap, "fuse")
    if mode() == "present":
        assert modcheck.check_builtin("fuse", calls, modcheck.FUSE_STEPS, modcheck.fuse_prio,
                                      modcheck.FUSE_ENTRY) == []
        assert modcheck.check_no_failure(cap.parsed.notices, ("fuse",)) == []
    else:
        assert modcheck.check_builtin_failed("fuse", "fs/fuse/fuse", calls, cap.parsed.notices,
                                             modcheck.FUSE_STEPS, modcheck.fuse_prio, modcheck.FUSE_ENTRY,
                                             FAIL_AT, EPERM) == []

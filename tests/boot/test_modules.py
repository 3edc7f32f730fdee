"""The converted modules' pairs, on the captures of this scripts/test run.

tests/guest/80-fuse.sh and 85-btrfs.sh load, fail and unload fs/fuse and
fs/btrfs in the guest and check the state the kernel shows; which pair
init and exit each load ran is judged here, from the trace of the guest's
scenario (scenario.dat, recorded by initramfs/init around the guest script
with the initexit events on) read through analysis/ (analysis/loads.py),
against the steps in tests/boot/modcheck.py.  Run from scripts/test's boot
step with the run folders of test_boot.py: a missing variable, folder or
trace is a failure.  The stock kernel has no initexit events: its run of
the same tests is judged by its KTAP alone.
"""

from __future__ import annotations


import modcheck  # first: it puts the repository root on sys.path for analysis/
from analysis.load import load_capture  # noqa: E402
from analysis.loads import module_loads  # noqa: E402
from analysis.model import Capture  # noqa: E402
from test_boot import run_dir  # noqa: E402


def scenario(var: str) -> Capture:
    return load_capture(str(run_dir(var, needs="scenario.report.txt") / "scenario.report.txt"))


def test_fuse_loads_run_one_pair_per_step_and_unwind_in_reverse() -> None:
    # 80-fuse.sh: a load and unload (one pair per step, in order; the
    # unload's exits in exact reverse), then fuseblk, fuse and fusectl held
    # by initexit_fs_squat in turn (the load fails with -EBUSY at the step
    # registering that name and unwinds the steps before it in exact
    # reverse), each followed by a load and unload once the name is free.
    assert modcheck.check_fuse_test(module_loads(scenario("INITEXIT_RUN_DIR"), "fuse")) == []


def test_btrfs_load_runs_one_pair_per_step_and_unloads_in_reverse() -> None:
    assert modcheck.check_btrfs_test(module_loads(scenario("INITEXIT_RUN_DIR"), "btrfs")) == []


def test_btrfs_blacklisted_last_step_fails_and_unwinds_the_others() -> None:
    # 85-btrfs.sh booted with initcall_blacklist=register_btrfs: two loads,
    # each runs every step, register_btrfs returning -EPERM, and unwinds
    # every earlier step in exact reverse.
    assert modcheck.check_btrfs_blacklisted(module_loads(scenario("INITEXIT_BLACKLIST_RUN_DIR"), "btrfs")) == []


def test_scenario_capture_is_whole() -> None:
    # A trace with lost events could hide a pair: the captures judged above
    # have no gap and no line the analysis could not read.
    for var in ("INITEXIT_RUN_DIR", "INITEXIT_BLACKLIST_RUN_DIR"):
        parsed = scenario(var).parsed
        assert [g.what for g in parsed.gaps] == [], var
        assert parsed.n_problems == 0, (var, [p.quote() for p in parsed.problems[:3]])



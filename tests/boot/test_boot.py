"""Boot-path tests of the series, on the captures of this scripts/test run.

scripts/test boots the patched kernel (with CONFIG_TEST_INITEXIT_BOOT) and
points these tests at the output folders through environment variables:

  INITEXIT_RUN_DIR            patched boot with the in-guest tests
  INITEXIT_BLACKLIST_RUN_DIR  patched boot with initcall_blacklist=tio_blacklist_me_init
                              (and register_btrfs, for tests/guest/85-btrfs.sh)
  INITEXIT_STOCK_RUN_DIR      stock 6.12 boot, same config fragment

A missing variable or folder is a failure, not a skip: these tests only run
from scripts/test, which always sets them.
"""

from __future__ import annotations

import json
import os
import pathlib
from typing import Any

import pytest

import bootcheck
import initcall_debug


def run_dir(var: str, needs: str = "boot.report.txt") -> pathlib.Path:
    value = os.environ.get(var)
    if not value:
        pytest.fail(f"{var} is not set: run tests/boot through scripts/test")
    path = pathlib.Path(value)
    if not (path / needs).is_file():
        pytest.fail(f"{path}/{needs} missing: the boot in {path} did not bring it home")
    return path


def events(var: str) -> list[bootcheck.Ev]:
    return bootcheck.read_events((run_dir(var) / "boot.report.txt").read_text())


def test_boot_log_follows_the_model() -> None:
    # The test objects' own "initexit-boot-test:" lines, from dmesg alone:
    # scripts/check-configs runs only this on the i386, arm64 and riscv64
    # boots (no trace there; its dmesg.txt is the serial console).
    dmesg = run_dir("INITEXIT_RUN_DIR", needs="dmesg.txt") / "dmesg.txt"
    assert bootcheck.check_boot_log(dmesg.read_text(errors="replace")) == []


def test_builtin_pairs_run_in_priority_order() -> None:
    assert bootcheck.check_builtin_order(events("INITEXIT_RUN_DIR")) == []


def test_initcall_level_fires_as_in_stock() -> None:
    # E1: early, console, then the eight classic levels, once each, with
    # stock's names (existing traces attribute calls to the same levels).
    assert bootcheck.check_level_events(events("INITEXIT_RUN_DIR")) == []


def test_initcall_level_names_equal_stocks() -> None:
    assert bootcheck.check_level_events_as_stock(events("INITEXIT_STOCK_RUN_DIR"), events("INITEXIT_RUN_DIR")) == []


def test_initcall_band_fires_at_every_band() -> None:
    # E1: the band detail, in its own event, after its level's event.
    assert bootcheck.check_band_events(events("INITEXIT_RUN_DIR")) == []


def test_builtin_object_unwinds_alone() -> None:
    assert bootcheck.check_builtin_unwind(events("INITEXIT_RUN_DIR")) == []


def test_every_builtin_pair_is_accounted_for() -> None:
    # "initexit: ordered N built-in pairs" = pairs in the trace + pairs
    # dmesg reports skipped; each with the idx its declared priority gives.
    d = run_dir("INITEXIT_RUN_DIR")
    dmesg = (d / "dmesg.txt").read_text(errors="replace")
    assert bootcheck.check_builtin_pairs(events("INITEXIT_RUN_DIR"), dmesg) == []


def test_builtin_objects_run_at_their_entries() -> None:
    # Each object's pairs inside its entry's initcall, the entries in link
    # order within their band, each returning the model's result.
    assert bootcheck.check_entries(events("INITEXIT_RUN_DIR")) == []


def test_boot_finished_after_builtin_failure() -> None:
    d = run_dir("INITEXIT_RUN_DIR")
    dmesg = (d / "dmesg.txt").read_text(errors="replace")
    failed = bootcheck.builtin_failure(dmesg, bootcheck.UNWIND)
    assert [(n.kind, n.func, n.prio, n.value, n.why) for n in failed] == [
        ("failed", "tiu2_init", 200, -202, "unwinding")]
    failed = bootcheck.builtin_failure(dmesg, bootcheck.ADJACENT)
    assert [(n.kind, n.func, n.prio, n.value, n.why) for n in failed] == [
        ("failed", "tia3_init", 4, -303, "unwinding")]
    # tik1 has no exit and runs before tik2: the kernel refuses the object
    # at boot, none of its pairs runs.
    failed = bootcheck.builtin_failure(dmesg, bootcheck.KEEP)
    assert [(n.kind, n.func, n.other, n.why) for n in failed] == [("refused", "tik1_init", "tik2_init", "undoable")]
    assert bootcheck.boot_finished(dmesg)


def test_initcall_debug_names_priority_and_origin() -> None:
    dmesg = (run_dir("INITEXIT_RUN_DIR") / "dmesg.txt").read_text(errors="replace")
    assert bootcheck.check_initcall_debug(dmesg) == []


def test_a_blacklisted_pair_fails_its_object() -> None:
    d = run_dir("INITEXIT_BLACKLIST_RUN_DIR")
    dmesg = (d / "dmesg.txt").read_text(errors="replace")
    assert bootcheck.check_blacklisted(events("INITEXIT_BLACKLIST_RUN_DIR"), dmesg) == []


def run_diff(var: str) -> dict[str, Any]:
    """The boot.diff.json scripts/run --diff-with wrote into the run of VAR;
    scripts/test compares each of its boots with the full patched one."""
    d = run_dir(var)
    path = d / "boot.diff.json"
    if not path.is_file():
        pytest.fail(f"{path} missing: scripts/run --diff-with wrote no comparison")
    diff: dict[str, Any] = json.loads(path.read_text())
    a = pathlib.Path(diff["a"]["source"]).resolve()
    assert a == (run_dir("INITEXIT_RUN_DIR") / "boot.report.txt").resolve(), diff["a"]
    for suffix in (".txt", ".html"):
        assert (d / f"boot.diff{suffix}").is_file(), suffix
    return diff


def test_run_diff_shows_what_the_blacklist_did() -> None:
    assert bootcheck.check_blacklist_diff(run_diff("INITEXIT_BLACKLIST_RUN_DIR")) == []


def test_run_diff_of_patched_and_stock_boot() -> None:
    assert bootcheck.check_patched_stock_diff(run_diff("INITEXIT_STOCK_RUN_DIR")) == []


def test_stock_initcalls_still_run_at_their_level() -> None:
    stock = (run_dir("INITEXIT_STOCK_RUN_DIR") / "boot.report.txt").read_text(errors="replace")
    patched = (run_dir("INITEXIT_RUN_DIR") / "boot.report.txt").read_text(errors="replace")
    assert bootcheck.check_stock_initcalls_kept(stock, patched) == []


def test_event_formats_match_reference() -> None:
    """The guest's tracefs format files (saved by tests/guest/70-*) equal
    tracepoints/formats/, which tracepoints/README.md embeds.  The same
    bootcheck.check_formats() is shown to fail on drifted files in
    test_bootcheck_selftest.py."""
    saved = run_dir("INITEXIT_RUN_DIR") / "guest" / "formats"
    ref = pathlib.Path(__file__).resolve().parents[2] / "tracepoints" / "formats"
    assert bootcheck.check_formats(saved, ref) == []


def test_stock_initcall_debug_lines_are_kept() -> None:
    # Every calling line of stock's initcall_debug, console initcalls
    # included, in the same order (by function; sizes differ).
    stock = (run_dir("INITEXIT_STOCK_RUN_DIR") / "dmesg.txt").read_text(errors="replace")
    patched = (run_dir("INITEXIT_RUN_DIR") / "dmesg.txt").read_text(errors="replace")
    assert initcall_debug.check_stock_lines_kept(stock, patched) == []


def test_every_initcall_debug_line_names_where_it_runs() -> None:
    dmesg = (run_dir("INITEXIT_RUN_DIR") / "dmesg.txt").read_text(errors="replace")
    assert initcall_debug.check_every_call_placed(dmesg) == []


@pytest.mark.parametrize("module,test", [("fuse", "80-fuse"), ("btrfs", "85-btrfs")])
def test_converted_module_leaves_the_state_stock_module_leaves(module: str, test: str) -> None:
    # tests/guest/80-fuse.sh and 85-btrfs.sh on both kernels: after loading
    # the module, the same filesystems, misc device, /dev nodes, /sys/fs and
    # /sys/module entries (and fusectl mount); written by the guest as
    # guest/MODULE/loaded.txt.
    got = {}
    for var in ("INITEXIT_STOCK_RUN_DIR", "INITEXIT_RUN_DIR"):
        path = run_dir(var) / "guest" / module / "loaded.txt"
        if not path.is_file():
            pytest.fail(f"{path} missing: did tests/guest/{test}.sh run on that kernel?")
        got[var] = path.read_text(errors="replace")
    assert got["INITEXIT_RUN_DIR"] == got["INITEXIT_STOCK_RUN_DIR"]

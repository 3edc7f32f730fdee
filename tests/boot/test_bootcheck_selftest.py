"""Each boot check must fail on a wrong capture.

The fixtures are real captures from the guest (tests/boot/fixtures/,
written by scripts/run of the patched and the stock kernel; see
fixtures/README).  Every test first shows the check passes on the real
capture, then breaks the capture the way a wrong kernel would and shows the
check catches it.
"""

from __future__ import annotations

import json
import pathlib
import re
from typing import Any

import pytest

import bootcheck
import initcall_debug
from analysis.build import build_capture
from analysis.diff import diff_captures, render_diff
from analysis.parse import parse_trace_report

FIX = pathlib.Path(__file__).resolve().parent / "fixtures"


def text(name: str) -> str:
    return (FIX / name).read_text(errors="replace")


def evs(report: str) -> list[bootcheck.Ev]:
    return bootcheck.read_events(report)


def swap_lines(report: str, a: str, b: str) -> str:
    """Swap the first lines containing a and b."""
    lines = report.splitlines(keepends=True)
    i = next(n for n, line in enumerate(lines) if a in line)
    j = next(n for n, line in enumerate(lines) if b in line)
    lines[i], lines[j] = lines[j], lines[i]
    return "".join(lines)


def find_line(lines: list[str], *parts: str) -> int:
    """Index of the first line containing every part."""
    return next(n for n, line in enumerate(lines) if all(p in line for p in parts))


def move_line(lines: list[str], src: int, dst: int) -> str:
    """The report with line ``src`` moved to just before line ``dst``
    (indices as in ``lines``; ``dst == len(lines)`` moves it to the end)."""
    rest = lines[:src] + lines[src + 1:]
    at = dst if dst < src else dst - 1
    return "".join(rest[:at] + [lines[src]] + rest[at:])


def drop_lines(report: str, pattern: str) -> str:
    return "".join(line for line in report.splitlines(keepends=True) if not re.search(pattern, line))


PATCHED = "patched-boot.report.txt"


def test_order_check_passes_on_real_capture() -> None:
    assert bootcheck.check_builtin_order(evs(text(PATCHED))) == []


def test_order_check_catches_swapped_equal_priorities() -> None:
    # Link order within priority 0: tio_dev_a before tio_dev_b.
    bad = swap_lines(text(PATCHED), "func=tio_dev_a_init", "func=tio_dev_b_init")
    assert bootcheck.check_builtin_order(evs(bad)) != []


def test_order_check_catches_pair_in_wrong_level() -> None:
    # The device level's events after tio_entry returned: its pairs ran in
    # band rootfs, not in their entry's band device.
    lines = text(PATCHED).splitlines(keepends=True)
    level = find_line(lines, "initcall_level:", "level=device")
    band = find_line(lines, "initcall_band:", "band=device ")
    assert band == level + 1
    after = find_line(lines, "initcall_finish:", "func=tio_entry+")
    bad = "".join(lines[:level] + lines[band + 1:after + 1] + lines[level:band + 1] + lines[after + 1:])
    problems = bootcheck.check_builtin_order(evs(bad))
    assert any("tio_dev_a_init" in p and "ran in band rootfs, expected device" in p for p in problems), problems


def test_order_check_catches_pair_in_wrong_band() -> None:
    # tio_max (499) runs in tio_entry, in band device [0, 500): with the
    # device_sync event before it, it ran in band device_sync.
    lines = text(PATCHED).splitlines(keepends=True)
    sync = find_line(lines, "initcall_band:", "band=device_sync")
    tio_max = find_line(lines, "initexit_init_start:", "func=tio_max_init")
    assert tio_max < sync
    problems = bootcheck.check_builtin_order(evs(move_line(lines, sync, tio_max)))
    assert any("tio_max_init" in p and "ran in band device_sync," in p for p in problems), problems


def test_band_check_passes_on_real_capture() -> None:
    assert bootcheck.check_band_events(evs(text(PATCHED))) == []


def test_band_check_catches_missing_sync_band() -> None:
    bad = drop_lines(text(PATCHED), r"initcall_band: +band=fs_sync")
    assert bootcheck.check_band_events(evs(bad)) != []


def test_band_check_catches_band_before_its_level() -> None:
    # band device must follow initcall_level device: move the band up.
    lines = text(PATCHED).splitlines(keepends=True)
    level = find_line(lines, "initcall_level:", "level=device")
    band = find_line(lines, "initcall_band:", "band=device ")
    assert level < band
    problems = bootcheck.check_band_events(evs(move_line(lines, band, level)))
    assert any("band device fired after initcall_level fs" in p for p in problems), problems


def test_band_check_catches_wrong_priority() -> None:
    bad = text(PATCHED).replace("band=late_sync prio=1500", "band=late_sync prio=1000")
    assert "prio=1000" in bad
    assert any("late_sync prio=1000" in p for p in bootcheck.check_band_events(evs(bad)))


def test_band_check_catches_stock() -> None:
    # The stock kernel has no initcall_band event.
    assert bootcheck.check_band_events(evs(text("stock-boot.report.txt"))) != []


def test_level_check_passes_on_real_captures() -> None:
    # E1: the patched boot fires initcall_level as stock does.
    assert bootcheck.check_level_events(evs(text(PATCHED))) == []
    assert bootcheck.check_level_events(evs(text("stock-boot.report.txt"))) == []
    stock = evs(text("stock-boot.report.txt"))
    assert bootcheck.check_level_events_as_stock(stock, evs(text(PATCHED))) == []


def per_band_levels(report: str) -> str:
    """The capture as the series fired initcall_level before issue 34:
    once per band, with the band's name."""
    out = []
    for line in report.splitlines(keepends=True):
        m = re.search(r"initcall_band: +band=(\S+) prio=\S+", line)
        if m:
            line = line[:m.start()] + f"initcall_level:       level={m.group(1)}" + line[m.end():]
        elif "initcall_level:" in line and "level=early" not in line and "level=console" not in line:
            continue
        out.append(line)
    return "".join(out)


def test_level_check_catches_per_band_levels() -> None:
    bad = evs(per_band_levels(text(PATCHED)))
    assert [e.fields.get("level") for e in bad if e.name == "initcall_level"].count("core_sync") == 1
    assert any("expected stock's levels" in p for p in bootcheck.check_level_events(bad))
    stock = evs(text("stock-boot.report.txt"))
    assert bootcheck.check_level_events_as_stock(stock, bad) != []


def test_level_check_catches_level_fired_twice() -> None:
    lines = text(PATCHED).splitlines(keepends=True)
    early = find_line(lines, "initcall_level:", "level=early")
    bad = "".join(lines[:early + 1] + [lines[early]] + lines[early + 1:])
    assert any("2 times for early" in p for p in bootcheck.check_level_events(evs(bad)))


def test_order_check_catches_missing_pair() -> None:
    bad = drop_lines(text(PATCHED), r"func=tio_max_init")
    assert bootcheck.check_builtin_order(evs(bad)) != []


def test_unwind_check_passes_on_real_capture() -> None:
    assert bootcheck.check_builtin_unwind(evs(text(PATCHED))) == []


def test_unwind_check_catches_forward_unwind() -> None:
    report = text(PATCHED)
    # Exchange the unwind blocks of tia2 and tia0: exits in forward order.
    bad = swap_lines(report, "initexit_unwind:      path=boot origin=lib/test_initexit_adjacent", "func=tia0_exit failed_idx")
    bad = swap_lines(bad, "exit_start:  path=boot origin=lib/test_initexit_adjacent", "func=tia0_exit reason=unwind")
    assert bootcheck.check_builtin_unwind(evs(bad)) != []


def test_unwind_check_catches_missing_unwind() -> None:
    bad = drop_lines(text(PATCHED), r"origin=lib/test_initexit_adjacent .*func=tia0_exit")
    assert bootcheck.check_builtin_unwind(evs(bad)) != []


def test_unwind_check_catches_a_failure_not_unwound() -> None:
    # What the series did before stage b with test_initexit_unwind (its pairs
    # spread over the bands): tiu2 failed and nothing was unwound.
    bad = drop_lines(text(PATCHED), r"origin=lib/test_initexit_unwind .*func=tiu[01]_exit")
    problems = bootcheck.check_builtin_unwind(evs(bad))
    assert any(p.startswith("lib/test_initexit_unwind events:") for p in problems), problems


def test_unwind_check_catches_the_refused_object_running() -> None:
    # test_initexit_keep must not run at all: a kernel without the bind's
    # undoable rule ran tik0 (and failed at tik2 without unwinding).
    report = text(PATCHED)
    lines = report.splitlines(keepends=True)
    at = find_line(lines, "initcall_finish:", "func=tik_entry+")
    tik0 = [x.replace("origin=lib/test_initexit_adjacent idx=18 prio=1 func=tia0_init",
                      "origin=lib/test_initexit_keep idx=24 prio=6 func=tik0_init")
            for x in lines if "initexit_init_" in x and "func=tia0_init" in x]
    assert len(tik0) == 2
    problems = bootcheck.check_builtin_unwind(evs("".join(lines[:at] + tik0 + lines[at:])))
    assert any(p.startswith("lib/test_initexit_keep events:") for p in problems), problems


def test_unwind_check_catches_later_pair_running() -> None:
    report = text(PATCHED)
    line = next(x for x in report.splitlines(keepends=True) if "init_start:" in x and "func=tiu2_init" in x)
    bad = report + line.replace("tiu2_init", "tiu3_init").replace("prio=200", "prio=300").replace("idx=10", "idx=11")
    assert bootcheck.check_builtin_unwind(evs(bad)) != []


def test_unwind_check_catches_neighbour_touched() -> None:
    bad = drop_lines(text(PATCHED), r"func=tin1_init")
    assert bootcheck.check_builtin_unwind(evs(bad)) != []


# --- each object ran at its entry ---


def test_entry_check_passes_on_real_captures() -> None:
    assert bootcheck.check_entries(evs(text(PATCHED))) == []
    assert bootcheck.check_entries(evs(text("blacklist-boot.report.txt")),
                                   blacklisted=frozenset({"tio_blacklist_me_init"})) == []


def test_entry_check_catches_pairs_outside_their_entry() -> None:
    # tio_entry returned before tio_max ran: what the old priority merge
    # did, a pair run as a call of do_initcalls() itself.
    lines = text(PATCHED).splitlines(keepends=True)
    tio_max = find_line(lines, "initexit_init_start:", "func=tio_max_init")
    finish = find_line(lines, "initcall_finish:", "func=tio_entry+")
    problems = bootcheck.check_entries(evs(move_line(lines, finish, tio_max)))
    assert any("lib/test_initexit_order: initexit events outside its entry tio_entry" in p for p in problems), problems


def test_entry_check_catches_entries_out_of_link_order() -> None:
    # tio_entry and tiu_entry trade names: the entries ran in the wrong
    # order, each around the other object's pairs.
    bad = text(PATCHED).replace("func=tio_entry+", "func=@@+").replace(
        "func=tiu_entry+", "func=tio_entry+").replace("func=@@+", "func=tiu_entry+")
    problems = bootcheck.check_entries(evs(bad))
    assert any(p.startswith("the entries ran as [('tiu_entry', 'device', 0), ('tio_entry', 'device', -202)")
               for p in problems), problems
    assert any("outside its entry" in p for p in problems), problems


def test_entry_check_catches_a_wrong_return() -> None:
    # tia_entry hides its failure; tik_entry (refused) returns 0.
    for old, new in (("func=tia_entry+0x0 ret=-303", "func=tia_entry+0x0 ret=0"),
                     ("func=tik_entry+0x0 ret=-8", "func=tik_entry+0x0 ret=0")):
        bad = text(PATCHED).replace(old, new)
        assert bad != text(PATCHED)
        problems = bootcheck.check_entries(evs(bad))
        assert len(problems) == 1 and problems[0].startswith("the entries ran as"), problems


def test_entry_check_catches_the_late_entry_in_the_device_band() -> None:
    # til_entry moved up, right after tit_entry: a late object run as a
    # device one.
    lines = text(PATCHED).splitlines(keepends=True)
    a = find_line(lines, "initcall_start:", "func=til_entry+")
    b = find_line(lines, "initcall_finish:", "func=til_entry+") + 1
    at = find_line(lines, "initcall_finish:", "func=tit_entry+") + 1
    bad = "".join(lines[:at] + lines[a:b] + lines[at:a] + lines[b:])
    problems = bootcheck.check_entries(evs(bad))
    assert any("('til_entry', 'device', 0)" in p for p in problems), problems


def test_entry_check_catches_a_missing_entry() -> None:
    bad = drop_lines(text(PATCHED), r"func=tin_entry\+")
    problems = bootcheck.check_entries(evs(bad))
    assert any("its entry tin_entry never ran" in p for p in problems), problems


def test_stock_check_passes_on_real_captures() -> None:
    assert bootcheck.check_stock_initcalls_kept(text("stock-boot.report.txt"), text(PATCHED)) == []


def test_stock_check_catches_lost_initcall() -> None:
    bad = drop_lines(text(PATCHED), r"func=ksysfs_init\+")
    assert bootcheck.check_stock_initcalls_kept(text("stock-boot.report.txt"), bad) != []


def test_stock_check_catches_reordered_initcalls() -> None:
    # ksysfs_init ran first and wq_sysfs_init second (times stay in order:
    # the two calls trade names, start and finish).
    bad = text(PATCHED).replace("func=wq_sysfs_init+", "func=@@+").replace(
        "func=ksysfs_init+", "func=wq_sysfs_init+").replace("func=@@+", "func=ksysfs_init+")
    problems = bootcheck.check_stock_initcalls_kept(text("stock-boot.report.txt"), bad)
    assert any("moved: after" in p and "ksysfs_init" in p for p in problems), problems


def test_stock_check_catches_a_changed_result() -> None:
    bad = text(PATCHED).replace("func=ksysfs_init+0x0 ret=0", "func=ksysfs_init+0x0 ret=-12")
    problems = bootcheck.check_stock_initcalls_kept(text("stock-boot.report.txt"), bad)
    assert any("ksysfs_init" in p and "in stock" in p for p in problems), problems


def test_initcall_debug_check_passes_on_real_dmesg() -> None:
    assert bootcheck.check_initcall_debug(text("patched-dmesg.txt")) == []


def test_initcall_debug_check_catches_missing_priority() -> None:
    bad = text("patched-dmesg.txt").replace(" prio=-5000 modname=workqueue", "", 1)
    assert bootcheck.check_initcall_debug(bad) != []


def test_blacklist_check_passes_on_real_capture() -> None:
    assert bootcheck.check_blacklisted(evs(text("blacklist-boot.report.txt")), text("blacklist-dmesg.txt")) == []


def test_blacklist_check_catches_pair_that_ran() -> None:
    # The normal boot ran tio_blacklist_me_init: as a blacklist capture it fails.
    assert bootcheck.check_blacklisted(evs(text(PATCHED)), text("patched-dmesg.txt")) != []


def test_blacklist_check_catches_a_skip_that_leaves_the_object_running() -> None:
    # What the series did before: the blacklisted pair alone was skipped and
    # its object's later pairs ran on.  The normal boot without that pair's
    # events, and dmesg saying it was blacklisted, is such a capture.
    report = drop_lines(text(PATCHED), r"func=tio_blacklist_me_init")
    dmesg = text("patched-dmesg.txt") + (
        "[    0.965900] initexit: lib/test_initexit_order: tio_blacklist_me_init (prio 100) blacklisted, not run\n")
    problems = bootcheck.check_blacklisted(evs(report), dmesg)
    assert any("inits ran as" in p and "tio_between_init" in p for p in problems), problems


# --- every field of every event is checked, not only the order ---


def set_field(report: str, field: str, value: str, *parts: str) -> str:
    """The report with ``field=`` set to ``value`` on the first line that
    contains every part (``idx=`` does not touch ``failed_idx=``)."""
    lines = report.splitlines(keepends=True)
    n = find_line(lines, *parts)
    new, count = re.subn(rf"(?<![\w]){field}=\S+", f"{field}={value}", lines[n], count=1)
    assert count == 1 and new != lines[n], (field, lines[n])
    lines[n] = new
    return "".join(lines)


ORDER_FIELD_CASES = [
    # (event, func, field, wrong value)
    ("initexit_init_finish:", "func=tio_dev_a_init ", "prio", "1"),
    ("initexit_init_start:", "func=tio_between_init", "prio", "251"),
    ("initexit_init_start:", "func=tio_between_init", "idx", "6"),
    ("initexit_init_finish:", "func=tio_dev_b_init", "idx", "1"),
    ("initexit_init_start:", "func=tio_one_init", "path", "module"),
    ("initexit_init_finish:", "func=tio_one_init", "path", "module"),
    ("initexit_init_finish:", "func=tio_max_init", "ret", "-12"),
    ("initexit_init_finish:", "func=tio_dev_a_init", "duration_ns", "-1"),
]


@pytest.mark.parametrize("event,func,field,value", ORDER_FIELD_CASES)
def test_order_check_catches_wrong_field(event: str, func: str, field: str, value: str) -> None:
    bad = set_field(text(PATCHED), field, value, event, func)
    problems = bootcheck.check_builtin_order(evs(bad))
    assert any(f"{field}={value}," in p and "test_initexit_order" in p for p in problems), problems


UNWIND_FIELD_CASES = [
    ("initexit_init_finish:", "func=tiu2_init", "ret", "-201"),
    ("initexit_init_finish:", "func=tiu2_init", "prio", "201"),
    ("initexit_init_start:", "func=tiu1_init", "idx", "8"),
    ("initexit_unwind:", "func=tiu1_exit", "failed_idx", "11"),
    ("initexit_exit_start:", "func=tiu0_exit", "reason", "unload"),
    ("initexit_init_finish:", "func=tia3_init", "ret", "-302"),
    ("initexit_init_start:", "func=til0_init", "has_exit", "0"),
    ("initexit_unwind:", "func=tia2_exit", "failed_prio", "5"),
    ("initexit_unwind:", "func=tia0_exit", "failed_prio", "3"),
    ("initexit_unwind:", "func=tia2_exit", "failed_idx", "22"),
    ("initexit_unwind:", "func=tia2_exit", "failed_func", "tia4_init"),
    ("initexit_unwind:", "func=tia0_exit", "error", "-302"),
    ("initexit_unwind:", "func=tia2_exit", "idx", "19"),
    ("initexit_unwind:", "func=tia0_exit", "prio", "2"),
    ("initexit_unwind:", "func=tia0_exit", "path", "module"),
    ("initexit_exit_start:", "func=tia2_exit", "idx", "21"),
    ("initexit_exit_start:", "func=tia0_exit", "prio", "0"),
    ("initexit_exit_start:", "func=tia2_exit", "reason", "unload"),
    ("initexit_exit_finish:", "func=tia0_exit", "reason", "unload"),
    ("initexit_exit_finish:", "func=tia2_exit", "path", "module"),
    ("initexit_init_finish:", "func=tin1_init", "prio", "151"),
    ("initexit_init_start:", "func=tin2_init", "idx", "15"),
    ("initexit_init_finish:", "func=til1_init", "prio", "1500"),
    ("initexit_init_start:", "func=tit_a_init", "idx", "31"),
]


@pytest.mark.parametrize("event,func,field,value", UNWIND_FIELD_CASES)
def test_unwind_check_catches_wrong_field(event: str, func: str, field: str, value: str) -> None:
    bad = set_field(text(PATCHED), field, value, event, func)
    problems = bootcheck.check_builtin_unwind(evs(bad))
    assert any(f"{field}={value}," in p for p in problems), problems


def test_unwind_check_catches_wrong_func() -> None:
    bad = set_field(text(PATCHED), "func", "tia3_exit", "initexit_exit_finish:", "func=tia2_exit")
    problems = bootcheck.check_builtin_unwind(evs(bad))
    assert any(p.startswith("lib/test_initexit_adjacent events:") for p in problems), problems


def test_unwind_check_catches_missing_field() -> None:
    bad = text(PATCHED).replace(" failed_prio=4 failed_func=tia3_init", " failed_func=tia3_init", 1)
    problems = bootcheck.check_builtin_unwind(evs(bad))
    assert any("failed_prio=None, expected failed_prio=4" in p for p in problems), problems


def test_unwind_check_catches_the_tie_as_two_objects() -> None:
    # tie_b.o and tie_a.o as two objects (before the tie was one object):
    # tit_b's events with its own file's origin.
    bad = "".join(x.replace("origin=lib/test_initexit_tie/test_initexit_tie", "origin=lib/test_initexit_tie/tie_b")
                  if "func=tit_b_init" in x else x for x in text(PATCHED).splitlines(keepends=True))
    problems = bootcheck.check_builtin_unwind(evs(bad))
    assert any(p.startswith("lib/test_initexit_tie/test_initexit_tie events:") for p in problems), problems


def test_unwind_check_catches_wrong_origin() -> None:
    # The unwind of tia0 reported as the neighbour's: both objects are wrong.
    bad = set_field(text(PATCHED), "origin", "lib/test_initexit_neighbour/test_initexit_unwind", "initexit_unwind:", "func=tia0_exit")
    problems = bootcheck.check_builtin_unwind(evs(bad))
    assert any(p.startswith("lib/test_initexit_adjacent events:") for p in problems), problems
    assert any(p.startswith("lib/test_initexit_neighbour/test_initexit_unwind events:") for p in problems), problems


def test_order_check_catches_extra_exit() -> None:
    # A built-in object that did not fail must see no exit at boot.
    report = text(PATCHED)
    line = next(x for x in report.splitlines(keepends=True) if "exit_start:" in x and "func=tia0_exit" in x)
    extra = line.replace("origin=lib/test_initexit_adjacent idx=18 prio=1 func=tia0_exit",
                         "origin=lib/test_initexit_order idx=6 prio=499 func=tio_max_exit")
    problems = bootcheck.check_builtin_order(evs(report + extra))
    assert any(p.startswith("lib/test_initexit_order events:") for p in problems), problems


# --- every built-in pair the kernel ordered is accounted for ---


def test_pair_check_passes_on_real_captures() -> None:
    assert bootcheck.check_builtin_pairs(evs(text(PATCHED)), text("patched-dmesg.txt")) == []
    blacklisted = frozenset({"tio_blacklist_me_init"})
    assert bootcheck.check_builtin_pairs(evs(text("blacklist-boot.report.txt")), text("blacklist-dmesg.txt"),
                                         blacklisted) == []


def test_pair_check_catches_wrong_count() -> None:
    dmesg = re.sub(r"ordered 26 built-in pairs", "ordered 27 built-in pairs", text("patched-dmesg.txt"))
    problems = bootcheck.check_builtin_pairs(evs(text(PATCHED)), dmesg)
    assert any("ordered 27 built-in pairs, the test objects declare 26" in p for p in problems), problems
    assert any("the trace shows 20, dmesg reports 3 skipped and 3 in refused objects" in p
               for p in problems), problems


def test_pair_check_catches_pair_missing_from_trace() -> None:
    bad = drop_lines(text(PATCHED), r"func=tin2_init")
    problems = bootcheck.check_builtin_pairs(evs(bad), text("patched-dmesg.txt"))
    assert any("the trace shows 19, dmesg reports 3 skipped and 3 in refused objects" in p
               for p in problems), problems


def test_pair_check_catches_unreported_skip() -> None:
    dmesg = drop_lines(text("patched-dmesg.txt"), r"skipping tiu4_init")
    problems = bootcheck.check_builtin_pairs(evs(text(PATCHED)), dmesg)
    assert any(p.startswith("dmesg reports pairs not run") for p in problems), problems


def test_pair_check_catches_an_unreported_refusal() -> None:
    # The kernel refused test_initexit_keep without saying so (or did not
    # refuse it and its pairs vanished): its three pairs are unaccounted for.
    dmesg = drop_lines(text("patched-dmesg.txt"), r"initexit: lib/test_initexit_keep: tik1_init has no exit")
    problems = bootcheck.check_builtin_pairs(evs(text(PATCHED)), dmesg)
    assert any("the trace shows 20, dmesg reports 3 skipped and 0 in refused objects" in p for p in problems), problems
    assert any(p.startswith("dmesg reports objects refused: []") for p in problems), problems


def test_pair_check_catches_a_wrong_failure_message() -> None:
    dmesg = text("patched-dmesg.txt").replace(
        "tia3_init (prio 4) failed with -303, unwinding lib/test_initexit_adjacent",
        "tia3_init (prio 4) failed with -303, nothing to unwind")
    problems = bootcheck.check_builtin_pairs(evs(text(PATCHED)), dmesg)
    assert len(problems) == 1 and problems[0].startswith("dmesg reports failures:"), problems
    assert "-303 nothing" in problems[0] and "-303 unwinding" in problems[0], problems


def test_pair_check_ignores_the_kunit_suites_refusals() -> None:
    # The KUnit bind test's own tables (origins b, c, d, f, g) are refused
    # too: they are not the test objects'.
    assert "initexit: b: 0 entries for its pairs, not 1: none runs" in text("patched-dmesg.txt")
    assert bootcheck.check_builtin_pairs(evs(text(PATCHED)), text("patched-dmesg.txt")) == []


def test_pair_check_catches_unknown_pair() -> None:
    # A 27th built-in pair ran (and the kernel counted it).
    report = text(PATCHED)
    line = next(x for x in report.splitlines(keepends=True) if "init_start:" in x and "func=tio_max_init" in x)
    extra = line.replace("origin=lib/test_initexit_order idx=6", "origin=other idx=33")
    dmesg = text("patched-dmesg.txt").replace("ordered 26 built-in", "ordered 27 built-in")
    problems = bootcheck.check_builtin_pairs(evs(report + extra), dmesg)
    assert any("expected idx=" in p for p in problems), problems


def test_pair_check_catches_pairs_out_of_idx_order() -> None:
    bad = swap_lines(text(PATCHED), "initexit_init_start:  path=boot origin=lib/test_initexit_unwind idx=8",
                     "initexit_init_start:  path=boot origin=lib/test_initexit_neighbour/test_initexit_unwind idx=14")
    problems = bootcheck.check_builtin_pairs(evs(bad), text("patched-dmesg.txt"))
    assert any(p.startswith("boot init_start idx order") for p in problems), problems


# initcall_debug: stock's lines kept (console initcalls included), and
# every line placed.  Real dmesg of the patched and the stock test boot.

def test_stock_lines_kept_passes_on_real_dmesg() -> None:
    assert initcall_debug.check_stock_lines_kept(text("stock-dmesg.txt"), text("patched-dmesg.txt")) == []


def test_stock_lines_kept_catches_lost_console_initcall() -> None:
    bad = drop_lines(text("patched-dmesg.txt"), r"calling  con_init\+")
    problems = initcall_debug.check_stock_lines_kept(text("stock-dmesg.txt"), bad)
    assert any("con_init" in p and "missing" in p for p in problems), problems


def test_stock_lines_kept_catches_reordered_lines() -> None:
    bad = swap_lines(text("patched-dmesg.txt"), "calling  con_init+", "calling  univ8250_console_init+")
    problems = initcall_debug.check_stock_lines_kept(text("stock-dmesg.txt"), bad)
    assert any("out of order" in p for p in problems), problems


def test_every_call_placed_passes_on_real_dmesg() -> None:
    assert initcall_debug.check_every_call_placed(text("patched-dmesg.txt")) == []


def test_every_call_placed_catches_bare_early_line() -> None:
    bad = text("patched-dmesg.txt").replace(" prio=early modname=core", "", 1)
    problems = initcall_debug.check_every_call_placed(bad)
    assert any("name no priority" in p for p in problems), problems


def test_every_call_placed_catches_console_line_without_level() -> None:
    bad = text("patched-dmesg.txt").replace(" prio=console modname=vt", " prio=-5000 modname=vt")
    problems = initcall_debug.check_every_call_placed(bad)
    assert any("con_init is a console initcall" in p for p in problems), problems


def test_every_call_placed_fails_on_stock_dmesg() -> None:
    assert initcall_debug.check_every_call_placed(text("stock-dmesg.txt")) != []


def run_diff(a: str, b: str) -> dict[str, Any]:
    """What scripts/run --diff-with writes as boot.diff.json."""
    return diff_json(text(a), text(b))


def diff_json(a: str, b: str) -> dict[str, Any]:
    caps = [build_capture(parse_trace_report(t, f"capture {i}")) for i, t in enumerate((a, b))]
    d: dict[str, Any] = json.loads(render_diff(diff_captures(caps[0], caps[1]), "json"))
    return d


def test_blacklist_diff_check_passes_on_real_captures() -> None:
    assert bootcheck.check_blacklist_diff(run_diff(PATCHED, "blacklist-boot.report.txt")) == []


def test_blacklist_diff_check_catches_what_the_blacklist_did_not_do() -> None:
    good = run_diff(PATCHED, "blacklist-boot.report.txt")
    # the blacklisted pair ran after all / a later pair was not skipped /
    # something ran only in the blacklist boot / a call moved
    for key, value in (("result_changes", []), ("only_a", good["only_a"][1:]),
                       ("only_b", ["exit tio_dev_b_exit [boot lib/test_initexit_order]"]),
                       ("order_within_level", [{"call": "init x [boot]"}])):
        assert bootcheck.check_blacklist_diff({**good, key: value}) != [], key
    # the same boot twice: nothing skipped, nothing failed
    assert bootcheck.check_blacklist_diff(run_diff(PATCHED, PATCHED)) != []


def test_patched_stock_diff_check() -> None:
    good = run_diff(PATCHED, "stock-boot.report.txt")
    assert bootcheck.check_patched_stock_diff(good) == []
    assert bootcheck.check_patched_stock_diff(run_diff("stock-boot.report.txt", PATCHED)) != []
    bad = drop_lines(text(PATCHED), r"func=ksysfs_init\+")
    assert bootcheck.check_patched_stock_diff(diff_json(bad, text("stock-boot.report.txt"))) != []


# --- the test objects' own log lines (the check of boots without a trace) ---


def test_boot_log_check_passes_on_real_dmesg() -> None:
    assert bootcheck.check_boot_log(text("patched-dmesg.txt")) == []
    assert bootcheck.check_boot_log(text("blacklist-dmesg.txt"),
                                    blacklisted=frozenset({"tio_blacklist_me_init"})) == []


def test_boot_log_check_catches_tie_in_name_order() -> None:
    # tit_a before tit_b: the tie across two files in name order.
    bad = swap_lines(text("patched-dmesg.txt"), "initexit-boot-test: test_initexit_tie init tit_b",
                     "initexit-boot-test: test_initexit_tie init tit_a")
    problems = bootcheck.check_boot_log(bad)
    assert problems and ("got 'test_initexit_tie init tit_a', expected 'test_initexit_tie init tit_b'"
                         in problems[0]), problems


def test_boot_log_check_catches_missing_unwind_and_no_lines() -> None:
    bad = drop_lines(text("patched-dmesg.txt"), r"initexit-boot-test: test_initexit_adjacent exit tia0")
    assert bootcheck.check_boot_log(bad), "a missing unwind exit passed"
    assert "no 'initexit-boot-test: ' line" in bootcheck.check_boot_log("Linux version 6.12\n")[0]


# O1 (issue 34 point 2): fuse and btrfs built in (kconfig/variants/builtin-fs.config),
# stock 6.12 and the series' stage-b boot path (docs/design/boot-path-v2.md).
O1_STOCK = "builtin-fs-stock-dmesg.txt"
O1_PATCHED = "builtin-fs-patched-dmesg.txt"
O1_PAIRS = {
    "fuse_init": ["fuse_inode_cache_init", "fuseblk_init", "fuse_fs_init", "fuse_req_cache_init",
                  "fuse_miscdev_init", "fuse_sysfs_init", "fuse_sysfs_conn_init", "fuse_ctl_init"],
    "init_btrfs_fs": ("btrfs_props_init btrfs_init_sysfs btrfs_init_compress btrfs_init_cachep btrfs_init_dio "
                      "btrfs_transaction_init btrfs_ctree_init btrfs_free_space_init extent_state_init_cachep "
                      "extent_buffer_init_cachep btrfs_bioset_init extent_map_init ordered_data_init "
                      "btrfs_delayed_inode_init btrfs_auto_defrag_init btrfs_delayed_ref_init "
                      "btrfs_prelim_ref_init btrfs_interface_init btrfs_print_mod_info register_btrfs").split(),
}


def o1(patched: str) -> list[str]:
    return initcall_debug.check_converted_keep_order(text(O1_STOCK), patched, O1_PAIRS)


def fuse_step_lines(lines: list[str]) -> list[int]:
    """The calling and returned lines of fuse's steps (not of its entry)."""
    return [n for n, line in enumerate(lines)
            if line.rstrip().endswith("modname=fuse") and "fuse_init+" not in line]


def test_o1_passes_on_real_captures() -> None:
    assert o1(text(O1_PATCHED)) == []


def test_o1_catches_pairs_merged_by_priority() -> None:
    # The series before issue 34: fuse's steps ran before the device band,
    # ahead of init_devpts_fs, and fuse_init did not exist.
    lines = text(O1_PATCHED).splitlines(keepends=True)
    steps = [lines[n] for n in fuse_step_lines(lines)]
    rest = [line for n, line in enumerate(lines) if n not in set(fuse_step_lines(lines))
            and "fuse_init+" not in line]
    at = find_line(rest, "calling  init_devpts_fs")
    problems = o1("".join(rest[:at] + steps + rest[at:]))
    assert any("differs" in p for p in problems), problems
    assert any("inside fuse_init: None" in p for p in problems), problems


def test_o1_catches_entry_moved() -> None:
    lines = text(O1_PATCHED).splitlines(keepends=True)
    devpts = find_line(lines, "calling  init_devpts_fs")
    entry = find_line(lines, "calling  fuse_init+")
    assert devpts < entry
    problems = o1(move_line(lines, entry, devpts))
    assert any("differs" in p for p in problems), problems


def test_o1_catches_steps_out_of_order() -> None:
    bad = swap_lines(text(O1_PATCHED), "calling  fuse_fs_init+", "calling  fuse_req_cache_init+")
    problems = o1(bad)
    assert any(p.startswith("inside fuse_init:") for p in problems), problems


def test_o1_catches_a_stock_call_lost() -> None:
    problems = o1(drop_lines(text(O1_PATCHED), r"calling  blkdev_init\+"))
    assert any("differs" in p for p in problems), problems

"""Each boot check must fail on a wrong capture.

The fixtures are real captures from the guest (tests/kernel/fixtures/,
written by scripts/run of the patched and the stock kernel; see
fixtures/README).  Every test first shows the check passes on the real
capture, then breaks the capture the way a wrong kernel would and shows the
check catches it.
"""

from __future__ import annotations

import pathlib
import re

import bootcheck

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
    # tio_pre_core (-5200) must run before level=core; move the level event up.
    lines = text(PATCHED).splitlines(keepends=True)
    core = find_line(lines, "initcall_level:", "level=core")
    pre = find_line(lines, "initexit_init_start:", "func=tio_pre_core_init")
    assert pre < core
    problems = bootcheck.check_builtin_order(evs(move_line(lines, core, pre)))
    assert any("tio_pre_core_init" in p and "expected pure" in p for p in problems)


def test_order_check_catches_pair_in_wrong_band() -> None:
    # tio_between (750) runs in band device_sync [500, 1000): with the
    # device_sync event after it, it ran in band device.
    lines = text(PATCHED).splitlines(keepends=True)
    sync = find_line(lines, "initcall_level:", "level=device_sync")
    between = find_line(lines, "initexit_init_finish:", "func=tio_between_init")
    assert sync < between
    problems = bootcheck.check_builtin_order(evs(move_line(lines, sync, between + 1)))
    assert any("tio_between_init" in p and "ran in band device," in p for p in problems), problems


def test_band_check_passes_on_real_capture() -> None:
    assert bootcheck.check_band_events(evs(text(PATCHED))) == []


def test_band_check_catches_missing_sync_band() -> None:
    bad = drop_lines(text(PATCHED), r"initcall_level: +level=fs_sync")
    assert bootcheck.check_band_events(evs(bad)) != []


def test_band_check_catches_per_level_events() -> None:
    # The stock kernel fires initcall_level per level only.
    assert bootcheck.check_band_events(evs(text("stock-boot.report.txt"))) != []


def test_order_check_catches_missing_pair() -> None:
    bad = drop_lines(text(PATCHED), r"func=tio_max_init")
    assert bootcheck.check_builtin_order(evs(bad)) != []


def test_unwind_check_passes_on_real_capture() -> None:
    assert bootcheck.check_builtin_unwind(evs(text(PATCHED))) == []


def test_unwind_check_catches_forward_unwind() -> None:
    report = text(PATCHED)
    # Exchange the unwind blocks of tiu1 and tiu0: exits in forward order.
    bad = swap_lines(report, "initexit_unwind:      path=boot origin=test_initexit_unwind", "func=tiu0_exit failed_idx")
    bad = swap_lines(bad, "exit_start:  path=boot origin=test_initexit_unwind", "func=tiu0_exit reason=unwind")
    assert bootcheck.check_builtin_unwind(evs(bad)) != []


def test_unwind_check_catches_missing_unwind() -> None:
    bad = drop_lines(text(PATCHED), r"origin=test_initexit_unwind .*func=tiu0_exit")
    assert bootcheck.check_builtin_unwind(evs(bad)) != []


def test_unwind_check_catches_later_pair_running() -> None:
    report = text(PATCHED)
    line = next(x for x in report.splitlines(keepends=True) if "init_start:" in x and "func=tiu2_init" in x)
    bad = report + line.replace("tiu2_init", "tiu3_init").replace("prio=10", "prio=20")
    assert bootcheck.check_builtin_unwind(evs(bad)) != []


def test_unwind_check_catches_neighbour_touched() -> None:
    bad = drop_lines(text(PATCHED), r"func=tin1_init")
    assert bootcheck.check_builtin_unwind(evs(bad)) != []


def test_stock_check_passes_on_real_captures() -> None:
    assert bootcheck.check_stock_initcalls_kept(evs(text("stock-boot.report.txt")), evs(text(PATCHED))) == []


def test_stock_check_catches_lost_initcall() -> None:
    bad = drop_lines(text(PATCHED), r"func=ksysfs_init\+")
    assert bootcheck.check_stock_initcalls_kept(evs(text("stock-boot.report.txt")), evs(bad)) != []


def test_stock_check_catches_reordered_initcalls() -> None:
    bad = swap_lines(text(PATCHED), "initcall_start:       func=ksysfs_init+", "initcall_start:       func=wq_sysfs_init+")
    assert bootcheck.check_stock_initcalls_kept(evs(text("stock-boot.report.txt")), evs(bad)) != []


def test_initcall_debug_check_passes_on_real_dmesg() -> None:
    assert bootcheck.check_initcall_debug(text("patched-dmesg.txt")) == []


def test_initcall_debug_check_catches_missing_priority() -> None:
    bad = text("patched-dmesg.txt").replace(" prio=-5000 origin=workqueue", "", 1)
    assert bootcheck.check_initcall_debug(bad) != []


def test_blacklist_check_passes_on_real_capture() -> None:
    assert bootcheck.check_blacklisted(evs(text("blacklist-boot.report.txt")), text("blacklist-dmesg.txt")) == []


def test_blacklist_check_catches_pair_that_ran() -> None:
    # The normal boot ran tio_blacklist_me_init: as a blacklist capture it fails.
    assert bootcheck.check_blacklisted(evs(text(PATCHED)), text("patched-dmesg.txt")) != []

"""Checks of the boot path, read from a scripts/run output folder.

Each check takes the parsed boot trace (and dmesg text) and returns a list
of problems, empty when the kernel kept its promise.  They are plain
functions so tests/kernel/test_bootcheck_selftest.py can feed them wrong
traces and show that each one fails.
"""

from __future__ import annotations

import os
import re
import sys
from dataclasses import dataclass
from typing import Iterable, Optional

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))

from analysis.model import BANDS as BAND_PRIO_ALL  # noqa: E402  (SPEC §2.2's table, one copy)
from analysis.model import LEVELS as LEVEL_NAMES  # noqa: E402
from analysis.parse import parse_trace_report  # noqa: E402

#: Band priorities of the initcall levels (include/linux/initexit.h).
LEVEL_PRIO = {level: BAND_PRIO_ALL[level] for level in LEVEL_NAMES}
LEVELS = tuple(LEVEL_PRIO)

#: Every band, in boot order: the series fires initcall_level at each.
BAND_PRIO = dict(sorted(BAND_PRIO_ALL.items(), key=lambda kv: kv[1]))
BANDS = tuple(BAND_PRIO)
INT_MIN, INT_MAX = -(2**31), 2**31 - 1

#: lib/test_initexit_order.c, in the order the series promises: ascending
#: priority, ties (tio_dev_a, tio_dev_b at 0) in declaration order.
ORDER_EXPECTED = (
    ("tio_min_init", INT_MIN),
    ("tio_pre_core_init", -5200),
    ("tio_core_init", -5000),
    ("tio_core_plus_init", -4999),
    ("tio_dev_a_init", 0),
    ("tio_dev_b_init", 0),
    ("tio_blacklist_me_init", 100),
    ("tio_between_init", 750),
    ("tio_past_init", 1600),
    ("tio_max_init", INT_MAX),
)


@dataclass(frozen=True)
class Ev:
    """One event of the boot trace: name, fields, line number."""

    line: int
    name: str
    fields: dict[str, str]


def fields_of(info: str) -> dict[str, str]:
    """``path=boot origin=x idx=3`` -> {"path": "boot", ...}."""
    out: dict[str, str] = {}
    for tok in info.split():
        key, sep, value = tok.partition("=")
        if sep:
            out[key] = value
    return out


def read_events(report_text: str) -> list[Ev]:
    """The initcall and initexit events of a ``trace-cmd report`` text."""
    parsed = parse_trace_report(report_text, "boot.report.txt")
    return [Ev(e.line, e.name.value, fields_of(e.info)) for e in parsed.events]


def bare(func: str) -> str:
    """``con_init+0x0/0x30`` -> ``con_init``."""
    return func.split("+", 1)[0]


def expected_band(prio: int) -> Optional[str]:
    """The band whose initcall_level was last seen before a pair of this
    priority runs: pairs below a band run before that band's event."""
    last = None
    for band in BANDS:
        if BAND_PRIO[band] <= prio:
            last = band
    return last


def level_of_band(band: Optional[str]) -> Optional[str]:
    """The classic level a band belongs to: ``core_sync`` -> ``core``,
    ``rootfs`` -> ``fs``; a level name is its own level."""
    if band == "rootfs":
        return "fs"
    if band is not None and band.endswith("_sync"):
        return band[: -len("_sync")]
    return band


def check_band_events(events: list[Ev]) -> list[str]:
    """initcall_level fired once at the start of every band, in band order
    (after early and console, which keep their own mechanisms)."""
    got = [e.fields.get("level") for e in events if e.name == "initcall_level"]
    got = [lvl for lvl in got if lvl not in ("early", "console")]
    if got != list(BANDS):
        return [f"initcall_level fired for {got}, expected every band in order: {list(BANDS)}"]
    return []


def level_of_each(events: Iterable[Ev]) -> list[tuple[Ev, Optional[str]]]:
    """Every event with the initcall_level in force when it fired."""
    level: Optional[str] = None
    out: list[tuple[Ev, Optional[str]]] = []
    for e in events:
        if e.name == "initcall_level":
            level = e.fields.get("level")
            continue
        out.append((e, level))
    return out


def check_builtin_order(events: list[Ev], blacklisted: frozenset[str] = frozenset()) -> list[str]:
    """test_initexit_order's pairs ran once each, in the promised order, each
    inside the level its priority belongs to, with init start/finish paired."""
    problems = []
    expected = [(f, p) for f, p in ORDER_EXPECTED if f not in blacklisted]
    starts = [
        (e, lvl)
        for e, lvl in level_of_each(events)
        if e.name == "initexit_init_start" and e.fields.get("origin") == "test_initexit_order"
    ]
    got = [(e.fields.get("func"), int(e.fields.get("prio", "0"))) for e, _ in starts]
    if got != expected:
        problems.append(f"test_initexit_order inits ran as {got}, expected {expected}")
    for e, lvl in starts:
        if e.fields.get("path") != "boot":
            problems.append(f"line {e.line}: path={e.fields.get('path')}, expected boot")
        want = expected_band(int(e.fields.get("prio", "0")))
        if lvl != want and not (want is None and lvl in (None, "early")):
            problems.append(
                f"line {e.line}: {e.fields.get('func')} prio={e.fields.get('prio')} ran in band {lvl}, expected {want}"
            )
    finishes = [
        e for e in events if e.name == "initexit_init_finish" and e.fields.get("origin") == "test_initexit_order"
    ]
    if [e.fields.get("func") for e in finishes] != [f for f, _ in expected]:
        problems.append("test_initexit_order: init_finish events do not pair with init_start")
    for e in finishes:
        if e.fields.get("ret") != "0":
            problems.append(f"line {e.line}: {e.fields.get('func')} returned {e.fields.get('ret')}")
    return problems


def _sequence(events: list[Ev], origin: str) -> list[str]:
    """An object's initexit events as compact strings, in trace order."""
    out = []
    for e in events:
        f = e.fields
        if not e.name.startswith("initexit_") or f.get("origin") != origin:
            continue
        kind = e.name[len("initexit_"):]
        text = f"{kind} {f.get('func')}"
        if kind == "init_finish":
            text += f" ret={f.get('ret')}"
        elif kind in ("exit_start", "exit_finish"):
            text += f" reason={f.get('reason')}"
        elif kind == "unwind":
            text += f" failed_func={f.get('failed_func')} error={f.get('error')}"
        out.append(text)
    return out


def check_builtin_unwind(events: list[Ev], fail_at: int = 2) -> list[str]:
    """test_initexit_unwind: inits 0..fail_at, the failing one returns
    -(200+fail_at), the earlier exits run in reverse as an unwind, later
    pairs never run.  test_initexit_neighbour: all three inits ran, no exit."""
    problems = []
    want = []
    for i in range(fail_at + 1):
        ret = -(200 + i) if i == fail_at else 0
        want += [f"init_start tiu{i}_init", f"init_finish tiu{i}_init ret={ret}"]
    for i in range(fail_at - 1, -1, -1):
        want += [
            f"unwind tiu{i}_exit failed_func=tiu{fail_at}_init error={-(200 + fail_at)}",
            f"exit_start tiu{i}_exit reason=unwind",
            f"exit_finish tiu{i}_exit reason=unwind",
        ]
    got = _sequence(events, "test_initexit_unwind")
    if got != want:
        problems.append("test_initexit_unwind events:\n  got:  " + "\n        ".join(got) + "\n  want: " + "\n        ".join(want))
    want_n = []
    for i in range(3):
        want_n += [f"init_start tin{i}_init", f"init_finish tin{i}_init ret=0"]
    got_n = _sequence(events, "test_initexit_neighbour")
    if got_n != want_n:
        problems.append(f"test_initexit_neighbour events: got {got_n}, want {want_n}")
    return problems


def initcall_runs(events: list[Ev]) -> list[tuple[str, Optional[str]]]:
    """(function, level) of every initcall_start from pure on, in order.
    A patched trace names bands; each maps to its level, as stock names it."""
    out: list[tuple[str, Optional[str]]] = []
    for e, band in level_of_each(events):
        lvl = level_of_band(band)
        if e.name == "initcall_start" and lvl in LEVEL_PRIO:
            out.append((bare(e.fields.get("func", "?")), lvl))
    return out


def check_stock_initcalls_kept(stock: list[Ev], patched: list[Ev]) -> list[str]:
    """Every initcall the stock kernel ran at a level still runs, at the same
    level and in the same relative order, in the patched kernel."""
    s = initcall_runs(stock)
    p_all = initcall_runs(patched)
    names = {f for f, _ in s}
    p = [(f, lvl) for f, lvl in p_all if f in names]
    problems = []
    missing = sorted(names - {f for f, _ in p_all})
    if missing:
        problems.append(f"{len(missing)} stock initcall(s) never ran in the patched kernel: {missing[:10]}")
    if not missing and p != s:
        for i, (a, b) in enumerate(zip(s, p)):
            if a != b:
                problems.append(f"initcall #{i}: stock ran {a[0]} ({a[1]}), patched ran {b[0]} ({b[1]})")
                break
        else:
            problems.append(f"stock ran {len(s)} initcalls, patched {len(p)} of them")
    if len(s) < 100:
        problems.append(f"only {len(s)} stock initcalls from level pure on: is this a whole boot?")
    return problems


def check_blacklisted(events: list[Ev], dmesg: str, func: str = "tio_blacklist_me_init") -> list[str]:
    """A pair named by initcall_blacklist= did not run, the kernel said so,
    and every other pair of its object still ran in order."""
    problems = []
    if any(e.name == "initexit_init_start" and e.fields.get("func") == func for e in events):
        problems.append(f"{func} ran although blacklisted")
    if f"{func} (prio 100) blacklisted, not run" not in dmesg:
        problems.append(f"dmesg does not report that {func} was skipped")
    problems += check_builtin_order(events, blacklisted=frozenset({func}))
    return problems


def strip_format_id(text: str) -> str:
    """A tracefs format file without its ``ID:`` line (IDs depend on config)."""
    return "".join(line for line in text.splitlines(keepends=True) if not line.startswith("ID: "))


def check_initcall_debug(dmesg: str) -> list[str]:
    """From do_initcalls() on (the "initexit: ordered" line), every
    initcall_debug line carries prio= and origin=, for classic initcalls and
    pairs alike.  Early and console initcalls run before and have no band."""
    lines = dmesg.splitlines()
    marker = [i for i, line in enumerate(lines) if "initexit: ordered " in line]
    if not marker:
        return ["no 'initexit: ordered N built-in pairs' line: is the series applied?"]
    lines = lines[marker[0]:]
    # "[ time] calling  fn @ pid": PCI quirks print "pci ...: calling" lines too.
    calling = [line for line in lines if re.match(r"\[\s*[\d.]+\] calling  \S+ @ ", line)]
    returned = [line for line in lines if re.match(r"\[\s*[\d.]+\] initcall \S+ returned ", line)]
    problems = []
    if len(calling) < 100:
        problems.append(f"only {len(calling)} 'calling' lines after do_initcalls began: was initcall_debug on?")
    if len(returned) != len(calling):
        problems.append(f"{len(calling)} 'calling' lines but {len(returned)} 'returned' lines")
    bare_lines = [line for line in calling + returned if " prio=" not in line or " origin=" not in line]
    if bare_lines:
        problems.append(f"{len(bare_lines)} initcall_debug lines without prio=/origin=, e.g. {bare_lines[:2]}")
    if not any("tio_core_init" in line and "prio=-5000 origin=test_initexit_order" in line for line in calling):
        problems.append("no 'calling tio_core_init ... prio=-5000 origin=test_initexit_order' line")
    if not any(" origin=workqueue" in line or " origin=ksysfs" in line for line in calling):
        problems.append("classic initcalls show no origin from their KBUILD_MODNAME (CONFIG_KALLSYMS_ALL?)")
    return problems

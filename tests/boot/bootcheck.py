"""Checks of the boot path, read from a scripts/run output folder.

Assertions over the analysis's model of the capture: the trace is read by
analysis/ (parse.py, and build.py with schema.py's field parsers: each
event's fields parsed once, typed), dmesg by analysis/parse.py (its
``initexit:`` notices and initcall_debug lines), and what the kernel must
have done is analysis/series.py's reference model of the series applied to
the test objects' table.  Nothing here reads trace or dmesg text itself.

Each check returns a list of problems, empty when the kernel kept its
promise.  They are plain functions so tests/boot/test_bootcheck_selftest.py
can feed them wrong traces and show that each one fails.
"""

from __future__ import annotations

import difflib
import os
import pathlib
import sys
from dataclasses import dataclass
from typing import Any, Iterable, Optional

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))

from analysis import series  # noqa: E402  (the reference model of the series)
from analysis.build import build_capture  # noqa: E402
from analysis.diff import calls_of, diff_captures  # noqa: E402
from analysis.model import BANDS as BAND_PRIO_ALL  # noqa: E402  (SPEC §2.2's table, one copy)
from analysis.model import LEVEL_BANDS  # noqa: E402
from analysis.model import EventName, KernelNotice, ParsedInput, bare_func  # noqa: E402
from analysis.parse import parse_dmesg, parse_trace_report  # noqa: E402
from analysis.schema import DMESG_CALLING_INFO_RE, DMESG_RETURNED_INFO_RE, ORIGIN_RE, PRIO_RE, SCHEMA, FieldParser, loose_fields, printed  # noqa: E402

#: Every band, in boot order: the series fires initcall_band at each.
BAND_PRIO = dict(sorted(BAND_PRIO_ALL.items(), key=lambda kv: kv[1]))
BANDS = tuple(BAND_PRIO)
INT_MIN, INT_MAX = -(2**31), 2**31 - 1


@dataclass(frozen=True)
class Pair:
    """One module_init_exit() pair of a boot test object."""

    origin: str
    name: str
    prio: int
    has_exit: bool = True
    has_init: bool = True

    @property
    def init(self) -> Optional[str]:
        return f"{self.name}_init" if self.has_init else None

    @property
    def exit(self) -> Optional[str]:
        return f"{self.name}_exit" if self.has_exit else None


#: The test objects' origins: a built-in pair's origin is KBUILD_MODFILE,
#: the object's path.  The neighbour's file has the same name as the unwind
#: test's, so both have KBUILD_MODNAME "test_initexit_unwind" (what
#: initcall_debug prints): only the origin keeps the failure out of it.
ORDER = "lib/test_initexit_order"
UNWIND = "lib/test_initexit_unwind"
NEIGHBOUR = "lib/test_initexit_neighbour/test_initexit_unwind"
ADJACENT = "lib/test_initexit_adjacent"
KEEP = "lib/test_initexit_keep"
LATE = "lib/test_initexit_late"
#: One object of two files (lib/test_initexit_tie/Makefile:
#: test_initexit_tie-y := tie_b.o tie_a.o), a pair each at priority 30, the
#: entry in tie_a.c: the tie follows link order, the reverse of name order.
TIE = "lib/test_initexit_tie/test_initexit_tie"

#: Each object's entry (module_init_exit_entry(), late_init_exit_entry()
#: for the late one) and the band it is an initcall of.
ENTRIES: dict[str, series.Entry] = {
    ORDER: series.Entry(ORDER, "tio_entry"),
    UNWIND: series.Entry(UNWIND, "tiu_entry"),
    NEIGHBOUR: series.Entry(NEIGHBOUR, "tin_entry"),
    ADJACENT: series.Entry(ADJACENT, "tia_entry"),
    KEEP: series.Entry(KEEP, "tik_entry"),
    LATE: series.Entry(LATE, "til_entry", "late"),
    TIE: series.Entry(TIE, "tit_entry"),
}
ORIGINS = tuple(ENTRIES)

#: Every built-in pair of a kernel built with CONFIG_TEST_INITEXIT_BOOT (the
#: project's configuration declares no other): the seven objects of the lib
#: test patch, in link order (lib/Makefile) and declaration order.
#: tests/boot/test_reference.py ties this table to the patch.
BUILTIN_PAIRS = (
    Pair(ORDER, "tio_dev_a", 0),
    Pair(ORDER, "tio_max", 499),
    Pair(ORDER, "tio_between", 250),
    Pair(ORDER, "tio_one", 1),
    Pair(ORDER, "tio_blacklist_me", 100),
    Pair(ORDER, "tio_dev_b", 0),
    Pair(UNWIND, "tiu3", 300),
    Pair(UNWIND, "tiu0", 5),
    Pair(UNWIND, "tiu4", 400),
    Pair(UNWIND, "tiu1", 100),
    Pair(UNWIND, "tiu2", 200),
    Pair(NEIGHBOUR, "tin0", 10),
    Pair(NEIGHBOUR, "tin1", 150),
    Pair(NEIGHBOUR, "tin2", 250),
    Pair(ADJACENT, "tia0", 1),
    Pair(ADJACENT, "tia1", 2, has_init=False),
    Pair(ADJACENT, "tia2", 3),
    Pair(ADJACENT, "tia3", 4),
    Pair(ADJACENT, "tia4", 5),
    Pair(KEEP, "tik0", 6),
    Pair(KEEP, "tik1", 7, has_exit=False),
    Pair(KEEP, "tik2", 8),
    Pair(LATE, "til1", 1499),
    Pair(LATE, "til0", 1000),
    Pair(TIE, "tit_b", 30),
    Pair(TIE, "tit_a", 30),
)

#: lib/test_initexit_order.c, in the order the series promises: ascending
#: priority, ties (tio_dev_a, tio_dev_b at 0) in declaration order.
ORDER_EXPECTED = (("tio_dev_a_init", 0), ("tio_dev_b_init", 0), ("tio_one_init", 1),
                  ("tio_blacklist_me_init", 100), ("tio_between_init", 250), ("tio_max_init", 499))

#: Stands for "any unsigned decimal" in an expected event (a measured
#: field, duration_ns, is not predicted).
ANY_U64 = "<u64>"

#: An optional field (one a newer kernel adds) the reference model does not
#: predict: any value, or absent.  A required field must be predicted.
ANY_OPTIONAL = "<any>"

#: Every field each initexit event carries, in its print fmt order: the
#: analysis's schema, the one table of events (analysis/schema.py).
EVENT_FIELDS = {name: s.field_names for name, s in SCHEMA.items() if name.startswith("initexit_")}

_PARSERS = {name: FieldParser(s) for name, s in SCHEMA.items()}


@dataclass(frozen=True)
class Ev:
    """One event of the boot trace as the analysis read it: name, fields
    (as printed; from the typed record, or for an event not in the
    documented format the words it holds, with ``bad`` saying what is
    wrong), line number."""

    line: int
    name: str
    fields: dict[str, str]
    bad: str = ""
    pid: int = 0


def read_events(report_text: str) -> list[Ev]:
    """The initcall and initexit events of a ``trace-cmd report`` text, with
    the fields the analysis parsed from each."""
    cap = build_capture(parse_trace_report(report_text, "boot.report.txt"), keep_records=True)
    out = []
    for e in cap.parsed.events:
        name = e.name.value
        if name not in SCHEMA:
            continue
        rec = cap.records.get(e.line)
        if rec is None:
            out.append(Ev(e.line, name, loose_fields(e.info), _PARSERS[name].diagnose(e.info), e.pid))
        else:
            out.append(Ev(e.line, name, {k: printed(v) for k, v in rec._asdict().items() if v is not None},
                          pid=e.pid))
    return out


def read_dmesg(dmesg: str) -> ParsedInput:
    """dmesg as the analysis reads it: initcall_debug events and notices."""
    return parse_dmesg(dmesg, "dmesg.txt")


#: The levels stock 6.12 names in initcall_level, in do_initcalls() order
#: (early and console fire elsewhere, once each, before pure).
LEVELS = tuple(LEVEL_BANDS)
OUTSIDE_LEVELS = ("early", "console")


def level_events(events: Iterable[Ev]) -> list[str]:
    """The names initcall_level fired with, in order."""
    return [e.fields.get("level", "?") for e in events if e.name == "initcall_level"]


def check_level_events(events: list[Ev]) -> list[str]:
    """initcall_level fired as in stock (E1): early and console once each,
    then once per classic level, with the level's name, in level order."""
    got = level_events(events)
    problems = []
    for name in OUTSIDE_LEVELS:
        if got.count(name) != 1:
            problems.append(f"initcall_level fired {got.count(name)} times for {name}, expected once")
    main = [lvl for lvl in got if lvl not in OUTSIDE_LEVELS]
    if main != list(LEVELS):
        problems.append(f"initcall_level fired for {main}, expected stock's levels in order: {list(LEVELS)}")
    elif any(lvl not in OUTSIDE_LEVELS for lvl in got[:len(OUTSIDE_LEVELS)]):
        problems.append(f"initcall_level fired for {got}: early and console must come before pure")
    return problems


def check_level_events_as_stock(stock: list[Ev], patched: list[Ev]) -> list[str]:
    """The patched boot's initcall_level names equal the stock boot's."""
    a, b = level_events(stock), level_events(patched)
    if a != b:
        return [f"initcall_level fired for {b}, stock for {a}"]
    return []


def check_band_events(events: list[Ev]) -> list[str]:
    """initcall_band fired once at the start of every band, in band order,
    with the band's priority; each after its level's initcall_level and
    before the next level's (E1)."""
    problems = []
    level: Optional[str] = None
    got = []
    for e in events:
        if e.name == "initcall_level":
            level = e.fields.get("level")
        elif e.name == "initcall_band":
            band = e.fields.get("band", "?")
            got.append(band)
            if band not in BAND_PRIO:
                problems.append(f"line {e.line}: initcall_band for {band}, not a band")
                continue
            if _int(e.fields.get("prio")) != BAND_PRIO[band]:
                problems.append(f"line {e.line}: band {band} prio={e.fields.get('prio')}, expected {BAND_PRIO[band]}")
            want = next((lvl for lvl, prios in LEVEL_BANDS.items() if BAND_PRIO[band] in prios), None)
            if level != want:
                problems.append(f"line {e.line}: band {band} fired after initcall_level {level}, expected {want}")
    if got != list(BANDS):
        problems.insert(0, f"initcall_band fired for {got}, expected every band in order: {list(BANDS)}")
    return problems


def level_of_each(events: Iterable[Ev]) -> list[tuple[Ev, Optional[str]]]:
    """Every event with the band in force when it fired: the last
    initcall_band, or initcall_level for early and console (and for a
    level's name, which its first band's event repeats)."""
    level: Optional[str] = None
    out: list[tuple[Ev, Optional[str]]] = []
    for e in events:
        if e.name == "initcall_level":
            level = e.fields.get("level")
            continue
        if e.name == "initcall_band":
            level = e.fields.get("band")
            continue
        out.append((e, level))
    return out


def _int(value: Optional[str]) -> Optional[int]:
    """A decimal field as an int, None when absent or not a number."""
    try:
        return int(value) if value is not None else None
    except ValueError:
        return None


Expected = tuple[str, dict[str, str]]


def init_return(pair: Pair, fail_at: int = 2) -> int:
    """What a test pair's init returns: tiuN_init fails with -(200 + N) when
    N == test_initexit_unwind.fail_at (lib/test_initexit_unwind.c),
    tia3_init with -303 (lib/test_initexit_adjacent.c) and tik2_init with
    -308 (lib/test_initexit_keep.c)."""
    if pair.origin == UNWIND and pair.name == f"tiu{fail_at}":
        return -(200 + fail_at)
    if pair.origin == ADJACENT and pair.name == "tia3":
        return -303
    if pair.origin == KEEP and pair.name == "tik2":
        return -308
    return 0


def model_records(fail_at: int = 2) -> list[series.Record]:
    """The test objects' table as linked, as the reference model takes it:
    each file's pairs in declaration order, then its entry (every test
    file declares its entry last; tie_b.c has none, tie_a.c's comes after
    its pair)."""
    out: list[series.Record] = []
    for origin in ORIGINS:
        out += [series.Pair(p.origin, p.prio, p.init, p.exit, init_return(p, fail_at))
                for p in BUILTIN_PAIRS if p.origin == origin]
        out.append(ENTRIES[origin])
    return out


def model(blacklisted: frozenset[str] = frozenset(), fail_at: int = 2,
          classic: Optional[dict[str, list[str]]] = None) -> series.BootOutcome:
    """What the series must do with the test objects at boot."""
    return series.boot(model_records(fail_at), blacklisted, classic)


def classic_calls(events: Iterable[Ev]) -> dict[str, list[str]]:
    """band -> the initcalls do_initcalls() itself made in it, in order
    (classic initcalls and the objects' entries): every initcall_start of a
    band with no call open on its task (a pair's own initcall is inside its
    entry).  The reference model runs each entry at its place in them."""
    out: dict[str, list[str]] = {}
    depth: dict[int, int] = {}  # open initcalls per task
    for e, band in level_of_each(events):
        if e.name == "initcall_start":
            task = e.pid
            if depth.get(task, 0) == 0 and band in BAND_PRIO:
                out.setdefault(band, []).append(bare_func(e.fields.get("func", "?")))
            depth[task] = depth.get(task, 0) + 1
        elif e.name == "initcall_finish":
            task = e.pid
            depth[task] = max(0, depth.get(task, 0) - 1)
    return out


def _expected(name: str, known: dict[str, str]) -> tuple[str, dict[str, str]]:
    """An event with every field of the schema: the known ones, ANY_U64 for
    the measured ones, ANY_OPTIONAL for optional ones the model leaves out."""
    fields = {f.name: (ANY_U64 if f.measured else
                       known.get(f.name, ANY_OPTIONAL) if f.optional else known[f.name])
              for f in SCHEMA[name].fields}
    return name, fields


def _notice(n: series.Notice) -> KernelNotice:
    """A model notice as the analysis reads the kernel's line (parse.py)."""
    p = n.pair
    if n.kind == "refused":
        if n.why == "undoable":
            assert p is not None
            return KernelNotice(0, "refused", n.origin, str(p.init), other=n.other or "", why="undoable")
        if n.why == "band":
            assert p is not None
            return KernelNotice(0, "refused", n.origin, str(p.init), p.prio, other=n.other or "", why="band")
        if n.why == "split":
            return KernelNotice(0, "refused", n.origin, n.other or "", why="split")
        return KernelNotice(0, "refused", n.origin, value=n.value, why=str(n.why))
    assert p is not None
    func = p.init if p.init is not None else "-"
    if n.kind == "failed":
        return KernelNotice(0, "failed", n.origin, func, p.prio, n.value, why=n.why or "")
    return KernelNotice(0, n.kind, n.origin, func, p.prio)


def boot_plan(blacklisted: frozenset[str] = frozenset(), fail_at: int = 2,
              classic: Optional[dict[str, list[str]]] = None) -> tuple[list[Expected], list[KernelNotice]]:
    """What the test objects' entries must do, as analysis/series.py's
    reference model says: every initexit event, in order, with every field
    of the schema (measured ones are ANY_U64), and what the kernel must say
    in dmesg about the objects (refused at bind, blacklisted, failed,
    skipped after an earlier failure of their object), as notices.
    ``classic``: the initcalls of each band (classic_calls() of the boot
    trace), which places the entries."""
    out = model(blacklisted, fail_at, classic)
    events: list[Expected] = []
    for st in out.steps:
        p = st.pair
        base = {"path": "boot", "origin": p.origin, "idx": str(st.idx), "prio": str(p.prio)}
        if st.kind == "init":
            assert p.init is not None
            fields = {**base, "func": p.init, "has_exit": str(int(p.exit is not None)), "ret": str(p.ret)}
            events.append(_expected("initexit_init_start", fields))
            events.append(_expected("initexit_init_finish", fields))
            continue
        assert p.exit is not None and st.reason is not None
        fields = {**base, "func": p.exit, "reason": st.reason}
        if st.reason == "unwind":
            assert st.failed is not None
            # The failed init as it ran (a blacklisted one "returns" -EPERM).
            f = next(s.pair for s in out.steps if s.kind == "init" and s.idx == st.failed)
            events.append(_expected("initexit_unwind", {
                **fields, "failed_idx": str(st.failed), "failed_prio": str(f.prio),
                "failed_func": str(f.init), "error": str(f.ret)}))
        events.append(_expected("initexit_exit_start", fields))
        events.append(_expected("initexit_exit_finish", fields))
    return events, [_notice(n) for n in out.notices]


def _render(name: str, fields: dict[str, str]) -> str:
    """``init_finish idx=2 prio=0 func=tio_dev_b_init ret=0``."""
    rest = " ".join(f"{k}={v}" for k, v in fields.items() if k not in ("path", "origin", "duration_ns"))
    return f"{name[len('initexit_'):]} {rest}"


def compare_events(what: str, got: list[Ev], want: list[Expected]) -> list[str]:
    """Problems when ``got`` is not exactly ``want``: the same events in the
    same order (compared by event and func), then every field of each."""
    got_keys = [(e.name, e.fields.get("func")) for e in got]
    want_keys = [(name, fields.get("func")) for name, fields in want]
    if got_keys != want_keys:
        return [
            f"{what} events:\n  got:  "
            + "\n        ".join(f"line {e.line}: " + _render(e.name, e.fields) for e in got)
            + "\n  want: "
            + "\n        ".join(_render(n, f) for n, f in want)
        ]
    problems = []
    for e, (name, fields) in zip(got, want):
        if e.bad:
            problems.append(f"line {e.line}: {what} {name} {fields['func']}: not in the documented format "
                            f"({e.bad})")
        for f in SCHEMA[name].fields:
            field = f.name
            exp, val = fields[field], e.fields.get(field)
            if val is None and f.optional and not e.bad:
                continue  # a capture from a kernel before the field
            if exp == ANY_OPTIONAL:
                continue
            if exp == ANY_U64:
                if val is None or not val.isdigit():
                    problems.append(f"line {e.line}: {what} {name} {fields['func']}: {field}={val}, expected an unsigned integer")
            elif val != exp:
                problems.append(f"line {e.line}: {what} {name} {fields['func']}: {field}={val}, expected {field}={exp}")
        extra = sorted(set(e.fields) - set(EVENT_FIELDS[name]))
        if extra:
            problems.append(f"line {e.line}: {what} {name} {fields['func']}: unexpected field(s) {extra}")
    return problems


def events_of(events: list[Ev], origin: str) -> list[Ev]:
    """The initexit events of one object (any path), in trace order."""
    return [e for e in events if e.name.startswith("initexit_") and e.fields.get("origin") == origin]


def expected_of(plan: list[Expected], origin: str) -> list[Expected]:
    return [(name, fields) for name, fields in plan if fields["origin"] == origin]


def _band_problems(events: list[Ev], origins: tuple[str, ...]) -> list[str]:
    """Each init_start of these objects fired inside its entry's band (after
    that band's initcall_band, before the next): every pair's priority lies
    in its entry's band, so this is the band its priority names too."""
    problems = []
    for e, lvl in level_of_each(events):
        origin = e.fields.get("origin")
        if e.name != "initexit_init_start" or origin not in origins:
            continue
        want = ENTRIES[origin].band
        if lvl != want:
            problems.append(
                f"line {e.line}: {e.fields.get('func')} prio={e.fields.get('prio')} ran in band {lvl}, "
                f"expected {want} (its entry {ENTRIES[origin].func}'s)")
    return problems


def check_builtin_order(events: list[Ev], blacklisted: frozenset[str] = frozenset()) -> list[str]:
    """test_initexit_order's pairs ran once each, in the promised order
    (ascending priority, ties in declaration order), inside the device band,
    and every field of every event (path, origin, idx, prio, func, ret,
    duration_ns) is what the kernel must emit for the declared pairs: on a
    normal boot every init and no exit; with one of them blacklisted, the
    inits up to it (it fails with -EPERM), the unwind of those before it,
    and none after it."""
    origin = ORDER
    problems = []
    plan, _ = boot_plan(blacklisted)
    expected = [(f["func"], int(f["prio"])) for name, f in expected_of(plan, origin) if name == "initexit_init_start"]
    if not blacklisted and expected != list(ORDER_EXPECTED):
        problems.append(f"the model runs {origin} as {expected}, the series promises {list(ORDER_EXPECTED)}")
    starts = [e for e in events if e.name == "initexit_init_start" and e.fields.get("origin") == origin]
    got = [(e.fields.get("func"), _int(e.fields.get("prio"))) for e in starts]
    if got != expected:
        problems.append(f"{origin} inits ran as {got}, expected {expected}")
    problems += _band_problems(events, (origin,))
    problems += compare_events(origin, events_of(events, origin), expected_of(plan, origin))
    return problems


def check_builtin_unwind(events: list[Ev], fail_at: int = 2) -> list[str]:
    """The boot unwind, each object alone at its entry.
    test_initexit_unwind: tiu0..tiu2 run (sorted from their declaration
    order), tiu2 fails with -(200+fail_at), the exits of tiu1 and tiu0 run
    at once in that order as an unwind naming the failed pair (failed_idx,
    failed_prio, failed_func, error), tiu3 and tiu4 never run.
    test_initexit_adjacent: tia3 fails with -303, the exits of tia2, tia1
    (exit only) and tia0 run, tia4 never runs.  test_initexit_keep (tik1 has
    no exit and runs before tik2): refused at boot, no event.  The
    neighbour (same KBUILD_MODNAME as the unwind test, another object), the
    late object (in the late band) and the two-file tie object (tit_b
    first, link order): every init, no exit.  Every field of every event is
    compared, and each init in its entry's band."""
    plan, _ = boot_plan(fail_at=fail_at, classic=classic_calls(events))
    problems = []
    objects = (UNWIND, ADJACENT, KEEP, NEIGHBOUR, LATE, TIE)
    for origin in objects:
        problems += compare_events(origin, events_of(events, origin), expected_of(plan, origin))
    problems += _band_problems(events, objects)
    return problems


def check_entries(events: list[Ev], blacklisted: frozenset[str] = frozenset(), fail_at: int = 2) -> list[str]:
    """Each test object ran at its entry: the entry is an initcall of its
    band (device, late for test_initexit_late) made by do_initcalls()
    itself, the entries ran in the model's order (link order within a
    band), each returned what the model says (the failed init's error;
    -ENOEXEC for the refused test_initexit_keep; 0 otherwise), and every
    initexit event of its object lies between its initcall_start and
    initcall_finish, on its task."""
    out = model(blacklisted, fail_at, classic_calls(events))
    want = [(c.func, c.band, c.ret) for c in out.calls if c.origin in ENTRIES and not c.blacklisted]
    names = {e.func for e in ENTRIES.values()}
    spans: dict[str, tuple[Ev, Optional[Ev], Optional[str]]] = {}
    got = []
    for e, band in level_of_each(events):
        func = bare_func(e.fields.get("func", ""))
        if func not in names:
            continue
        if e.name == "initcall_start":
            spans[func] = (e, None, band)
        elif e.name == "initcall_finish" and func in spans:
            start, _f, band0 = spans[func]
            spans[func] = (start, e, band0)
            got.append((func, band0, _int(e.fields.get("ret"))))
    problems = []
    if got != want:
        problems.append(f"the entries ran as {got}, expected {want} ((entry, band, return), in order)")
    for origin, entry in ENTRIES.items():
        evs = events_of(events, origin)
        if entry.func not in spans:
            if evs:
                problems.append(f"{origin}: {len(evs)} initexit event(s) but its entry {entry.func} never ran")
            continue
        start, finish, _band = spans[entry.func]
        outside = [e for e in evs if e.line < start.line or (finish is not None and e.line > finish.line)
                   or e.pid != start.pid]
        if outside:
            problems.append(f"{origin}: initexit events outside its entry {entry.func} (lines {start.line}.."
                            f"{finish.line if finish else '?'}): lines {[e.line for e in outside][:10]}")
    return problems


BOOT_LOG_MARK = "initexit-boot-test: "


def check_boot_log(dmesg: str, fail_at: int = 2, blacklisted: frozenset[str] = frozenset()) -> list[str]:
    """The test objects' own log lines ("initexit-boot-test: <KBUILD_MODNAME>
    init|exit <name>", one per init and exit they run) are exactly those the
    reference model's boot makes, in its order.  Needs no trace: this is the
    check of a boot whose kernel has no trace-cmd guest (the i386, arm64 and
    riscv64 builds of scripts/check-configs), and one more on every boot
    that has one.  Without the classic initcalls the model runs a band's
    entries in link order, as the kernel does.  A blacklisted init is not
    called, so it logs nothing."""
    got = [line.split(BOOT_LOG_MARK, 1)[1].strip() for line in dmesg.splitlines() if BOOT_LOG_MARK in line]
    want = []
    for st in model(blacklisted, fail_at).steps:
        func = st.pair.init if st.kind == "init" else st.pair.exit
        assert func is not None
        if func in blacklisted:
            continue
        name = func.rsplit("_", 1)[0]
        want.append(f"{st.pair.origin.rsplit('/', 1)[1]} {st.kind} {name}")
    if got == want:
        return []
    if not got:
        return [f"no '{BOOT_LOG_MARK}' line in the log: not a kernel with CONFIG_TEST_INITEXIT_BOOT, "
                "or the console lost them (loglevel)"]
    n = next((i for i, (a, b) in enumerate(zip(got, want)) if a != b), min(len(got), len(want)))
    return [f"the test objects' log differs from the model at line {n + 1} of {len(want)}: "
            f"got {got[n] if n < len(got) else '(end)'!r}, expected {want[n] if n < len(want) else '(end)'!r}"]


def check_builtin_pairs(events: list[Ev], dmesg: str, blacklisted: frozenset[str] = frozenset(),
                        fail_at: int = 2) -> list[str]:
    """Every built-in pair is accounted for.  The kernel's "initexit: ordered
    N built-in pairs" equals the test objects' pairs (the only built-in
    ones; a refused object's count too); each of the N either shows in the
    trace (its own idx, path=boot), or dmesg says it was skipped, or it
    belongs to an object dmesg says the kernel refused, exactly as
    boot_plan() predicts (a blacklisted one is in the trace, failing, and
    dmesg says it was blacklisted); each failure is reported as the model
    says (unwinding, or nothing to unwind); and the pairs ran in idx order,
    one init_start each.  Only the test objects' messages count (the KUnit
    suite's bind test prints refusals of its own tables)."""
    notes = [x for x in read_dmesg(dmesg).notices if x.kind == "ordered" or x.origin in ORIGINS]
    ordered = [x for x in notes if x.kind == "ordered"]
    if not ordered or ordered[0].value is None:
        return ["no 'initexit: ordered N built-in pairs' line in dmesg: is the series applied?"]
    n = ordered[0].value
    out = model(blacklisted, fail_at)
    problems = []
    if n != out.bound or n != len(BUILTIN_PAIRS):
        problems.append(f"the kernel ordered {n} built-in pairs, the test objects declare {len(BUILTIN_PAIRS)}")
    boot = [e for e in events if e.name.startswith("initexit_") and e.fields.get("path") == "boot"]
    seen = {i for i in (_int(e.fields.get("idx")) for e in boot) if i is not None}
    unreadable = [e.line for e in boot if _int(e.fields.get("idx")) is None]
    if unreadable:
        problems.append(f"boot initexit events without a numeric idx at lines {unreadable[:10]}")
    skipped = [x for x in notes if x.kind == "skipped"]
    refused = {x.origin for x in notes if x.kind == "refused"}
    in_refused = sum(1 for p in BUILTIN_PAIRS if p.origin in refused)
    if len(seen) + len(skipped) + in_refused != n:
        problems.append(
            f"the kernel ordered {n} built-in pairs, but the trace shows {len(seen)}, dmesg reports "
            f"{len(skipped)} skipped and {in_refused} in refused objects"
        )
    plan, notices = boot_plan(blacklisted, fail_at, classic_calls(events))
    want_seen = {int(f["idx"]) for _, f in plan}
    if seen != want_seen:
        problems.append(f"boot trace shows pairs idx={sorted(seen)}, expected idx={sorted(want_seen)}")
    for kinds, what in ((("skipped", "blacklisted"), "pairs not run"), (("failed",), "failures"),
                        (("refused",), "objects refused")):
        said = [_said(x) for x in notes if x.kind in kinds]
        want = [_said(x) for x in notices if x.kind in kinds]
        if said != want:
            problems.append(f"dmesg reports {what}: {said}, expected {want}")
    starts = [_int(e.fields.get("idx")) for e in boot if e.name == "initexit_init_start"]
    want_starts: list[Optional[int]] = [int(f["idx"]) for name, f in plan if name == "initexit_init_start"]
    if starts != want_starts:
        problems.append(f"boot init_start idx order {starts}, expected {want_starts}")
    return problems


def _said(n: KernelNotice) -> str:
    """A dmesg notice about an object, as one line: ``skipped lib/x: f_init
    (prio 10)``, ``failed lib/x: f_init (prio 10) -5 unwinding``, ``refused
    lib/x: e_init undoable f_init``."""
    if n.kind == "refused":
        return f"refused {n.origin}: {n.func} {n.why} {n.other or n.value}"
    if n.kind == "failed":
        return f"failed {n.origin}: {n.func} (prio {n.prio}) {n.value} {n.why}"
    return f"{n.kind} {n.origin}: {n.func} (prio {n.prio})"


def check_stock_initcalls_kept(stock_report: str, patched_report: str) -> list[str]:
    """Every initcall the stock kernel ran at boot still runs in the patched
    kernel, at the same level, in the same relative order and with the same
    result: ``python3 -m analysis diff`` of the two boot traces (stock as A)
    has no boot call only in A, no order change and no result change."""
    stock = build_capture(parse_trace_report(stock_report, "stock boot.report.txt"))
    patched = build_capture(parse_trace_report(patched_report, "patched boot.report.txt"))
    d = diff_captures(stock, patched, min_change_ns=0)
    boot = {c.name for c in calls_of(stock) if c.track == "boot"}
    problems = []
    lost = [n for n in d.only_a if n in boot]
    if lost:
        problems.append(f"{len(lost)} stock initcall(s) never ran in the patched kernel: {lost[:10]}")
    for m in d.moved:
        if m.call in boot:
            where = (f"level {m.a_level} -> {m.b_level}" if m.across
                     else f"after {m.a_after} in stock, after {m.b_after} in the patched kernel")
            problems.append(f"{m.call} moved: {where}")
    problems += [f"{c.call}: {c.a} in stock, {c.b} in the patched kernel" for c in d.results if c.call in boot]
    if len(boot) < 100:
        problems.append(f"only {len(boot)} stock boot initcalls: is this a whole boot?")
    return problems


def _diff_unchanged_order(diff: dict[str, Any], problems: list[str]) -> None:
    for key in ("order_within_level", "order_across_levels"):
        if diff.get(key):
            problems.append(f"{key}: {diff[key][:5]}")


def check_blacklist_diff(diff: dict[str, Any], func: str = "tio_blacklist_me_init") -> list[str]:
    """scripts/run --diff-with's NAME.diff.json (``python3 -m analysis
    diff``) of a full patched boot (A) and the same kernel booted with
    initcall_blacklist=FUNC (B) says exactly what the blacklist did: FUNC's
    pair and its object's entry went from ok to failed (-EPERM), the later
    pairs of its object are only in A (skipped), the exits of the earlier
    ones only in B (unwound at once, newest first) and no call moved."""
    pair = next(p for p in BUILTIN_PAIRS if f"{p.name}_init" == func)
    entry = ENTRIES[pair.origin].func
    problems: list[str] = []
    want_results = [{"call": f"init {entry} [boot]", "a": "ok (ret=0)", "b": "failed (ret=-1)"},
                    {"call": f"init {func} [boot {pair.origin}]", "a": "ok (ret=0)", "b": "failed (ret=-1)"}]
    if diff.get("result_changes") != want_results:
        problems.append(f"result changes {diff.get('result_changes')}, want {want_results}")
    mine = [p for p in BUILTIN_PAIRS if p.origin == pair.origin]
    later = {f"init {p.name}_init [boot {p.origin}]" for p in mine if p.has_init and p.prio > pair.prio}
    if set(diff.get("only_a", ())) != later or not later:
        problems.append(f"only in the full boot: {diff.get('only_a')}, want the skipped {sorted(later)}")
    # Sorted as the kernel sorts (ties in declaration order), undone newest first.
    before = sorted((p for p in mine if p.has_exit and p.prio < pair.prio), key=lambda p: p.prio)[::-1]
    unwound = [f"exit {p.name}_exit [boot {p.origin}]" for p in before]
    if list(diff.get("only_b", ())) != unwound or not unwound:
        problems.append(f"only in the blacklist boot: {diff.get('only_b')}, want the unwound {unwound}")
    _diff_unchanged_order(diff, problems)
    return problems


def check_patched_stock_diff(diff: dict[str, Any]) -> list[str]:
    """scripts/run --diff-with's boot.diff.json of the patched boot (A) and
    the stock boot (B): stock ran nothing the series does not, in the same
    order, with the same results."""
    problems: list[str] = []
    if diff.get("only_b"):
        problems.append(f"only in the stock boot: {diff['only_b'][:10]}")
    if diff.get("result_changes"):
        problems.append(f"result changes: {diff['result_changes'][:5]}")
    _diff_unchanged_order(diff, problems)
    if diff.get("b", {}).get("calls", 0) < 100:
        problems.append(f"only {diff.get('b', {}).get('calls')} stock boot calls: is this a whole boot?")
    return problems


def check_blacklisted(events: list[Ev], dmesg: str, func: str = "tio_blacklist_me_init") -> list[str]:
    """A pair named by initcall_blacklist= was not called (no initcall_start
    for it, and its init's own "initexit-boot-test: ... init" line is not in
    dmesg), the kernel said it was blacklisted, and its object went on as
    after a failure: the pair's init events say ret=-EPERM, the pairs before
    it were unwound at once in reverse, the ones after it were skipped, and
    its entry returned -EPERM."""
    problems = []
    name = func[: -len("_init")] if func.endswith("_init") else func
    if any(e.name == "initcall_start" and bare_func(e.fields.get("func", "")) == func for e in events):
        problems.append(f"{func} was called (initcall_start) although blacklisted")
    if any(line.endswith(f" init {name}") and "initexit-boot-test:" in line for line in dmesg.splitlines()):
        problems.append(f"{func} ran (its own dmesg line is there) although blacklisted")
    said = [n for n in read_dmesg(dmesg).notices if n.kind == "blacklisted" and n.func == func]
    if not said:
        problems.append(f"dmesg does not report that {func} was blacklisted")
    problems += check_builtin_order(events, blacklisted=frozenset({func}))
    problems += check_builtin_pairs(events, dmesg, blacklisted=frozenset({func}))
    problems += check_entries(events, blacklisted=frozenset({func}))
    return problems


def strip_format_id(text: str) -> str:
    """A tracefs format file without its ``ID:`` line (IDs depend on config)."""
    return "".join(line for line in text.splitlines(keepends=True) if not line.startswith("ID: "))


def check_formats(saved: pathlib.Path, ref: pathlib.Path) -> list[str]:
    """The guest's tracefs format files (``saved``, as tests/guest/70-* copies
    them, ``ID:`` line included) equal the reference ones (``ref``,
    tracepoints/formats/): the same files, each byte for byte once its ID
    line is dropped.  A difference is shown as a diff."""
    got = {p.name: strip_format_id(p.read_text()) for p in sorted(saved.glob("*.format"))}
    want = {p.name: p.read_text() for p in sorted(ref.glob("*.format"))}
    problems = []
    if not want:
        problems.append(f"no *.format files in {ref}")
    for name in sorted(want.keys() - got.keys()):
        problems.append(f"{name}: in {ref} but not saved from the guest in {saved}")
    for name in sorted(got.keys() - want.keys()):
        problems.append(f"{name}: the guest has it, {ref} does not")
    for name in sorted(want.keys() & got.keys()):
        if got[name] != want[name]:
            diff = difflib.unified_diff(want[name].splitlines(), got[name].splitlines(),
                                        f"{ref.name}/{name}", f"guest/{name}", lineterm="", n=0)
            problems.append(f"{name} differs from the reference:\n" + "\n".join(diff))
    return problems


def check_initcall_debug(dmesg: str) -> list[str]:
    """From do_initcalls() on (the "initexit: ordered" line), every
    initcall_debug line carries prio= and modname= (origin= before), for classic initcalls and
    pairs alike.  Early and console initcalls run before and have no band.
    The lines are the analysis's dmesg events (analysis/parse.py); prio= and
    origin= are read by its patterns (analysis/schema.py)."""
    parsed = read_dmesg(dmesg)
    marker = [n.line for n in parsed.notices if n.kind == "ordered"]
    if not marker:
        return ["no 'initexit: ordered N built-in pairs' line: is the series applied?"]
    # Module inits (``[module]`` after the function) print no prio=/modname=.
    after = [e for e in parsed.events if e.line >= marker[0]
             and (m := (DMESG_CALLING_INFO_RE if e.name is EventName.DMESG_CALLING
                        else DMESG_RETURNED_INFO_RE).match(e.info)) is not None and m.group(2) is None]
    calling = [e for e in after if e.name is EventName.DMESG_CALLING]
    returned = [e for e in after if e.name is EventName.DMESG_RETURNED]
    problems = []
    if len(calling) < 100:
        problems.append(f"only {len(calling)} 'calling' lines after do_initcalls began: was initcall_debug on?")
    if len(returned) != len(calling):
        problems.append(f"{len(calling)} 'calling' lines but {len(returned)} 'returned' lines")
    # The KUnit suite's own calls (initexit_kunit_*) run outside any band.
    bare_lines = [e.quote() for e in calling + returned
                  if (not PRIO_RE.search(e.info) or not ORIGIN_RE.search(e.info))
                  and "func=initexit_kunit_" not in e.info]
    if bare_lines:
        problems.append(f"{len(bare_lines)} initcall_debug lines without prio=/modname=, e.g. {bare_lines[:2]}")

    def called(func: str, prio: Optional[int], origin: str) -> bool:
        for e in calling:
            m = DMESG_CALLING_INFO_RE.match(e.info)
            if m is None or bare_func(m.group(1)) != func:
                continue
            p, o = PRIO_RE.search(m.group(4)), ORIGIN_RE.search(m.group(4))
            if o is not None and o.group(1) == origin and (prio is None or (p is not None and int(p.group(1)) == prio)):
                return True
        return False

    # An entry prints its band's priority, a pair inside it its own.
    if not called("tio_entry", 0, "test_initexit_order"):
        problems.append("no 'calling tio_entry ... prio=0 modname=test_initexit_order' line")
    if not called("tio_max_init", 499, "test_initexit_order"):
        problems.append("no 'calling tio_max_init ... prio=499 modname=test_initexit_order' line")
    if not called("til_entry", 1000, "test_initexit_late"):
        problems.append("no 'calling til_entry ... prio=1000 modname=test_initexit_late' line")
    # The neighbour's pairs: initcall_debug prints KBUILD_MODNAME, which it
    # shares with lib/test_initexit_unwind.c; the trace has the path.
    if not called("tin0_init", None, "test_initexit_unwind"):
        problems.append("no 'calling tin0_init ... origin=test_initexit_unwind' line (KBUILD_MODNAME)")
    origins = {o.group(1) for e in calling if (o := ORIGIN_RE.search(e.info)) is not None}
    if not origins & {"workqueue", "ksysfs"}:
        problems.append("classic initcalls show no origin from their KBUILD_MODNAME (CONFIG_KALLSYMS_ALL?)")
    return problems


def boot_finished(dmesg: str) -> bool:
    """The kernel handed over to init (``Run /init as init process``)."""
    return any(n.kind == "run-init" for n in read_dmesg(dmesg).notices)


def builtin_failure(dmesg: str, origin: str) -> list[KernelNotice]:
    """The kernel's messages that ``origin``'s object failed: ``initexit:
    <origin>: f (prio P) failed with E, ...`` (``failed``) or that the bind
    refused it (``refused``)."""
    return [n for n in read_dmesg(dmesg).notices if n.kind in ("failed", "refused") and n.origin == origin]

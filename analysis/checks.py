"""The named invariants (SPEC §4), each quoting the events that break it.

Each check returns a :class:`CheckResult`: PASS, FAIL with findings, or
SKIP when the capture holds nothing it could be checked against (a stock
kernel has no pairs to unwind).  A check never passes on missing data
silently: SKIP carries a note saying why.
"""

from __future__ import annotations

from collections import deque
from typing import Callable, Iterable, Mapping, Optional

from analysis.build import PAIRING_CHECK
from analysis.declared import RUN_ORDER, Declared, DeclaredMatch, level_of, longest_ascending
from analysis.model import (
    BAND_NAMES,
    BANDS,
    CallPath,
    Capture,
    CheckResult,
    CheckState,
    Event,
    ExitReason,
    Finding,
    InputFormat,
    Span,
    SpanKind,
    Unit,
    Verdict,
    format_duration,
    band_prios,
    level_window,
)
from analysis.parse import unknown_initexit_events
from analysis.probes import probe_counts

# Enum members as module constants (analysis/model.py says why).
_UNLOAD = ExitReason.UNLOAD
_UNWIND = ExitReason.UNWIND
_PAIR_EXIT = SpanKind.PAIR_EXIT
_PAIR_INIT = SpanKind.PAIR_INIT
_INITCALL = SpanKind.INITCALL
_BOOT = CallPath.BOOT

#: Every check, in the order reports list them: (name, one-line description).
CHECKS: tuple[tuple[str, str], ...] = (
    ("trace-complete", "no lost events, unreadable lines or unknown initexit events"),
    (PAIRING_CHECK, "every start has its finish and every finish its start"),
    ("boot-priority-order", "boot initcalls (classic ones and built-in objects' entries) run in non-decreasing "
                            "band order"),
    ("boot-pairs-in-entry", "each built-in object's pairs run nested in one initcall, its entry, in ascending "
                            "priority inside the entry's band; a failure's unwind stays in it and the entry "
                            "returns the failure's error"),
    ("levels-agree-with-priorities",
     "initcall levels come in order and each pair runs inside its level's priority window"),
    ("inits-ascending", "per module load and built-in object, inits run in ascending order, once each"),
    ("no-init-after-failure", "after an init fails, no later init of that module or object runs"),
    ("unwind-after-failure",
     "after a failure, exactly the succeeded exits run, in reverse, each announced by an unwind event"),
    ("unload-reverse-order", "on unload, exits run in the exact reverse of the inits"),
    ("exit-exactly-once", "every succeeded init that has an exit is exited exactly once, "
                          "and no exit runs for an init that did not succeed"),
    ("declared-level", "every classic boot initcall ran in its declared level (band, on the series' kernels)"),
    ("declared-link-order", "within a level, classic boot initcalls ran in link (address) order"),
    ("declared-initcalls-ran", "every declared initcall ran, and every classic boot initcall that ran is declared"),
    ("declared-pairs", "every boot pair event names a position in the kernel's built-in pair table"),
)

_DESCRIPTIONS = dict(CHECKS)

#: How many quoted problems one finding about unreadable lines carries.
MAX_QUOTES = 20


def _result(name: str, findings: Iterable[Finding], *, applicable: bool = True,
            note: str = "") -> CheckResult:
    found = tuple(findings)
    if found:
        state = CheckState.FAIL
    elif applicable:
        state = CheckState.PASS
    else:
        state = CheckState.SKIP
    return CheckResult(name, _DESCRIPTIONS[name], state, found, note)


def _q(*spans: Optional[Span]) -> tuple[str, ...]:
    out: list[str] = []
    for s in spans:
        if s is None:
            continue
        out.append(s.start.quote())
        if s.finish is not None:
            out.append(s.finish.quote())
    return tuple(out)


def check_trace_complete(cap: Capture) -> CheckResult:
    name = "trace-complete"
    p = cap.parsed
    findings = [Finding(name, f"capture has a gap: {g.what}", (g.quote(),)) for g in p.gaps]
    if p.problems:
        quotes = tuple(pr.quote() for pr in p.problems[:MAX_QUOTES])
        more = f" (first {MAX_QUOTES} quoted)" if p.n_problems > MAX_QUOTES else ""
        findings.append(Finding(name, f"{p.n_problems} unreadable line(s){more}", quotes))
    for ev_name in unknown_initexit_events(p):
        findings.append(Finding(
            name, f"unknown initexit event {ev_name!r} ({p.ignored[ev_name]}x): "
                  f"the kernel's events changed and the parser does not read them"))
    return _result(name, findings)


def check_pairing(cap: Capture) -> CheckResult:
    return _result(PAIRING_CHECK, cap.build_problems, applicable=cap.n_spans > 0)


def _boot_nesting(cap: Capture) -> list[tuple[Span, Optional[Span]]]:
    """Every boot span, in start order, with the outermost boot call it ran
    inside on its task (None: a call of do_initcalls() itself).  A pair
    init's own initcall_start/finish is its ``inner``, not a span here, so
    in a trace a built-in pair's outer call is its object's entry; in dmesg
    the pairs' calling/returned lines are spans nested in the entry's."""
    moved = cap.parsed.moved  # the order tied events ran in (parse.py)

    def pos(ev: Event) -> int:
        return moved.get(ev.line, ev.line)

    spans = sorted((s for s in cap.spans if s.path is _BOOT), key=lambda s: pos(s.start))
    open_by_pid: dict[int, list[Span]] = {}
    out: list[tuple[Span, Optional[Span]]] = []
    for s in spans:
        st = open_by_pid.setdefault(s.start.pid, [])
        while st and (f := st[-1].finish) is not None and pos(f) < pos(s.start):
            st.pop()
        out.append((s, st[0] if st else None))
        if s.finish is not None:  # a call the capture never saw finish encloses nothing known
            st.append(s)
    return out


def _boot_items(cap: Capture, nesting: list[tuple[Span, Optional[Span]]]
                ) -> list[tuple[Span, tuple[int, ...], tuple[int, ...]]]:
    """The calls of do_initcalls() itself (classic initcalls and entries,
    not what runs inside them) with the interval of band priorities each
    may have: its printed prio= (dmesg), else its band's (the band event in
    force), else its level's bands."""
    items: list[tuple[Span, tuple[int, ...], tuple[int, ...]]] = []
    for s, outer in nesting:
        if outer is not None or s.kind is not _INITCALL:
            continue
        if s.prio is not None:
            items.append((s, (s.prio,), (s.prio,)))
        elif (bands := band_prios(s.level, cap.levels_by_band)) is not None:
            items.append((s, (bands[0],), (bands[-1],)))
    return items


def _describe_prio(s: Span, by_band: bool) -> str:
    if s.prio is not None:
        return f"prio {s.prio}"
    bands = band_prios(s.level, by_band)
    if bands is None:
        return "prio unknown"
    if len(bands) == 1:
        return f"band {s.level}, prio {bands[0]}"
    return f"level {s.level}, prio {bands[0]}..{bands[-1]}"


def check_boot_priority_order(cap: Capture) -> CheckResult:
    """The calls do_initcalls() makes, classic initcalls and entries alike,
    come in non-decreasing band order (a built-in object's pairs run inside
    its entry and are checked by boot-pairs-in-entry).  Greedy feasibility:
    give each call the lowest band its interval allows that is not below
    the previous call's; a call whose interval lies wholly below that is
    out of order."""
    name = "boot-priority-order"
    items = _boot_items(cap, _boot_nesting(cap))
    findings = []
    cur: Optional[tuple[int, ...]] = None
    setter: Optional[Span] = None
    for span, low, high in items:
        if cur is None or low > cur:
            cur, setter = low, span
            continue
        if high < cur:
            assert setter is not None
            findings.append(Finding(
                name,
                f"{span.label()} ({_describe_prio(span, cap.levels_by_band)}) ran after "
                f"{setter.label()} ({_describe_prio(setter, cap.levels_by_band)})",
                _q(setter)[:1] + _q(span)[:1],
            ))
            # Resynchronise on the late call so one misplaced call is one finding.
            cur, setter = low, span
    note = "" if items else "no boot initcalls with a known priority or level"
    return _result(name, findings, applicable=bool(items), note=note)


def _entry_band(entry: Span, by_band: bool) -> Optional[tuple[str, int, Optional[int]]]:
    """The band an entry ran in, with its window [lo, hi): its printed
    prio= (dmesg), else the band event in force (a capture with one per
    band); None when the capture cannot tell."""
    band: Optional[str] = None
    if entry.prio is not None:
        band = next((b for b in BAND_NAMES if BANDS[b] == entry.prio), None)
    elif by_band and entry.level in BANDS:
        band = entry.level
    if band is None:
        return None
    lo, hi = level_window(band, True)
    assert lo is not None
    return band, lo, hi


def check_boot_pairs_in_entry(cap: Capture) -> CheckResult:
    """A built-in object runs at its entry (module_init_exit_entry()): every
    boot pair call (init, and the exits of a failure's unwind) runs inside
    one initcall of do_initcalls(), the same one for all pairs of an origin,
    which runs no other object's pairs and no classic initcall of its own
    (trace); the inits inside it come in ascending priority, each in the
    entry's band [lo, hi); when one fails, the entry returns its error, and
    in a trace an entry whose inits all succeeded returns 0.  In dmesg the
    pair inits are the calls nested in the entry (their lines carry the
    pair's prio= and KBUILD_MODNAME, which two objects may share, so "one
    object, one entry" is checked on traces only, whose origin is the
    object's path); a blacklisted init prints no line there, so only the
    first rule on failures is checked."""
    name = "boot-pairs-in-entry"
    nesting = _boot_nesting(cap)
    dmesg = cap.parsed.fmt is InputFormat.DMESG
    findings: list[Finding] = []
    entry_of: dict[str, Span] = {}
    inside: dict[int, list[Span]] = {}  # entry start line -> its pair calls
    entries: dict[int, Span] = {}
    for s, outer in nesting:
        pair = s.kind is not _INITCALL or (dmesg and outer is not None)
        if not pair:
            if outer is not None:
                findings.append(Finding(name, f"{s.label()} ran inside {outer.label()}: an entry runs "
                                              f"only its object's pairs", _q(outer)[:1] + _q(s)[:1]))
            continue
        if outer is None:
            if s.finish is None:
                continue  # the capture ends (or breaks) inside it: start-finish-paired says so
            findings.append(Finding(name, f"{s.label()} ran outside any initcall: a built-in pair runs at "
                                          f"its object's entry", _q(s)[:1]))
            continue
        first = entry_of.setdefault(s.origin, outer)
        if first is not outer and not dmesg:
            findings.append(Finding(name, f"{s.label()} ran inside {outer.label()}, but {s.origin}'s "
                                          f"earlier pairs ran inside {first.label()}: one object, one entry",
                                    _q(first)[:1] + _q(outer)[:1] + _q(s)[:1]))
        entries[outer.start.line] = outer
        inside.setdefault(outer.start.line, []).append(s)
    for line, calls in inside.items():
        entry = entries[line]
        origins = sorted({s.origin for s in calls})
        if len(origins) > 1 and not dmesg:
            findings.append(Finding(name, f"{entry.label()} ran the pairs of {len(origins)} objects: "
                                          f"{', '.join(origins)}", _q(entry)[:1]))
        inits = [s for s in calls if s.kind is _PAIR_INIT or (dmesg and s.kind is _INITCALL)]
        band = _entry_band(entry, cap.levels_by_band)
        prev: Optional[Span] = None
        for s in inits:
            if s.prio is None:
                continue
            if prev is not None and prev.prio is not None and s.prio < prev.prio:
                findings.append(Finding(name, f"{s.label()} ran after {prev.label()} inside {entry.label()}",
                                        _q(prev)[:1] + _q(s)[:1]))
            if band is not None and not (band[1] <= s.prio and (band[2] is None or s.prio < band[2])):
                hi = "+inf" if band[2] is None else str(band[2])
                findings.append(Finding(name, f"{s.label()} ran inside {entry.label()} of band {band[0]}, "
                                              f"whose window is [{band[1]}, {hi})",
                                        _q(entry)[:1] + _q(s)[:1]))
            prev = s
        failed = next((s for s in inits if s.ret is not None and s.ret < 0), None)
        if entry.ret is None:
            continue
        if failed is not None and entry.ret != failed.ret:
            findings.append(Finding(name, f"{entry.label()} returned {entry.ret}, but {failed.label()} "
                                          f"inside it failed with {failed.ret}",
                                    _q(failed)[1:2] + _q(entry)[1:2]))
        elif failed is None and not dmesg and inits and entry.ret != 0:
            findings.append(Finding(name, f"{entry.label()} returned {entry.ret}, but every init inside it "
                                          f"succeeded", _q(entry)[1:2]))
    applicable = bool(inside) or any(s.kind is not _INITCALL for s, _o in nesting)
    note = "" if applicable else "no built-in pairs in the capture"
    return _result(name, findings, applicable=applicable, note=note)


def check_levels(cap: Capture) -> CheckResult:
    name = "levels-agree-with-priorities"
    if not cap.levels:
        return _result(name, (), applicable=False,
                       note="no initcall_level events recorded (record initcall:initcall_level)")
    findings = []
    seen: dict[str, str] = {}
    last_i = -1
    last_ev = None
    for ev, lvl in zip(cap.levels, cap.level_names):
        if lvl not in BANDS:
            continue  # early, console: separate mechanisms, before pure
        i = BAND_NAMES.index(lvl)
        if lvl in seen:
            findings.append(Finding(name, f"level {lvl} entered twice", (seen[lvl], ev.quote())))
        elif i < last_i and last_ev is not None:
            findings.append(Finding(name, f"level {lvl} entered after level {BAND_NAMES[last_i]}",
                                    (last_ev.quote(), ev.quote())))
        seen[lvl] = ev.quote()
        last_i, last_ev = max(last_i, i), ev
    for s in cap.spans:
        if s.path is not _BOOT or s.kind is not _PAIR_INIT or s.prio is None:
            continue
        low, high = level_window(s.level, cap.levels_by_band)
        if (low is not None and s.prio < low) or (high is not None and s.prio >= high):
            lo = "-inf" if low is None else str(low)
            hi = "+inf" if high is None else str(high)
            kind = "band" if cap.levels_by_band else "level"
            where = f"in {kind} {s.level}" if s.level else "before the first level"
            findings.append(Finding(
                name, f"{s.label()} ran {where}, whose window is [{lo}, {hi})", _q(s)[:1]))
    return _result(name, findings)


# A unit's inits are pair inits: their status is FAILED when ret < 0 and OK
# when ret >= 0 (Span.status).  The loops below over every init of every
# unit test ret directly: a tuple field, not a property call.


def _first_failure(u: Unit) -> Optional[Span]:
    for s in u.inits:
        r = s.ret
        if r is not None and r < 0:
            return s
    return None


#: (path, origin) -> {idx: exit function} of the pairs known to have an exit.
Known = dict[tuple[CallPath, str], dict[int, str]]

#: A unit's position function: where an event ran (ParsedInput.position).
Position = Callable[[Event], int]


def _learn_exits(known: Known, u: Unit) -> None:
    """Pairs known to have an exit, with the exit's name: any pair whose exit
    ran anywhere in the capture (a trace cannot show an exit that never ran)."""
    for e in u.exits:
        if e.idx is not None:
            known.setdefault((u.path, u.origin), {})[e.idx] = e.func


def _exit_state(known: Known, u: Unit, idx: Optional[int]) -> Optional[bool]:
    """Whether pair ``idx`` of ``u`` has an exit: its init_start's
    ``has_exit=`` when the event carries it, else True when its exit ran
    anywhere in the capture, else None (the trace cannot tell)."""
    if idx is None:
        return None
    for s in u.inits:
        if s.idx == idx and s.has_exit is not None:
            return s.has_exit == 1
    return True if idx in known.get((u.path, u.origin), {}) else None


def _has_exit(known: Known, u: Unit, idx: Optional[int]) -> bool:
    return _exit_state(known, u, idx) is True


def _exit_name(known: Known, u: Unit, idx: int, init_func: str) -> str:
    """The exit's function, or what names it when it never ran."""
    return known.get((u.path, u.origin), {}).get(idx) or f"the exit of {init_func}"


def _succeeded_before(u: Unit, limit: Optional[int], known: Known) -> dict[int, str]:
    """idx -> function of the pairs of ``u`` that count as succeeded before
    pair ``limit`` (all pairs if None): inits that returned >= 0, and pairs
    with no init event whose exit is known (an init-less pair succeeds)."""
    out: dict[int, str] = {}
    with_init = {s.idx for s in u.inits}
    for s in u.inits:
        if s.idx is not None and s.ret is not None and s.ret >= 0 and (limit is None or s.idx < limit):
            out[s.idx] = s.func
    for idx, func in known.get((u.path, u.origin), {}).items():
        if idx not in with_init and (limit is None or idx < limit):
            out[idx] = func
    return out


def _idx_list(spans: Iterable[Span]) -> str:
    return "[" + ", ".join(f"#{s.idx} {s.func}" for s in spans) + "]"


# -- the checks of one unit ---------------------------------------------------------
# Each takes one closed unit, what is known of the capture's exits, and
# the position function, and returns its findings and whether the unit
# gave the check something to check.  CheckPass runs them on each unit
# as the builder closes it.


def _unit_inits_ascending(u: Unit, known: Known, pos: Position) -> tuple[list[Finding], bool]:
    name = "inits-ascending"
    findings = []
    prev: Optional[Span] = None
    seen: dict[int, Span] = {}
    for s in u.inits:
        assert s.idx is not None
        if s.idx in seen:
            findings.append(Finding(name, f"{u.name()}: init #{s.idx} {s.func} ran twice",
                                    _q(seen[s.idx])[:1] + _q(s)[:1]))
        elif prev is not None and prev.idx is not None and (
            s.idx < prev.idx or (s.prio is not None and prev.prio is not None and s.prio < prev.prio)
        ):
            findings.append(Finding(
                name,
                f"{u.name()}: init #{s.idx} {s.func} (prio {s.prio}) ran after "
                f"#{prev.idx} {prev.func} (prio {prev.prio})",
                _q(prev)[:1] + _q(s)[:1]))
        seen[s.idx] = s
        prev = s
    return findings, bool(u.inits)


def _unit_no_init_after_failure(u: Unit, known: Known, pos: Position) -> tuple[list[Finding], bool]:
    name = "no-init-after-failure"
    f = _first_failure(u)
    if f is None:
        return [], False
    findings = []
    after = pos(f.start)
    for s in u.inits:
        if pos(s.start) > after:
            findings.append(Finding(
                name, f"{u.name()}: init #{s.idx} {s.func} ran after #{f.idx} {f.func} failed "
                      f"with {f.ret}", _q(f) + _q(s)[:1]))
    return findings, True


def _unit_unwind_after_failure(u: Unit, known: Known, pos: Position,
                               unchecked: "Unchecked") -> tuple[list[Finding], bool]:
    name = "unwind-after-failure"
    findings = []
    f = _first_failure(u)
    for ev in u.stray_unwinds:
        findings.append(Finding(name, f"{u.name()}: unwind event with no exit after it", (ev.quote(),)))
    if f is None:
        any_unwind = False
        for e in u.exits:
            if e.reason is _UNWIND or e.unwind is not None:
                any_unwind = True
                findings.append(Finding(
                    name, f"{u.name()}: exit #{e.idx} {e.func} ran as an unwind, "
                          f"but no init of it failed", _q(e)[:1]))
        return findings, any_unwind
    assert f.idx is not None
    succeeded = _succeeded_before(u, f.idx, known)
    after = pos(f.start)
    actual = [e for e in u.exits if pos(e.start) > after]
    # Succeeded inits before a failure whose pair shows no exit anywhere:
    # the trace cannot tell "has no exit" from "its exit was not unwound".
    blind = [f"#{i} {succeeded[i]}" for i in sorted(succeeded) if _exit_state(known, u, i) is None]
    if blind:
        unchecked.add(u, blind)
    exp_idx = sorted((i for i in succeeded if _has_exit(known, u, i)), reverse=True)
    act_idx = [e.idx for e in actual]
    if exp_idx != act_idx:
        extra = [e for e in actual if e.idx not in succeeded]
        missing = [f"#{i} {_exit_name(known, u, i, succeeded[i])}" for i in exp_idx if i not in act_idx]
        why = []
        if extra:
            why.append(f"exits of pairs that had not succeeded: {_idx_list(extra)}")
        if missing:
            why.append(f"missing exits: [{', '.join(missing)}]")
        if not why:
            why.append("wrong order")
        expected = ", ".join(f"#{i} {_exit_name(known, u, i, succeeded[i])}" for i in exp_idx)
        findings.append(Finding(
            name,
            f"{u.name()}: after #{f.idx} {f.func} failed with {f.ret}, expected exits "
            f"[{expected}], got {_idx_list(actual)} ({'; '.join(why)})",
            _q(f)[1:2] + tuple(e.start.quote() for e in actual)))
    for e in actual:
        if e.reason is not _UNWIND:
            findings.append(Finding(
                name, f"{u.name()}: exit #{e.idx} {e.func} after a failure has "
                      f"reason={e.reason.value if e.reason else '?'}, not unwind", _q(e)[:1]))
        if e.unwind is None or e.failed is None:
            findings.append(Finding(
                name, f"{u.name()}: exit #{e.idx} {e.func} after a failure has no "
                      f"initexit_unwind event before it", _q(e)[:1]))
            continue
        got = e.failed._asdict()
        want = {"failed_idx": f.idx, "failed_func": f.func, "error": f.ret, "failed_prio": f.prio}
        wrong = {k: got.get(k) for k, v in want.items() if got.get(k) != v}
        if wrong:
            shown = ", ".join(f"{k}={v} (expected {want[k]})" for k, v in wrong.items())
            findings.append(Finding(
                name, f"{u.name()}: unwind event for #{e.idx} names the wrong failure: {shown}",
                (e.unwind.quote(),) + _q(f)[1:2]))
    return findings, True


class Unchecked:
    """What unwind-after-failure could not check: the first few units (by
    creation) and how many, so the note is the same however long the
    capture."""

    SHOWN = 3

    def __init__(self) -> None:
        self.first: list[tuple[int, Unit, list[str]]] = []
        self.count = 0
        self.module = False
        self.single = True  # one unit with one pair

    def add(self, u: Unit, blind: list[str]) -> None:
        self.count += 1
        self.module = self.module or u.path is CallPath.MODULE
        self.single = self.count == 1 and len(blind) == 1
        self.first.append((u.seq, u, blind))
        self.first.sort(key=lambda t: t[0])
        del self.first[self.SHOWN:]

    def note(self) -> str:
        """What unwind-after-failure could not check, in one sentence."""
        parts = [f"{u.name()}: {', '.join(blind)}" for _seq, u, blind in self.first]
        if self.count > self.SHOWN:
            parts.append(f"and {self.count - self.SHOWN} more")
        what = "its exit never ran" if self.single else "none of their exits ran"
        text = (f"not checked: {'; '.join(parts)} succeeded before the failure, but {what} anywhere "
                "in the capture and the kernel's initexit_init_start has no has_exit= field, "
                "so the trace cannot tell whether there was one to unwind")
        if self.module:
            text += " (unload the module once in the same capture to show its exits)"
        return text


def _unit_unload_reverse(u: Unit, known: Known, pos: Position) -> tuple[list[Finding], bool]:
    name = "unload-reverse-order"
    findings = []
    unload = [e for e in u.exits if e.reason is _UNLOAD]
    if not unload:
        return [], False
    order = [s.idx for s in u.inits if s.ret is not None and s.ret >= 0]
    where = {idx: i for i, idx in enumerate(order)}
    for a, b in zip(unload, unload[1:]):
        assert a.idx is not None and b.idx is not None
        by_init = a.idx in where and b.idx in where and where[b.idx] >= where[a.idx]
        if b.idx >= a.idx or by_init:
            findings.append(Finding(
                name,
                f"{u.name()}: exit #{b.idx} {b.func} ran after exit #{a.idx} {a.func}; "
                f"the reverse of the inits runs #{a.idx} after #{b.idx}"
                if b.idx != a.idx else
                f"{u.name()}: exit #{b.idx} {b.func} ran twice in a row",
                _q(a)[:1] + _q(b)[:1]))
    f = _first_failure(u)
    if f is not None:
        findings.append(Finding(
            name, f"{u.name()}: unload exits after a failed load", _q(f)[1:2] + _q(unload[0])[:1]))
    return findings, True


def _unit_exit_exactly_once(u: Unit, known: Known, pos: Position) -> tuple[list[Finding], bool]:
    name = "exit-exactly-once"
    findings = []
    f = _first_failure(u)
    ok = _succeeded_before(u, f.idx if f is not None else None, known)
    inits = {s.idx: s for s in u.inits}
    count: dict[Optional[int], list[Span]] = {}
    for e in u.exits:
        count.setdefault(e.idx, []).append(e)
    for idx, es in count.items():
        if len(es) > 1:
            findings.append(Finding(
                name, f"{u.name()}: exit #{idx} {es[0].func} ran {len(es)} times",
                tuple(e.start.quote() for e in es)))
        init = inits.get(idx)
        reached = init is not None or f is None or (idx is not None and f.idx is not None
                                                     and idx < f.idx)
        if idx not in ok and (init is not None or not reached):
            why = (f"its init returned {init.ret}" if init is not None and init.ret is not None
                   else "its init was never reached in this load")
            findings.append(Finding(
                name, f"{u.name()}: exit #{idx} {es[0].func} ran but {why}",
                _q(init)[1:2] + (es[0].start.quote(),)))
        elif init is not None and init.has_exit == 0:
            findings.append(Finding(
                name, f"{u.name()}: exit #{idx} {es[0].func} ran, but its init_start said has_exit=0",
                _q(init)[:1] + (es[0].start.quote(),)))
    unloaded = any(e.reason is _UNLOAD for e in u.exits)
    if unloaded or (u.free is not None and f is None):
        for idx, func in sorted(ok.items()):
            if _has_exit(known, u, idx) and idx not in count:
                init = inits.get(idx)
                how = ("its init_start says has_exit=1" if init is not None and init.has_exit == 1
                       else "seen elsewhere in the capture")
                findings.append(Finding(
                    name, f"{u.name()}: pair #{idx} {func} succeeded and has an exit "
                          f"({how}), but it was never exited on unload",
                    _q(init)[1:2]))
    return findings, bool(u.exits)


#: The unit checks, in report order (unwind-after-failure takes the Unchecked too).
UNIT_CHECKS = ("inits-ascending", "no-init-after-failure", "unwind-after-failure",
               "unload-reverse-order", "exit-exactly-once")

_UNIT_NOTES = {
    "inits-ascending": "no initexit pairs in the capture",
    "no-init-after-failure": "no failed pair init in the capture",
    "unwind-after-failure": "no failed pair init in the capture",
    "unload-reverse-order": "no module unload in the capture",
    "exit-exactly-once": "no pair exit in the capture",
}

#: How many findings one check lists; past it they are counted.
MAX_FINDINGS = 1000


class CheckPass:
    """The checks in one streaming pass: a sink for the span builder.

    Memory depends on what is open, not on the capture's length: boot spans
    are kept (the boot checks and the declared order need them; a boot has
    as many as the kernel has initcalls), every other span only counts
    toward the notes, and each unit is checked once it is closed and then
    dropped.  "Has an exit" may be learnt from an exit seen anywhere in
    the capture (kernels without ``has_exit=``), so a closed unit waits
    among the last ``WINDOW`` closed units before it is checked: every
    unit of a capture with fewer is checked with all the capture knows,
    exactly as a check over the whole capture; a unit of a longer one
    with the exits of the ``WINDOW`` loads after it (a note counts the
    units this could have mattered for: some init without ``has_exit=``).
    Findings are listed by unit creation, at most MAX_FINDINGS per check.
    """

    WINDOW = 512

    def __init__(self, window: Optional[int] = None) -> None:
        self.window = self.WINDOW if window is None else window
        self.spans: list[Span] = []  # the boot spans
        self.units: list[Unit] = []  # none kept
        self.waiting: deque[Unit] = deque()
        self.known: Known = {}
        self.position: Position = lambda ev: ev.line
        self.findings: dict[str, list[tuple[int, Finding]]] = {n: [] for n in UNIT_CHECKS}
        self.more: dict[str, int] = dict.fromkeys(UNIT_CHECKS, 0)
        self.applicable: dict[str, bool] = dict.fromkeys(UNIT_CHECKS, False)
        self.any_unit = False
        self.unchecked = Unchecked()
        self.early_blind = 0
        # Aggregates of every span, for the notes.
        self.n_durations = 0
        self.all_whole_ms = True
        self.pair_inits = 0
        self.total_ns = 0
        self.any_span = False
        self.kinds: dict[SpanKind, int] = {}
        self.failed_inits = 0

    def use_moved(self, moved: Mapping[int, int]) -> None:
        """Order events by the tie reordering's map (filled as it is read)."""
        self.position = lambda ev: moved.get(ev.line, ev.line)

    def span(self, s: Span) -> None:
        self.any_span = True
        d = s.duration_ns
        if d:
            self.n_durations += 1
            if d % 1_000_000:
                self.all_whole_ms = False
        kind = s.kind
        self.kinds[kind] = self.kinds.get(kind, 0) + 1
        if kind is not _PAIR_EXIT and s.ret is not None and s.ret < 0:
            self.failed_inits += 1
        if kind is _PAIR_INIT:
            self.pair_inits += 1
        if kind is not _PAIR_EXIT and d:
            self.total_ns += d
        if s.path is _BOOT:
            self.spans.append(s)

    def unit(self, u: Unit) -> None:
        self.any_unit = True
        _learn_exits(self.known, u)
        self.waiting.append(u)
        if len(self.waiting) > self.window:
            old = self.waiting.popleft()
            if any(s.has_exit is None for s in old.inits):
                self.early_blind += 1
            self._check(old)

    def _check(self, u: Unit) -> None:
        known, pos = self.known, self.position
        results = (
            _unit_inits_ascending(u, known, pos),
            _unit_no_init_after_failure(u, known, pos),
            _unit_unwind_after_failure(u, known, pos, self.unchecked),
            _unit_unload_reverse(u, known, pos),
            _unit_exit_exactly_once(u, known, pos),
        )
        for name, (found, applicable) in zip(UNIT_CHECKS, results):
            if applicable:
                self.applicable[name] = True
            kept = self.findings[name]
            for f in found:
                if len(kept) < MAX_FINDINGS:
                    kept.append((u.seq, f))
                else:
                    self.more[name] += 1

    def unit_results(self) -> dict[str, CheckResult]:
        """Check the units still waiting, then each unit check's result."""
        while self.waiting:
            self._check(self.waiting.popleft())
        out = {}
        for name in UNIT_CHECKS:
            found = [f for _seq, f in sorted(self.findings[name], key=lambda t: t[0])]
            if self.more[name]:
                found.append(Finding(name, f"and {self.more[name]} more findings of {name}, not listed"))
            note = ""
            if not self.applicable[name]:
                note = _UNIT_NOTES[name] if name != "inits-ascending" or not self.any_unit else ""
            if name == "unwind-after-failure" and self.unchecked.count:
                note = self.unchecked.note()
            if self.early_blind:
                extra = (f"{self.early_blind} unit(s) whose inits lack has_exit= were checked with the "
                         f"exits of the {self.window} units closed after them, not the whole capture's")
                note = f"{note}; {extra}" if note else extra
            out[name] = _result(name, found, applicable=self.applicable[name], note=note)
        return out

    def notes(self, cap: Capture) -> tuple[str, ...]:
        return _notes(cap, self)

    def verdict(self, cap: Capture, expect_all: bool = False) -> Verdict:
        """Every check, in report order, over ``cap`` (whose spans hold at
        least the boot spans) and the units this pass was given."""
        units = self.unit_results()
        results = []
        for name, _desc in CHECKS:
            if name in units:
                results.append(units[name])
            elif name == "declared-initcalls-ran":
                results.append(check_declared_ran(cap, expect_all))
            else:
                results.append(_CAPTURE_CHECKS[name](cap))
        counts = {
            "calls": sum(self.kinds.values()),
            "initcalls": self.kinds.get(_INITCALL, 0),
            "pair_inits": self.kinds.get(_PAIR_INIT, 0),
            "pair_exits": self.kinds.get(_PAIR_EXIT, 0),
            "failed_inits": self.failed_inits,
            "units": cap.n_units,
            **probe_counts(cap),
        }
        return Verdict(cap, tuple(results), self.notes(cap), counts)


def _declared(cap: Capture, name: str) -> tuple[Optional[DeclaredMatch], Optional[CheckResult]]:
    """The capture's declared match, or the SKIP result saying why there is none."""
    d = cap.declared
    if d is None:
        note = cap.declared_note or "no System.map: pass --system-map FILE (a trace.dat has its kallsyms)"
        return None, _result(name, (), applicable=False, note=note)
    if d.boot_initcalls == 0:
        return None, _result(name, (), applicable=False, note="no classic boot initcalls in the capture")
    if not d.fits:
        return None, _result(name, (), applicable=False, note=d.fit_note())
    return d, None


def _at(d: Declared, truth: str) -> str:
    return f"declared in {truth} at level {d.band}"


_RUN_RANK = {b: i for i, b in enumerate(RUN_ORDER)}


def check_declared_level(cap: Capture) -> CheckResult:
    """With initcall_level events: each matched initcall ran after the event
    of its declared band (series) or level (stock).  Without (dmesg): the
    declared bands come in run order, and a printed prio= is the band's."""
    name = "declared-level"
    d, skip = _declared(cap, name)
    if d is None:
        assert skip is not None
        return skip
    truth = d.order.truth
    findings = []
    if cap.levels:
        by_band = cap.levels_by_band
        for s, decl in d.matched:
            want = decl.band if by_band else level_of(decl.band)
            got = s.level
            if got == want or (decl.band == "console" and got is None):
                continue
            where = f"in {'band' if by_band else 'level'} {got}" if got else "before any initcall_level"
            findings.append(Finding(name, f"{s.label()} ran {where}, but is {_at(decl, truth)}",
                                    _q(s)[:1] + (d.order.quote(decl),)))
        note = f"{len(d.matched)} initcalls against {truth} ({d.order.source})"
        return _result(name, findings, note=note)
    cur: Optional[tuple[Span, Declared]] = None
    for s, decl in d.matched:
        if s.prio is not None and decl.band in BANDS and s.prio != BANDS[decl.band]:
            findings.append(Finding(
                name, f"{s.label()} printed prio={s.prio}, but is {_at(decl, truth)} "
                      f"(prio {BANDS[decl.band]})", _q(s)[:1] + (d.order.quote(decl),)))
        if cur is not None and _RUN_RANK[decl.band] < _RUN_RANK[cur[1].band]:
            findings.append(Finding(
                name, f"{s.label()} ({_at(decl, truth)}) ran after {cur[0].label()} "
                      f"({_at(cur[1], truth)})",
                _q(cur[0])[:1] + _q(s)[:1] + (d.order.quote(decl),)))
        cur = (s, decl)  # resynchronise on the late call: one misplaced call, one finding
    note = (f"{len(d.matched)} initcalls against {truth} ({d.order.source}); no initcall_level "
            "events, so the declared levels are checked to come in run order")
    return _result(name, findings, note=note)


def check_declared_link_order(cap: Capture) -> CheckResult:
    """Per declared level, the calls in run order should have ascending
    addresses; the calls outside one longest ascending run are out of
    order (a swap of two is one finding, one call moved far is one)."""
    name = "declared-link-order"
    d, skip = _declared(cap, name)
    if d is None:
        assert skip is not None
        return skip
    truth = d.order.truth
    findings = []
    by_level: dict[str, list[tuple[Span, Declared]]] = {}
    for s, decl in d.matched:
        by_level.setdefault(decl.level, []).append((s, decl))
    for level in sorted(by_level, key=lambda lv: _RUN_RANK.get(lv, 0)):
        runs = by_level[level]
        keep = longest_ascending([decl.order for _s, decl in runs])
        for i, (s, decl) in enumerate(runs):
            if i in keep:
                continue
            # The call it should have run before: the first earlier one linked after it.
            after = next(((s2, d2) for s2, d2 in runs[:i] if d2.order > decl.order), None)
            if after is None:
                after = next((r for r in runs[i + 1:] if r[1].order < decl.order), runs[0])
                rel = "before"
            else:
                rel = "after"
            s2, d2 = after
            findings.append(Finding(
                name,
                f"{s.label()} ran {rel} {s2.label()} in level {level}, but {truth} links it "
                f"{'before' if rel == 'after' else 'after'} it (link positions "
                f"{d.order.position(decl)} and {d.order.position(d2)})",
                _q(s2)[:1] + _q(s)[:1] + (d.order.quote(decl), d.order.quote(d2))))
    return _result(name, findings, note=f"{len(by_level)} levels against {truth}")


def check_declared_ran(cap: Capture, expect_all: bool = False) -> CheckResult:
    name = "declared-initcalls-ran"
    d, skip = _declared(cap, name)
    if d is None:
        assert skip is not None
        return skip
    truth = d.order.truth
    parts = []
    findings = []
    if d.never_ran:
        shown = ", ".join(f"{e.func} ({e.band})" for e in d.never_ran[:10])
        more = f" and {len(d.never_ran) - 10} more" if len(d.never_ran) > 10 else ""
        text = f"{len(d.never_ran)} initcall(s) declared in {truth} never ran: {shown}{more}"
        if expect_all:
            findings.append(Finding(name, text, tuple(d.order.quote(e) for e in d.never_ran[:MAX_QUOTES])))
        else:
            parts.append(text + " (a finding with --expect-all)")
    if d.unmatched_spans:
        shown = ", ".join(s.func for s in d.unmatched_spans[:10])
        more = f" and {len(d.unmatched_spans) - 10} more" if len(d.unmatched_spans) > 10 else ""
        pairs = (" (dmesg prints the series' built-in pairs like initcalls; these may be pairs)"
                 if d.dmesg else "")
        parts.append(f"{len(d.unmatched_spans)} classic boot initcall(s) ran but are not declared "
                     f"in {truth}: {shown}{more}{pairs}")
    if not parts or not d.never_ran:
        console = " (but the console ones: dmesg does not show them)" if d.dmesg else ""
        parts.insert(0, f"all {len(d.order.entries)} initcalls declared in {truth} ran{console}")
    return _result(name, findings, note="; ".join(parts))


def check_declared_pairs(cap: Capture) -> CheckResult:
    """The series' built-in pair table, bounded in the map: each boot pair
    event's idx is below the table's size (a position past it is a pair the
    kernel did not declare, or another kernel's map), and the note says how
    many records ran nothing (each object's entry record, exit-only pairs,
    and pairs skipped or of a refused object: dmesg names them)."""
    name = "declared-pairs"
    d, skip = _declared(cap, name)
    if d is None:
        assert skip is not None
        return skip
    table = d.order.pairs
    if table is None:
        return _result(name, (), applicable=False,
                       note=f"{d.order.truth} has no built-in pair table (a kernel without the series)")
    if d.dmesg:
        return _result(name, (), applicable=False,
                       note="dmesg names no pair positions (a trace has them as idx=)")
    truth = f"{table.describe(d.order.source)} in {d.order.truth}"
    boot_pairs = [s for s in cap.spans
                  if s.path is _BOOT and s.kind in (_PAIR_INIT, _PAIR_EXIT) and s.idx is not None]
    if table.count == 0 and boot_pairs:
        return _result(name, (), applicable=False,
                       note=f"{truth}, but the capture has boot pairs: the entries' symbols are not "
                            "__UNIQUE_ID_initexitN or __initexit_pair__* here (renamed by the compiler?), so the table "
                            "cannot be counted")
    seen: dict[int, Span] = {}
    findings = []
    for s in boot_pairs:
        assert s.idx is not None
        if s.idx >= table.count and s.idx not in seen:
            findings.append(Finding(name, f"{s.func} ran as built-in pair {s.idx}, but {d.order.truth} declares {table.count}: "
                                          "the map is another kernel's, or the table was read past its end",
                                    (s.start.quote(),)))
        seen.setdefault(s.idx, s)
    silent = [i for i in range(table.count) if i not in seen]
    shown = ", ".join(str(i) for i in silent[:20]) + (" ..." if len(silent) > 20 else "")
    note = (f"{truth}: {table.count - len(silent)} ran an init or exit at boot"
            + (f"; {len(silent)} ran nothing (positions {shown}): the objects' entry records, exit-only "
               "pairs, and pairs skipped after a failure or of an object the kernel refused (dmesg names "
               "them)" if silent else ""))
    return _result(name, findings, note=note)


_CAPTURE_CHECKS: dict[str, Callable[[Capture], CheckResult]] = {
    "trace-complete": check_trace_complete,
    PAIRING_CHECK: check_pairing,
    "boot-priority-order": check_boot_priority_order,
    "boot-pairs-in-entry": check_boot_pairs_in_entry,
    "levels-agree-with-priorities": check_levels,
    "declared-level": check_declared_level,
    "declared-link-order": check_declared_link_order,
    "declared-pairs": check_declared_pairs,
}


def _notes(cap: Capture, agg: CheckPass) -> tuple[str, ...]:
    notes = []
    p = cap.parsed
    if p.ignored:
        shown = ", ".join(f"{n} x{c}" for n, c in sorted(p.ignored.items()))
        notes.append(f"events not modelled, ignored: {shown}")
    notes.extend(p.reordered[:MAX_QUOTES])
    if cap.module_init_labels:
        printed = sorted({shown for _label, shown in cap.module_init_labels})
        examples = ", ".join(printed[:3]) + (", ..." if len(printed) > 3 else "")
        notes.append(
            f"{cap.module_init_label_count} module init(s) labelled by their module_load event "
            f"(<module>:init, or the pair's init): the init is freed before trace-cmd saves kallsyms, "
            f"so trace-cmd printed it as a wrong symbol or an address ({examples})")
    if len(p.reordered) > MAX_QUOTES:
        notes.append(f"and {len(p.reordered) - MAX_QUOTES} more runs of tied events put in order")
    if cap.test_events:
        notes.append(f"{cap.test_events} event(s) of the series' KUnit suite (path=test) not checked: its pairs and the initcalls inside them")
    if p.fmt is InputFormat.DMESG:
        notes.append("dmesg input: no exit or unwind events; pair checks need a trace-cmd capture")
    notes.extend(p.notes)
    if agg.n_durations >= 10 and agg.all_whole_ms:
        notes.append("every duration is a whole millisecond: the clocksource is probably jiffies, "
                     "durations are meaningless")
    if agg.any_span and agg.pair_inits == 0 and p.fmt is InputFormat.TRACE_CMD:
        notes.append("no initexit events: a stock kernel, or the initexit events were not recorded")
    if agg.total_ns:
        notes.append(f"time in inits and initcalls: {format_duration(agg.total_ns)}")
    if cap.kept_note:
        notes.append(cap.kept_note)
    return tuple(notes)


def run_checks(cap: Capture, expect_all: bool = False) -> Verdict:
    """Run every named check over a whole capture; ``expect_all``: an
    initcall declared in the map that never ran is a finding, not a note.
    (The CLI runs the same checks streaming, as :class:`CheckPass`.)"""
    agg = CheckPass(window=len(cap.units))
    agg.use_moved(cap.parsed.moved)
    for s in cap.spans:
        agg.span(s)
    for u in cap.units:
        agg.unit(u)
    return agg.verdict(cap, expect_all)

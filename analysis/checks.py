"""The named invariants (SPEC §4), each quoting the events that break it.

Each check returns a :class:`CheckResult`: PASS, FAIL with findings, or
SKIP when the capture holds nothing it could be checked against (a stock
kernel has no pairs to unwind).  A check never passes on missing data
silently: SKIP carries a note saying why.
"""

from __future__ import annotations

import bisect
from typing import Callable, Iterable, Optional

from analysis.build import PAIRING_CHECK
from analysis.declared import RUN_ORDER, Declared, DeclaredMatch, level_of
from analysis.model import (
    BAND_NAMES,
    BANDS,
    CallPath,
    Capture,
    CheckResult,
    CheckState,
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

# Enum members as module constants: in Python 3.11 ``ExitReason.UNLOAD`` is
# a descriptor call, and the checks test every span.
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
    ("boot-priority-order", "boot initcalls and pairs run in non-decreasing priority"),
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
        more = f" (first {MAX_QUOTES} quoted)" if len(p.problems) > MAX_QUOTES else ""
        findings.append(Finding(name, f"{len(p.problems)} unreadable line(s){more}", quotes))
    for ev_name in unknown_initexit_events(p):
        findings.append(Finding(
            name, f"unknown initexit event {ev_name!r} ({p.ignored[ev_name]}x): "
                  f"the kernel's events changed and the parser does not read them"))
    return _result(name, findings)


def check_pairing(cap: Capture) -> CheckResult:
    return _result(PAIRING_CHECK, cap.build_problems, applicable=bool(cap.spans))


def _boot_items(cap: Capture) -> list[tuple[Span, tuple[int, int], tuple[int, int]]]:
    """Boot calls with the interval of sort keys they may have.

    A key is (priority, 0) for a classic initcall and (priority, 1) for a
    pair: at equal priority a band's classic initcalls run first.
    """
    items = []
    for s in cap.spans:
        if s.path is not _BOOT:
            continue
        if s.kind is _PAIR_INIT and s.prio is not None:
            items.append((s, (s.prio, 1), (s.prio, 1)))
        elif s.kind is _INITCALL:
            if s.prio is not None:
                items.append((s, (s.prio, 0), (s.prio, 0)))
            elif (bands := band_prios(s.level, cap.levels_by_band)) is not None:
                items.append((s, (bands[0], 0), (bands[-1], 0)))
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
    """Greedy feasibility: give each call the lowest key its interval allows
    that is not below the previous call's; a call whose interval lies wholly
    below that is out of order."""
    name = "boot-priority-order"
    items = _boot_items(cap)
    findings = []
    cur: Optional[tuple[int, int]] = None
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
    note = "" if items else "no boot initcalls or pairs with a known priority or level"
    return _result(name, findings, applicable=bool(items), note=note)


def check_levels(cap: Capture) -> CheckResult:
    name = "levels-agree-with-priorities"
    if not cap.levels:
        return _result(name, (), applicable=False,
                       note="no initcall_level events recorded (record initcall:initcall_level)")
    findings = []
    seen: dict[str, str] = {}
    last_i = -1
    last_ev = None
    for ev in cap.levels:
        lvl = ev.info.partition("=")[2].strip()
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


def check_inits_ascending(cap: Capture) -> CheckResult:
    name = "inits-ascending"
    findings = []
    for u in cap.units:
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
    return _result(name, findings, applicable=any(u.inits for u in cap.units),
                   note="" if cap.units else "no initexit pairs in the capture")


def check_no_init_after_failure(cap: Capture) -> CheckResult:
    name = "no-init-after-failure"
    findings = []
    any_failure = False
    for u in cap.units:
        f = _first_failure(u)
        if f is None:
            continue
        any_failure = True
        after = cap.parsed.position(f.start)
        for s in u.inits:
            if cap.parsed.position(s.start) > after:
                findings.append(Finding(
                    name, f"{u.name()}: init #{s.idx} {s.func} ran after #{f.idx} {f.func} failed "
                          f"with {f.ret}", _q(f) + _q(s)[:1]))
    return _result(name, findings, applicable=any_failure,
                   note="" if any_failure else "no failed pair init in the capture")


#: (path, origin) -> {idx: exit function} of the pairs known to have an exit.
Known = dict[tuple[CallPath, str], dict[int, str]]


def _known_exits(cap: Capture) -> Known:
    """Pairs known to have an exit, with the exit's name: any pair whose exit
    ran anywhere in the capture (a trace cannot show an exit that never ran)."""
    known: Known = {}
    for u in cap.units:
        for e in u.exits:
            if e.idx is not None:
                known.setdefault((u.path, u.origin), {})[e.idx] = e.func
    return known


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


def check_unwind_after_failure(cap: Capture) -> CheckResult:
    name = "unwind-after-failure"
    known = _known_exits(cap)
    findings = []
    any_unwind = False
    # Succeeded inits before a failure whose pair shows no exit anywhere:
    # the trace cannot tell "has no exit" from "its exit was not unwound".
    unchecked: list[tuple[Unit, list[str]]] = []
    for u in cap.units:
        f = _first_failure(u)
        for ev in u.stray_unwinds:
            findings.append(Finding(name, f"{u.name()}: unwind event with no exit after it",
                                    (ev.quote(),)))
        if f is None:
            for e in u.exits:
                if e.reason is _UNWIND or e.unwind is not None:
                    any_unwind = True
                    findings.append(Finding(
                        name, f"{u.name()}: exit #{e.idx} {e.func} ran as an unwind, "
                              f"but no init of it failed", _q(e)[:1]))
            continue
        any_unwind = True
        assert f.idx is not None
        succeeded = _succeeded_before(u, f.idx, known)
        blind = [f"#{i} {succeeded[i]}" for i in sorted(succeeded) if _exit_state(known, u, i) is None]
        if blind:
            unchecked.append((u, blind))
        exp_idx = sorted((i for i in succeeded if _has_exit(known, u, i)), reverse=True)
        after = cap.parsed.position(f.start)
        actual = [e for e in u.exits if cap.parsed.position(e.start) > after]
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
            if e.unwind is None:
                findings.append(Finding(
                    name, f"{u.name()}: exit #{e.idx} {e.func} after a failure has no "
                          f"initexit_unwind event before it", _q(e)[:1]))
                continue
            fields = dict(kv.split("=", 1) for kv in e.unwind.info.split() if "=" in kv)
            want = {"failed_idx": str(f.idx), "failed_func": f.func, "error": str(f.ret),
                    "failed_prio": str(f.prio)}
            wrong = {k: fields.get(k) for k, v in want.items() if fields.get(k) != v}
            if wrong:
                shown = ", ".join(f"{k}={v} (expected {want[k]})" for k, v in wrong.items())
                findings.append(Finding(
                    name, f"{u.name()}: unwind event for #{e.idx} names the wrong failure: {shown}",
                    (e.unwind.quote(),) + _q(f)[1:2]))
    note = "" if any_unwind else "no failed pair init in the capture"
    if unchecked:
        note = _unchecked_note(unchecked)
    return _result(name, findings, applicable=any_unwind, note=note)


def _unchecked_note(unchecked: list[tuple[Unit, list[str]]]) -> str:
    """What unwind-after-failure could not check, in one sentence."""
    parts = [f"{u.name()}: {', '.join(blind)}" for u, blind in unchecked[:3]]
    if len(unchecked) > 3:
        parts.append(f"and {len(unchecked) - 3} more")
    one = len(unchecked) == 1 and len(unchecked[0][1]) == 1
    what = "its exit never ran" if one else "none of their exits ran"
    text = (f"not checked: {'; '.join(parts)} succeeded before the failure, but {what} anywhere "
            "in the capture and the kernel's initexit_init_start has no has_exit= field, "
            "so the trace cannot tell whether there was one to unwind")
    if any(u.path is CallPath.MODULE for u, _ in unchecked):
        text += " (unload the module once in the same capture to show its exits)"
    return text


def check_unload_reverse(cap: Capture) -> CheckResult:
    name = "unload-reverse-order"
    findings = []
    any_unload = False
    for u in cap.units:
        unload = [e for e in u.exits if e.reason is _UNLOAD]
        if not unload:
            continue
        any_unload = True
        order = [s.idx for s in u.inits if s.ret is not None and s.ret >= 0]
        pos = {idx: i for i, idx in enumerate(order)}
        for a, b in zip(unload, unload[1:]):
            assert a.idx is not None and b.idx is not None
            by_init = a.idx in pos and b.idx in pos and pos[b.idx] >= pos[a.idx]
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
    return _result(name, findings, applicable=any_unload,
                   note="" if any_unload else "no module unload in the capture")


def check_exit_exactly_once(cap: Capture) -> CheckResult:
    name = "exit-exactly-once"
    known = _known_exits(cap)
    findings = []
    any_exit = False
    for u in cap.units:
        f = _first_failure(u)
        ok = _succeeded_before(u, f.idx if f is not None else None, known)
        inits = {s.idx: s for s in u.inits}
        count: dict[Optional[int], list[Span]] = {}
        for e in u.exits:
            any_exit = True
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
    return _result(name, findings, applicable=any_exit,
                   note="" if any_exit else "no pair exit in the capture")


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


def _longest_ascending(values: list[int]) -> set[int]:
    """Indices of one longest strictly ascending subsequence of ``values``."""
    tails: list[int] = []  # index of the smallest tail of each length
    prev: list[int] = [-1] * len(values)
    tail_vals: list[int] = []
    for i, v in enumerate(values):
        k = bisect.bisect_left(tail_vals, v)
        if k == len(tail_vals):
            tail_vals.append(v)
            tails.append(i)
        else:
            tail_vals[k] = v
            tails[k] = i
        prev[i] = tails[k - 1] if k > 0 else -1
    keep: set[int] = set()
    i = tails[-1] if tails else -1
    while i >= 0:
        keep.add(i)
        i = prev[i]
    return keep


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
        keep = _longest_ascending([decl.order for _s, decl in runs])
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


ALL_CHECKS: tuple[Callable[[Capture], CheckResult], ...] = (
    check_trace_complete,
    check_pairing,
    check_boot_priority_order,
    check_levels,
    check_inits_ascending,
    check_no_init_after_failure,
    check_unwind_after_failure,
    check_unload_reverse,
    check_exit_exactly_once,
    check_declared_level,
    check_declared_link_order,
    check_declared_ran,
)


def _notes(cap: Capture) -> tuple[str, ...]:
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
            f"{len(cap.module_init_labels)} module init(s) labelled by their module_load event "
            f"(<module>:init, or the pair's init): the init is freed before trace-cmd saves kallsyms, "
            f"so trace-cmd printed it as a wrong symbol or an address ({examples})")
    if len(p.reordered) > MAX_QUOTES:
        notes.append(f"and {len(p.reordered) - MAX_QUOTES} more runs of tied events put in order")
    if p.fmt is InputFormat.DMESG:
        notes.append("dmesg input: no exit or unwind events; pair checks need a trace-cmd capture")
    durs = [s.duration_ns for s in cap.spans if s.duration_ns]
    if len(durs) >= 10 and all(d % 1_000_000 == 0 for d in durs):
        notes.append("every duration is a whole millisecond: the clocksource is probably jiffies, "
                     "durations are meaningless")
    pairs = sum(1 for s in cap.spans if s.kind is _PAIR_INIT)
    if cap.spans and pairs == 0 and p.fmt is InputFormat.TRACE_CMD:
        notes.append("no initexit events: a stock kernel, or the initexit events were not recorded")
    total = sum(s.duration_ns or 0 for s in cap.spans if s.kind is not _PAIR_EXIT)
    if total:
        notes.append(f"time in inits and initcalls: {format_duration(total)}")
    return tuple(notes)


def run_checks(cap: Capture, expect_all: bool = False) -> Verdict:
    """Run every named check over the capture; ``expect_all``: an initcall
    declared in the map that never ran is a finding, not a note."""
    results = tuple(check_declared_ran(cap, expect_all) if c is check_declared_ran else c(cap)
                    for c in ALL_CHECKS)
    return Verdict(cap, results, _notes(cap))

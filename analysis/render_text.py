"""Terminal output: the timeline, a slowest-N summary and the checks."""

from __future__ import annotations

import heapq
from operator import attrgetter

from analysis.model import (
    Capture,
    CheckState,
    Probe,
    ProbeMode,
    Span,
    SpanKind,
    Status,
    Verdict,
    format_duration,
    format_ns,
)
from analysis.probes import deferred_devices, placement_note, probe_counts

_DURATION = attrgetter("duration_ns")
_RESET = "\033[0m"
_COLOURS = {"red": "\033[31m", "green": "\033[32m", "yellow": "\033[33m", "dim": "\033[2m",
            "bold": "\033[1m"}


class Painter:
    """Wraps text in ANSI colours, or does nothing when colour is off."""

    def __init__(self, colour: bool) -> None:
        self.colour = colour

    def __call__(self, text: str, name: str) -> str:
        if not self.colour:
            return text
        return f"{_COLOURS[name]}{text}{_RESET}"


def _result(s: Span) -> str:
    if s.kind is SpanKind.PAIR_EXIT:
        r = s.reason.value if s.reason else "?"
        return f"{r}" if s.status is Status.OK else f"{r}, unfinished"
    if s.status is Status.UNFINISHED:
        return "unfinished"
    return "ok" if s.ret == 0 else f"ret={s.ret}"


def _row(s: Span, paint: Painter) -> str:
    idx = "" if s.idx is None else str(s.idx)
    prio = str(s.prio) if s.prio is not None else (s.level or "")
    res = _result(s)
    if s.status is Status.FAILED or s.status is Status.UNFINISHED:
        res = paint(res, "red")
    func = s.func if len(s.func) <= 34 else s.func[:31] + "..."
    origin = s.origin or "-"
    origin = origin if len(origin) <= 16 else origin[:13] + "..."
    return (f"{format_ns(s.start_ns)[:-3]:>14} {format_duration(s.duration_ns):>10}  "
            f"{s.kind.value:<8} {s.path.value:<6} {origin:<16} {idx:>4} {prio:>8}  "
            f"{func:<34} {res}")


HEADER = (f"{'START (s)':>14} {'DURATION':>10}  {'KIND':<8} {'PATH':<6} {'ORIGIN':<16} "
          f"{'IDX':>4} {'PRIO':>8}  {'FUNCTION':<34} RESULT")


def _probe_row(p: Probe, paint: Painter) -> str:
    res = p.result if p.ret == 0 else f"{p.result} ({p.ret})"
    if p.result in ("deferred", "failed"):
        res = paint(res, "yellow" if p.deferred else "red")
    where = {ProbeMode.IN_CALL: "", ProbeMode.DEFERRED: "deferred lane",
             ProbeMode.ASYNC: "async lane"}[p.mode]
    if p.mode is not ProbeMode.IN_CALL and p.call_func:
        where += f", during {p.call_func}"
    if p.mode is not ProbeMode.IN_CALL and p.task is not None:
        where += f", {p.task_text}"
    name = f"  probe {p.device}"
    name = name if len(name) <= 34 else name[:31] + "..."
    return (f"{format_ns(p.start_ns)[:-3]:>14} {format_duration(p.duration_ns):>10}  "
            f"{'probe':<8} {'':<6} {where:<30}  {name:<34} {res}")


def render_timeline(cap: Capture, paint: Painter) -> list[str]:
    """Every span, in start order (nested initcalls are folded into their
    pair); each probe run in a call right after the call, indented, the
    others in time order."""
    out = [paint(HEADER, "bold")]
    inside: dict[int, list[Probe]] = {}
    free: list[Probe] = []
    for p in cap.probes:
        if p.mode is ProbeMode.IN_CALL and p.call is not None:
            inside.setdefault(p.call, []).append(p)
        else:
            free.append(p)
    free.sort(key=attrgetter("start_ns", "line"))
    k = 0
    for s in cap.spans:
        while k < len(free) and free[k].start_ns < s.start_ns:
            out.append(_probe_row(free[k], paint))
            k += 1
        out.append(_row(s, paint))
        out += [_probe_row(p, paint) for p in inside.get(s.start.line, ())]
    out += [_probe_row(p, paint) for p in free[k:]]
    return out


def render_probes(cap: Capture, n: int, paint: Painter) -> list[str]:
    """The probes' counts, the slowest, and each deferred device with the
    causes the kernel printed."""
    ps = cap.probes
    if not ps:
        return []
    c = probe_counts(cap)
    out = [paint(f"Probes: {c['probes']} ({c['probes_in_call']} in a call, "
                 f"{c['probes_deferred_lane']} deferred, {c['probes_async']} async; "
                 f"{c['probes_returned_defer']} returned -EPROBE_DEFER, "
                 f"{c['probes_failed']} failed)", "bold"),
           paint(f"  Placement: {placement_note(cap)}.", "dim")]
    top = heapq.nlargest(n, ps, key=_DURATION)
    out += [_probe_row(p, paint) for p in top]
    devs = deferred_devices(cap)
    if devs:
        out += ["", paint(f"Deferred devices ({len(devs)}):", "bold")]
        for d in devs:
            out.append(f"  {d.summary()}")
            out += [paint(f"      line {c.line}: {c.text.strip()}", "dim") for c in d.causes]
    return out


def render_slowest(cap: Capture, n: int, paint: Painter) -> list[str]:
    spans = [s for s in cap.spans if s.duration_ns is not None]
    if not spans or n <= 0:
        return []
    # Longest first, ties in start order (nlargest is a stable sort's top n).
    top = heapq.nlargest(n, spans, key=_DURATION)
    out = [paint(f"Slowest {len(top)} of {len(spans)} calls:", "bold")]
    out += [_row(s, paint) for s in top]
    return out


def render_checks(v: Verdict, paint: Painter) -> list[str]:
    out = [paint("Checks:", "bold")]
    marks = {CheckState.PASS: paint("PASS", "green"), CheckState.FAIL: paint("FAIL", "red"),
             CheckState.SKIP: paint("SKIP", "yellow")}
    for r in v.results:
        line = f"  {marks[r.state]} {r.name}: {r.description}"
        if r.note:
            line += paint(f" ({r.note})", "dim")
        out.append(line)
        for f in r.findings:
            out.append(f"       - {f.message}")
            out += [paint(f"           {q}", "dim") for q in f.quotes]
    for note in v.notes:
        out.append(paint(f"  note: {note}", "dim"))
    return out


def render_summary_header(cap: Capture) -> str:
    p = cap.parsed
    cpus = f", {p.cpus} CPU(s)" if p.cpus else ""
    return (f"initexit analysis of {p.source} ({p.fmt.value}, {p.line_count} lines, "
            f"{p.n_events} events{cpus}, {cap.n_spans} calls)")


def render_verdict_line(v: Verdict, paint: Painter) -> str:
    n = len(v.findings)
    failed = [r.name for r in v.results if r.state is CheckState.FAIL]
    if v.ok:
        return paint("Verdict: OK - every check holds", "green")
    return paint(f"Verdict: FAIL - {n} finding(s) in {', '.join(failed)}", "red")


def render_text(v: Verdict, slowest: int = 10, colour: bool = False,
                timeline: bool = True) -> str:
    """The whole terminal report: header, timeline, slowest-N, checks, verdict."""
    paint = Painter(colour)
    cap = v.capture
    out = [paint(render_summary_header(cap), "bold"), ""]
    if timeline:
        out += render_timeline(cap, paint) + [""]
    slow = render_slowest(cap, slowest, paint)
    if slow:
        out += slow + [""]
    probes = render_probes(cap, slowest, paint)
    if probes:
        out += probes + [""]
    out += render_checks(v, paint) + ["", render_verdict_line(v, paint)]
    return "\n".join(out) + "\n"

"""Phases of a capture that scripts/bench measures, from the analysis's
model (spans, units, dmesg notices) rather than from the trace text.

``scripts/lib/bench_report.py`` turns a bench output folder into its table;
the numbers it takes from a boot's or a module scenario's trace come from
here, so no trace text is interpreted outside analysis/.
"""

from __future__ import annotations

from pathlib import Path
from typing import Optional

from analysis.build import build_capture
from analysis.grammar import BENCH_LOAD_RE, BENCH_MARK_RE
from analysis.kernel_log import message
from analysis.model import CallPath, Capture, ExitReason, Span, SpanKind
from analysis.parse import parse_dmesg, parse_text
from analysis.source import InputError


def _capture(path: Path) -> Optional[Capture]:
    try:
        text = path.read_text(errors="replace")
        return build_capture(parse_text(text, str(path)))
    except (OSError, InputError):
        return None


def _initcalls(cap: Capture) -> list[Span]:
    """Every initcall_start/finish span, the ones nested in a pair's init
    (do_one_initcall) included."""
    out = []
    for s in cap.spans:
        if s.kind is SpanKind.INITCALL:
            out.append(s)
        elif s.inner is not None:
            out.append(s.inner)
    return out


def boot_phases(report: Path, dmesg: Optional[Path] = None) -> Optional[dict[str, float]]:
    """One boot: do_initcalls time (ms, ``initcall_level level=pure`` to the
    last initcall finish), initcalls run (starts), time inside built-in
    pairs (their ``duration_ns``), and from dmesg the kernel's ordering
    cost (``initexit: ordered N built-in pairs in M ns``).  None when the
    trace has no pure level or no initcall."""
    cap = _capture(report)
    if cap is None:
        return None
    pure = next((ev for ev, name in zip(cap.levels, cap.level_names) if name == "pure"), None)
    calls = _initcalls(cap)
    finishes = [s.finish.ts_ns for s in calls if s.finish is not None]
    if pure is None or not finishes:
        return None
    r: dict[str, float] = {
        "do_initcalls_ms": (max(finishes) - pure.ts_ns) / 1e6,
        "initcalls": float(len(calls)),
    }
    in_pairs = sum(s.duration_ns or 0 for s in cap.spans
                   if s.path is CallPath.BOOT and s.kind is not SpanKind.INITCALL and s.finish is not None)
    if in_pairs:
        r["in_builtin_pairs_ms"] = in_pairs / 1e6
        r["do_initcalls_minus_pairs_ms"] = r["do_initcalls_ms"] - in_pairs / 1e6
    if dmesg is not None:
        try:
            notes = parse_dmesg(dmesg.read_text(errors="replace"), str(dmesg)).notices
        except OSError:
            notes = ()
        ordered = next((n for n in notes if n.kind == "ordered"), None)
        if ordered is not None and ordered.value is not None and ordered.ns is not None:
            r["ordered_pairs"] = float(ordered.value)
            r["ordering_ns"] = float(ordered.ns)
    return r


def initcall_debug_bytes(dmesg: Path) -> int:
    """Bytes of the initcall_debug lines (``calling`` and ``returned``, as
    the analysis reads them) in a boot's dmesg, newlines included; 0 when
    the file cannot be read or holds none."""
    try:
        text = dmesg.read_text(errors="replace")
        parsed = parse_dmesg(text, str(dmesg))
    except (OSError, InputError):
        return 0
    lines = text.splitlines()
    return sum(len(lines[e.line - 1]) + 1 for e in parsed.events)


def call_durations(report: Path) -> dict[str, float]:
    """initcall function (without ``+0x..``) -> ns spent in it (summed if it
    ran twice) in one boot; an unfinished call is left out."""
    cap = _capture(report)
    res: dict[str, float] = {}
    if cap is None:
        return res
    for s in _initcalls(cap):
        if s.finish is not None:
            fn = s.func.split("+", 1)[0]
            res[fn] = res.get(fn, 0.0) + float(s.finish.ts_ns - s.start.ts_ns)
    return res


def module_phases(report: Path, prefix: str = "bench_") -> dict[tuple[str, str], list[tuple[float, float]]]:
    """(module, ``init``|``exit``) -> one (span, inside) in µs per load or
    unload of each module named ``prefix*``: span = the first pair start to
    the last pair finish of the load's inits (the unload's exits), inside =
    the sum of their ``duration_ns``.  ``bench_pairs_N`` has N pairs, any
    other module one (its module_init/module_exit); a load or unload with
    fewer finished is left out.  scripts/bench turns the initcall events on
    after its rounds: only what ran before the first initcall counts."""
    res: dict[tuple[str, str], list[tuple[float, float]]] = {}
    cap = _capture(report)
    if cap is None:
        return res
    calls = _initcalls(cap)
    cutoff = min((s.start.ts_ns for s in calls), default=None)

    def before(s: Span) -> bool:
        return s.finish is not None and (cutoff is None or s.finish.ts_ns < cutoff)

    for u in cap.units:
        if u.path is not CallPath.MODULE or not u.origin.startswith(prefix):
            continue
        n = int(u.origin.rsplit("_", 1)[1]) if u.origin.startswith("bench_pairs_") else 1
        for phase, spans in (("init", list(u.inits)),
                             ("exit", [e for e in u.exits if e.reason is ExitReason.UNLOAD])):
            done = [s for s in spans if before(s)]
            if len(done) < n or not done:
                continue
            done = done[:n]
            first = min(s.start.ts_ns for s in done)
            last = max(s.finish.ts_ns for s in done if s.finish is not None)
            inside = sum(s.duration_ns or 0 for s in done)
            res.setdefault((u.origin, phase), []).append(((last - first) / 1e3, inside / 1e3))
    return res


def load_profiles(path: Path) -> dict[str, list[dict[str, float]]]:
    """scripts/bench's profile run (bench/guest-modules.sh with
    BENCH_PROFILE=1 on the kernel bench/profile_load.py stamped): module ->
    one {step: guest ns} per load, in order.  Each modloop call's first load
    (the first profile line after a ``bench-profile:`` mark: cold caches) and
    failed loads are left out, as scripts/lib/bench_report.py leaves out
    each round's first cycle.  Empty when the file is missing."""
    res: dict[str, list[dict[str, float]]] = {}
    try:
        lines = path.read_text(errors="replace").splitlines()
    except OSError:
        return res
    fresh = False
    for line in lines:
        if BENCH_MARK_RE.match(line):
            fresh = True
            continue
        m = BENCH_LOAD_RE.search(message(line))
        if m is None:
            continue
        if fresh:
            fresh = False
            continue
        if m["err"] != "0":
            continue
        steps = {k: float(v) for k, v in (kv.split("=", 1) for kv in m["steps"].split())}
        res.setdefault(m["mod"], []).append(steps)
    return res

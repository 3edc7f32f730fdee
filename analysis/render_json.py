"""Machine-readable outputs: the verdict for CI and the timeline as JSON."""

from __future__ import annotations

import json
from typing import Any, Optional

from analysis.model import Capture, CheckState, Probe, Span, SpanKind, Status, Verdict
from analysis.probes import deferred_devices, probe_counts

VERDICT_SCHEMA = "initexit-verdict/1"
TIMELINE_SCHEMA = "initexit-timeline/1"


def verdict_dict(v: Verdict) -> dict[str, Any]:
    """The JSON verdict: ``ok``, ``exit_status``, counts, and every check with
    its findings (each quoting the events, with line numbers)."""
    cap = v.capture
    p = cap.parsed
    spans = cap.spans
    return {
        "schema": VERDICT_SCHEMA,
        "source": p.source,
        "format": p.fmt.value,
        "ok": v.ok,
        "exit_status": 0 if v.ok else 1,
        "counts": {
            "lines": p.line_count,
            "events": p.n_events,
            **{k: v.counts[k] if k in v.counts else n for k, n in (
                ("calls", len(spans)),
                ("initcalls", sum(1 for s in spans if s.kind is SpanKind.INITCALL)),
                ("pair_inits", sum(1 for s in spans if s.kind is SpanKind.PAIR_INIT)),
                ("pair_exits", sum(1 for s in spans if s.kind is SpanKind.PAIR_EXIT)),
                ("failed_inits", sum(1 for s in spans if s.status is Status.FAILED)),
                ("units", len(cap.units)))},
            **probe_counts(cap),
            "gaps": len(p.gaps),
            "unreadable_lines": p.n_problems,
            "findings": len(v.findings),
        },
        "checks": [
            {
                "name": r.name,
                "description": r.description,
                "state": r.state.value,
                "note": r.note,
                "findings": [{"message": f.message, "quotes": list(f.quotes)} for f in r.findings],
            }
            for r in v.results
        ],
        "failed_checks": [r.name for r in v.results if r.state is CheckState.FAIL],
        "notes": list(v.notes),
        "ignored_events": dict(sorted(p.ignored.items())),
    }


def _span_dict(s: Span) -> dict[str, Any]:
    d: dict[str, Any] = {
        "kind": s.kind.value,
        "path": s.path.value,
        "origin": s.origin,
        "func": s.func,
        "idx": s.idx,
        "prio": s.prio,
        "level": s.level,
        "start_ns": s.start_ns,
        "end_ns": s.end_ns,
        "duration_ns": s.duration_ns,
        "ret": s.ret,
        "status": s.status.value,
        "line": s.start.line,
        "instance": s.instance,
    }
    if s.has_exit is not None:
        d["has_exit"] = s.has_exit
    if s.reason is not None:
        d["reason"] = s.reason.value
    if s.unwind is not None:
        d["unwind"] = {"line": s.unwind.line, "event": s.unwind.info}
    if s.inner is not None:
        d["initcall"] = {"func": s.inner.func, "start_ns": s.inner.start_ns,
                         "end_ns": s.inner.end_ns, "ret": s.inner.ret}
    return d


def timeline_dict(cap: Capture) -> dict[str, Any]:
    """Every span with path, origin, priority, function, start, duration, result."""
    return {
        "schema": TIMELINE_SCHEMA,
        "source": cap.parsed.source,
        "format": cap.parsed.fmt.value,
        "levels": [{"line": e.line, "ts_ns": e.ts_ns, "level": name}
                   for e, name in zip(cap.levels, cap.level_names)],
        "spans": [_span_dict(s) for s in cap.spans],
        "probes": [_probe_dict(pr) for pr in cap.probes],
        "deferred_devices": [
            {"device": d.device, "probe_lines": [pr.line for pr in d.probes],
             "bound_line": d.bound.line if d.bound is not None else None,
             "causes": [{"line": c.line, "kind": c.kind, "owner": c.owner, "reason": c.reason}
                        for c in d.causes]}
            for d in deferred_devices(cap)],
    }


def _probe_dict(pr: Probe) -> dict[str, Any]:
    return {
        "device": pr.device,
        "ret": pr.ret,
        "result": pr.result,
        "start_ns": pr.start_ns,
        "end_ns": pr.end_ns,
        "duration_ns": pr.duration_ns,
        "mode": pr.mode.value,
        "call_line": pr.call,
        "call": pr.call_func or None,
        "attempt": pr.attempt,
        "line": pr.line,
        "task": pr.task,
        "task_name": pr.task_name or None,
    }


def dumps(obj: Any, indent: Optional[int] = 2) -> str:
    return json.dumps(obj, indent=indent, sort_keys=False) + "\n"

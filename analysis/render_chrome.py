"""Chrome trace event JSON, which Perfetto (ui.perfetto.dev) and
chrome://tracing open.  Perfetto's ftrace text import drops initcall events,
so this is how existing viewers see the capture.

One process per path/module (boot, then each module), one thread per kernel
task; every call is a complete ("X") event.  A pair's init contains the
initcall_start/finish span of the same call, so the two nest.  Unwinds and
initcall levels are instant ("i") events.  A kernel log's device probes
are complete events: one run in a call on the call's thread (so it nests),
the deferred and the asynchronous ones on two threads of a ``probes``
process.
"""

from __future__ import annotations

from typing import Any

from analysis.model import CallPath, Capture, Probe, ProbeMode, Span, Verdict
from analysis.probes import PROBE_LANE_LABELS, lane_label


def _us(ns: int) -> float:
    return ns / 1000.0


def chrome_trace(v: Verdict) -> dict[str, Any]:
    cap: Capture = v.capture
    events: list[dict[str, Any]] = []
    procs: dict[str, int] = {"boot": 1}
    threads: set[tuple[int, int, str]] = set()
    trace_end = cap.parsed.end_ns

    def pid_of(s: Span) -> int:
        name = "boot" if s.path is CallPath.BOOT else f"module {s.origin or '?'}"
        if name not in procs:
            procs[name] = len(procs) + 1
        return procs[name]

    def complete(s: Span, pid: int, tid: int, parent_end: int | None = None) -> None:
        end = s.end_ns if s.end_ns is not None else trace_end
        if parent_end is not None:
            end = min(end, parent_end)
        args: dict[str, Any] = {
            "path": s.path.value, "origin": s.origin, "status": s.status.value,
            "line": s.start.line,
        }
        for key, val in (("idx", s.idx), ("prio", s.prio), ("level", s.level), ("ret", s.ret),
                         ("duration_ns", s.duration_ns)):
            if val is not None:
                args[key] = val
        if s.reason is not None:
            args["reason"] = s.reason.value
        events.append({
            "name": s.func, "cat": s.kind.value, "ph": "X", "pid": pid, "tid": tid,
            "ts": _us(s.start_ns), "dur": _us(max(0, end - s.start_ns)), "args": args,
        })

    for s in cap.spans:
        pid = pid_of(s)
        tid = s.start.pid
        threads.add((pid, tid, s.start.comm))
        complete(s, pid, tid)
        if s.inner is not None:
            complete(s.inner, pid, tid, s.end_ns)
        if s.unwind is not None:
            events.append({
                "name": f"unwind: {s.func}", "cat": "unwind", "ph": "i", "s": "t", "pid": pid,
                "tid": tid, "ts": _us(s.unwind.ts_ns),
                "args": {"event": s.unwind.info, "line": s.unwind.line},
            })
    # Probes (a kernel log's): one in a call on its call's thread, inside
    # it; the deferred and the async ones on threads of their own.
    by_line = {s.start.line: s for s in cap.spans}
    nested = [p.mode is ProbeMode.IN_CALL and p.call is not None and p.call in by_line
              for p in cap.probes]
    # The lanes' threads, named as the page's (with the tasks that printed them).
    laned: dict[ProbeMode, list[Probe]] = {}
    for p, inside in zip(cap.probes, nested):
        if not inside:
            laned.setdefault(p.mode if p.mode in PROBE_LANE_LABELS else ProbeMode.ASYNC, []).append(p)
    lanes = {ProbeMode.DEFERRED: (1, lane_label(ProbeMode.DEFERRED, laned.get(ProbeMode.DEFERRED, ()))),
             ProbeMode.ASYNC: (2, lane_label(ProbeMode.ASYNC, laned.get(ProbeMode.ASYNC, ())))}
    for p, inside in zip(cap.probes, nested):
        holder = by_line.get(p.call) if p.call is not None else None
        args: dict[str, Any] = {"device": p.device, "ret": p.ret, "result": p.result,
                                "mode": p.mode.value, "attempt": p.attempt, "line": p.line,
                                "duration_ns": p.duration_ns}
        if p.call_func:
            args["during"] = p.call_func
        if p.task is not None:
            args["task"] = p.task_text
        start, end = p.start_ns, p.end_ns
        if inside and holder is not None:
            pid, tid = pid_of(holder), holder.start.pid
            # Inside the call, whatever the clocks' rounding.
            start = max(start, holder.start_ns)
            if holder.end_ns is not None:
                end = min(end, holder.end_ns)
        else:
            if "probes" not in procs:
                procs["probes"] = len(procs) + 1
            pid = procs["probes"]
            tid, comm = lanes[p.mode] if p.mode in lanes else lanes[ProbeMode.ASYNC]
            threads.add((pid, tid, comm))
        events.append({
            "name": f"probe {p.device}", "cat": "probe", "ph": "X", "pid": pid, "tid": tid,
            "ts": _us(start), "dur": _us(max(0, end - start)), "args": args,
        })
    for ev, name in zip(cap.levels, cap.level_names):
        events.append({
            "name": f"level {name}", "cat": "initcall_level", "ph": "i",
            "s": "p", "pid": 1, "tid": ev.pid, "ts": _us(ev.ts_ns), "args": {"line": ev.line},
        })
    # Parents before children at the same timestamp, so viewers nest them.
    events.sort(key=lambda e: (e["ts"], -float(e.get("dur", 0.0))))
    meta: list[dict[str, Any]] = []
    for name, pid in procs.items():
        meta.append({"name": "process_name", "ph": "M", "pid": pid, "tid": 0,
                     "args": {"name": name}})
        meta.append({"name": "process_sort_index", "ph": "M", "pid": pid, "tid": 0,
                     "args": {"sort_index": pid}})
    for pid, tid, comm in sorted(threads):
        meta.append({"name": "thread_name", "ph": "M", "pid": pid, "tid": tid,
                     "args": {"name": comm if pid == procs.get("probes") else
                              f"{comm}-{tid}" if comm else str(tid)}})
    return {
        "traceEvents": meta + events,
        "displayTimeUnit": "ns",
        "otherData": {"source": cap.parsed.source, "verdict": "ok" if v.ok else "fail",
                      "generator": "initexit analysis"},
    }

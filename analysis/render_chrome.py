"""Chrome trace event JSON, which Perfetto (ui.perfetto.dev) and
chrome://tracing open.  Perfetto's ftrace text import drops initcall events,
so this is how existing viewers see the capture.

One process per path/module (boot, then each module), one thread per kernel
task; every call is a complete ("X") event.  A pair's init contains the
initcall_start/finish span of the same call, so the two nest.  Unwinds and
initcall levels are instant ("i") events.
"""

from __future__ import annotations

from typing import Any

from analysis.model import CallPath, Capture, Span, Verdict


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
                     "args": {"name": f"{comm}-{tid}" if comm else str(tid)}})
    return {
        "traceEvents": meta + events,
        "displayTimeUnit": "ns",
        "otherData": {"source": cap.parsed.source, "verdict": "ok" if v.ok else "fail",
                      "generator": "initexit analysis"},
    }

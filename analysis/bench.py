"""Analysis speed: events per second over a large capture, side by side with
the time ``trace-cmd report`` takes to print the same trace.

With ``--dat FILE`` (a real trace.dat, e.g. the >= 1M event capture that
scripts/bench records in the guest), two things are timed in one run:

- ``trace-cmd report -N -t`` printing FILE to /dev/null;
- the analysis of FILE exactly as ``python3 -m analysis check FILE`` does
  it: trace-cmd prints in a child process while the lines are parsed and
  built into spans as they arrive (two CPUs), then every check runs.

The parse stage alone is timed too, on the same text held in memory, and
so is a floor: the same streaming from ``trace-cmd report`` through a loop
that only matches each line, converts its timestamp and pushes or pops a
stack per task column (``comm-pid [cpu]``), with no fields, spans or
checks.  Any analysis that reads trace-cmd's text line by line does at
least that much, so the floor's ratio to ``trace-cmd report`` bounds what a
rewrite in CPython could reach on this machine.
Without ``--dat`` the capture is synthetic (analysis/synth.py, >= 1M event
lines in trace-cmd's exact format) and only the analysis is timed.
"""

from __future__ import annotations

import shutil
import subprocess
import time
from typing import Any, Optional

from analysis.build import build_capture
from analysis.checks import run_checks
from analysis.load import gc_paused, load_capture
from analysis.model import ParsedInput
from analysis.parse import (
    EVENT_NAMES,
    FAST_LINE_RE,
    TRACE_CMD_REPORT_ARGS,
    InputError,
    open_input,
    parse_text,
    read_input,
)
from analysis.synth import large_trace_lines


def synthetic_text(events: int) -> str:
    return "".join(large_trace_lines(events))


def _parse_only(text: str, source: str) -> tuple[ParsedInput, float]:
    with gc_paused():
        t0 = time.perf_counter()
        parsed = parse_text(text, source)
        return parsed, time.perf_counter() - t0


def time_text(text: str, source: str) -> dict[str, Any]:
    """Parse, build and check ``text`` held in memory; seconds per stage."""
    parsed, parse_s = _parse_only(text, source)
    with gc_paused():
        t1 = time.perf_counter()
        cap = build_capture(parsed)
        t2 = time.perf_counter()
        verdict = run_checks(cap)
        t3 = time.perf_counter()
    n = len(parsed.events)
    return {
        "events": n,
        "lines": parsed.line_count,
        "parse_s": parse_s,
        "build_s": t2 - t1,
        "check_s": t3 - t2,
        "total_s": parse_s + (t3 - t1),
        "parse_events_per_s": n / parse_s if parse_s > 0 else 0.0,
        "total_events_per_s": n / (parse_s + t3 - t1) if parse_s + t3 - t1 > 0 else 0.0,
        "verdict_ok": verdict.ok,
    }


def time_trace_cmd(dat: str) -> float:
    """Seconds ``trace-cmd report -N -t`` takes to print ``dat`` to /dev/null."""
    exe = shutil.which("trace-cmd")
    if exe is None:
        raise InputError("trace-cmd is not installed: cannot time `trace-cmd report`")
    t0 = time.perf_counter()
    proc = subprocess.run([exe, *TRACE_CMD_REPORT_ARGS, "-i", dat], stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE, check=False)
    elapsed = time.perf_counter() - t0
    if proc.returncode != 0:
        raise InputError(f"{dat}: trace-cmd report failed: "
                         f"{proc.stderr.decode('utf-8', 'replace').strip()[:200]}")
    return elapsed


def time_floor(dat: str) -> tuple[int, float]:
    """The least an analysis of trace-cmd's text does, streamed as
    :func:`analysis.load.load_capture` streams it: match each line, skip the
    events the model ignores, convert the timestamp, push a start onto the
    stack of its task column and pop on anything else.  Returns (events
    kept, seconds)."""
    with gc_paused():
        t0 = time.perf_counter()
        stacks: dict[str, list[int]] = {}
        fast = FAST_LINE_RE.match
        names = EVENT_NAMES
        events = 0
        with open_input(dat) as inp:
            for line in inp.lines:
                m = fast(line)
                if m is None:
                    continue
                task, sec, frac, name, _info = m.groups()
                if name not in names:
                    continue
                ts = int(sec + frac)
                stack = stacks.get(task)
                if stack is None:
                    stack = stacks[task] = []
                if name.endswith("_start"):
                    stack.append(ts)
                elif stack:
                    stack.pop()
                events += 1
        return events, time.perf_counter() - t0


def time_dat(dat: str) -> dict[str, Any]:
    """The analysis of ``dat`` as the CLI runs it, end to end, plus the
    parse stage alone on the printed text."""
    t0 = time.perf_counter()
    cap = load_capture(dat)
    t1 = time.perf_counter()
    with gc_paused():
        verdict = run_checks(cap)
    t2 = time.perf_counter()
    n = len(cap.parsed.events)
    lines = cap.parsed.line_count
    del cap, verdict
    text = read_input(dat).text
    _parsed, parse_s = _parse_only(text, dat)
    del text, _parsed
    floor_events, floor_s = time_floor(dat)
    return {
        "events": n,
        "lines": lines,
        "load_s": t1 - t0,
        "check_s": t2 - t1,
        "total_s": t2 - t0,
        "parse_s": parse_s,
        "parse_events_per_s": n / parse_s if parse_s > 0 else 0.0,
        "total_events_per_s": n / (t2 - t0) if t2 > t0 else 0.0,
        "floor_events": floor_events,
        "floor_s": floor_s,
    }


def run_bench(events: int = 1_000_000, dat: Optional[str] = None) -> dict[str, Any]:
    """The bench as a function (scripts/bench may import and call it)."""
    result: dict[str, Any] = {"schema": "initexit-bench/2"}
    if dat is not None:
        result["input"] = dat
        result["trace_cmd_report_s"] = time_trace_cmd(dat)
        result.update(time_dat(dat))
        result["analysis_over_trace_cmd"] = result["total_s"] / result["trace_cmd_report_s"]
        result["floor_over_trace_cmd"] = result["floor_s"] / result["trace_cmd_report_s"]
    else:
        t0 = time.perf_counter()
        text = synthetic_text(events)
        result["input"] = f"synthetic, {events} events requested"
        result["generate_s"] = time.perf_counter() - t0
        result["trace_cmd_report_s"] = None
        result.update(time_text(text, result["input"]))
    return result


def format_bench(r: dict[str, Any]) -> str:
    lines = [
        f"input: {r['input']}",
        f"events: {r['events']} ({r['lines']} lines)",
    ]
    if r.get("trace_cmd_report_s"):
        lines += [
            f"trace-cmd report -N -t > /dev/null: {r['trace_cmd_report_s']:.3f} s "
            f"({r['events'] / r['trace_cmd_report_s']:,.0f} events/s)",
            f"python3 -m analysis check: {r['total_s']:.3f} s "
            f"({r['total_events_per_s']:,.0f} events/s): trace-cmd report, parse and build "
            f"overlapped {r['load_s']:.3f} s, checks {r['check_s']:.3f} s",
            f"parse alone (text in memory): {r['parse_s']:.3f} s "
            f"({r['parse_events_per_s']:,.0f} events/s)",
            f"floor, streamed (match, timestamp, a stack per task column; no fields, spans or checks): "
            f"{r['floor_s']:.3f} s ({r['floor_events']:,} events)",
            f"ratio analysis/trace-cmd: {r['analysis_over_trace_cmd']:.2f} "
            f"(<= 1 means analysing is no slower than printing)",
            f"ratio floor/trace-cmd: {r['floor_over_trace_cmd']:.2f} "
            f"(what an analysis that reads and matches every line costs at least, here)",
        ]
    else:
        lines += [
            f"analysis: parse {r['parse_s']:.3f} s, build {r['build_s']:.3f} s, "
            f"checks {r['check_s']:.3f} s, total {r['total_s']:.3f} s",
            f"analysis speed: {r['parse_events_per_s']:,.0f} events/s parsed, "
            f"{r['total_events_per_s']:,.0f} events/s end to end",
            "trace-cmd report: not timed (pass --dat FILE with a real trace.dat)",
        ]
    return "\n".join(lines) + "\n"

"""Analysis speed and memory: events per second and peak RSS over a large
capture, side by side with the time ``trace-cmd report`` takes to print
the same trace.

The analysis is timed exactly as ``python3 -m analysis check FILE`` runs
it, in a child process whose peak resident set size (``ru_maxrss`` from
wait4) is reported: the checks are one streaming pass (analysis/load.py
``check_input``), so the peak should not grow with the capture.

With ``--dat FILE`` (a real trace.dat, e.g. the >= 1M event capture that
scripts/bench records in the guest), ``trace-cmd report -N -t`` printing
FILE to /dev/null is timed too, and so is a floor: the same streaming from
``trace-cmd report`` through a loop that only matches each line, converts
its timestamp and pushes or pops a stack per task column (``comm-pid
[cpu]``), with no fields, spans or checks.  Any analysis that reads
trace-cmd's text line by line does at least that much, so the floor's
ratio to ``trace-cmd report`` bounds what a rewrite in CPython could reach
on this machine.

Without ``--dat`` the capture is synthetic (analysis/synth.py, >= N event
lines in trace-cmd's exact format), written to a temporary file first
(streamed: the bench's own memory stays small too).  The parse stage alone
is timed on the same text, read line by line from the file.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from typing import Any, Optional

from analysis.grammar import EVENT_NAMES, FAST_LINE_RE
from analysis.load import gc_paused
from analysis.parse import TraceReportReader
from analysis.source import TRACE_CMD_REPORT_ARGS, InputError, open_input
from analysis.synth import large_trace_lines

#: The repository root: the child runs ``python3 -m analysis`` from here.
_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def write_synthetic(path: str, events: int) -> None:
    """A synthetic capture of at least ``events`` events, written line by line."""
    with open(path, "w", encoding="utf-8") as f:
        f.writelines(large_trace_lines(events))


def time_check(path: str) -> dict[str, Any]:
    """``python3 -m analysis check -q FILE`` in a child: seconds, exit
    status and the child's peak RSS."""
    t0 = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "analysis", "check", "-q", "--color", "never", path],
                            cwd=_ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    assert proc.stderr is not None
    err = proc.stderr.read()
    _pid, status, usage = os.wait4(proc.pid, 0)
    elapsed = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode not in (0, 1):
        raise InputError(f"{path}: python3 -m analysis check failed: "
                         f"{err.decode('utf-8', 'replace').strip()[:200]}")
    return {"total_s": elapsed, "exit_status": proc.returncode,
            "peak_rss_mb": usage.ru_maxrss / 1024.0}  # Linux: ru_maxrss is in KiB


def time_parse(path: str) -> tuple[int, int, float]:
    """The parse stage alone, streamed from ``path`` as the check reads it:
    (events, lines, seconds)."""
    with gc_paused(), open_input(path) as inp:
        t0 = time.perf_counter()
        reader = TraceReportReader(inp.source, keep_events=False)
        for _ in reader.read(inp.lines):
            pass
        return reader.event_count, reader.line_count, time.perf_counter() - t0


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
    """The least an analysis of trace-cmd's text does, streamed as the check
    streams it: match each line, skip the events the model ignores, convert
    the timestamp, push a start onto the stack of its task column and pop
    on anything else.  Returns (events kept, seconds)."""
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


def _rates(r: dict[str, Any]) -> None:
    n = r["events"]
    r["total_events_per_s"] = n / r["total_s"] if r["total_s"] > 0 else 0.0
    r["parse_events_per_s"] = n / r["parse_s"] if r["parse_s"] > 0 else 0.0


def run_bench(events: int = 1_000_000, dat: Optional[str] = None) -> dict[str, Any]:
    """The bench as a function (scripts/bench may import and call it)."""
    result: dict[str, Any] = {"schema": "initexit-bench/3"}
    if dat is not None:
        result["input"] = dat
        result["trace_cmd_report_s"] = time_trace_cmd(dat)
        result.update(time_check(dat))
        with tempfile.TemporaryDirectory(prefix="initexit-bench-") as tmp:
            text = os.path.join(tmp, "report.txt")
            with open(text, "w", encoding="utf-8") as f, open_input(dat) as inp:
                f.writelines(inp.lines)
            n, lines, parse_s = time_parse(text)
        result.update(events=n, lines=lines, parse_s=parse_s)
        result["floor_events"], result["floor_s"] = time_floor(dat)
        _rates(result)
        result["analysis_over_trace_cmd"] = result["total_s"] / result["trace_cmd_report_s"]
        result["floor_over_trace_cmd"] = result["floor_s"] / result["trace_cmd_report_s"]
        return result
    with tempfile.TemporaryDirectory(prefix="initexit-bench-") as tmp:
        path = os.path.join(tmp, "synthetic.txt")
        t0 = time.perf_counter()
        write_synthetic(path, events)
        result["input"] = f"synthetic, {events} events requested"
        result["generate_s"] = time.perf_counter() - t0
        result["trace_cmd_report_s"] = None
        result.update(time_check(path))
        n, lines, parse_s = time_parse(path)
    result.update(events=n, lines=lines, parse_s=parse_s)
    _rates(result)
    result["verdict_ok"] = result["exit_status"] == 0
    return result


def format_bench(r: dict[str, Any]) -> str:
    lines = [
        f"input: {r['input']}",
        f"events: {r['events']} ({r['lines']} lines)",
        f"python3 -m analysis check: {r['total_s']:.3f} s ({r['total_events_per_s']:,.0f} events/s), "
        f"peak RSS {r['peak_rss_mb']:.0f} MB",
        f"parse alone (streamed from a file): {r['parse_s']:.3f} s "
        f"({r['parse_events_per_s']:,.0f} events/s)",
    ]
    if r.get("trace_cmd_report_s"):
        lines += [
            f"trace-cmd report -N -t > /dev/null: {r['trace_cmd_report_s']:.3f} s "
            f"({r['events'] / r['trace_cmd_report_s']:,.0f} events/s)",
            f"floor, streamed (match, timestamp, a stack per task column; no fields, spans or checks): "
            f"{r['floor_s']:.3f} s ({r['floor_events']:,} events)",
            f"ratio analysis/trace-cmd: {r['analysis_over_trace_cmd']:.2f} "
            f"(<= 1 means analysing is no slower than printing)",
            f"ratio floor/trace-cmd: {r['floor_over_trace_cmd']:.2f} "
            f"(what an analysis that reads and matches every line costs at least, here)",
        ]
    else:
        lines.append("trace-cmd report: not timed (pass --dat FILE with a real trace.dat)")
    return "\n".join(lines) + "\n"

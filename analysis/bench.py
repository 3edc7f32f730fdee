"""Parse speed: events per second over a large capture, side by side with the
time ``trace-cmd report`` takes to print the same trace.

Without ``--dat`` the capture is synthetic (analysis/synth.py, >= 1M event
lines in trace-cmd's exact format) and only our side is timed; with
``--dat FILE`` (a real trace.dat, e.g. from the guest) trace-cmd prints it,
that text is analysed, and both times are reported with their ratio.
"""

from __future__ import annotations

import shutil
import subprocess
import time
from typing import Any, Optional

from analysis.build import build_capture
from analysis.checks import run_checks
from analysis.parse import TRACE_CMD_REPORT_ARGS, InputError, parse_text
from analysis.synth import large_trace_lines


def synthetic_text(events: int) -> str:
    return "".join(large_trace_lines(events))


def time_analysis(text: str, source: str) -> dict[str, Any]:
    """Parse, build and check ``text``; return counts and seconds per stage."""
    t0 = time.perf_counter()
    parsed = parse_text(text, source)
    t1 = time.perf_counter()
    cap = build_capture(parsed)
    t2 = time.perf_counter()
    verdict = run_checks(cap)
    t3 = time.perf_counter()
    n = len(parsed.events)
    return {
        "events": n,
        "lines": parsed.line_count,
        "parse_s": t1 - t0,
        "build_s": t2 - t1,
        "check_s": t3 - t2,
        "total_s": t3 - t0,
        "parse_events_per_s": n / (t1 - t0) if t1 > t0 else 0.0,
        "total_events_per_s": n / (t3 - t0) if t3 > t0 else 0.0,
        "verdict_ok": verdict.ok,
    }


def time_trace_cmd(dat: str) -> tuple[float, str]:
    """Seconds ``trace-cmd report -N -t`` takes to print ``dat``, and the text."""
    exe = shutil.which("trace-cmd")
    if exe is None:
        raise InputError("trace-cmd is not installed: cannot time `trace-cmd report`")
    t0 = time.perf_counter()
    proc = subprocess.run([exe, *TRACE_CMD_REPORT_ARGS, "-i", dat], stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, check=False)
    elapsed = time.perf_counter() - t0
    if proc.returncode != 0:
        raise InputError(f"{dat}: trace-cmd report failed: "
                         f"{proc.stderr.decode('utf-8', 'replace').strip()[:200]}")
    return elapsed, proc.stdout.decode("utf-8", "replace")


def run_bench(events: int = 1_000_000, dat: Optional[str] = None) -> dict[str, Any]:
    """The bench as a function (scripts/bench may import and call it)."""
    result: dict[str, Any] = {"schema": "initexit-bench/1"}
    if dat is not None:
        tc_s, text = time_trace_cmd(dat)
        result["input"] = dat
        result["trace_cmd_report_s"] = tc_s
    else:
        t0 = time.perf_counter()
        text = synthetic_text(events)
        result["input"] = f"synthetic, {events} events requested"
        result["generate_s"] = time.perf_counter() - t0
        result["trace_cmd_report_s"] = None
    result.update(time_analysis(text, result["input"]))
    if result["trace_cmd_report_s"]:
        result["analysis_over_trace_cmd"] = result["total_s"] / result["trace_cmd_report_s"]
    return result


def format_bench(r: dict[str, Any]) -> str:
    lines = [
        f"input: {r['input']}",
        f"events: {r['events']} ({r['lines']} lines)",
        f"analysis: parse {r['parse_s']:.3f} s, build {r['build_s']:.3f} s, "
        f"checks {r['check_s']:.3f} s, total {r['total_s']:.3f} s",
        f"analysis speed: {r['parse_events_per_s']:,.0f} events/s parsed, "
        f"{r['total_events_per_s']:,.0f} events/s end to end",
    ]
    if r.get("trace_cmd_report_s"):
        lines.append(f"trace-cmd report -N -t: {r['trace_cmd_report_s']:.3f} s "
                     f"({r['events'] / r['trace_cmd_report_s']:,.0f} events/s)")
        lines.append(f"ratio analysis/trace-cmd: {r['analysis_over_trace_cmd']:.2f} "
                     f"(<= 1 means analysing is no slower than printing)")
    else:
        lines.append("trace-cmd report: not timed (pass --dat FILE with a real trace.dat)")
    return "\n".join(lines) + "\n"

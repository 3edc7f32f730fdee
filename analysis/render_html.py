"""A self-contained HTML page: verdict, findings, and one inline-SVG timeline
per phase (boot, each module load, each unload), each with its own time axis
in readable units and a legend.  No scripts, fonts or images are fetched."""

from __future__ import annotations

import html
from typing import Optional

from analysis.model import (
    CallPath,
    CheckState,
    ExitReason,
    Span,
    SpanKind,
    Status,
    Verdict,
    format_duration,
    format_ns,
)

#: Rows drawn per section at most (a 1M-event bench trace must not make a
#: page no browser opens).
MAX_ROWS = 1500

ROW_H = 16
LABEL_W = 320
PLOT_W = 820
AXIS_H = 34

COLOURS = {
    "initcall": "#8796ab",
    "init-ok": "#2e7d32",
    "init-failed": "#c62828",
    "exit-unload": "#1565c0",
    "exit-unwind": "#ef6c00",
    "unfinished": "#9e9e9e",
}

LEGEND = (
    ("initcall", "plain initcall (no pair)"),
    ("init-ok", "pair init, succeeded"),
    ("init-failed", "pair init, failed (ret < 0)"),
    ("exit-unload", "pair exit on unload"),
    ("exit-unwind", "pair exit during unwind"),
    ("unfinished", "no finish in the capture"),
)

CSS = """
body { font: 14px/1.4 system-ui, sans-serif; margin: 1.5em; color: #222; }
h1 { font-size: 1.3em; } h2 { font-size: 1.1em; margin-top: 1.6em; }
.ok { color: #2e7d32; } .fail { color: #c62828; } .skip { color: #8d6e00; }
.verdict { font-size: 1.2em; font-weight: bold; padding: .4em .8em; display: inline-block;
  border-radius: 4px; }
.verdict.ok { background: #e8f5e9; } .verdict.fail { background: #ffebee; }
table { border-collapse: collapse; } td, th { padding: 2px 8px; text-align: left; }
th { border-bottom: 1px solid #999; }
pre.quote { margin: 2px 0 6px 2em; color: #555; font-size: 12px; white-space: pre-wrap; }
.legend span.sw { display: inline-block; width: 12px; height: 12px; margin: 0 4px 0 12px;
  vertical-align: middle; }
svg text { font: 11px monospace; }
"""


def _esc(text: object) -> str:
    return html.escape(str(text), quote=True)


def _colour_key(s: Span) -> str:
    if s.status is Status.UNFINISHED:
        return "unfinished"
    if s.kind is SpanKind.INITCALL:
        return "init-failed" if s.status is Status.FAILED else "initcall"
    if s.kind is SpanKind.PAIR_INIT:
        return "init-failed" if s.status is Status.FAILED else "init-ok"
    return "exit-unwind" if s.reason is ExitReason.UNWIND else "exit-unload"


def nice_step(span_ns: int, ticks: int = 8) -> int:
    """A 1/2/5 x 10^k step giving about ``ticks`` ticks over ``span_ns``."""
    raw = max(1, span_ns // ticks)
    mag = 1
    while mag * 10 <= raw:
        mag *= 10
    for m in (1, 2, 5, 10):
        if m * mag >= raw:
            return m * mag
    return 10 * mag


def axis_unit(span_ns: int) -> tuple[str, int]:
    """The unit to label an axis of this length with, and its size in ns."""
    if span_ns >= 10_000_000_000:
        return "s", 1_000_000_000
    if span_ns >= 10_000_000:
        return "ms", 1_000_000
    if span_ns >= 10_000:
        return "us", 1_000
    return "ns", 1


def _fmt_tick(value_ns: int, unit: tuple[str, int]) -> str:
    v = value_ns / unit[1]
    return f"{v:g}"


def _section_key(s: Span) -> tuple[str, str, int]:
    if s.path is CallPath.BOOT:
        return ("boot", "", 0)
    if s.kind is SpanKind.PAIR_EXIT and s.reason is ExitReason.UNLOAD:
        return ("unload", s.origin, s.instance)
    return ("load", s.origin, s.instance)


def _section_title(key: tuple[str, str, int]) -> str:
    phase, origin, inst = key
    if phase == "boot":
        return "Boot (built-in initcalls and pairs)"
    n = f" (load #{inst + 1})" if inst else ""
    return f"Module {origin}: {'unload' if phase == 'unload' else 'load'}{n}"


def render_svg(spans: list[Span], trace_end: int) -> str:
    """One timeline: a row per call, bars on a shared axis starting at the
    section's first call."""
    shown = spans[:MAX_ROWS]
    t0 = min(s.start_ns for s in shown)
    t1 = max((s.end_ns if s.end_ns is not None else trace_end) for s in shown)
    length = max(1, t1 - t0)
    unit = axis_unit(length)
    step = nice_step(length)
    height = AXIS_H + ROW_H * len(shown) + 6
    width = LABEL_W + PLOT_W + 20

    def x(ns: int) -> float:
        return LABEL_W + (ns - t0) * PLOT_W / length

    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           f'role="img" aria-label="timeline">']
    out.append(f'<text x="{LABEL_W}" y="12">time since {_esc(format_ns(t0))} s ({unit[0]})</text>')
    tick = 0
    while tick <= length:
        tx = x(t0 + tick)
        out.append(f'<line x1="{tx:.1f}" y1="{AXIS_H - 8}" x2="{tx:.1f}" y2="{height}" '
                   f'stroke="#ddd"/>')
        out.append(f'<text x="{tx:.1f}" y="{AXIS_H - 12}" text-anchor="middle">'
                   f'{_fmt_tick(tick, unit)}</text>')
        tick += step
    for row, s in enumerate(shown):
        y = AXIS_H + row * ROW_H
        end = s.end_ns if s.end_ns is not None else trace_end
        bx = x(s.start_ns)
        bw = max(1.0, x(end) - bx)
        label = s.func if len(s.func) <= 40 else s.func[:37] + "..."
        tip = (f"{s.label()}: start {format_ns(s.start_ns)} s, {format_duration(s.duration_ns)}, "
               f"{s.status.value}" + (f", ret={s.ret}" if s.ret is not None else "")
               + f" (line {s.start.line})")
        out.append(f'<text x="{LABEL_W - 6}" y="{y + 11}" text-anchor="end">{_esc(label)}</text>')
        out.append(f'<rect x="{bx:.2f}" y="{y + 2}" width="{bw:.2f}" height="{ROW_H - 4}" '
                   f'fill="{COLOURS[_colour_key(s)]}" class="{_colour_key(s)}">'
                   f'<title>{_esc(tip)}</title></rect>')
    out.append("</svg>")
    if len(spans) > len(shown):
        out.append(f"<p>{len(spans) - len(shown)} more calls not drawn (see the JSON timeline).</p>")
    return "\n".join(out)


def _legend() -> str:
    items = "".join(f'<span class="sw" style="background:{COLOURS[k]}"></span>{_esc(t)}'
                    for k, t in LEGEND)
    return f'<p class="legend">Legend:{items}</p>'


def render_html(v: Verdict, slowest: int = 15, title: Optional[str] = None) -> str:
    cap = v.capture
    p = cap.parsed
    name = title or f"initexit timeline: {p.source}"
    trace_end = max((e.ts_ns for e in p.events), default=0)
    parts = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
             f"<title>{_esc(name)}</title><style>{CSS}</style></head><body>",
             f"<h1>{_esc(name)}</h1>"]
    cls = "ok" if v.ok else "fail"
    verdict = "OK: every check holds" if v.ok else f"FAIL: {len(v.findings)} finding(s)"
    parts.append(f'<p class="verdict {cls}" id="verdict">{_esc(verdict)}</p>')
    parts.append(f"<p>{_esc(p.fmt.value)}, {p.line_count} lines, {len(p.events)} events, "
                 f"{len(cap.spans)} calls, {len(cap.units)} module loads / built-in objects "
                 "with pairs.</p>")

    parts.append('<h2>Checks</h2><table id="checks"><tr><th>state</th><th>invariant</th>'
                 "<th>meaning</th></tr>")
    for r in v.results:
        c = {CheckState.PASS: "ok", CheckState.FAIL: "fail", CheckState.SKIP: "skip"}[r.state]
        note = f" ({r.note})" if r.note else ""
        parts.append(f'<tr class="check {c}"><td class="{c}">{r.state.value.upper()}</td>'
                     f"<td><code>{_esc(r.name)}</code></td><td>{_esc(r.description + note)}</td></tr>")
    parts.append("</table>")
    if v.findings:
        parts.append('<h2>Findings</h2><ul id="findings">')
        for f in v.findings:
            quotes = "".join(f'<pre class="quote">{_esc(q)}</pre>' for q in f.quotes)
            parts.append(f'<li class="finding"><code>{_esc(f.check)}</code>: '
                         f"{_esc(f.message)}{quotes}</li>")
        parts.append("</ul>")
    if v.notes:
        parts.append("<ul>" + "".join(f"<li>{_esc(n)}</li>" for n in v.notes) + "</ul>")

    parts.append("<h2>Timeline</h2>")
    parts.append(_legend())
    sections: dict[tuple[str, str, int], list[Span]] = {}
    for s in cap.spans:
        sections.setdefault(_section_key(s), []).append(s)
    for key, spans in sections.items():
        parts.append(f'<h3 class="section">{_esc(_section_title(key))}</h3>')
        parts.append(render_svg(spans, trace_end))

    ranked = sorted((s for s in cap.spans if s.duration_ns is not None),
                    key=lambda s: (-(s.duration_ns or 0), s.start.line))[:slowest]
    if ranked:
        parts.append(f'<h2>Slowest {len(ranked)}</h2><table id="slowest"><tr><th>duration</th>'
                     "<th>kind</th><th>path</th><th>origin</th><th>prio</th><th>function</th>"
                     "<th>result</th><th>line</th></tr>")
        for s in ranked:
            prio = s.prio if s.prio is not None else (s.level or "")
            res = s.status.value + (f" ({s.ret})" if s.ret else "")
            parts.append(f"<tr><td>{_esc(format_duration(s.duration_ns))}</td>"
                         f"<td>{_esc(s.kind.value)}</td><td>{_esc(s.path.value)}</td>"
                         f"<td>{_esc(s.origin or '-')}</td><td>{_esc(prio)}</td>"
                         f"<td><code>{_esc(s.func)}</code></td><td>{_esc(res)}</td>"
                         f"<td>{s.start.line}</td></tr>")
        parts.append("</table>")
    parts.append("<p>Generated by <code>python3 -m analysis</code> from the initexit project.</p>")
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"

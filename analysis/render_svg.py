"""The timeline page's view as one static SVG file, to attach to a bug
report: the same lanes, boxes nested in boxes and unwind arrows as the
page's explorer (analysis/page_structure.py lays them out for both), over
the whole capture or a window of it (``--view S,E``, trace-clock seconds,
as the page's ``#view=S,E``), with the axis, the shaded priority bands and
module phases, a header naming the capture and its verdict, and a legend.

Plain SVG 1.1 with presentation attributes (no CSS, no script), so it
shows the same in a browser, an image viewer and a bug tracker; each box
has a ``<title>`` (the tooltip) and ``data-*`` attributes naming its box,
call and parent, each arrow the boxes it joins.
"""

from __future__ import annotations

from html import escape
from typing import Optional

from analysis.load import gc_paused
from analysis.model import Verdict, format_duration, format_ns
from analysis.page_structure import LANE_HEAD, ROW_H, Box, BoxKind
from analysis.render_html import (
    AXIS_NAME,
    CHAR_W,
    COLOURS,
    GROUP_LEGEND,
    LEGEND,
    PROBE_LEGEND,
    PageData,
    _region_fills,
    axis_ticks,
)

#: The drawing's width in pixels unless asked otherwise.
SVG_WIDTH = 1600

MARGIN = 10
HEAD_H = 44  # title and view lines
AXIS_H = 22
BAND_H = 16
LEGEND_H = 64  # up to three lines
#: A box narrower than this gets no label.
LABEL_MIN_W = 40

LINK_COLOUR = "#bf360c"

#: Fill and outline of the group boxes by style.
GROUP_FILLS = {k: (fill, line) for k, fill, line, _t in GROUP_LEGEND}


def _x(text: object) -> str:
    return escape(str(text), quote=True)


def parse_view(text: str) -> tuple[int, int]:
    """``S,E`` in trace-clock seconds (``5.476,5.479``) -> nanoseconds;
    ValueError when it is not two increasing numbers."""
    parts = text.split(",")
    if len(parts) != 2:
        raise ValueError(f"--view wants START,END in seconds, got {text!r}")
    a, b = (round(float(p) * 1e9) for p in parts)
    if b <= a:
        raise ValueError(f"--view: END must be after START, got {text!r}")
    return a, b


def render_svg(v: Verdict, view: Optional[tuple[int, int]] = None, width: int = SVG_WIDTH,
               title: Optional[str] = None) -> str:
    """The capture (or ``view``, absolute ns) as a standalone SVG document."""
    with gc_paused():
        return _render(v, view, width, title)


def _box_title(d: PageData, v: Verdict, b: Box) -> str:
    if b.kind is BoxKind.CALL:
        s = v.capture.spans[b.call]
        res = s.status.value + (f" ret={s.ret}" if s.ret is not None and s.ret != 0 else "")
        where = f"{s.path.value} {s.origin}".rstrip()
        return (f"{b.label}  {format_duration(s.duration_ns)}  {res}  {s.kind.value}, {where}, "
                f"{s.start.comm}-{s.start.pid}, line {s.start.line}")
    if b.kind is BoxKind.PROBE:
        pr = v.capture.probes[b.probe]
        where = f"in {pr.call_func}" if pr.mode.value == "in-call" else (
            f"{pr.mode.value}" + (f", during {pr.call_func}" if pr.call_func else ""))
        if pr.task is not None:
            where += f", {pr.task_text}"
        return (f"probe of {pr.device} returned {pr.ret} ({pr.result}) after "
                f"{format_duration(pr.duration_ns)}, {where}, line {pr.line}")
    what = "do_one_initcall " if b.kind is BoxKind.INNER else ""
    return f"{what}{b.label}  {format_duration(b.end - b.start)}"


def _render(v: Verdict, view: Optional[tuple[int, int]], width: int, title: Optional[str]) -> str:
    cap = v.capture
    d = PageData(v, slowest=0)
    st = d.structure
    a_abs, b_abs = view if view is not None else (d.t0, d.t1)
    a, b = a_abs - d.t0, b_abs - d.t0
    pw = width - 2 * MARGIN
    k = pw / (b - a)
    top = HEAD_H + AXIS_H + BAND_H  # the first lane's header
    plot_h = len(st.lanes) * LANE_HEAD + st.rows * ROW_H + 4
    height = top + plot_h + LEGEND_H

    def tx(t: int) -> float:
        return MARGIN + (t - a) * k

    def box_y(n: int) -> int:
        bx = st.boxes[n]
        return top + (bx.lane + 1) * LANE_HEAD + bx.row * ROW_H

    out = ['<?xml version="1.0" encoding="UTF-8"?>',
           f'<svg xmlns="http://www.w3.org/2000/svg" version="1.1" width="{width}" '
           f'height="{height}" viewBox="0 0 {width} {height}" font-family="monospace" '
           'font-size="11">']
    name = title or f"initexit timeline: {cap.parsed.source}"
    verdict = "OK: every check holds" if v.ok else f"FAIL: {len(v.findings)} finding(s)"
    out.append(f"<title>{_x(name)}</title>")
    out.append(f'<rect width="{width}" height="{height}" fill="#fff"/>')
    out.append(f'<text x="{MARGIN}" y="16" font-size="13" font-weight="bold">{_x(name)}  '
               f'<tspan fill="{"#2e7d32" if v.ok else "#c62828"}">{_x(verdict)}</tspan></text>')
    in_view = sum(1 for bx in st.boxes if bx.kind is BoxKind.CALL and bx.end >= a and bx.start <= b)
    out.append(f'<text x="{MARGIN}" y="34" id="view" data-start-ns="{a_abs}" data-end-ns="{b_abs}">'
               f"view {_x(format_ns(a_abs))} s .. {_x(format_ns(b_abs))} s "
               f"({_x(format_duration(b_abs - a_abs))} wide), {in_view} of {len(d.drawn)} drawn "
               f"calls in view ({d.total} in the capture); lanes: "
               f"{_x(', '.join(lane.label for lane in st.lanes))}</text>")
    out.append(f'<svg x="{MARGIN}" y="0" width="{pw}" height="{height}" '
               f'viewBox="{MARGIN} 0 {pw} {height}" overflow="hidden">')
    # Shaded bands and module phases, then the axis.
    for (ra, rb, label, _kind), fill in zip(d.regions, _region_fills(d)):
        if rb < a or ra > b:
            continue
        x0, x1 = max(MARGIN - 1.0, tx(ra)), min(MARGIN + pw + 1.0, tx(rb))
        out.append(f'<rect class="region" x="{x0:.1f}" y="{HEAD_H + AXIS_H}" '
                   f'width="{max(1.0, x1 - x0):.1f}" height="{BAND_H + plot_h}" fill="{fill}">'
                   f"<title>{_x(label)}</title></rect>")
        if x1 - x0 > len(label) * CHAR_W + 6:
            out.append(f'<text x="{x0 + 3:.1f}" y="{HEAD_H + AXIS_H + 12}" fill="#556">'
                       f"{_x(label)}</text>")
    name_w = len(AXIS_NAME) * CHAR_W + 2
    for x, tick in axis_ticks(a_abs, b_abs, pw, max(2, pw // 110), name_w):
        out.append(f'<line x1="{MARGIN + x:.1f}" y1="{HEAD_H + AXIS_H - 6}" x2="{MARGIN + x:.1f}" '
                   f'y2="{top + plot_h}" stroke="#ccc"/>')
        if tick is not None:
            out.append(f'<text class="tick" x="{MARGIN + x:.1f}" y="{HEAD_H + AXIS_H - 9}" '
                       f'text-anchor="middle">{tick}</text>')
    out.append(f'<text class="axis-name" x="{MARGIN + pw - 2}" y="{HEAD_H + AXIS_H - 9}" '
               f'text-anchor="end">{AXIS_NAME}</text>')
    # Lanes.
    for n, lane in enumerate(st.lanes):
        y = top + n * LANE_HEAD + lane.row * ROW_H
        out.append(f'<rect class="lane" data-lane="{n}" x="{MARGIN}" y="{y}" width="{pw}" '
                   f'height="{LANE_HEAD + lane.rows * ROW_H}" fill="none" stroke="#90a4ae" '
                   'stroke-width="0.6"/>')
    # Boxes, parents first; labels over them.
    labels = []
    for n, bx in enumerate(st.boxes):
        if bx.end < a or bx.start > b:
            continue
        x0 = max(MARGIN - 2.0, tx(bx.start))
        w = max(1.0, min(MARGIN + pw + 2.0, tx(bx.end)) - x0)
        y = box_y(n)
        if bx.kind in (BoxKind.LOAD, BoxKind.UNLOAD):
            fill, line = GROUP_FILLS[bx.style]
            paint = f'fill="{fill}" stroke="{line}" stroke-width="1"'
        elif bx.kind is BoxKind.INNER:
            paint = f'fill="{COLOURS[bx.style]}" stroke="#fff" stroke-width="0.7"'
        else:
            paint = f'fill="{COLOURS[bx.style]}"'
            if d.flags.get(bx.call):
                paint += ' stroke="#b71c1c" stroke-width="1.5"'
        call = d.slot[bx.call] if bx.call >= 0 else -1
        extra = f' data-probe="{bx.probe}"' if bx.kind is BoxKind.PROBE else ""
        out.append(f'<rect class="box {bx.kind.value}" data-box="{n}" data-call="{call}"{extra} '
                   f'data-parent="{bx.parent}" data-lane="{bx.lane}" x="{x0:.1f}" y="{y + 1}" '
                   f'width="{w:.1f}" height="{bx.rows * ROW_H - 2}" {paint}>'
                   f"<title>{_x(_box_title(d, v, bx))}</title></rect>")
        if w > LABEL_MIN_W:
            chars = int((w - 6) / CHAR_W)
            text = bx.label if len(bx.label) <= chars else bx.label[:max(1, chars - 1)] + "~"
            colour = "#222" if bx.kind in (BoxKind.LOAD, BoxKind.UNLOAD) else "#fff"
            labels.append(f'<text x="{max(float(MARGIN), x0) + 3:.1f}" y="{y + 13}" '
                          f'fill="{colour}">{_x(text)}</text>')
    out.extend(labels)
    # The unwinds' arrows, as the page draws them.
    out.append(f'<defs><marker id="arrow" viewBox="0 0 8 8" refX="7" refY="4" markerWidth="6" '
               f'markerHeight="6" markerUnits="userSpaceOnUse" orient="auto">'
               f'<path d="M0 0L8 4L0 8Z" fill="{LINK_COLOUR}"/></marker></defs>')
    rank: dict[int, int] = {}
    for lk in st.links:
        nth = rank.get(lk.src, 0)
        rank[lk.src] = nth + 1
        s, t = st.boxes[lk.src], st.boxes[lk.dst]
        x1, x2 = tx(s.end), tx(t.start)
        if (x1 < MARGIN and x2 < MARGIN) or (x1 > MARGIN + pw and x2 > MARGIN + pw):
            continue
        y1, y2 = box_y(lk.src) + 1, box_y(lk.dst) + 1
        first = s.row == st.lanes[s.lane].row
        h = min(LANE_HEAD - 2 if first else ROW_H + LANE_HEAD - 4, 5 + 4 * nth)
        peak = min(y1, y2) - h / 0.75
        dx = (x2 - x1) * 0.3
        out.append(f'<path class="link {lk.kind}" data-from="{lk.src}" data-to="{lk.dst}" '
                   f'd="M{x1:.1f} {y1}C{x1 + dx:.1f} {peak:.1f} {x2 - dx:.1f} {peak:.1f} '
                   f'{x2:.1f} {y2}" fill="none" stroke="{LINK_COLOUR}" stroke-width="1.3" '
                   f'marker-end="url(#arrow)"><title>{_x(lk.text)}</title></path>')
    # Lane names last: over everything, at the left edge.
    for n, lane in enumerate(st.lanes):
        y = top + n * LANE_HEAD + lane.row * ROW_H
        out.append(f'<rect x="{MARGIN + 1}" y="{y + 1}" width="{len(lane.label) * CHAR_W + 6:.1f}" '
                   f'height="{LANE_HEAD - 2}" fill="#fff" fill-opacity="0.85"/>')
        out.append(f'<text class="lane-name" data-lane="{n}" x="{MARGIN + 4}" '
                   f'y="{y + LANE_HEAD - 3}" font-weight="bold" fill="#37474f">{_x(lane.label)}</text>')
    out.append("</svg>")
    out.append(_legend(top + plot_h + 16, pw, bool(v.capture.probes)))
    out.append("</svg>")
    return "\n".join(out) + "\n"


def _legend(y: int, width: int, probes: bool = False) -> str:
    """The colours, the group boxes and the arrow, wrapped to ``width``."""
    items: list[tuple[str, str, str]] = [(COLOURS[key], "none", text) for key, text in LEGEND]
    items += [(fill, line, text) for _k, fill, line, text in GROUP_LEGEND]
    if probes:  # a kernel log's device probes
        items += [(COLOURS[key], "none", text) for key, text in PROBE_LEGEND]
    items.append(("", LINK_COLOUR, "unwind: failed init to each exit it caused"))
    out = [f'<g class="legend" transform="translate({MARGIN},{y})">']
    x, row = 0.0, 0
    for fill, line, text in items:
        w = 14 + len(text) * CHAR_W + 14
        if x and x + w > width:
            x, row = 0.0, row + 18
        if fill:
            out.append(f'<rect x="{x:.1f}" y="{row - 9}" width="10" height="10" fill="{fill}" '
                       f'stroke="{line}"/>')
        else:
            out.append(f'<path d="M{x:.1f} {row - 4}h10" stroke="{line}" stroke-width="1.3" '
                       'marker-end="url(#arrow)"/>')
        out.append(f'<text x="{x + 14:.1f}" y="{row}">{_x(text)}</text>')
        x += w
    out.append(f'<text x="0" y="{row + 18}">a box inside a box: a call inside the call or module '
               "load that holds it (a pair init holds its do_one_initcall); a lane per CPU "
               "(per kthread for async work)</text>")
    out.append("</g>")
    return "\n".join(out)

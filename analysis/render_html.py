"""A self-contained, explorable timeline page: one HTML file, no network.

Static parts (readable without JavaScript): the verdict, the checks, the
findings with links to the calls they quote, an overview lane of the whole
capture as inline SVG (priority bands and module phases shaded and
labelled, how busy each stretch is, failed calls marked), and the slowest
calls.  The explorer (inline script, no libraries) draws the structure
analysis/page_structure.py lays out (a lane per CPU or kthread, each call
a box drawn inside the box that holds it: its caller, or its module's load
or unload; an arrow from a failed init to each exit its unwind ran) on a
zoomable, pannable axis (wheel, drag, buttons, keys), shows a call's
details on hover and click (function, origin, priority, band, start,
duration, result, links between an init, its exit and its unwind), filters
by text, and takes its state from the URL hash (``#view=S,E``,
``#call=N``, ``#filter=TEXT``, ``#zoom=F``), so a view can be linked to and
scripted (the browser test and the README screenshot use it).
analysis/render_svg.py draws the same structure as a static SVG.

A capture with more than :data:`MAX_CALLS` calls (a stress run) draws that
many: every failed, unfinished or finding-quoted call, the slowest, the
rest by start time; every call still counts in the overview lane, and the
page says how many were left out.
"""

from __future__ import annotations

import heapq
import html
import json
import re
from typing import Any, Iterable, Optional

from analysis.load import gc_paused
from analysis.model import (
    BAND_NAMES,
    BANDS,
    CallPath,
    Capture,
    CheckState,
    ExitReason,
    Span,
    Status,
    Verdict,
    format_duration,
    format_ns,
)
from analysis.page_structure import (
    LANE_HEAD,
    MAX_TRACKS,
    ROW_H,
    STYLES,
    Structure,
    build_structure,
    clean_func,
    colour_key,
    section_key,
)
from analysis.probes import deferred_devices, placement_note, probe_counts

#: Calls drawn as one element each at most; past it the rest only count in
#: the overview (20000 SVG rects still pan smoothly in Chromium).
MAX_CALLS = 20_000

#: Columns of the overview lane's busy profile.
OVERVIEW_BINS = 500

#: Shaded regions (bands, module phases) at most; past it module phases
#: are not shaded (a stress run has tens of thousands).
MAX_REGIONS = 400

#: Calls linked from one finding at most.
MAX_FINDING_LINKS = 12

OV_W = 1000  # overview viewBox width
OV_BAND_H = 16
OV_BUSY_H = 30
OV_AXIS_H = 18

COLOUR_KEYS = ("initcall", "init-ok", "init-failed", "exit-unload", "exit-unwind", "unfinished")

COLOURS = {
    "initcall": "#8796ab",
    "init-ok": "#2e7d32",
    "init-failed": "#c62828",
    "exit-unload": "#1565c0",
    "exit-unwind": "#ef6c00",
    "unfinished": "#9e9e9e",
    # Device probes (a kernel log's): not calls, so not in COLOUR_KEYS.
    "probe-bound": "#00897b",
    "probe-deferred": "#b8860b",
    "probe-failed": "#6d4c41",
}

#: Probe boxes: style key, legend text.
PROBE_LEGEND = (
    ("probe-bound", "device probe (bound, or not its driver)"),
    ("probe-deferred", "probe deferred (-EPROBE_DEFER)"),
    ("probe-failed", "probe failed"),
)

LEGEND = (
    ("initcall", "plain initcall (no pair)"),
    ("init-ok", "pair init, succeeded"),
    ("init-failed", "failed (ret < 0)"),
    ("exit-unload", "pair exit on unload"),
    ("exit-unwind", "pair exit during unwind"),
    ("unfinished", "no finish in the capture"),
)

#: Group boxes: style key, fill, outline, legend text.
GROUP_LEGEND = (
    ("load", "#e8f5e9", "#2e7d32", "module load"),
    ("load-failed", "#fdecea", "#c62828", "failed load"),
    ("unload", "#e3edf8", "#1565c0", "unload"),
)

#: Region fills: boot bands alternate, module loads and unloads.
REGION_FILLS = {"band0": "#eef1f6", "band1": "#dfe5ee", "load": "#e3f1e4", "unload": "#e1ecf7"}

#: A finding's quote names its event by line: ``line 133: 5.476773100 ...``.
_QUOTE_LINE = re.compile(r"^line (\d+):")

CSS = """
body { font: 14px/1.4 system-ui, sans-serif; margin: 1.2em 1.5em; color: #222; }
h1 { font-size: 1.3em; } h2 { font-size: 1.1em; margin-top: 1.4em; }
.ok { color: #2e7d32; } .fail { color: #c62828; } .skip { color: #8d6e00; }
.verdict { font-size: 1.2em; font-weight: bold; padding: .4em .8em; display: inline-block;
  border-radius: 4px; }
.verdict.ok { background: #e8f5e9; } .verdict.fail { background: #ffebee; }
table { border-collapse: collapse; } td, th { padding: 2px 8px; text-align: left; }
th { border-bottom: 1px solid #999; }
pre.quote { margin: 2px 0 6px 2em; color: #555; font-size: 12px; white-space: pre-wrap; }
.legend span.sw { display: inline-block; width: 12px; height: 12px; margin: 0 4px 0 12px;
  vertical-align: middle; }
.note { color: #6d4c00; background: #fff8e1; padding: 2px 6px; }
svg text { font: 11px monospace; }
#overview { width: 100%; height: auto; display: block; border: 1px solid #bbb;
  cursor: crosshair; user-select: none; }
#controls { margin: 6px 0; display: flex; flex-wrap: wrap; gap: 6px; align-items: center; }
#controls button { font: inherit; padding: 1px 8px; }
#filter { font: inherit; width: 16em; }
#range { font-family: monospace; font-size: 12px; }
#explorer { position: relative; border: 1px solid #bbb; overflow: hidden; cursor: grab;
  user-select: none; }
#explorer.dragging { cursor: grabbing; }
#tl-svg { display: block; }
#tl-svg rect.call { stroke: none; }
#tl-svg rect.call.dim { opacity: .12; }
#tl-svg rect.call.flag { stroke: #b71c1c; stroke-width: 1.5; }
#tl-svg text.lbl { pointer-events: none; fill: #fff; }
#tl-svg text.band { fill: #556; pointer-events: none; }
#tl-svg rect.sel { fill: none; stroke: #000; stroke-width: 2; pointer-events: none; }
#tip { position: absolute; pointer-events: none; background: #fffde7; border: 1px solid #999;
  padding: 3px 6px; font-size: 12px; display: none; white-space: nowrap; z-index: 2; }
#detail { margin-top: 6px; min-height: 3em; border: 1px solid #ddd; padding: 4px 8px;
  background: #fafafa; }
#detail th { border: none; color: #555; font-weight: normal; padding-right: 12px; }
a.call-link { margin-right: .8em; }
.k-initcall { fill: #8796ab; } .k-init-ok { fill: #2e7d32; } .k-init-failed { fill: #c62828; }
.k-exit-unload { fill: #1565c0; } .k-exit-unwind { fill: #ef6c00; }
.k-unfinished { fill: #9e9e9e; }
.k-probe-bound { fill: #00897b; } .k-probe-deferred { fill: #b8860b; } .k-probe-failed { fill: #6d4c41; }
#tl-svg rect.inner { stroke: #fff; stroke-width: .7; }
#tl-svg rect.load, #tl-svg rect.unload { stroke-width: 1; }
.k-load { fill: #e8f5e9; stroke: #2e7d32; } .k-load-failed { fill: #fdecea; stroke: #c62828; }
.k-unload { fill: #e3edf8; stroke: #1565c0; }
#tl-svg text.glbl { pointer-events: none; fill: #222; }
#tl-svg rect.lane { fill: none; stroke: #90a4ae; stroke-width: .6; pointer-events: none; }
#tl-svg g.lane-name rect { fill: #fff; fill-opacity: .85; }
#tl-svg g.lane-name { pointer-events: none; }
#tl-svg text.lane { font-weight: bold; fill: #37474f; }
#tl-svg path.link { fill: none; stroke: #bf360c; stroke-width: 1.3; }
#tl-svg path.link.hot { stroke-width: 2.6; }
#tl-svg path.arrow { fill: #bf360c; }
"""

# The explorer.  No "<" followed by "/" anywhere in it (the page's parsers
# would end the script there); elements are made with createElementNS.
SCRIPT = r"""
(function () {
"use strict";
var D = JSON.parse(document.getElementById("initexit-data").textContent);
var C = D.calls, T = Math.max(1, D.end), T0 = D.t0, KEYS = D.keys, REG = D.regions;
var B = D.boxes, LN = D.lanes, LK = D.links, STY = D.styles, PR = D.probes;
var S = 0, E = 1, DUR = 2, BOX = 3, COL = 4, FN = 5, ORI = 6, PRIO = 7, BAND = 8, ST = 9,
    RET = 10, KIND = 11, PATH = 12, IDX = 13, TASK = 14, CPU = 15, LINE = 16, FLINE = 17,
    REASON = 18, INNER = 19, LINKS = 20, FLAGS = 21, LEVEL = 22;
// A box: a call, the do_one_initcall inside a pair init, or a module's
// load or unload holding its calls; drawn inside its parent box.
var BS = 0, BE = 1, BLANE = 2, BROW = 3, BROWS = 4, BKIND = 5, BCALL = 6, BPAR = 7, BLBL = 8,
    BSTY = 9, BPROBE = 10;
// A device probe: device, ret, result, where it ran, the call it ran
// during, attempt, line, duration, the log line, the task that printed
// it ("" when the log names none).
var PDEV = 0, PRET = 1, PRES = 2, PMODE = 3, PCALL = 4, PATT = 5, PLINE = 6, PDUR = 7, PTEXT = 8,
    PTASK = 9;
var NS = "http://www.w3.org/2000/svg";
var ROW_H = D.geometry.row, LANE_H = D.geometry.lane_head;
var BAND_H = 16, AXIS_H = 22, MIN_SPAN = 200, MAX_LABELS = 400;
var box = document.getElementById("explorer"), tip = document.getElementById("tip");
var detail = document.getElementById("detail"), rangeOut = document.getElementById("range");
var filterBox = document.getElementById("filter"), filterOut = document.getElementById("filter-count");
var ovWin = document.getElementById("ov-window"), ovSvg = document.getElementById("overview");
var view = {a: 0, b: T}, W = 800, selected = -1, match = null, shown = [];
var rowsAll = 0;
for (var l = 0; l < LN.length; l++) rowsAll += LN[l][2];
var H = AXIS_H + BAND_H + LN.length * LANE_H + rowsAll * ROW_H + 4;
function laneTop(n) { return AXIS_H + BAND_H + n * LANE_H + LN[n][1] * ROW_H; }
function boxY(b) { return AXIS_H + BAND_H + (B[b][BLANE] + 1) * LANE_H + B[b][BROW] * ROW_H; }

function el(tag, attrs, text) {
  var e = document.createElementNS(NS, tag);
  for (var k in attrs) e.setAttribute(k, attrs[k]);
  if (text !== undefined) e.textContent = text;
  return e;
}
function hel(tag, text, attrs) {
  var e = document.createElement(tag);
  if (text !== undefined && text !== null) e.textContent = text;
  for (var k in (attrs || {})) e.setAttribute(k, attrs[k]);
  return e;
}
function fmtDur(ns) {
  if (ns === null || ns === undefined) return "?";
  if (ns < 10000) return ns + " ns";
  if (ns < 10000000) return (ns / 1000).toFixed(1) + " us";
  if (ns < 10000000000) return (ns / 1000000).toFixed(2) + " ms";
  return (ns / 1000000000).toFixed(3) + " s";
}
function fmtAbs(rel) {
  var ns = Math.round(T0 + rel), s = Math.floor(ns / 1e9), f = String(ns - s * 1e9);
  while (f.length < 9) f = "0" + f;
  return s + "." + f;
}
function niceStep(span, ticks) {
  var raw = Math.max(1, span / ticks), mag = Math.pow(10, Math.floor(Math.log10(raw)));
  var ms = [1, 2, 5, 10];
  for (var i = 0; i < ms.length; i++) if (ms[i] * mag >= raw) return ms[i] * mag;
  return 10 * mag;
}
function tickLabel(t, step) {
  var dec = Math.max(0, Math.min(9, Math.ceil(-Math.log10(step / 1e9) - 1e-9)));
  return ((T0 + t) / 1e9).toFixed(dec);
}

var svg = el("svg", {id: "tl-svg", height: H, width: W});
var defs = el("defs", {}), pat = el("pattern", {id: "hatch", width: 8, height: 8,
  patternUnits: "userSpaceOnUse", patternTransform: "rotate(45)"});
pat.appendChild(el("rect", {width: 8, height: 8, fill: "#f3f3f3"}));
pat.appendChild(el("line", {x1: 0, y1: 0, x2: 0, y2: 8, stroke: "#c9c9c9", "stroke-width": 3}));
defs.appendChild(pat);
var arrow = el("marker", {id: "arrow", viewBox: "0 0 8 8", refX: 7, refY: 4, markerWidth: 6,
  markerHeight: 6, markerUnits: "userSpaceOnUse", orient: "auto"});
arrow.appendChild(el("path", {d: "M0 0L8 4L0 8Z", "class": "arrow"}));
defs.appendChild(arrow); svg.appendChild(defs);
var gBands = el("g", {}), gLanes = el("g", {}), gGrid = el("g", {}), gCalls = el("g", {}),
    gLabels = el("g", {}), gLinks = el("g", {}), gLaneNames = el("g", {});
svg.appendChild(gBands); svg.appendChild(gLanes); svg.appendChild(gGrid); svg.appendChild(gCalls);
svg.appendChild(gLabels); svg.appendChild(gLinks); svg.appendChild(gLaneNames);
var selRect = el("rect", {"class": "sel", x: -10, y: 0, width: 0, height: ROW_H - 2});
selRect.style.display = "none";
svg.appendChild(selRect);
box.appendChild(svg);

var bandRects = [], bandTexts = [];
for (var r = 0; r < REG.length; r++) {
  var br = el("rect", {y: AXIS_H, height: H - AXIS_H, fill: REG[r][3]});
  br.appendChild(el("title", {}, REG[r][2]));
  gBands.appendChild(br); bandRects.push(br);
  var bt = el("text", {"class": "band", y: AXIS_H + 12}, REG[r][2]);
  gBands.appendChild(bt); bandTexts.push(bt);
}
var cutRect = null, cutText = null;
if (D.cut !== null) {
  cutRect = el("rect", {id: "cut", y: AXIS_H, height: H - AXIS_H, fill: "url(#hatch)"});
  cutRect.appendChild(el("title", {}, D.cut_label));
  cutText = el("text", {"class": "band", y: AXIS_H + 12}, D.cut_label);
  gBands.appendChild(cutRect); gBands.appendChild(cutText);
}
// Lanes: a header strip with the lane's name (it stays at the left edge
// while the view pans) and a line between lanes.
var laneRects = [];
for (var n = 0; n < LN.length; n++) {
  var top = laneTop(n), lh = LANE_H + LN[n][2] * ROW_H;
  var lr = el("rect", {"class": "lane", x: 0, y: top, width: W, height: lh, "data-lane": n});
  gLanes.appendChild(lr); laneRects.push(lr);
  var lg = el("g", {"class": "lane-name", "data-lane": n});
  var lt = el("text", {"class": "lane", x: 4, y: top + LANE_H - 3}, LN[n][0]);
  lg.appendChild(el("rect", {x: 1, y: top + 1, width: LN[n][0].length * 6.7 + 6, height: LANE_H - 2}));
  lg.appendChild(lt); gLaneNames.appendChild(lg);
}
// One element per box, parents first (children are drawn over them).
var CB = new Array(C.length);
var rects = new Array(B.length), vis = new Array(B.length);
for (var j = 0; j < B.length; j++) {
  var b = B[j], kind = b[BKIND], ci = b[BCALL];
  var cls = "box " + kind + " k-" + STY[b[BSTY]];
  var at = {y: boxY(j) + 1, height: b[BROWS] * ROW_H - 2, "data-b": j, "data-parent": b[BPAR],
            "data-lane": b[BLANE]};
  if (kind === "call") {
    cls += " call" + (C[ci][FLAGS].length ? " flag" : "");
    at["data-i"] = ci; CB[ci] = j;
  }
  if (kind === "probe") at["data-probe"] = b[BPROBE];
  at["class"] = cls;
  var rc = el("rect", at);
  rects[j] = rc; vis[j] = true;
  gCalls.appendChild(rc);
}
// The unwinds' arrows: a failed init to each exit it caused; one from the
// same init rises higher the later its exit.
var links = [], rank = {};
for (var q = 0; q < LK.length; q++) {
  var src = LK[q][0], nth = rank[src] || 0;
  rank[src] = nth + 1;
  var pth = el("path", {"class": "link " + LK[q][2], "data-from": src, "data-to": LK[q][1],
                        "marker-end": "url(#arrow)"});
  pth.appendChild(el("title", {}, LK[q][3]));
  gLinks.appendChild(pth);
  links.push([pth, nth]);
}
var labelPool = [];

function clampView(a, b) {
  var w = Math.min(T, Math.max(MIN_SPAN, b - a));
  if (a < 0) a = 0;
  if (a + w > T) a = T - w;
  if (a < 0) a = 0;
  return {a: a, b: a + w};
}
function setView(a, b) { view = clampView(a, b); render(); }
function zoomAt(factor, frac) {
  var w = view.b - view.a, t = view.a + frac * w, nw = w / factor;
  setView(t - frac * nw, t - frac * nw + nw);
}
function panBy(frac) { var w = view.b - view.a; setView(view.a + frac * w, view.b + frac * w); }

function linkPath(q, a, k) {
  var s = LK[q][0], d = LK[q][1];
  var x1 = (B[s][BE] - a) * k, x2 = (B[d][BS] - a) * k, y1 = boxY(s) + 1, y2 = boxY(d) + 1;
  // Rise into the row above, or only into the lane's header strip when
  // the failed init is in the lane's first row.
  var first = B[s][BROW] === LN[B[s][BLANE]][1];
  var h = Math.min(first ? LANE_H - 2 : ROW_H + LANE_H - 4, 5 + 4 * links[q][1]);
  var top = Math.min(y1, y2) - h / 0.75, dx = (x2 - x1) * 0.3;
  return [x1, x2, "M" + x1.toFixed(1) + " " + y1 + "C" + (x1 + dx).toFixed(1) + " " + top.toFixed(1) +
          " " + (x2 - dx).toFixed(1) + " " + top.toFixed(1) + " " + x2.toFixed(1) + " " + y2];
}

function render() {
  W = Math.max(200, box.clientWidth);
  svg.setAttribute("width", W);
  var a = view.a, b = view.b, k = W / (b - a);
  while (gGrid.firstChild) gGrid.removeChild(gGrid.firstChild);
  var step = niceStep(b - a, Math.max(2, W / 110)), t = Math.ceil(a / step) * step;
  for (; t <= b; t += step) {
    var x = (t - a) * k;
    gGrid.appendChild(el("line", {x1: x, x2: x, y1: AXIS_H - 6, y2: H, stroke: "#ccc"}));
    var tl = tickLabel(t, step);
    // The last label stays inside the view.
    if (x + 2 + tl.length * 6.7 <= W) gGrid.appendChild(el("text", {x: x + 2, y: AXIS_H - 9}, tl));
  }
  for (var r = 0; r < REG.length; r++) {
    var x0 = (REG[r][0] - a) * k, x1 = (REG[r][1] - a) * k;
    var on = x1 >= 0 && x0 <= W;
    bandRects[r].style.display = on ? "" : "none";
    bandTexts[r].style.display = "none";
    if (!on) continue;
    var bx = Math.max(-1, x0), bw = Math.max(1, Math.min(W + 1, x1) - bx);
    bandRects[r].setAttribute("x", bx); bandRects[r].setAttribute("width", bw);
    if (bw > REG[r][2].length * 7 + 6) {
      bandTexts[r].style.display = "";
      bandTexts[r].setAttribute("x", bx + 3);
    }
  }
  if (cutRect) {
    var cx = Math.max(-1, (D.cut - a) * k), on2 = cx <= W;
    cutRect.style.display = on2 ? "" : "none"; cutText.style.display = on2 ? "" : "none";
    if (on2) {
      cutRect.setAttribute("x", cx); cutRect.setAttribute("width", Math.max(1, W + 1 - cx));
      cutText.setAttribute("x", cx + 3);
    }
  }
  for (var n = 0; n < laneRects.length; n++) laneRects[n].setAttribute("width", W);
  var nc = 0, wide = [];
  shown = [];
  for (var i = 0; i < B.length; i++) {
    var c = B[i], cx0 = (c[BS] - a) * k, cx1 = (c[BE] - a) * k;
    var show = cx1 >= 0 && cx0 <= W;
    if (show !== vis[i]) { rects[i].style.display = show ? "" : "none"; vis[i] = show; }
    if (!show) continue;
    if (c[BKIND] === "call") { nc++; shown.push(c[BCALL]); }
    var rx = Math.max(-2, cx0), rw = Math.max(1, Math.min(W + 2, cx1) - rx);
    rects[i].setAttribute("x", rx.toFixed(1)); rects[i].setAttribute("width", rw.toFixed(1));
    if (rw > 40 && wide.length < MAX_LABELS) wide.push([i, rx, rw]);
  }
  for (var q = 0; q < wide.length; q++) {
    if (q >= labelPool.length) {
      var lt = el("text", {}); gLabels.appendChild(lt); labelPool.push(lt);
    }
    var L = labelPool[q], bi = B[wide[q][0]], chars = Math.floor((wide[q][2] - 6) / 6.7);
    var name = bi[BLBL].length > chars ? bi[BLBL].slice(0, Math.max(1, chars - 1)) + "~" : bi[BLBL];
    L.textContent = name; L.style.display = "";
    L.setAttribute("class", bi[BKIND] === "load" || bi[BKIND] === "unload" ? "glbl" : "lbl");
    L.setAttribute("x", Math.max(0, wide[q][1]) + 3);
    L.setAttribute("y", boxY(wide[q][0]) + 13);
  }
  for (var z = wide.length; z < labelPool.length; z++) labelPool[z].style.display = "none";
  for (var m = 0; m < links.length; m++) {
    var g = linkPath(m, a, k), off = (g[0] < 0 && g[1] < 0) || (g[0] > W && g[1] > W);
    links[m][0].style.display = off ? "none" : "";
    if (!off) links[m][0].setAttribute("d", g[2]);
  }
  placeSel();
  var ow = 1000 / T;
  ovWin.setAttribute("x", (a * ow).toFixed(2));
  ovWin.setAttribute("width", Math.max(1.5, (b - a) * ow).toFixed(2));
  rangeOut.textContent = "view " + fmtAbs(a) + " s .. " + fmtAbs(b) + " s (" + fmtDur(Math.round(b - a)) +
    " wide), " + nc + " of " + C.length + " drawn calls in view";
  rangeOut.setAttribute("data-start-ns", Math.round(T0 + a));
  rangeOut.setAttribute("data-end-ns", Math.round(T0 + b));
  rangeOut.setAttribute("data-visible", nc);
}
function placeSel() {
  for (var m = 0; m < links.length; m++) {
    var hot = selected >= 0 && (LK[m][0] === CB[selected] || LK[m][1] === CB[selected]);
    links[m][0].setAttribute("class", "link " + LK[m][2] + (hot ? " hot" : ""));
  }
  if (selected < 0 || !vis[CB[selected]]) { selRect.style.display = "none"; return; }
  var r = rects[CB[selected]];
  selRect.style.display = "";
  selRect.setAttribute("x", r.getAttribute("x")); selRect.setAttribute("y", r.getAttribute("y"));
  selRect.setAttribute("width", r.getAttribute("width"));
  selRect.setAttribute("height", r.getAttribute("height"));
}

function callLink(j, text) {
  var a = hel("a", text, {href: "#call=" + j, "class": "call-link"});
  return a;
}
function detailTable(call, boxIndex) {
  while (detail.firstChild) detail.removeChild(detail.firstChild);
  detail.setAttribute("data-call", call);
  detail.setAttribute("data-box", boxIndex);
  var tb = hel("table");
  detail.appendChild(tb);
  return function row(k, v) {
    var tr = hel("tr"); tr.appendChild(hel("th", k));
    var td = hel("td");
    if (typeof v === "string") td.textContent = v; else td.appendChild(v);
    tr.appendChild(td); tb.appendChild(tr);
  };
}
function parentRow(row, b) {
  var p = B[b][BPAR];
  if (p < 0) { row("drawn in", "lane " + LN[B[b][BLANE]][0]); return; }
  var what = B[p][BKIND] === "call" ? callLink(B[p][BCALL], B[p][BLBL]) : hel("span", B[p][BLBL]);
  var sp = hel("span", "lane " + LN[B[b][BLANE]][0] + ", inside ");
  sp.appendChild(what);
  row("drawn in", sp);
}
function showDetail(i) {
  var c = C[i], row = detailTable(i, CB[i]);
  var fn = hel("code", c[FN]); fn.id = "detail-func";
  row("function", fn);
  row("call", c[KIND] + (c[IDX] !== null ? " #" + c[IDX] : "") + ", " + c[PATH] +
      (c[REASON] ? ", reason " + c[REASON] : ""));
  row("origin", c[ORI] || "-");
  row("priority", c[PRIO] !== null ? String(c[PRIO]) : "- (classic initcall: its level's bands)");
  row("band", c[PATH] === "module" ? "- (a module's priorities order its own pairs)" :
      (c[BAND] || "-") + (c[LEVEL] ? "  (after initcall_level " + c[LEVEL] + ")" : ""));
  row("task", c[TASK] + (c[CPU] >= 0 ? " on CPU " + c[CPU] : ""));
  row("start", fmtAbs(c[S]) + " s");
  row("duration", fmtDur(c[DUR]));
  row("result", c[ST] + (c[RET] !== null ? ", ret=" + c[RET] : ""));
  if (c[INNER]) row("do_one_initcall", c[INNER]);
  row("capture lines", String(c[LINE]) + (c[FLINE] !== null ? " .. " + c[FLINE] : " (no finish)"));
  if (c[LINKS].length) {
    var span = hel("span");
    for (var q = 0; q < c[LINKS].length; q++) {
      var lk = c[LINKS][q];
      if (lk[1] >= 0) span.appendChild(callLink(lk[1], lk[0]));
      else span.appendChild(hel("span", lk[0] + " (not drawn) "));
    }
    row("links", span);
  }
  if (c[FLAGS].length) row("findings", c[FLAGS].join(", "));
  parentRow(row, CB[i]);
}
// A box that is not a call: a load or an unload, with links to its calls.
function showGroup(b) {
  var g = B[b], row = detailTable(-1, b), sp = hel("span"), n = 0;
  selected = -1; render();
  var l = hel("code", g[BLBL]); l.id = "detail-func";
  row("module", l);
  row("start", fmtAbs(g[BS]) + " s");
  row("duration", fmtDur(g[BE] - g[BS]));
  for (var j = 0; j < B.length; j++) {
    if (B[j][BPAR] !== b || B[j][BKIND] !== "call") continue;
    if (n++ < 40) sp.appendChild(callLink(B[j][BCALL], B[j][BLBL]));
  }
  row("calls (" + n + ")", sp);
  parentRow(row, b);
}
// A device probe: its line, result, where it ran.
function showProbe(b) {
  var g = B[b], p = PR[g[BPROBE]], row = detailTable(-1, b);
  selected = -1; render();
  var l = hel("code", "probe " + p[PDEV]); l.id = "detail-func";
  row("device probe", l);
  row("result", p[PRES] + ", returned " + p[PRET] + (p[PATT] > 1 ? " (attempt " + p[PATT] + ")" : ""));
  row("ran", (p[PMODE] === "in-call" ? "in " + p[PCALL] + " (synchronous)" :
      p[PMODE] + (p[PCALL] ? ", during " + p[PCALL] : "")) + (p[PTASK] ? ", " + p[PTASK] : ""));
  row("start", fmtAbs(g[BS]) + " s");
  row("duration", fmtDur(p[PDUR]));
  row("capture line", p[PLINE] + ": " + p[PTEXT]);
  parentRow(row, b);
}
// A click or hover on a box: the call it is, or holds the do_one_initcall of.
function boxCall(t) {
  var b = t.getAttribute && t.getAttribute("data-b");
  if (b === null || b === undefined) return null;
  return {b: parseInt(b, 10), call: B[parseInt(b, 10)][BCALL]};
}
function select(i, zoom) {
  if (i < 0 || i >= C.length) return;
  selected = i;
  showDetail(i);
  var c = C[i], w = view.b - view.a, d = c[E] - c[S];
  if (zoom && (c[S] < view.a || c[E] > view.b || d * W / w < 3)) {
    var nw = Math.max(d * 4, 2000), mid = (c[S] + c[E]) / 2;
    setView(mid - nw / 2, mid + nw / 2);
  } else {
    render();
  }
}

function applyFilter() {
  var q = filterBox.value.trim().toLowerCase();
  var count = 0;
  match = q ? new Array(C.length) : null;
  for (var i = 0; i < C.length; i++) {
    var c = C[i], ok = true;
    if (q) {
      var hay = (c[FN] + " " + c[ORI] + " " + c[BAND] + " " + c[ST] + " " + c[KIND] + " " +
                 c[PATH] + " " + c[TASK] + " " + (c[REASON] || "")).toLowerCase();
      ok = hay.indexOf(q) >= 0;
      match[i] = ok;
    }
    if (ok) count++;
  }
  // A box is dimmed when no call in it or of it matches.
  var hit = new Array(B.length);
  for (var j = B.length - 1; j >= 0; j--) {
    if (B[j][BKIND] === "call" || B[j][BKIND] === "inner") hit[j] = hit[j] || !match || match[B[j][BCALL]];
    if (B[j][BKIND] === "probe") {
      var pp = PR[B[j][BPROBE]];
      hit[j] = hit[j] || !q || ("probe " + pp[PDEV] + " " + pp[PRES] + " " + pp[PMODE]).toLowerCase().indexOf(q) >= 0;
    }
    if (hit[j] && B[j][BPAR] >= 0) hit[B[j][BPAR]] = true;
  }
  for (var m = 0; m < B.length; m++) {
    var cls = rects[m].getAttribute("class"), dim = cls.indexOf(" dim") >= 0;
    if (!hit[m] && !dim) rects[m].setAttribute("class", cls + " dim");
    if (hit[m] && dim) rects[m].setAttribute("class", cls.replace(" dim", ""));
  }
  filterOut.textContent = q ? count + " of " + C.length + " calls match" : "";
  filterOut.setAttribute("data-count", count);
}
function fitMatches() {
  var lo = Infinity, hi = -Infinity;
  for (var i = 0; i < C.length; i++) {
    if (match && !match[i]) continue;
    if (C[i][S] < lo) lo = C[i][S];
    if (C[i][E] > hi) hi = C[i][E];
  }
  if (lo <= hi) { var pad = (hi - lo) * 0.02 + 500; setView(lo - pad, hi + pad); }
}
function nextMatch() {
  for (var k = 1; k <= C.length; k++) {
    var i = (selected + k + C.length) % C.length;
    if (!match || match[i]) { select(i, true); return; }
  }
}

function applyHash() {
  var h = location.hash.replace(/^#/, "");
  if (!h) return;
  var parts = h.split("&");
  for (var p = 0; p < parts.length; p++) {
    var kv = parts[p].split("="), key = kv[0], val = decodeURIComponent(kv.slice(1).join("="));
    if (key === "view") {
      var se = val.split(",");
      if (se.length === 2) setView(parseFloat(se[0]) * 1e9 - T0, parseFloat(se[1]) * 1e9 - T0);
    } else if (key === "zoom") {
      var f = parseFloat(val); if (f > 0) zoomAt(f, 0.5);
    } else if (key === "pan") {
      panBy(parseFloat(val) || 0);
    } else if (key === "call") {
      select(parseInt(val, 10), true);
    } else if (key === "filter") {
      filterBox.value = val; applyFilter();
    }
  }
}

// Pointer: wheel zooms at the pointer, drag pans, a click selects.
box.addEventListener("wheel", function (ev) {
  ev.preventDefault();
  var rect = box.getBoundingClientRect(), frac = (ev.clientX - rect.left) / W;
  if (ev.shiftKey || Math.abs(ev.deltaX) > Math.abs(ev.deltaY)) {
    panBy((ev.deltaX || ev.deltaY) / W);
  } else {
    zoomAt(Math.pow(1.0018, -ev.deltaY), Math.min(1, Math.max(0, frac)));
  }
}, {passive: false});
var drag = null;
box.addEventListener("mousedown", function (ev) {
  if (ev.button !== 0) return;
  drag = {x: ev.clientX, a: view.a, b: view.b, moved: false, target: ev.target};
  box.classList.add("dragging");
});
window.addEventListener("mousemove", function (ev) {
  if (drag) {
    var dx = ev.clientX - drag.x;
    if (Math.abs(dx) > 2) drag.moved = true;
    if (drag.moved) {
      var dt = -dx / W * (drag.b - drag.a);
      setView(drag.a + dt, drag.b + dt);
    }
  }
});
window.addEventListener("mouseup", function () {
  if (drag && !drag.moved) {
    var bc = boxCall(drag.target);
    if (bc && bc.call >= 0) {
      select(bc.call, false);
      history.replaceState(null, "", "#call=" + bc.call);
    } else if (bc && B[bc.b][BKIND] === "probe") {
      showProbe(bc.b);
    } else if (bc) {
      showGroup(bc.b);
    }
  }
  drag = null; box.classList.remove("dragging");
});
box.addEventListener("mousemove", function (ev) {
  var bc = boxCall(ev.target);
  if (drag && drag.moved) { tip.style.display = "none"; return; }
  if (!bc) { tip.style.display = "none"; return; }
  var rect = box.getBoundingClientRect(), g = B[bc.b];
  if (g[BKIND] === "call") {
    var c = C[bc.call];
    tip.textContent = c[FN] + "  " + fmtDur(c[DUR]) + "  " + c[ST] +
      (c[RET] !== null ? " ret=" + c[RET] : "") + (c[ORI] ? "  " + c[ORI] : "") +
      (c[BAND] ? "  [" + c[BAND] + "]" : "");
  } else {
    tip.textContent = (g[BKIND] === "inner" ? "do_one_initcall " : "") + g[BLBL] + "  " +
      fmtDur(g[BE] - g[BS]) + (g[BPAR] >= 0 ? "  inside " + B[g[BPAR]][BLBL] : "");
  }
  tip.style.display = "block";
  var x = ev.clientX - rect.left + 12;
  tip.style.left = Math.min(x, W - tip.offsetWidth - 4) + "px";
  tip.style.top = (ev.clientY - rect.top + 14) + "px";
});
box.addEventListener("mouseleave", function () { tip.style.display = "none"; });

// The overview: a click centres the view there, a drag selects a range.
var brush = null;
function ovTime(ev) {
  var rect = ovSvg.getBoundingClientRect();
  return Math.min(1, Math.max(0, (ev.clientX - rect.left) / rect.width)) * T;
}
ovSvg.addEventListener("mousedown", function (ev) { brush = {t: ovTime(ev)}; ev.preventDefault(); });
window.addEventListener("mouseup", function (ev) {
  if (!brush) return;
  var t = ovTime(ev), lo = Math.min(brush.t, t), hi = Math.max(brush.t, t);
  brush = null;
  if (hi - lo > T / 400) { setView(lo, hi); return; }
  var w = view.b - view.a; setView(t - w / 2, t + w / 2);
});

function btn(id, f) { document.getElementById(id).addEventListener("click", f); }
btn("zoom-in", function () { zoomAt(2, 0.5); });
btn("zoom-out", function () { zoomAt(0.5, 0.5); });
btn("pan-left", function () { panBy(-0.25); });
btn("pan-right", function () { panBy(0.25); });
btn("reset", function () { setView(0, T); });
btn("fit", fitMatches);
btn("next", nextMatch);
filterBox.addEventListener("input", applyFilter);
filterBox.addEventListener("keydown", function (ev) { if (ev.key === "Enter") nextMatch(); });
document.addEventListener("keydown", function (ev) {
  if (ev.target === filterBox || ev.ctrlKey || ev.metaKey || ev.altKey) return;
  var k = ev.key;
  if (k === "+" || k === "=") zoomAt(2, 0.5);
  else if (k === "-") zoomAt(0.5, 0.5);
  else if (k === "0") setView(0, T);
  else if (k === "ArrowLeft") panBy(-0.25);
  else if (k === "ArrowRight") panBy(0.25);
  else if (k === "/") { filterBox.focus(); ev.preventDefault(); }
  else return;
});
window.addEventListener("hashchange", applyHash);
// Links to calls (findings, slowest, details) select at once, even when
// the hash already names that call.
document.addEventListener("click", function (ev) {
  var a = ev.target.closest ? ev.target.closest("a.call-link") : null;
  if (!a) return;
  var m = /^#call=(\d+)$/.exec(a.getAttribute("href") || "");
  if (!m) return;
  ev.preventDefault();
  history.replaceState(null, "", "#call=" + m[1]);
  select(parseInt(m[1], 10), true);
  box.scrollIntoView({block: "nearest"});
});
window.addEventListener("resize", render);

render();
applyHash();
document.body.setAttribute("data-ready", "1");
})();
"""


def _esc(text: object) -> str:
    return html.escape(str(text), quote=True)


def band_of(s: Span) -> str:
    """The priority band a boot call belongs to: a pair's by its priority,
    a classic initcall's by the ``initcall_level`` it ran after; '' for
    module calls (a module's priorities only order its own pairs)."""
    if s.path is not CallPath.BOOT:
        return ""
    if s.prio is not None:
        name = "early"  # below pure: before every level
        for b in BAND_NAMES:
            if BANDS[b] <= s.prio:
                name = b
        return name
    return s.level or ""


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


def _tick_label(abs_ns: int, step: int) -> str:
    """An axis label in seconds on the trace clock, as many decimals as
    the step needs."""
    dec = 0
    while dec < 9 and step < 10 ** (9 - dec):
        dec += 1
    return f"{abs_ns / 1e9:.{dec}f}"


#: Width of one character of the page's SVG text (11px monospace: DejaVu
#: Sans Mono's advance is 0.602 em), in the drawing's units.
CHAR_W = 6.7

#: The name of the time axes.
AXIS_NAME = "trace clock (s)"


def axis_ticks(a_abs: int, b_abs: int, width: float, ticks: int,
               name_w: float) -> list[tuple[float, Optional[str]]]:
    """Ticks at round trace-clock times from ``a_abs`` to ``b_abs`` drawn
    over ``width``: (x, label), the label None where it would overlap the
    one before, leave the drawing, or run into the axis name (``name_w``
    wide, at the right end)."""
    step = nice_step(max(1, b_abs - a_abs), ticks)
    k = width / max(1, b_abs - a_abs)
    t = -(-a_abs // step) * step  # the first round time in the view
    out: list[tuple[float, Optional[str]]] = []
    last_right = -1.0
    while t <= b_abs:
        x = (t - a_abs) * k
        label: Optional[str] = _tick_label(t, step)
        half = len(label or "") * CHAR_W / 2
        if x - half < last_right + CHAR_W or x - half < 0 or x + half > width - name_w - CHAR_W:
            label = None
        else:
            last_right = x + half
        out.append((x, label))
        t += step
    return out


class PageData:
    """What the page shows, computed once: the drawn calls and their
    structure (lanes, boxes, arrows), the shaded regions, the busy
    profile, the links of the details."""

    def __init__(self, v: Verdict, slowest: int) -> None:
        cap: Capture = v.capture
        spans = cap.spans
        self.total = len(spans)
        trace_end = cap.parsed.end_ns
        starts = [s.start.ts_ns for s in spans]
        ends = [s.end_ns if s.end_ns is not None else trace_end for s in spans]
        self.t0 = min(starts, default=0)
        self.t1 = max(self.t0 + 1, max(ends, default=0))
        self.span_len = self.t1 - self.t0
        self._starts, self._ends = starts, ends

        # The calls whose events the findings quote, by line.
        wanted = {int(m.group(1)) for f in v.findings for q in f.quotes
                  if (m := _QUOTE_LINE.match(q))}
        by_line: dict[int, int] = {}
        if wanted:
            for i, s in enumerate(spans):
                for ev in (s.start, s.finish, s.unwind,
                           s.inner.start if s.inner else None,
                           s.inner.finish if s.inner else None):
                    if ev is not None and ev.line in wanted:
                        by_line.setdefault(ev.line, i)
        self.flags: dict[int, list[str]] = {}
        self.finding_calls: list[list[int]] = []
        for f in v.findings:
            got: list[int] = []
            for q in f.quotes:
                m = _QUOTE_LINE.match(q)
                if m and int(m.group(1)) in by_line:
                    i = by_line[int(m.group(1))]
                    if i not in got:
                        got.append(i)
                        names = self.flags.setdefault(i, [])
                        if f.check not in names:
                            names.append(f.check)
            self.finding_calls.append(got[:MAX_FINDING_LINKS])

        # The slowest, longest first, ties by line (a heap: a stress run has
        # half a million calls and needs 50 of them).
        keyed = [(-s.duration_ns, s.start.line, i) for i, s in enumerate(spans)
                 if s.duration_ns is not None]
        ranked = [i for _d, _l, i in heapq.nsmallest(max(slowest, 50), keyed)]
        self.slowest = ranked[:slowest]

        # Which calls get an element: all, or past the limit the ones a
        # reader is sent to, then the first by start time.
        if len(spans) <= MAX_CALLS:
            drawn = list(range(len(spans)))
        else:
            must: list[int] = []
            seen: set[int] = set()

            def want(ids: Iterable[int]) -> None:
                for i in ids:
                    if i not in seen and len(must) < MAX_CALLS // 2:
                        seen.add(i)
                        must.append(i)
            want(i for calls in self.finding_calls for i in calls)
            want(self.slowest)
            want(i for i, s in enumerate(spans) if s.status is not Status.OK)
            want(ranked)
            for i in range(len(spans)):
                if len(seen) >= MAX_CALLS:
                    break
                seen.add(i)
            drawn = sorted(seen)
        self.drawn = drawn
        #: Past this time (relative) not every call is drawn: the first
        #: call left out, by start time.
        self.cut: Optional[int] = None
        if len(drawn) < len(spans):
            inside = set(drawn)
            self.cut = min(starts[i] for i in range(len(spans)) if i not in inside) - self.t0
        self.slot = {i: n for n, i in enumerate(drawn)}  # span index -> drawn index

        # Lanes, boxes nested in boxes, the unwinds' arrows.
        self.structure = build_structure(cap, drawn, ends, self.t0)

        self.links = self._links(cap, set(drawn))
        self.regions, self.regions_note = self._regions(cap)
        self.busy, self.failed_marks = self._profile(cap)

    def _links(self, cap: Capture, drawn: set[int]) -> dict[int, list[tuple[str, int]]]:
        """Span index -> (text, span index), for the drawn calls: init <->
        exit of the same pair in the same load, failed init <-> the exits
        its unwind ran."""
        spans = cap.spans
        index = {s.start.line: i for i, s in enumerate(spans)}
        links: dict[int, list[tuple[str, int]]] = {}
        for u in cap.units:
            if not any(index.get(s.start.line) in drawn for s in (*u.inits, *u.exits)):
                continue
            inits = [index[s.start.line] for s in u.inits if s.start.line in index]
            exits = [index[s.start.line] for s in u.exits if s.start.line in index]
            failed = [i for i in inits if spans[i].status is Status.FAILED]
            by_idx: dict[Optional[int], list[int]] = {}
            for i in inits:
                by_idx.setdefault(spans[i].idx, []).append(i)
            for e in exits:
                es = spans[e]
                for i in by_idx.get(es.idx, []):
                    links.setdefault(i, []).append(
                        (f"its exit {clean_func(es.func)} ({es.reason.value if es.reason else 'exit'})", e))
                    links.setdefault(e, []).append((f"its init {clean_func(spans[i].func)}", i))
                if es.reason is ExitReason.UNWIND:
                    for fi in failed:
                        links.setdefault(fi, []).append((f"unwound {clean_func(es.func)}", e))
                        links.setdefault(e, []).append(
                            (f"unwind after {clean_func(spans[fi].func)} failed", fi))
        return links

    def _regions(self, cap: Capture) -> tuple[list[tuple[int, int, str, str]], str]:
        """(start, end, label, kind) relative to t0: the boot's priority
        bands, then each module load and unload."""
        spans = cap.spans
        out: list[tuple[int, int, str, str]] = []
        boot = [i for i, s in enumerate(spans) if s.path is CallPath.BOOT]
        boot_end = max((self._ends[i] for i in boot), default=self.t0)
        marks: list[tuple[int, str]] = []
        if cap.levels:
            marks = [(ev.ts_ns, name) for ev, name in zip(cap.levels, cap.level_names)]
        else:
            last = None
            for i in boot:
                band = band_of(spans[i])
                if band and band != last:
                    marks.append((spans[i].start_ns, band))
                    last = band
        marks.sort(key=lambda m: m[0])
        for n, (ts, name) in enumerate(marks):
            end = marks[n + 1][0] if n + 1 < len(marks) else max(boot_end, ts)
            if end > ts:
                out.append((ts - self.t0, end - self.t0, name, "band"))
        phases: dict[tuple[str, str, int], list[int]] = {}
        starts, ends = self._starts, self._ends
        for i, s in enumerate(spans):
            if s.path is CallPath.BOOT:
                continue
            key = section_key(s)
            ph = phases.get(key)
            if ph is None:
                phases[key] = [starts[i], ends[i]]
            else:
                if starts[i] < ph[0]:
                    ph[0] = starts[i]
                if ends[i] > ph[1]:
                    ph[1] = ends[i]
        note = ""
        if len(out) + len(phases) <= MAX_REGIONS:
            for (kind, origin, inst), (a, b) in phases.items():
                nth = f" #{inst + 1}" if inst else ""
                out.append((a - self.t0, b - self.t0, f"{kind} {origin}{nth}", kind))
        else:
            note = (f"{len(phases)} module load/unload phases are not shaded "
                    f"(more than {MAX_REGIONS}).")
        return out, note

    def _profile(self, cap: Capture) -> tuple[list[float], list[int]]:
        """Per overview column, the share of time inside some call (every
        call, drawn or not; parallel calls add up, capped at 1), and the
        columns holding a failed or unfinished call."""
        bins = [0.0] * OVERVIEW_BINS
        scale = OVERVIEW_BINS / self.span_len
        t0, last = self.t0, OVERVIEW_BINS - 1
        failed = {min(last, int((self._starts[i] - t0) * scale))
                  for i, s in enumerate(cap.spans) if s.status is not Status.OK}
        for st, en in zip(self._starts, self._ends):
            a = (st - t0) * scale
            b = (en - t0) * scale
            ka = min(last, int(a))
            kb = min(last, int(b))
            if ka == kb:
                bins[ka] += b - a
                continue
            bins[ka] += ka + 1 - a
            for k in range(ka + 1, kb):
                bins[k] += 1.0
            bins[kb] += b - kb
        return [min(1.0, x) for x in bins], sorted(failed)

    def call_record(self, cap: Capture, i: int) -> list[Any]:
        """One drawn call as the script reads it (the field order of its
        S, E, DUR, ... constants)."""
        s = cap.spans[i]
        inner = None
        if s.inner is not None:
            inner = f"{clean_func(s.inner.func)}, {format_duration(s.inner.duration_ns)}"
        links = [[text, self.slot.get(j, -1)] for text, j in self.links.get(i, [])]
        return [
            s.start_ns - self.t0, self._ends[i] - self.t0, s.duration_ns,
            self.structure.box_of_call[i], COLOUR_KEYS.index(colour_key(s)), clean_func(s.func), s.origin, s.prio, band_of(s),
            s.status.value, s.ret, s.kind.value, s.path.value, s.idx,
            f"{s.start.comm}-{s.start.pid}", s.start.cpu, s.start.line,
            s.finish.line if s.finish is not None else None,
            s.reason.value if s.reason is not None else None, inner, links,
            self.flags.get(i, []), s.level,
        ]


def structure_data(st: Structure, slot: dict[int, int]) -> dict[str, Any]:
    """The lanes, boxes and links as the script reads them (the field order
    of its BS, BE, ... constants; a box's call is the drawn call's number)."""
    return {
        "geometry": {"row": ROW_H, "lane_head": LANE_HEAD},
        "styles": list(STYLES),
        "lanes": [[lane.label, lane.row, lane.rows] for lane in st.lanes],
        "boxes": [[b.start, b.end, b.lane, b.row, b.rows, b.kind.value,
                   slot[b.call] if b.call >= 0 else -1, b.parent, b.label, STYLES.index(b.style),
                   b.probe]
                  for b in st.boxes],
        "links": [[lk.src, lk.dst, lk.kind, lk.text] for lk in st.links],
    }


def _region_fills(d: PageData) -> list[str]:
    """Each region's fill: boot bands alternate two greys."""
    fills = []
    n_band = 0
    for _a, _b, _label, kind in d.regions:
        if kind == "band":
            fills.append(REGION_FILLS[f"band{n_band % 2}"])
            n_band += 1
        else:
            fills.append(REGION_FILLS[kind])
    return fills


def _overview_svg(d: PageData) -> str:
    """The whole capture in one lane: regions shaded and labelled, the busy
    profile, failed calls in red, an axis in trace-clock seconds."""
    h = OV_BAND_H + OV_BUSY_H + OV_AXIS_H
    k = OV_W / d.span_len
    out = [f'<svg id="overview" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {OV_W} {h}" '
           f'preserveAspectRatio="none" role="img" aria-label="overview of the capture">']
    for (a, b, label, kind), fill in zip(d.regions, _region_fills(d)):
        x, w = a * k, max(0.3, (b - a) * k)
        out.append(f'<rect class="region" x="{x:.2f}" y="0" width="{w:.2f}" '
                   f'height="{OV_BAND_H + OV_BUSY_H}" fill="{fill}"><title>{_esc(label)}</title></rect>')
        if w > len(label) * 6.6 + 2:
            out.append(f'<text x="{x + 1.5:.2f}" y="11" font-size="10">{_esc(label)}</text>')
    # The busy profile as one path (OV_BINS columns).
    base = OV_BAND_H + OV_BUSY_H
    bw = OV_W / OVERVIEW_BINS
    pts = [f"M0 {base}"]
    for n, share in enumerate(d.busy):
        y = base - share * (OV_BUSY_H - 2)
        pts.append(f"L{n * bw:.1f} {y:.1f}L{(n + 1) * bw:.1f} {y:.1f}")
    pts.append(f"L{OV_W} {base}Z")
    out.append(f'<path d="{"".join(pts)}" fill="#8796ab" fill-opacity="0.8"/>')
    for n in d.failed_marks:
        out.append(f'<rect class="failed-mark" x="{n * bw:.1f}" y="{OV_BAND_H - 4}" '
                   f'width="{max(bw, 1.5):.1f}" height="4" fill="#c62828"/>')
    if d.cut is not None:
        out.append('<defs><pattern id="ov-hatch" width="6" height="6" patternUnits="userSpaceOnUse" '
                   'patternTransform="rotate(45)"><line x1="0" y1="0" x2="0" y2="6" stroke="#777" '
                   'stroke-width="1.5"/></pattern></defs>')
        out.append(f'<rect x="{d.cut * k:.2f}" y="0" width="{OV_W - d.cut * k:.2f}" '
                   f'height="{OV_BAND_H}" fill="url(#ov-hatch)"><title>calls here are not all '
                   'drawn in the explorer</title></rect>')
    out.append(f'<line x1="0" y1="{base}" x2="{OV_W}" y2="{base}" stroke="#999"/>')
    # The labels are measured (the page's CSS makes them 11px monospace)
    # so that none runs into the next or into the axis name.
    for x, tick in axis_ticks(d.t0, d.t1, OV_W, 10, len(AXIS_NAME) * CHAR_W + 2):
        out.append(f'<line x1="{x:.1f}" y1="{base}" x2="{x:.1f}" y2="{base + 4}" stroke="#666"/>')
        if tick is not None:
            out.append(f'<text class="tick" x="{x:.1f}" y="{base + 14}" text-anchor="middle">'
                       f'{tick}</text>')
    out.append(f'<text class="axis-name" x="{OV_W - 2}" y="{base + 14}" text-anchor="end">'
               f'{AXIS_NAME}</text>')
    out.append(f'<rect id="ov-window" x="0" y="0" width="{OV_W}" height="{base}" '
               'fill="#1565c0" fill-opacity="0.08" stroke="#1565c0" stroke-width="1.5" '
               'vector-effect="non-scaling-stroke" pointer-events="none"/>')
    out.append("</svg>")
    return "\n".join(out)


def _probes_section(cap: Capture, top: int = 10) -> list[str]:
    """Static (no script): the probes' counts, the slowest, and each
    deferred device with the causes the kernel printed."""
    if not cap.probes:
        return []
    c = probe_counts(cap)
    out = [f'<h2>Device probes</h2><p id="probe-counts">{c["probes"]} probes: '
           f'{c["probes_in_call"]} in a call, {c["probes_deferred_lane"]} deferred, '
           f'{c["probes_async"]} outside any call; {c["probes_returned_defer"]} returned '
           f'-EPROBE_DEFER, {c["probes_failed"]} failed.</p>',
           f'<p id="probe-placement">Placement: {_esc(placement_note(cap))}.</p>',
           '<table id="slowest-probes"><tr><th>duration</th><th>device</th><th>result</th>'
           "<th>ran</th><th>line</th></tr>"]
    for p in heapq.nlargest(top, cap.probes, key=lambda p: p.duration_ns):
        ran = f"in {p.call_func}" if p.mode.value == "in-call" else (
            p.mode.value + (f", during {p.call_func}" if p.call_func else ""))
        if p.task is not None:
            ran += f", {p.task_text}"
        out.append(f"<tr><td>{_esc(format_duration(p.duration_ns))}</td>"
                   f"<td><code>{_esc(p.device)}</code></td><td>{_esc(p.result)} ({p.ret})</td>"
                   f"<td>{_esc(ran)}</td><td>{p.line}</td></tr>")
    out.append("</table>")
    devs = deferred_devices(cap)
    if devs:
        out.append(f'<h3>Deferred devices ({len(devs)})</h3><ul id="deferred-devices">')
        for dd in devs:
            causes = "".join(f'<pre class="quote">line {x.line}: {_esc(x.text.strip())}</pre>'
                             for x in dd.causes)
            out.append(f"<li>{_esc(dd.summary())}{causes}</li>")
        out.append("</ul>")
    return out


def _legend(probes: bool) -> str:
    items = "".join(f'<span class="sw" style="background:{COLOURS[k]}"></span>{_esc(t)}'
                    for k, t in LEGEND)
    groups = "".join(f'<span class="sw" style="background:{fill};outline:1px solid {line}">'
                     f"</span>{_esc(t)}" for _k, fill, line, t in GROUP_LEGEND)
    if probes:  # a kernel log's device probes
        items += "".join(f'<span class="sw" style="background:{COLOURS[k]}"></span>{_esc(t)}'
                         for k, t in PROBE_LEGEND)
    return (f'<p class="legend">Legend:{items}<span class="sw" style="background:#fff;'
            'outline:2px solid #b71c1c"></span>quoted by a finding<br>'
            f'Boxes: a call is drawn inside the call or module load that holds it '
            f'(a pair init holds its do_one_initcall);{groups}'
            '<span class="sw" style="background:none;border-top:2px solid #bf360c;height:0">'
            '</span>unwind: failed init to each exit it caused; one lane per CPU '
            '(per kthread for async work)</p>')


def _call_link(d: PageData, cap: Capture, i: int) -> str:
    s = cap.spans[i]
    text = f"{clean_func(s.func)} (line {s.start.line})"
    if i not in d.slot:
        return f"<code>{_esc(text)}</code>"
    return f'<a class="call-link" href="#call={d.slot[i]}"><code>{_esc(text)}</code></a>'


def _json_for_script(data: object) -> str:
    # "<" only occurs inside JSON strings, where \u003c means the same:
    # nothing in the data can end the script element.
    return json.dumps(data, separators=(",", ":"), ensure_ascii=False).replace("<", "\\u003c")


def render_html(v: Verdict, slowest: int = 15, title: Optional[str] = None) -> str:
    cap = v.capture
    p = cap.parsed
    name = title or f"initexit timeline: {p.source}"
    with gc_paused():  # millions of live objects, no cycles made here
        return _render(v, slowest, name)


def _render(v: Verdict, slowest: int, name: str) -> str:
    cap = v.capture
    p = cap.parsed
    d = PageData(v, slowest)
    parts = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
             '<meta name="viewport" content="width=device-width, initial-scale=1">',
             f"<title>{_esc(name)}</title><style>{CSS}</style></head><body>",
             f"<h1>{_esc(name)}</h1>"]
    cls = "ok" if v.ok else "fail"
    verdict = "OK: every check holds" if v.ok else f"FAIL: {len(v.findings)} finding(s)"
    parts.append(f'<p class="verdict {cls}" id="verdict">{_esc(verdict)}</p>')
    parts.append(f"<p>{_esc(p.fmt.value)}, {p.line_count} lines, {p.n_events} events, "
                 f"{cap.n_spans} calls, {cap.n_units} module loads / built-in objects "
                 "with pairs.</p>")

    if v.findings:
        parts.append('<h2>Findings</h2><ul id="findings">')
        for f, calls in zip(v.findings, d.finding_calls):
            quotes = "".join(f'<pre class="quote">{_esc(q)}</pre>' for q in f.quotes)
            if quotes:
                quotes = (f"<details><summary>{len(f.quotes)} quoted event(s)</summary>"
                          f"{quotes}</details>")
            links = ""
            if calls:
                links = ('<br>calls: ' + "".join(_call_link(d, cap, i) for i in calls))
            parts.append(f'<li class="finding"><code>{_esc(f.check)}</code>: '
                         f"{_esc(f.message)}{links}{quotes}</li>")
        parts.append("</ul>")
    if v.notes:
        parts.append("<ul>" + "".join(f"<li>{_esc(n)}</li>" for n in v.notes) + "</ul>")

    parts.append('<h2>Timeline</h2>')
    parts.append(_legend(bool(cap.probes)))
    if cap.spans:
        parts.append(_overview_svg(d))
    else:
        parts.append("<p>No calls in this capture.</p>")
    notes = []
    if len(d.drawn) < d.total:
        notes.append(f"{len(d.drawn)} of {d.total} calls drawn (limit {MAX_CALLS}): every failed, "
                     "unfinished or finding-quoted call, the slowest, then the first by start "
                     f"time; the other {d.total - len(d.drawn)} count in the overview's busy "
                     "profile and are in the JSON timeline.")
    if d.regions_note:
        notes.append(d.regions_note)
    if d.structure.crowded:
        notes.append(f"{d.structure.crowded} calls overlap {MAX_TRACKS} others in their lane "
                     "or box and share its last row.")
    for n in notes:
        parts.append(f'<p class="note cap-note">{_esc(n)}</p>')
    parts.append(
        '<div id="controls">'
        '<button id="zoom-in" title="zoom in (+)">+</button>'
        '<button id="zoom-out" title="zoom out (-)">&minus;</button>'
        '<button id="pan-left" title="pan left (left arrow)">&larr;</button>'
        '<button id="pan-right" title="pan right (right arrow)">&rarr;</button>'
        '<button id="reset" title="whole capture (0)">all</button>'
        '<input id="filter" type="search" placeholder="filter: function, origin, band, failed..." '
        'aria-label="filter calls">'
        '<button id="fit" title="zoom to the matching calls">fit</button>'
        '<button id="next" title="select the next matching call (Enter)">next</button>'
        '<span id="filter-count"></span></div>'
        '<div id="explorer"><div id="tip"></div></div>'
        '<p><span id="range">needs JavaScript: the overview above and the tables are static'
        '</span><br><small>wheel: zoom at the pointer; drag: pan; click a call for its details; '
        'on the overview, click to centre or drag to select; keys + - 0 &larr; &rarr; /</small></p>'
        '<div id="detail">Click a call for its details.</div>')

    if d.slowest:
        parts.append(f'<h2>Slowest {len(d.slowest)}</h2><table id="slowest"><tr><th>duration</th>'
                     "<th>kind</th><th>path</th><th>origin</th><th>prio</th><th>band</th>"
                     "<th>function</th><th>result</th><th>line</th></tr>")
        for i in d.slowest:
            s = cap.spans[i]
            prio = s.prio if s.prio is not None else ""
            res = s.status.value + (f" ({s.ret})" if s.ret else "")
            func = f"<code>{_esc(clean_func(s.func))}</code>"
            if i in d.slot:
                func = f'<a class="call-link" href="#call={d.slot[i]}">{func}</a>'
            parts.append(f"<tr><td>{_esc(format_duration(s.duration_ns))}</td>"
                         f"<td>{_esc(s.kind.value)}</td><td>{_esc(s.path.value)}</td>"
                         f"<td>{_esc(s.origin or '-')}</td><td>{_esc(prio)}</td>"
                         f"<td>{_esc(band_of(s) or '-')}</td><td>{func}</td><td>{_esc(res)}</td>"
                         f"<td>{s.start.line}</td></tr>")
        parts.append("</table>")
    parts += _probes_section(cap)
    parts.append('<h2>Checks</h2><table id="checks"><tr><th>state</th><th>invariant</th>'
                 "<th>meaning</th></tr>")
    for r in v.results:
        c = {CheckState.PASS: "ok", CheckState.FAIL: "fail", CheckState.SKIP: "skip"}[r.state]
        note = f" ({r.note})" if r.note else ""
        parts.append(f'<tr class="check {c}"><td class="{c}">{r.state.value.upper()}</td>'
                     f"<td><code>{_esc(r.name)}</code></td><td>{_esc(r.description + note)}</td></tr>")
    parts.append("</table>")
    data = {
        "t0": d.t0, "end": d.span_len, "total": d.total, "keys": list(COLOUR_KEYS),
        "regions": [[a, b, label, fill]
                    for (a, b, label, _kind), fill in zip(d.regions, _region_fills(d))],
        "calls": [d.call_record(cap, i) for i in d.drawn],
        **structure_data(d.structure, d.slot),
        "probes": [[pr.device, pr.ret, pr.result, pr.mode.value, pr.call_func, pr.attempt, pr.line,
                    pr.duration_ns, pr.text.strip(), pr.task_text] for pr in cap.probes],
        "cut": d.cut,
        "cut_label": (f"from here on only selected calls are drawn "
                      f"({d.total - len(d.drawn)} not drawn)" if d.cut is not None else ""),
    }
    parts.append(f'<script type="application/json" id="initexit-data">{_json_for_script(data)}'
                 "</script>")
    parts.append(f"<script>{SCRIPT}</script>")
    parts.append(f"<p>Generated by <code>python3 -m analysis</code> from the initexit project; "
                 f"capture starts at {_esc(format_ns(d.t0))} s.</p>")
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"

"""The SVG export and the structure it shares with the page: well-formed
XML, the same boxes (lane, rows, parent, call) and the same links as the
HTML page's data, every child drawn inside its parent, the unwind arrows
of real failed loads, a window (``--view``), and axis labels that keep
clear of each other and of the axis name."""

from __future__ import annotations

import json
import os
import xml.etree.ElementTree as ET
from typing import Any

import pytest

from analysis import render_html as rh
from analysis import render_svg as rs
from analysis.build import build_capture
from analysis.checks import run_checks
from analysis.cli import main
from analysis.model import Verdict
from analysis.page_structure import LANE_HEAD, ROW_H, BoxKind, build_structure
from analysis.parse import parse_text
from analysis.synth import Task, TraceWriter

HERE = os.path.dirname(os.path.abspath(__file__))
CAPTURED = os.path.join(HERE, "fixtures", "captured")
SVG = "{http://www.w3.org/2000/svg}"

#: Real captures: a failed load with its unwind and a built-in unwind at
#: boot (two CPUs each), a stock boot, a kernel log (no CPU).
REAL = ("module-load-unload-failed-load.txt", "patched-boot-builtin-unwind.txt",
        "broken-real-unwind-order.txt", "stock-boot.txt", "patched-boot.dmesg")


def captured(name: str) -> Verdict:
    with open(os.path.join(CAPTURED, name), encoding="utf-8") as f:
        return run_checks(build_capture(parse_text(f.read(), name)))


def page_data(v: Verdict) -> dict[str, Any]:
    page = rh.render_html(v)
    data: dict[str, Any] = json.loads(
        page.split('id="initexit-data">', 1)[1].split("</script>", 1)[0])
    return data


def svg_root(text: str) -> ET.Element:
    root = ET.fromstring(text)
    assert root.tag == SVG + "svg"
    return root


def box_rects(root: ET.Element) -> dict[int, ET.Element]:
    return {int(r.get("data-box", "")): r for r in root.iter(SVG + "rect") if r.get("data-box")}


def geometry(r: ET.Element) -> tuple[float, float, float, float]:
    return (float(r.get("x", "")), float(r.get("y", "")), float(r.get("width", "")),
            float(r.get("height", "")))


@pytest.mark.parametrize("name", REAL)
def test_svg_has_the_pages_boxes_and_links(name: str) -> None:
    v = captured(name)
    data = page_data(v)
    root = svg_root(rs.render_svg(v))
    rects = box_rects(root)
    boxes = data["boxes"]
    assert sorted(rects) == list(range(len(boxes)))
    width = float(root.get("width", ""))
    pw = width - 2 * rs.MARGIN
    k = pw / data["end"]
    top = rs.HEAD_H + rs.AXIS_H + rs.BAND_H
    for n, b in enumerate(boxes):
        r = rects[n]
        start, end, lane, row, rows, kind, call, parent = b[:8]
        assert r.get("class") == f"box {kind}"
        assert (int(r.get("data-lane", "")), int(r.get("data-parent", "")),
                int(r.get("data-call", ""))) == (lane, parent, call)
        x, y, w, h = geometry(r)
        assert y == top + (lane + 1) * LANE_HEAD + row * ROW_H + 1
        assert h == rows * ROW_H - 2
        assert abs(x - max(rs.MARGIN - 2, rs.MARGIN + start * k)) <= 0.06
        assert abs(x + w - max(x + 1, min(rs.MARGIN + pw + 2, rs.MARGIN + end * k))) <= 0.11
    # Each call box is its call's, in the order of the page's records.
    for i, c in enumerate(data["calls"]):
        assert boxes[c[3]][6] == i and boxes[c[3]][5] == "call"
    links = {(int(p.get("data-from", "")), int(p.get("data-to", "")))
             for p in root.iter(SVG + "path") if p.get("data-from")}
    assert links == {(lk[0], lk[1]) for lk in data["links"]}
    assert [t.text for t in root.iter(SVG + "text") if t.get("class") == "lane-name"] \
        == [lane[0] for lane in data["lanes"]]


@pytest.mark.parametrize("name", [n for n in REAL if n != "stock-boot.txt"])  # no pairs
def test_svg_children_inside_parents(name: str) -> None:
    root = svg_root(rs.render_svg(captured(name)))
    rects = box_rects(root)
    nested = 0
    for r in rects.values():
        p = int(r.get("data-parent", ""))
        if p < 0:
            continue
        x, y, w, h = geometry(r)
        px, py, pw, ph = geometry(rects[p])
        # Below the parent's own row, within its width (rounding aside).
        assert py + ROW_H <= y and y + h <= py + ph, (r.get("data-box"), p)
        assert px - 0.11 <= x and x + w <= px + pw + 0.11 + 1, (r.get("data-box"), p)
        nested += 1
    assert nested > 0


def test_failed_load_structure() -> None:
    """The real failed load: its nine calls inside one failed-load box on
    CPU 1, each pair init holding its do_one_initcall, and four arrows
    from f4_init to the exits f3..f0 its unwind ran."""
    v = captured("module-load-unload-failed-load.txt")
    d = rh.PageData(v, slowest=0)
    st = d.structure
    assert [lane.label for lane in st.lanes] == ["CPU 0", "CPU 1"]
    (load,) = [n for n, b in enumerate(st.boxes) if b.label.startswith("load initexit_fail")]
    g = st.boxes[load]
    assert g.kind is BoxKind.LOAD and g.style == "load-failed"
    assert st.lanes[g.lane].label == "CPU 1"
    members = [b for b in st.boxes if b.parent == load]
    assert [b.label for b in members] == [f"f{k}_init" for k in range(5)] + \
        [f"f{k}_exit" for k in (3, 2, 1, 0)]
    assert all(b.kind is BoxKind.CALL for b in members)
    inits = [n for n, b in enumerate(st.boxes) if b.parent == load and b.label.endswith("_init")]
    for n in inits:
        (inner,) = [b for b in st.boxes if b.parent == n]
        assert inner.kind is BoxKind.INNER and inner.row == st.boxes[n].row + 1
    (f4,) = [n for n, b in enumerate(st.boxes) if b.label == "f4_init" and b.kind is BoxKind.CALL]
    assert [(lk.src, st.boxes[lk.dst].label) for lk in st.links] == \
        [(f4, f"f{k}_exit") for k in (3, 2, 1, 0)]
    # The module's unload is a box of its own, on the unloading task's CPU.
    (unload,) = [b for b in st.boxes if b.label == "unload initexit_order"]
    assert st.lanes[unload.lane].label == "CPU 1" and unload.kind is BoxKind.UNLOAD


def test_boot_lanes_follow_the_cpu() -> None:
    """A boot whose pid 1 ran on both CPUs: each call in its CPU's lane."""
    v = captured("patched-boot-builtin-unwind.txt")
    st = rh.PageData(v, slowest=0).structure
    spans = v.capture.spans
    roots = [b for b in st.boxes if b.kind is BoxKind.CALL and b.parent < 0]
    assert {st.lanes[b.lane].label for b in roots} == {"CPU 0", "CPU 1"}
    for b in roots:
        assert st.lanes[b.lane].label == f"CPU {spans[b.call].start.cpu}"
    assert [st.boxes[lk.dst].label for lk in st.links] == ["tiu1_exit", "tiu0_exit"]
    assert {st.boxes[lk.src].label for lk in st.links} == {"tiu2_init"}


def test_call_inside_call_and_kthread_lane() -> None:
    """The general rule: a call that starts and finishes within another
    call of its task is drawn inside it (a probe inside its initcall,
    later), and a kworker's calls get a lane of their own."""
    w = TraceWriter()
    init = Task("swapper/0", 1, 0)
    worker = Task("kworker/u4:1", 57, 1)
    w.emit(init, "initcall_start", "func=outer_init+0x0")
    w.initcall(init, "inner_init", 0, 5_000)
    w.emit(init, "initcall_finish", "func=outer_init+0x0 ret=0", 20_000)
    w.initcall(worker, "async_thing", 0, 7_000)
    v = run_checks(build_capture(parse_text(w.text(cpus=2), "nested.txt")))
    st = rh.PageData(v, slowest=0).structure
    by_label = {b.label: b for b in st.boxes}
    outer = by_label["outer_init"]
    inner = by_label["inner_init"]
    assert st.boxes[inner.parent] is outer and inner.row == outer.row + 1 and outer.rows == 2
    assert [lane.label for lane in st.lanes] == ["CPU 0", "kworker/u4:1-57 (kthread)"]
    assert by_label["async_thing"].lane == 1


def test_overlapping_loads_on_one_cpu_get_rows_of_their_own() -> None:
    """Two module loads interleaved on one CPU (two tasks): two load boxes
    one above the other, neither inside the other."""
    w = TraceWriter()
    a, b = Task("insmod", 120, 0), Task("insmod", 121, 0)
    for t, m in ((a, "m_a"), (b, "m_b")):
        w.emit(t, "module_load", f"{m} OE")
    head = "path=module origin={m} idx=0 prio=0 func={m}_init"
    for t, m in ((a, "m_a"), (b, "m_b")):
        w.emit(t, "initexit_init_start", head.format(m=m) + " has_exit=1")
    for t, m in ((a, "m_a"), (b, "m_b")):
        w.emit(t, "initexit_init_finish", head.format(m=m) + " ret=0 duration_ns=3000", 3_000)
    cap = build_capture(parse_text(w.text(), "overlap.txt"))
    ends = [s.end_ns or cap.parsed.end_ns for s in cap.spans]
    t0 = cap.spans[0].start_ns
    st = build_structure(cap, list(range(len(cap.spans))), ends, t0)
    loads = [b for b in st.boxes if b.kind is BoxKind.LOAD]
    assert len({b.row for b in loads}) == len(loads) >= 2
    assert all(b.parent < 0 for b in loads)


def test_view_draws_the_window_only(tmp_path: Any) -> None:
    v = captured("module-load-unload-failed-load.txt")
    view = rs.parse_view("5.4760,5.4790")
    root = svg_root(rs.render_svg(v, view=view))
    names = {r.find(SVG + "title").text.split()[0]  # type: ignore[union-attr]
             for r in box_rects(root).values() if r.get("class") == "box call"}
    assert {"f2_init", "f3_init", "f4_init", "f3_exit", "f0_exit"} <= names
    assert "a_min_init" not in names and "plain_init" not in names
    assert len([p for p in root.iter(SVG + "path") if p.get("data-from")]) == 4
    out = str(tmp_path / "load.svg")
    fixture = os.path.join(CAPTURED, "module-load-unload-failed-load.txt")
    assert main(["timeline", "-q", "--format", "svg", "--view", "5.4760,5.4790", "-o", out,
                 fixture]) == 0
    with open(out, encoding="utf-8") as f:
        assert len(box_rects(svg_root(f.read()))) == len(box_rects(root))
    assert main(["timeline", "-q", "--format", "svg", "--view", "5.5", fixture]) == 2
    assert main(["timeline", "-q", "--format", "svg", "--view", "5.5,5.4", fixture]) == 2


def _label_extents(root: ET.Element) -> list[tuple[float, float, str]]:
    """The axis texts' horizontal extents (middle- or end-anchored)."""
    out = []
    for t in root.iter(SVG + "text"):
        if t.get("class") not in ("tick", "axis-name"):
            continue
        x, text = float(t.get("x", "")), t.text or ""
        w = len(text) * rh.CHAR_W
        anchor = t.get("text-anchor")
        left = x - w / 2 if anchor == "middle" else (x - w if anchor == "end" else x)
        out.append((left, left + w, text))
    return sorted(out)


def two_second_boot() -> Verdict:
    """A capture 2.1 s long: the overview's tick at 2.0 s fell on the axis
    name ("trace cl2.0ck (s)")."""
    w = TraceWriter()
    init = Task("swapper/0", 1, 0)
    w.initcall(init, "slow_init", 0, 1_000_000_000)
    w.initcall(init, "slower_init", 0, 1_100_000_000)
    return run_checks(build_capture(parse_text(w.text(), "two-seconds.txt")))


@pytest.mark.parametrize("make", [two_second_boot, lambda: captured("stock-boot.txt"),
                                  lambda: captured("module-load-unload-failed-load.txt")])
def test_axis_labels_keep_clear(make: Any) -> None:
    v = make()
    page = rh.render_html(v)
    i = page.index('<svg id="overview"')
    overview = ET.fromstring(page[i:page.index("</svg>", i) + len("</svg>")])
    for root, width in ((overview, rh.OV_W), (svg_root(rs.render_svg(v)), rs.SVG_WIDTH)):
        ext = _label_extents(root)
        assert ext[-1][2] == rh.AXIS_NAME and len(ext) >= 3
        for (a0, a1, ta), (b0, _b1, tb) in zip(ext, ext[1:]):
            assert a1 <= b0, f"{ta!r} runs into {tb!r}"
        assert ext[0][0] >= 0 and ext[-1][1] <= width


def test_axis_ticks_drop_the_label_under_the_name() -> None:
    # 0.05 s .. 2.15 s over 1000: the 2.0 tick (x 928.6) is under the name.
    ticks = rh.axis_ticks(50_000_000, 2_150_000_000, 1000, 10, len(rh.AXIS_NAME) * rh.CHAR_W + 2)
    assert [label for _x, label in ticks] == ["0.5", "1.0", "1.5", None]

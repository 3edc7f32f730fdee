"""What the timeline page and its SVG export draw: lanes, boxes nested in
boxes, and links, computed once from a capture.  analysis/render_html.py
draws it zoomable, analysis/render_svg.py as one static picture; both read
the same :class:`Structure`, so the two show the same thing.

- **Lanes.**  One per CPU (a call is in the lane of the CPU it started on),
  one per kernel worker thread (async work runs in ``kworker/...``, which
  the scheduler moves between CPUs), and one for a kernel log's calls
  (dmesg names no CPU).
- **Boxes.**  A box is a span on the page; one with a parent is drawn
  inside it, on the rows below the parent's own row.  A call's parent is
  the innermost finished call of the same task that holds it (anything
  timed inside an initcall, a device probe say, nests so without a new
  rule); a pair init holds its ``do_one_initcall``; a module's calls that
  no call holds are held by their load's group box (module_load to the
  last call, or to module_free when the load failed) or their unload's.
- A box is in the lane of its outermost box, so a task moved to another
  CPU mid-load does not tear a call out of its load.
- Boxes that follow each other share a row; overlapping ones (two tasks on
  one CPU) get rows of their own, first fit, at most :data:`MAX_TRACKS`
  per parent (the rest share the last).
- **Probes** (a kernel log's device probes, analysis/probes.py): one run in
  a call is a box inside the call's; the deferred ones (a retry of a
  device that deferred, or run while deferred_probe_initcall waits for
  the deferred probe work's kworker) share a lane of their own, and those
  outside every call (asynchronous probing, a bus's thread) another.
- **Links** join two boxes: a failed init to each exit its unwind ran.
"""

from __future__ import annotations

import enum
import functools
import re
from dataclasses import dataclass, field
from typing import NamedTuple, Optional, Sequence

from analysis.model import CallPath, Capture, ExitReason, Probe, ProbeMode, Span, SpanKind, Status
from analysis.probes import PROBE_LANE_LABELS, lane_label

#: Rows of boxes side by side under one parent (or in one lane) at most.
MAX_TRACKS = 24

#: Pixels, the same on the page and in the SVG: one row of boxes, and the
#: strip above each lane that holds its name (and the unwinds' arrows
#: rising from its first row).
ROW_H = 18
LANE_HEAD = 14

#: A kernel worker thread's comm: ``kworker/0:1``, ``kworker/u8:2``.
#: Example: ``kworker/u8:3-61 [001] 0.912345678: initcall_start: ...``.
KTHREAD_COMM_RE = re.compile(r"^kworker/")

#: ``foo+0x0`` and ``foo+0x0/0x66a`` (dmesg) name ``foo``; a non-zero
#: offset (a wrong symbol for a freed init) is kept, its size dropped.
_FUNC_NOISE = re.compile(r"(?:\+0x0)?(?:/0x[0-9a-f]+)?$")


@functools.lru_cache(maxsize=1 << 16)
def clean_func(name: str) -> str:
    """A function name without ``+0x0`` and a dmesg size: ``foo+0x0/0x66a``
    is ``foo``; ``orc_header+0x2e08`` stays (the offset says the symbol is
    wrong)."""
    return _FUNC_NOISE.sub("", name, count=1) or name


class BoxKind(enum.Enum):
    """What a box on the page stands for."""

    __hash__ = object.__hash__  # members are singletons (see analysis/model.py)

    CALL = "call"  # a span of the capture: initcall, pair init or exit
    INNER = "inner"  # the do_one_initcall inside a pair init
    LOAD = "load"  # a module load: its calls inside
    UNLOAD = "unload"  # a module unload: its exits inside
    PROBE = "probe"  # a device probe (a kernel log's probe line)


#: Fill keys of the boxes (render_html.COLOURS and GROUP_COLOURS map them).
STYLES = ("initcall", "init-ok", "init-failed", "exit-unload", "exit-unwind", "unfinished",
          "load", "load-failed", "unload", "probe-bound", "probe-deferred", "probe-failed")


def probe_style(p: Probe) -> str:
    """A probe's fill key: bound (or no match: the driver passed), deferred, failed."""
    if p.deferred:
        return "probe-deferred"
    return "probe-failed" if p.result == "failed" else "probe-bound"




def colour_key(s: Span) -> str:
    """A call's fill key: its kind and how it ended."""
    if s.status is Status.UNFINISHED:
        return "unfinished"
    if s.kind is SpanKind.INITCALL:
        return "init-failed" if s.status is Status.FAILED else "initcall"
    if s.kind is SpanKind.PAIR_INIT:
        return "init-failed" if s.status is Status.FAILED else "init-ok"
    return "exit-unwind" if s.reason is ExitReason.UNWIND else "exit-unload"


def section_key(s: Span) -> tuple[str, str, int]:
    """Which phase a call belongs to: the boot, or a module's load or
    unload (by module and which load of it)."""
    if s.path is CallPath.BOOT:
        return ("boot", "", 0)
    if s.kind is SpanKind.PAIR_EXIT and s.reason is ExitReason.UNLOAD:
        return ("unload", s.origin, s.instance)
    return ("load", s.origin, s.instance)


class LaneKey(NamedTuple):
    """A lane's place in the order (CPUs, then a log's, then kthreads by
    first call) and its label."""

    order: tuple[int, int]
    label: str


def lane_key(s: Span, first_start: int) -> LaneKey:
    """The lane of a call no other box holds."""
    ev = s.start
    if ev.comm and KTHREAD_COMM_RE.match(ev.comm):
        return LaneKey((2, first_start), f"{ev.comm}-{ev.pid} (kthread)")
    if ev.cpu < 0:
        return LaneKey((1, 0), "kernel log (no CPU)")
    return LaneKey((0, ev.cpu), f"CPU {ev.cpu}")


#: The lanes of the probes no call holds, after every other lane (the
#: labels name the tasks that printed them when the log does:
#: probes.lane_label).
PROBE_LANES = {
    ProbeMode.DEFERRED: LaneKey((3, 0), PROBE_LANE_LABELS[ProbeMode.DEFERRED]),
    ProbeMode.ASYNC: LaneKey((3, 1), PROBE_LANE_LABELS[ProbeMode.ASYNC]),
}


@dataclass(frozen=True, slots=True)
class Lane:
    """One lane: its label, first row and height in rows."""

    label: str
    row: int
    rows: int


@dataclass(frozen=True, slots=True)
class Box:
    """One span on the page.  Times are nanoseconds from the capture's
    start; ``row`` counts from the first lane's first row (lane headers
    not counted), ``rows`` is the box's own row and those nested in it."""

    kind: BoxKind
    start: int
    end: int
    lane: int
    row: int
    rows: int
    depth: int
    parent: int  # index of the box it is drawn inside, -1 none
    call: int  # the capture span (CALL, INNER: the pair init's), -1 for groups
    label: str
    style: str
    probe: int = -1  # PROBE: index into the capture's probes


@dataclass(frozen=True, slots=True)
class Link:
    """An arrow from box ``src`` to box ``dst``."""

    kind: str  # "unwind": a failed init to an exit its unwind ran
    src: int
    dst: int
    text: str


@dataclass(frozen=True, slots=True)
class Structure:
    """Lanes, boxes (parents before their children) and links."""

    lanes: tuple[Lane, ...]
    boxes: tuple[Box, ...]
    links: tuple[Link, ...]
    #: span index -> its box
    box_of_call: dict[int, int]
    #: boxes that share a parent's last row (more than MAX_TRACKS overlap)
    crowded: int
    #: probe index -> its box
    box_of_probe: dict[int, int] = field(default_factory=dict)

    @property
    def rows(self) -> int:
        return sum(lane.rows for lane in self.lanes)


class _Proto:
    """A box while it is laid out."""

    __slots__ = ("kind", "start", "end", "call", "label", "style", "parent", "children",
                 "lane", "depth", "rows", "offset", "row", "task", "line", "last", "probe",
                 "lane_key")

    def __init__(self, kind: BoxKind, start: int, end: int, call: int, label: str, style: str,
                 line: int, task: tuple[int, int] = (-1, -1), last: Optional[int] = None) -> None:
        self.kind, self.start, self.end, self.call = kind, start, end, call
        self.label, self.style, self.line, self.task = label, style, line, task
        #: Where the call started and finished among the task's events (the
        #: capture's order, ties put back by parse.py), None: no finish.
        self.last = last
        self.parent: Optional[_Proto] = None
        self.children: list[_Proto] = []
        self.lane = 0
        self.depth = 0
        self.rows = 1
        self.offset = 0  # its row below its parent's first child row
        self.row = 0
        self.probe = -1
        #: A root box's own lane (a probe no call holds).
        self.lane_key: Optional[LaneKey] = None


def _task(s: Span) -> tuple[int, int]:
    # The idle task is one per CPU, all pid 0.
    ev = s.start
    return (ev.pid, ev.cpu if ev.pid == 0 else -1)


def _pack(children: list[_Proto]) -> tuple[int, int]:
    """Give each child an ``offset`` (the first row of its track below the
    parent's own) by first fit in start order; the rows they take, and how
    many went to the last track because every track was busy."""
    ends: list[int] = []
    heights: list[int] = []
    members: list[list[_Proto]] = []
    crowded = 0
    for c in sorted(children, key=lambda p: (p.start, p.line)):
        for k, e in enumerate(ends):
            if e <= c.start:
                break
        else:
            k = len(ends)
            if k < MAX_TRACKS:
                ends.append(c.start)
                heights.append(0)
                members.append([])
            else:
                k = MAX_TRACKS - 1
                crowded += 1
        ends[k] = max(ends[k], c.end)
        heights[k] = max(heights[k], c.rows)
        members[k].append(c)
    row = 0
    for k, group in enumerate(members):
        for c in group:
            c.offset = row
        row += heights[k]
    return row, crowded


def build_structure(cap: Capture, drawn: Sequence[int], ends: Sequence[int],
                    t0: int) -> Structure:
    """The page's structure for the spans ``drawn`` (indices into
    ``cap.spans``, by start time); ``ends[i]`` is span i's end (the
    capture's end for an unfinished one), absolute like ``t0``."""
    spans = cap.spans
    position = cap.parsed.position
    calls: list[_Proto] = []
    by_call: dict[int, _Proto] = {}
    for i in drawn:
        s = spans[i]
        p = _Proto(BoxKind.CALL, s.start_ns - t0, ends[i] - t0, i, clean_func(s.func),
                   colour_key(s), position(s.start), _task(s),
                   position(s.finish) if s.finish is not None else None)
        calls.append(p)
        by_call[i] = p

    # A call that started and finished between a call's start and finish
    # on the same task is drawn inside it.  By event order, not time: the
    # trace clock can stand still across several calls (TCG).
    stacks: dict[tuple[int, int], list[_Proto]] = {}
    for p in sorted(calls, key=lambda p: p.line):
        stack = stacks.setdefault(p.task, [])
        while stack and not (p.last is not None and p.last < (stack[-1].last or 0)):
            stack.pop()
        if stack:
            p.parent = stack[-1]
            stack[-1].children.append(p)
        if p.last is not None:
            stack.append(p)

    protos: list[_Proto] = list(calls)
    for p in calls:
        inner = spans[p.call].inner
        if inner is None:
            continue
        a = min(max(inner.start_ns - t0, p.start), p.end)
        b = inner.end_ns - t0 if inner.end_ns is not None else p.end
        st = "init-failed" if inner.status is Status.FAILED else (
            "unfinished" if inner.status is Status.UNFINISHED else "initcall")
        c = _Proto(BoxKind.INNER, a, max(a, min(b, p.end)), p.call, clean_func(inner.func), st,
                   inner.start.line)
        c.parent = p
        p.children.append(c)
        protos.append(c)

    # A module's calls that no call holds go into their load's or unload's box.
    units = {(u.origin, u.instance): u for u in cap.units if u.path is CallPath.MODULE}
    sections: dict[tuple[str, str, int], list[_Proto]] = {}
    for p in calls:
        s = spans[p.call]
        if p.parent is None and s.path is CallPath.MODULE:
            sections.setdefault(section_key(s), []).append(p)
    for (phase, origin, inst), members in sections.items():
        first = min(members, key=lambda p: (p.start, p.line))
        a = min(p.start for p in members)
        b = max(p.end for p in members)
        unit = units.get((origin, inst))
        loader = spans[first.call].start.pid
        if unit is not None and phase == "load" and unit.load is not None \
                and unit.load.pid == loader:
            a = min(a, unit.load.ts_ns - t0)
        if unit is not None and unit.free is not None and (unit.free.pid == loader) \
                and unit.free.ts_ns - t0 >= b:
            b = unit.free.ts_ns - t0
        failed = [p for p in members if spans[p.call].status is Status.FAILED]
        nth = f" #{inst + 1}" if inst else ""
        label = f"{phase} {origin}{nth}"
        style = phase
        if failed:
            f = spans[failed[0].call]
            label += f": {clean_func(f.func)} failed ({f.ret})"
            style = "load-failed" if phase == "load" else phase
        g = _Proto(BoxKind.LOAD if phase == "load" else BoxKind.UNLOAD, a, b, -1, label, style,
                   first.line)
        g.children = members
        for p in members:
            p.parent = g
        protos.append(g)

    protos += _probe_protos(cap, drawn, by_call, t0)

    # Lanes: each outermost box's, inherited by what it holds.
    roots = [p for p in protos if p.parent is None]
    lane_keys: dict[LaneKey, list[_Proto]] = {}
    for r in sorted(roots, key=lambda p: (p.start, p.line)):
        if r.lane_key is not None:
            lane_keys.setdefault(r.lane_key, []).append(r)
            continue
        leaf = r
        while leaf.call < 0:
            leaf = min(leaf.children, key=lambda p: (p.start, p.line))
        lane_keys.setdefault(lane_key(spans[leaf.call], r.start), []).append(r)
    ordered = sorted(lane_keys, key=lambda k: k.order)

    # Depth top-down, then rows bottom-up, then absolute rows top-down.
    order: list[_Proto] = []
    for n, key in enumerate(ordered):
        for r in lane_keys[key]:
            r.lane = n
            order.append(r)
    k = 0
    while k < len(order):
        p = order[k]
        for c in p.children:
            c.depth = p.depth + 1
            c.lane = p.lane
            order.append(c)
        k += 1
    crowded = 0
    for p in reversed(order):
        if p.children:
            used, over = _pack(p.children)
            p.rows = 1 + used
            crowded += over
    lanes: list[Lane] = []
    row = 0
    for key in ordered:
        used, over = _pack(lane_keys[key])
        crowded += over
        for r in lane_keys[key]:
            r.row = row + r.offset
        lanes.append(Lane(key.label, row, max(1, used)))
        row += max(1, used)
    for p in order:
        for c in p.children:
            c.row = p.row + 1 + c.offset

    # Parents before children (drawn under them), then by time.
    order.sort(key=lambda p: (p.depth, p.start, p.line))
    index = {id(p): n for n, p in enumerate(order)}
    boxes = tuple(
        Box(p.kind, p.start, p.end, p.lane, p.row, p.rows, p.depth,
            index[id(p.parent)] if p.parent is not None else -1, p.call, p.label, p.style,
            p.probe)
        for p in order)
    box_of_call = {p.call: index[id(p)] for p in calls}
    box_of_probe = {p.probe: index[id(p)] for p in order if p.kind is BoxKind.PROBE}
    return Structure(tuple(lanes), boxes, _links(cap, box_of_call), box_of_call, crowded,
                     box_of_probe)


def _probe_protos(cap: Capture, drawn: Sequence[int], by_call: dict[int, _Proto],
                  t0: int) -> list[_Proto]:
    """A box per probe: inside its call's box (clipped to it: the stamps
    are microseconds, the call's printk's clock) when it ran in a drawn
    call, else a root in its mode's lane."""
    if not cap.probes:
        return []
    spans = cap.spans
    call_at = {spans[i].start.line: by_call[i] for i in drawn if i in by_call}
    out: list[_Proto] = []
    laned: dict[ProbeMode, list[tuple[_Proto, Probe]]] = {}
    for k, pr in enumerate(cap.probes):
        a, b = pr.start_ns - t0, pr.end_ns - t0
        holder = call_at.get(pr.call) if pr.mode is ProbeMode.IN_CALL and pr.call is not None \
            else None
        if holder is not None:
            a = min(max(a, holder.start), holder.end)
            b = max(a, min(b, holder.end))
        label = f"probe {pr.device}" + ("" if pr.ret == 0 else f" ({pr.ret})")
        p = _Proto(BoxKind.PROBE, a, b, -1, label, probe_style(pr), pr.line)
        p.probe = k
        if holder is not None:
            p.parent = holder
            holder.children.append(p)
        else:
            mode = pr.mode if pr.mode in PROBE_LANES else ProbeMode.ASYNC
            laned.setdefault(mode, []).append((p, pr))
        out.append(p)
    for mode, members in laned.items():
        key = LaneKey(PROBE_LANES[mode].order, lane_label(mode, (pr for _p, pr in members)))
        for p, _pr in members:
            p.lane_key = key
    return out


def _links(cap: Capture, box_of_call: dict[int, int]) -> tuple[Link, ...]:
    """A failed init to each exit its unwind ran (by the unwind event's
    ``failed_idx`` when the capture has it, else the unit's last failure
    before the exit), both drawn."""
    spans = cap.spans
    index = {s.start.line: i for i, s in enumerate(spans)}
    out: list[Link] = []
    for u in cap.units:
        failed = [index[s.start.line] for s in u.inits
                  if s.status is Status.FAILED and s.start.line in index]
        if not failed:
            continue
        for ex in u.exits:
            e = index.get(ex.start.line)
            if e is None or ex.reason is not ExitReason.UNWIND or e not in box_of_call:
                continue
            cause = [i for i in failed if ex.failed is not None
                     and spans[i].idx == ex.failed.failed_idx]
            if not cause:
                cause = [i for i in failed if spans[i].start_ns <= ex.start_ns][-1:]
            for i in cause:
                if i in box_of_call:
                    f = spans[i]
                    out.append(Link("unwind", box_of_call[i], box_of_call[e],
                                    f"{clean_func(f.func)} failed ({f.ret}): "
                                    f"unwind ran {clean_func(ex.func)}"))
    return tuple(out)

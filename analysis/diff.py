"""``python3 -m analysis diff A B``: what changed between two captures.

A call is named by (init or exit, path, origin, function without its
``+0x..`` offset, n-th of that name): so a dmesg and a trace of one boot
name the same calls alike.  Order is compared per track: the boot path is
one track, each module load (with its unload) another; the interleaving of
tracks on different CPUs is not an order.  Within a track, the calls
common to A and B outside one longest run kept in order are the order
changes; a call whose level differs (the ``initcall_level`` it followed,
or its declared level when a map is known) moved across levels.

A kernel log's device probes are compared by device: devices probed in
one capture only, and for the others where the probe that bound the
device ran ("probe of X moved from initcall A to initcall B", or to the
deferred or async lane), "X now deferred" / "X no longer deferred", the
result and the duration (analysis/probes.py).
"""

from __future__ import annotations

import html
import json
import re
from dataclasses import dataclass
from typing import Any, Optional

from analysis.declared import level_of, longest_ascending
from analysis.model import (
    BANDS,
    CallPath,
    Capture,
    Probe,
    ProbeMode,
    Span,
    SpanKind,
    bare_func,
    format_duration,
)
from analysis.source import InputError

DIFF_SCHEMA = "initexit-diff/1"

DURATION_RE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(ns|us|ms|s)?\s*$")
"""``--min-change``: a number with a unit (default ns).  Example: ``500us``."""

_UNITS = {"ns": 1, "us": 1_000, "ms": 1_000_000, "s": 1_000_000_000, None: 1}

#: Key of a call: (init|exit, path, origin, function, occurrence).
Key = tuple[str, str, str, str, int]


def parse_duration(text: str) -> int:
    """``500us`` -> 500000 (ns).  Raises InputError on anything else."""
    m = DURATION_RE.match(text)
    if m is None:
        raise InputError(f"--min-change {text!r}: expected a duration such as 500us, 2ms or 0")
    return int(float(m.group(1)) * _UNITS[m.group(2)])


@dataclass(frozen=True, slots=True)
class Call:
    """One call of one capture, as the diff sees it."""

    key: Key
    span: Span
    track: str
    level: Optional[str]

    @property
    def name(self) -> str:
        kind, path, _, func, n = self.key
        origin = self.span.origin  # shown even where the key leaves it out
        where = path if not origin else f"{path} {origin}"
        nth = f" (#{n + 1})" if n else ""
        return f"{kind} {func}{nth} [{where}]"


@dataclass(frozen=True, slots=True)
class Moved:
    call: str
    track: str
    a_after: Optional[str]  # the common call it followed in A
    b_after: Optional[str]
    a_level: Optional[str]
    b_level: Optional[str]

    @property
    def across(self) -> bool:
        return self.a_level != self.b_level


@dataclass(frozen=True, slots=True)
class Changed:
    call: str
    a: str
    b: str


@dataclass(frozen=True, slots=True)
class Timing:
    call: str
    a_ns: int
    b_ns: int


@dataclass(frozen=True, slots=True)
class ProbeChange:
    """A device probed differently in B: ``what`` is one line."""

    device: str
    kind: str  # "moved", "now deferred", "no longer deferred", "result", "duration"
    what: str


@dataclass(frozen=True, slots=True)
class Diff:
    a_source: str
    b_source: str
    a_calls: int
    b_calls: int
    only_a: tuple[str, ...]
    only_b: tuple[str, ...]
    moved: tuple[Moved, ...]
    results: tuple[Changed, ...]
    durations: tuple[Timing, ...]
    min_change_ns: int
    #: Device probes (kernel logs): devices probed only in one, and the
    #: changes of where and how the others' probes ran.
    probes_only_a: tuple[str, ...] = ()
    probes_only_b: tuple[str, ...] = ()
    probe_changes: tuple[ProbeChange, ...] = ()
    #: Devices probed in A or B (0: neither capture has probes, a trace's).
    probe_devices: int = 0

    @property
    def within(self) -> tuple[Moved, ...]:
        return tuple(m for m in self.moved if not m.across)

    @property
    def across(self) -> tuple[Moved, ...]:
        return tuple(m for m in self.moved if m.across)

    @property
    def changed(self) -> bool:
        """Order or result changes: what ``--fail-on-change`` fails on."""
        return bool(self.moved or self.results)

    def summary(self) -> str:
        text = (f"{len(self.only_a)} only in A, {len(self.only_b)} only in B, "
                f"{len(self.within)} order changes within a level, {len(self.across)} across levels, "
                f"{len(self.results)} result changes, {len(self.durations)} duration changes "
                f">= {format_duration(self.min_change_ns)}")
        if self.probe_devices:
            text += (f"; probes: {len(self.probes_only_a)} devices only in A, "
                     f"{len(self.probes_only_b)} only in B, {len(self.probe_changes)} changes")
        return text


def _level(s: Span, declared: dict[int, str]) -> Optional[str]:
    """The level a call ran in (a stock kernel's level: the series' bands
    fs_sync and rootfs are in fs, so a stock and a patched boot compare)."""
    band = declared.get(s.start.line) or s.level
    if band is None and s.path is CallPath.BOOT and s.prio is not None:
        below = [b for b, p in BANDS.items() if p <= s.prio]
        band = max(below, key=BANDS.__getitem__) if below else "before pure"
    return level_of(band) if band is not None else None


def calls_of(cap: Capture) -> list[Call]:
    """Every call of ``cap`` with its key, track and level, in start order."""
    seen: dict[tuple[str, str, str, str], int] = {}
    declared: dict[int, str] = {}
    if cap.declared is not None and cap.declared.fits:
        declared = {s.start.line: d.band for s, d in cap.declared.matched}
    out = []
    for s in cap.spans:
        kind = "exit" if s.kind is SpanKind.PAIR_EXIT else "init"
        # A boot call is keyed by its function alone: a stock dmesg names no
        # object, the series' (or a System.map beside it) does, and the
        # same call must match across the two.
        origin = "" if s.path is CallPath.BOOT else s.origin
        base = (kind, s.path.value, origin, bare_func(s.func))
        n = seen.get(base, 0)
        seen[base] = n + 1
        track = "boot" if s.path is CallPath.BOOT else f"module {s.origin} load #{s.instance + 1}"
        out.append(Call(base + (n,), s, track, _level(s, declared)))
    return out


def _result(s: Span) -> str:
    if s.kind is SpanKind.PAIR_EXIT:
        return s.status.value
    return s.status.value if s.ret is None else f"{s.status.value} (ret={s.ret})"


def diff_captures(a: Capture, b: Capture, min_change_ns: int = 1_000_000) -> Diff:
    ca, cb = calls_of(a), calls_of(b)
    ka = {c.key: c for c in ca}
    kb = {c.key: c for c in cb}
    only_a = tuple(c.name for c in ca if c.key not in kb)
    only_b = tuple(c.name for c in cb if c.key not in ka)
    moved: list[Moved] = []
    pos_b = {c.key: i for i, c in enumerate(cb)}
    by_track: dict[str, list[Call]] = {}
    for c in ca:
        if c.key in kb and kb[c.key].track == c.track:
            by_track.setdefault(c.track, []).append(c)
    for track, common_a in by_track.items():
        common_b = sorted(common_a, key=lambda c: pos_b[c.key])
        keep = longest_ascending([pos_b[c.key] for c in common_a])
        prev_in_b = {c.key: (common_b[i - 1].name if i else None) for i, c in enumerate(common_b)}
        for i, c in enumerate(common_a):
            other = kb[c.key]
            # A side that cannot tell the level (a stock dmesg without its
            # System.map) moves nothing to another level.
            if i in keep and (c.level == other.level or None in (c.level, other.level)):
                continue
            moved.append(Moved(c.name, track, common_a[i - 1].name if i else None,
                               prev_in_b[c.key], c.level, other.level))
    results = tuple(Changed(c.name, _result(c.span), _result(kb[c.key].span))
                    for c in ca if c.key in kb and _result(c.span) != _result(kb[c.key].span))
    timings = []
    for c in ca:
        o = kb.get(c.key)
        if o is None or c.span.duration_ns is None or o.span.duration_ns is None:
            continue
        if abs(o.span.duration_ns - c.span.duration_ns) >= max(1, min_change_ns):
            timings.append(Timing(c.name, c.span.duration_ns, o.span.duration_ns))
    timings.sort(key=lambda t: -abs(t.b_ns - t.a_ns))
    p_only_a, p_only_b, p_changes = diff_probes(a, b, min_change_ns)
    return Diff(a.parsed.source, b.parsed.source, len(ca), len(cb), only_a, only_b, tuple(moved),
                results, tuple(timings), min_change_ns, p_only_a, p_only_b, p_changes,
                len({p.device for p in a.probes} | {p.device for p in b.probes}))


def _place(p: Probe) -> str:
    """Where a probe ran, for the diff: ``initcall F``, ``the deferred
    lane`` or ``the async lane``."""
    if p.mode is ProbeMode.IN_CALL:
        return f"initcall {p.call_func}"
    return f"the {p.mode.value} lane"


def diff_probes(a: Capture, b: Capture, min_change_ns: int
                ) -> tuple[tuple[str, ...], tuple[str, ...], tuple[ProbeChange, ...]]:
    """Devices probed only in A, only in B, and each common device's
    changes: where its last probe ran (the one that bound it, else its
    last), whether it deferred, its result and its duration.  Not part of
    ``changed`` (``--fail-on-change``): a bus's own thread can print inside
    one call in one boot and another in the next (analysis/probes.py)."""
    def by_device(cap: Capture) -> dict[str, list[Probe]]:
        out: dict[str, list[Probe]] = {}
        for p in cap.probes:
            out.setdefault(p.device, []).append(p)
        return out

    pa, pb = by_device(a), by_device(b)
    only_a = tuple(d for d in pa if d not in pb)
    only_b = tuple(d for d in pb if d not in pa)
    changes: list[ProbeChange] = []
    for dev, la in pa.items():
        lb = pb.get(dev)
        if lb is None:
            continue
        fa = next((p for p in la if p.ret == 0), la[-1])
        fb = next((p for p in lb if p.ret == 0), lb[-1])
        da, db = any(p.deferred for p in la), any(p.deferred for p in lb)
        if _place(fa) != _place(fb):
            changes.append(ProbeChange(dev, "moved", f"probe of {dev} moved from {_place(fa)} "
                                                     f"to {_place(fb)}"))
        if db and not da:
            n = sum(1 for p in lb if p.deferred)
            changes.append(ProbeChange(dev, "now deferred", f"{dev} now deferred ({n}x in B)"))
        elif da and not db:
            changes.append(ProbeChange(dev, "no longer deferred", f"{dev} no longer deferred"))
        if fa.result != fb.result:
            changes.append(ProbeChange(dev, "result", f"probe of {dev}: {fa.result} ({fa.ret}) in A, "
                                                      f"{fb.result} ({fb.ret}) in B"))
        if abs(fb.duration_ns - fa.duration_ns) >= max(1, min_change_ns):
            changes.append(ProbeChange(dev, "duration", f"probe of {dev}: {format_duration(fa.duration_ns)}"
                                                        f" -> {format_duration(fb.duration_ns)} "
                                                        f"({_signed(fb.duration_ns - fa.duration_ns)})"))
    return only_a, only_b, tuple(changes)


# -- outputs ---------------------------------------------------------------------

#: How many entries of each list the text and HTML outputs show (JSON: all).
SHOWN = 40


def _signed(ns: int) -> str:
    return ("+" if ns >= 0 else "-") + format_duration(abs(ns))


def _moved_text(m: Moved) -> str:
    if m.across:
        return f"{m.call}: level {m.a_level or '?'} in A, {m.b_level or '?'} in B"
    return f"{m.call}: after {m.a_after or '(first)'} in A, after {m.b_after or '(first)'} in B"


def diff_dict(d: Diff) -> dict[str, Any]:
    return {
        "schema": DIFF_SCHEMA,
        "a": {"source": d.a_source, "calls": d.a_calls},
        "b": {"source": d.b_source, "calls": d.b_calls},
        "changed": d.changed,
        "min_change_ns": d.min_change_ns,
        "only_a": list(d.only_a),
        "only_b": list(d.only_b),
        "order_within_level": [{"call": m.call, "track": m.track, "a_after": m.a_after,
                                "b_after": m.b_after, "level": m.a_level} for m in d.within],
        "order_across_levels": [{"call": m.call, "track": m.track, "a_level": m.a_level,
                                 "b_level": m.b_level} for m in d.across],
        "result_changes": [{"call": r.call, "a": r.a, "b": r.b} for r in d.results],
        "duration_changes": [{"call": t.call, "a_ns": t.a_ns, "b_ns": t.b_ns,
                              "change_ns": t.b_ns - t.a_ns} for t in d.durations],
        "probes": {"only_a": list(d.probes_only_a), "only_b": list(d.probes_only_b),
                   "changes": [{"device": c.device, "kind": c.kind, "text": c.what}
                               for c in d.probe_changes]},
    }


def _sections(d: Diff) -> list[tuple[str, list[str]]]:
    out = [
        ("Only in A", list(d.only_a)),
        ("Only in B", list(d.only_b)),
        ("Order changes within a level", [_moved_text(m) for m in d.within]),
        ("Moved to another level", [_moved_text(m) for m in d.across]),
        ("Result changes", [f"{r.call}: {r.a} in A, {r.b} in B" for r in d.results]),
        (f"Duration changes >= {format_duration(d.min_change_ns)}",
         [f"{t.call}: {format_duration(t.a_ns)} -> {format_duration(t.b_ns)} ({_signed(t.b_ns - t.a_ns)})"
          for t in d.durations]),
        ("Probes: devices only in A", [f"probe of {x}" for x in d.probes_only_a]),
        ("Probes: devices only in B", [f"probe of {x}" for x in d.probes_only_b]),
        ("Probe changes", [c.what for c in d.probe_changes]),
    ]
    # Probes only when a capture has them (a kernel log's).
    return out if d.probe_devices else out[:-3]


def diff_text(d: Diff) -> str:
    out = [f"A: {d.a_source} ({d.a_calls} calls)", f"B: {d.b_source} ({d.b_calls} calls)", ""]
    for title, items in _sections(d):
        out.append(f"{title}: {len(items)}")
        out += [f"  {t}" for t in items[:SHOWN]]
        if len(items) > SHOWN:
            out.append(f"  ... and {len(items) - SHOWN} more (--format json lists all)")
    verdict = "CHANGED (order or results)" if d.changed else "same order and results"
    out += ["", f"Diff: {verdict}: {d.summary()}"]
    return "\n".join(out) + "\n"


def diff_html(d: Diff) -> str:
    e = html.escape
    body = [f"<h1>initexit diff</h1>",
            f"<p>A: <code>{e(d.a_source)}</code> ({d.a_calls} calls)<br>"
            f"B: <code>{e(d.b_source)}</code> ({d.b_calls} calls)</p>",
            f'<p id="verdict">{"CHANGED (order or results)" if d.changed else "same order and results"}: '
            f"{e(d.summary())}</p>"]
    for title, items in _sections(d):
        body.append(f"<h2>{e(title)}: {len(items)}</h2>")
        if items:
            body.append("<ul>" + "".join(f"<li><code>{e(t)}</code></li>" for t in items[:SHOWN]) + "</ul>")
            if len(items) > SHOWN:
                body.append(f"<p>... and {len(items) - SHOWN} more (the JSON output lists all)</p>")
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>initexit diff: {e(d.a_source)} vs {e(d.b_source)}</title>"
            "<style>body{font-family:sans-serif;margin:1em 2em}code{font-size:90%}"
            "h2{font-size:110%;margin-top:1.2em}</style></head>\n<body>\n"
            + "\n".join(body) + "\n</body></html>\n")


def render_diff(d: Diff, fmt: str) -> str:
    if fmt == "json":
        return json.dumps(diff_dict(d), indent=2) + "\n"
    if fmt == "html":
        return diff_html(d)
    return diff_text(d)

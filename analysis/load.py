"""Read an input and build its capture (or check it) in one pass.

A trace.dat is printed by ``trace-cmd report`` in a child process while this
one parses the lines and builds spans from them, so the two run on two CPUs
at once.  The cyclic garbage collector is paused meanwhile: a capture is
millions of small tuples with no reference cycles, and each full collection
would walk all of them again (on a 1.7M-event capture it costs a quarter of
the time; see analysis/bench.py).

:func:`check_input` is what ``check``, ``timeline``, ``report`` and
``export`` run: the checks as one streaming pass (checks.CheckPass), whose
memory is what is open, plus, for the renders, the spans a render shows
(:class:`SpanKeeper`, bounded by its limit).  :func:`load_capture` keeps
everything (``diff``, tests).
"""

from __future__ import annotations

import contextlib
import gc
import heapq
import itertools
from dataclasses import replace
from typing import IO, Iterator, Optional

from analysis.build import KeepAll, Sink, Tee, build_capture, build_capture_streaming
from analysis.checks import CheckPass
from analysis.declared import DeclaredOrder, dat_declared, with_declared
from analysis.model import CallPath, Capture, InputFormat, Span, Unit, Verdict
from analysis.parse import TraceReportReader, check_not_empty, parse_dmesg
from analysis.source import open_input, split_head

#: How many module spans a render keeps (boot spans are always kept): past
#: it, spans are counted and only the slowest are kept, and the outputs say so.
RENDER_SPAN_LIMIT = 50_000

#: How many of the slowest spans past the limit a render keeps.
SLOWEST_KEPT = 50


@contextlib.contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector (reference counting still frees)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


class SpanKeeper:
    """The spans a render shows: every boot span, the module spans up to
    ``limit`` (and their units), past it only the slowest ``SLOWEST_KEPT``."""

    def __init__(self, limit: int = RENDER_SPAN_LIMIT) -> None:
        self.limit = limit
        self.spans: list[Span] = []
        self.units: list[Unit] = []
        self.kept = 0
        self.past = 0
        self.slowest: list[tuple[int, int, Span]] = []  # a min-heap of (duration, n, span)

    def span(self, s: Span) -> None:
        if s.path is CallPath.BOOT or self.kept < self.limit:
            self.spans.append(s)
            if s.path is not CallPath.BOOT:
                self.kept += 1
            return
        self.past += 1
        item = (s.duration_ns or 0, self.past, s)
        if len(self.slowest) < SLOWEST_KEPT:
            heapq.heappush(self.slowest, item)
        elif item[0] > self.slowest[0][0]:
            heapq.heapreplace(self.slowest, item)

    def unit(self, u: Unit) -> None:
        if self.past == 0:
            self.units.append(u)

    def finish(self) -> str:
        """Add the slowest spans past the limit; the note saying what was kept."""
        if not self.past:
            return ""
        self.spans.extend(s for _d, _n, s in self.slowest)
        return (f"the capture has {self.kept + self.past} module calls: the outputs show the first "
                f"{self.limit:,} and the {len(self.slowest)} slowest of the {self.past:,} after them "
                f"(RENDER_SPAN_LIMIT in analysis/load.py); every call was checked")


def _build(name: str, stdin: Optional[IO[bytes]], sink: Sink, keep_events: bool,
           declared: Optional[DeclaredOrder]) -> Capture:
    note = ""
    with open_input(name, stdin) as inp, gc_paused():
        head, fmt = split_head(inp.lines)
        lines = itertools.chain(head, inp.lines)
        if fmt is InputFormat.DMESG:
            parsed = parse_dmesg("".join(lines), inp.source)
            check_not_empty(parsed)
            cap = build_capture(parsed, sink)
        else:
            reader = TraceReportReader(inp.source, keep_events=keep_events)
            if isinstance(sink, CheckPass):
                sink.use_moved(reader.moved)
            elif isinstance(sink, Tee):
                for k in sink.sinks:
                    if isinstance(k, CheckPass):
                        k.use_moved(reader.moved)
            cap = build_capture_streaming(reader.read(lines), reader.result, reader.moved, sink)
            check_not_empty(cap.parsed)
        if declared is None and inp.dat is not None:
            declared, note = dat_declared(inp.dat)
    return with_declared(cap, declared, note)


def load_capture(name: str, stdin: Optional[IO[bytes]] = None,
                 declared: Optional[DeclaredOrder] = None) -> Capture:
    """Open ``name`` (a trace.dat, trace-cmd report text, dmesg, or ``-``),
    parse it and build the whole capture, every event kept.  The declared
    initcall order comes from ``declared`` (``--system-map``), else from a
    trace.dat's own kallsyms.  Raises InputError with a one-line message on
    unreadable input."""
    return _build(name, stdin, KeepAll(), True, declared)


def check_input(name: str, stdin: Optional[IO[bytes]] = None,
                declared: Optional[DeclaredOrder] = None, expect_all: bool = False,
                render: bool = False, limit: int = RENDER_SPAN_LIMIT) -> Verdict:
    """Read ``name`` and run every check in one streaming pass.  With
    ``render``, the verdict's capture also keeps what the renders show
    (:class:`SpanKeeper`); without, only the boot spans."""
    checks = CheckPass()
    keeper = SpanKeeper(limit) if render else None
    sink: Sink = checks
    if keeper is not None:
        sink = Tee(keeper, checks)
    cap = _build(name, stdin, sink, False, declared)
    if keeper is not None:
        note = keeper.finish()
        if note:
            spans = sorted(keeper.spans, key=lambda s: (s.start.ts_ns, cap.parsed.position(s.start)))
            cap = replace(cap, spans=tuple(spans), kept_note=note)
    with gc_paused():
        return checks.verdict(cap, expect_all)

"""Read an input and build its capture in one pass.

A trace.dat is printed by ``trace-cmd report`` in a child process while this
one parses the lines and builds spans from them, so the two run on two CPUs
at once.  The cyclic garbage collector is paused meanwhile: a capture is
millions of small tuples with no reference cycles, and each full collection
would walk all of them again (on a 1.7M-event capture it costs a quarter of
the time; see analysis/bench.py).
"""

from __future__ import annotations

import contextlib
import gc
import itertools
from typing import IO, Iterator, Optional

from analysis.build import build_capture, build_capture_streaming
from analysis.declared import DeclaredOrder, dat_declared, with_declared
from analysis.model import Capture, InputFormat
from analysis.parse import TraceReportReader, check_not_empty, open_input, parse_dmesg, split_head


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


def load_capture(name: str, stdin: Optional[IO[bytes]] = None,
                 declared: Optional[DeclaredOrder] = None) -> Capture:
    """Open ``name`` (a trace.dat, trace-cmd report text, dmesg, or ``-``),
    parse it and build the capture.  The declared initcall order comes from
    ``declared`` (``--system-map``), else from a trace.dat's own kallsyms.
    Raises InputError with a one-line message on unreadable input."""
    note = ""
    with open_input(name, stdin) as inp, gc_paused():
        head, fmt = split_head(inp.lines)
        lines = itertools.chain(head, inp.lines)
        if fmt is InputFormat.DMESG:
            parsed = parse_dmesg("".join(lines), inp.source)
            check_not_empty(parsed)
            cap = build_capture(parsed)
        else:
            reader = TraceReportReader(inp.source)
            cap = build_capture_streaming(reader.read(lines), reader.result)
            check_not_empty(cap.parsed)
        if declared is None and inp.dat is not None:
            declared, note = dat_declared(inp.dat)
    return with_declared(cap, declared, note)

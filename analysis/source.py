"""Opening an input and telling what it is.

A file, ``-`` (standard input) or a trace.dat: a trace.dat is printed by
``trace-cmd report`` (run with :data:`TRACE_CMD_REPORT_ARGS`, the one place
those flags are chosen) in a child process while its lines are read.  The
first recognisable line says whether the text is ``trace-cmd report``
output or dmesg.
"""

from __future__ import annotations

import contextlib
import io
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from typing import IO, Iterator, Optional

from analysis.grammar import (
    CPUS_RE,
    DMESG_CALLING_RE,
    DMESG_LEVEL_RE,
    DMESG_RETURNED_RE,
    DROPPED_RE,
    TRACE_LINE_RE,
)
from analysis.kernel_log import ACCEPTED_LOGS, Clock, message, split
from analysis.model import InputFormat

#: First bytes of every trace.dat (``\x17\x08\x44tracing``).
TRACE_DAT_MAGIC = b"\x17\x08\x44tracing"

#: The flags ``trace-cmd report`` is run with for a .dat, by the analysis
#: and (through ``python3 -m analysis print``) by the harness: no plugins
#: (the output does not depend on the host's plugin set) and
#: full-precision timestamps.
TRACE_CMD_REPORT_ARGS = ("report", "-N", "-t")


class InputError(Exception):
    """Input that cannot be analysed at all; the message is one line."""


@dataclass(frozen=True)
class InputText:
    """Decoded input text and the name to show for it."""

    source: str
    text: str


@dataclass(frozen=True)
class InputLines:
    """An opened input: its name and its lines (each with its ``\\n``)."""

    source: str
    lines: Iterator[str]
    dat: Optional[str] = None  # the trace.dat's path while open (for its kallsyms)


def trace_cmd_report_lines(path: str) -> Iterator[str]:
    """The lines ``trace-cmd report`` prints for ``path``, while it prints
    them: trace-cmd runs on one CPU while the caller parses on the other.
    Raises :class:`InputError` (after the last line) when it fails or
    prints nothing."""
    exe = shutil.which("trace-cmd")
    if exe is None:
        raise InputError(f"{path}: a trace.dat needs `trace-cmd report`, and trace-cmd is not installed")
    with tempfile.TemporaryFile() as errf:
        proc = subprocess.Popen([exe, *TRACE_CMD_REPORT_ARGS, "-i", path],
                                stdout=subprocess.PIPE, stderr=errf)
        assert proc.stdout is not None
        printed = False
        try:
            with io.TextIOWrapper(proc.stdout, encoding="utf-8", errors="replace", newline="\n") as out:
                for line in out:
                    yield line
                    if line.strip():
                        printed = True
                        break
                yield from out  # the rest, with no per-line test
        finally:
            if proc.poll() is None:
                proc.kill()  # the consumer stopped early
            rc = proc.wait()
        errf.seek(0)
        err = errf.read().decode("utf-8", "replace").strip().splitlines()
    if rc != 0:
        last = err[-1] if err else f"exit status {rc}"
        raise InputError(f"{path}: trace-cmd report failed: {last}")
    if not printed:
        # trace-cmd 3.1.6 exits 0 with no output on a damaged file.
        why = f": {err[-1]}" if err else " (damaged or empty trace.dat?)"
        raise InputError(f"{path}: trace-cmd report printed nothing{why}")


def is_trace_dat(path: str) -> bool:
    """Whether ``path`` starts with the trace.dat magic (False when unreadable)."""
    try:
        with open(path, "rb") as f:
            return f.read(len(TRACE_DAT_MAGIC)) == TRACE_DAT_MAGIC
    except OSError:
        return False


@contextlib.contextmanager
def open_input(name: str, stdin: Optional[IO[bytes]] = None) -> Iterator[InputLines]:
    """Open a file (or ``-`` for standard input) for reading line by line; a
    trace.dat is printed by ``trace-cmd report`` as it is read.  Raises
    :class:`InputError` with a one-line message."""
    if name == "-":
        stream = stdin if stdin is not None else sys.stdin.buffer
        data = stream.read()
        if data.startswith(TRACE_DAT_MAGIC):
            with tempfile.TemporaryDirectory(prefix="initexit-") as tmp:
                path = os.path.join(tmp, "stdin.dat")
                with open(path, "wb") as out:
                    out.write(data)
                del data
                yield InputLines("<stdin>", trace_cmd_report_lines(path), path)
            return
        with io.TextIOWrapper(io.BytesIO(data), encoding="utf-8", errors="replace", newline="\n") as t:
            yield InputLines("<stdin>", iter(t))
        return
    try:
        with open(name, "rb") as f:
            is_dat = f.read(len(TRACE_DAT_MAGIC)) == TRACE_DAT_MAGIC
        if is_dat:
            yield InputLines(name, trace_cmd_report_lines(name), name)
            return
        t = open(name, encoding="utf-8", errors="replace", newline="\n")
    except OSError as e:
        raise InputError(f"{name}: cannot read: {e.strerror or e}") from None
    with t:
        yield InputLines(name, iter(t))


def read_input(name: str, stdin: Optional[IO[bytes]] = None) -> InputText:
    """Read a whole file (or ``-`` for standard input) as text; a trace.dat
    goes through ``trace-cmd report``.  Raises :class:`InputError` with a
    one-line message."""
    with open_input(name, stdin) as inp:
        return InputText(inp.source, "".join(inp.lines))


def _sniff(line: str) -> Optional[InputFormat]:
    if CPUS_RE.match(line) or TRACE_LINE_RE.match(line) or DROPPED_RE.match(line):
        return InputFormat.TRACE_CMD
    if "calling" in line or "initcall" in line:
        msg = message(line)
        if DMESG_CALLING_RE.match(msg) or DMESG_RETURNED_RE.match(msg) or DMESG_LEVEL_RE.match(msg):
            return InputFormat.DMESG
    return None


def _kernel_log_form(lines: list[str], look: int = 400) -> Optional[str]:
    """What printed ``lines`` when they are a kernel log with stamps (at
    least two, and most of the first ``look`` non-empty lines, carry a
    kernel log's stamp or head), the most common form first; None for
    anything else (a log without any stamp cannot be told from text)."""
    seen = stamped = 0
    forms: dict[str, int] = {}
    for line in lines:
        if not line.strip():
            continue
        seen += 1
        got = split(line)
        if got.clock is not Clock.NONE:
            stamped += 1
            forms[got.form] = forms.get(got.form, 0) + 1
        if seen >= look:
            break
    if stamped < 2 or 2 * stamped < seen:
        return None
    return max(forms, key=lambda f: forms[f])


def detect_format(lines: list[str]) -> InputFormat:
    """Decide from the first recognisable line whether this is trace-cmd
    report text or dmesg; raise :class:`InputError` when it is neither."""
    first_text: Optional[tuple[int, str]] = None
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        if first_text is None:
            first_text = (n, line)
        fmt = _sniff(line)
        if fmt is not None:
            return fmt
    if first_text is None:
        raise InputError("empty input: no trace-cmd report or dmesg lines")
    n, line = first_text
    form = _kernel_log_form(lines)
    if form is not None:
        raise InputError(
            f"line {n}: a kernel log ({form}) without initcall_debug's lines "
            "('calling  fn+0x0/0x30 @ 1', 'initcall fn+0x0/0x30 returned 0 after 11 usecs'): boot with "
            "initcall_debug on the kernel command line (log_buf_len=4M keeps the first calls in the "
            f"buffer) and give that log; accepted: `trace-cmd report` text, a trace.dat, or {ACCEPTED_LOGS}")
    shown = line.rstrip("\n")
    if len(shown) > 60:
        shown = shown[:57] + "..."
    raise InputError(
        f"line {n}: neither `trace-cmd report` output nor dmesg with initcall_debug: {shown!r}; "
        f"accepted: `trace-cmd report` text (-N -t, -l) or ftrace's trace file, a trace.dat, or {ACCEPTED_LOGS}"
    )


def split_head(lines: Iterator[str], limit: int = 200_000) -> tuple[list[str], InputFormat]:
    """Read lines until the format is known (or ``limit`` characters); return
    them with the format.  The caller goes on with the rest of ``lines``."""
    head: list[str] = []
    size = 0
    for line in lines:
        head.append(line)
        size += len(line)
        fmt = _sniff(line)
        if fmt is not None:
            return head, fmt
        if size >= limit:
            break
    return head, detect_format(head)

"""Read ``trace-cmd report`` text, a trace.dat, or dmesg with initcall_debug.

The parser is tolerant: a line it cannot read becomes a :class:`Problem`
with its line number, a lost-events marker becomes a :class:`Gap`, events
it does not model are counted.  Only input that holds nothing it can read
at all is an :class:`InputError`.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from dataclasses import dataclass
from typing import IO, Optional

from analysis.model import (
    INITEXIT_PREFIX,
    Event,
    EventName,
    Gap,
    InputFormat,
    ParsedInput,
    Problem,
)

#: First bytes of every trace.dat (``\x17\x08\x44tracing``).
TRACE_DAT_MAGIC = b"\x17\x08\x44tracing"

#: The flags ``trace-cmd report`` is run with for a .dat: no plugins (the
#: output does not depend on the host's plugin set) and full-precision
#: timestamps.
TRACE_CMD_REPORT_ARGS = ("report", "-N", "-t")

TRACE_LINE_RE = re.compile(
    r"^\s*(.+?)-(\d+)\s+(?:\[(\d+)\]|(\d+))\s*(?:[^\s:]{4,6}\s+)?"
    r"(\d+(?:\.\d+)?):\s+(\w+):\s*(.*)$"
)
"""One event line of ``trace-cmd report`` (also ftrace's ``trace`` file).

Example::

        swapper-1     [000]     0.225379123: initcall_start:       func=init_sigframe_size+0x0

With ``-l`` (latency format, ``%8.8s-%-5d %3d`` then the flags with no
space between): ``  insmod-112     0d..1.     0.100050: module_load: ...``

Groups: comm, pid, cpu (``[000]``), cpu (latency format ``-l``), timestamp,
event name, fields.  comm may hold ``-``, digits and spaces: the comm ends
at the first ``-<pid>`` that is followed by the CPU column and a timestamp,
which is the last such place in any real line (lazy is 2x faster than a
greedy backtrack from the line's end).
"""

DROPPED_RE = re.compile(r"^\s*CPU:\s*(\d+) \[(?:(\d+) )?EVENTS DROPPED\]\s*$")
"""A lost-events marker, with or without a count.

Example::

    CPU:1 [1234 EVENTS DROPPED]
"""

CPUS_RE = re.compile(r"^cpus=(\d+)\s*$")
"""The first line of ``trace-cmd report``.  Example: ``cpus=2``."""

HEADER_RE = re.compile(
    r"^(?:version = \d+|CPU:\s*\d+ \[SUBBUFFER START\].*|CPU \d+ is empty"
    r"|\s*#.*|\s*)$"
)
"""Lines that carry no event and are skipped.

Examples: ``version = 6``, ``CPU:0 [SUBBUFFER START]``, ``# tracer: nop``.
"""

FTRACE_ENTRIES_RE = re.compile(r"^# entries-in-buffer/entries-written: (\d+)/(\d+)")
"""ftrace's ``trace`` file header; written > in-buffer means overwritten data.

Example::

    # entries-in-buffer/entries-written: 310/310   #P:2
"""

DMESG_PREFIX = r"^(?:<\d+>)?(?:\[\s*(\d+\.\d+)\]\s*)?(?:.*?kernel: )?"

DMESG_CALLING_RE = re.compile(
    DMESG_PREFIX + r"calling\s+(\S+)(?: \[([^\]\s]+)\])? @ (\d+)(.*)$"
)
"""initcall_debug's line before a call (``prio=``/``origin=`` are optional).

Example::

    [    0.225379] calling  init_sigframe_size+0x0/0x30 @ 1 prio=-3000 origin=signal
"""

DMESG_RETURNED_RE = re.compile(
    DMESG_PREFIX
    + r"initcall (\S+)(?: \[([^\]\s]+)\])? returned (-?\d+) after (\d+) usecs(.*)$"
)
"""initcall_debug's line after a call.

Example::

    [    0.225390] initcall init_sigframe_size+0x0/0x30 returned 0 after 12 usecs
"""

_EVENT_NAMES: dict[str, EventName] = {
    e.value: e for e in EventName if e not in (EventName.DMESG_CALLING, EventName.DMESG_RETURNED)
}

#: 10**(9 - digits) for a fraction of ``digits`` digits.
_FRACTION_SCALE = tuple(10 ** (9 - n) for n in range(10))


class InputError(Exception):
    """Input that cannot be analysed at all; the message is one line."""


@dataclass(frozen=True)
class InputText:
    """Decoded input text and the name to show for it."""

    source: str
    text: str


def ts_to_ns(stamp: str) -> int:
    """``0.225379123`` (or ``0.225379``) seconds to integer nanoseconds.

    A stamp without a dot is a raw clock counter (a non-time trace_clock);
    it is kept as is.
    """
    dot = stamp.find(".")
    if dot < 0:
        return int(stamp)
    frac = stamp[dot + 1 : dot + 10]
    ns: int = int(stamp[:dot]) * 1_000_000_000 + int(frac) * _FRACTION_SCALE[len(frac)]
    return ns


def _run_trace_cmd_report(path: str) -> str:
    exe = shutil.which("trace-cmd")
    if exe is None:
        raise InputError(f"{path}: a trace.dat needs `trace-cmd report`, and trace-cmd is not installed")
    proc = subprocess.run(
        [exe, *TRACE_CMD_REPORT_ARGS, "-i", path],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        check=False,
    )
    if proc.returncode != 0:
        err = proc.stderr.decode("utf-8", "replace").strip().splitlines()
        last = err[-1] if err else f"exit status {proc.returncode}"
        raise InputError(f"{path}: trace-cmd report failed: {last}")
    if not proc.stdout.strip():
        # trace-cmd 3.1.6 exits 0 with no output on a damaged file.
        err = proc.stderr.decode("utf-8", "replace").strip().splitlines()
        why = f": {err[-1]}" if err else " (damaged or empty trace.dat?)"
        raise InputError(f"{path}: trace-cmd report printed nothing{why}")
    return proc.stdout.decode("utf-8", "replace")


def read_input(name: str, stdin: Optional[IO[bytes]] = None) -> InputText:
    """Read a file (or ``-`` for standard input); a trace.dat goes through
    ``trace-cmd report``.  Raises :class:`InputError` with a one-line message."""
    if name == "-":
        stream = stdin if stdin is not None else sys.stdin.buffer
        data = stream.read()
        source = "<stdin>"
        if data.startswith(TRACE_DAT_MAGIC):
            with tempfile.TemporaryDirectory(prefix="initexit-") as tmp:
                path = os.path.join(tmp, "stdin.dat")
                with open(path, "wb") as out:
                    out.write(data)
                return InputText(source, _run_trace_cmd_report(path))
    else:
        source = name
        try:
            with open(name, "rb") as f:
                head = f.read(len(TRACE_DAT_MAGIC))
                if head == TRACE_DAT_MAGIC:
                    return InputText(source, _run_trace_cmd_report(name))
                data = head + f.read()
        except OSError as e:
            raise InputError(f"{name}: cannot read: {e.strerror or e}") from None
    return InputText(source, data.decode("utf-8", "replace"))


def detect_format(lines: list[str]) -> InputFormat:
    """Decide from the first recognisable line whether this is trace-cmd
    report text or dmesg; raise :class:`InputError` when it is neither."""
    first_text: Optional[tuple[int, str]] = None
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        if first_text is None:
            first_text = (n, line)
        if CPUS_RE.match(line) or TRACE_LINE_RE.match(line) or DROPPED_RE.match(line):
            return InputFormat.TRACE_CMD
        if DMESG_CALLING_RE.match(line) or DMESG_RETURNED_RE.match(line):
            return InputFormat.DMESG
    if first_text is None:
        raise InputError("empty input: no trace-cmd report or dmesg lines")
    n, line = first_text
    shown = line.rstrip("\n")
    if len(shown) > 60:
        shown = shown[:57] + "..."
    raise InputError(
        f"line {n}: neither `trace-cmd report` output nor dmesg with initcall_debug: {shown!r}"
    )


def _problem_or_gap(
    lineno: int, raw: str, is_last: bool, problems: list[Problem], gaps: list[Gap]
) -> None:
    text = raw.rstrip("\n")
    if is_last and not raw.endswith("\n"):
        gaps.append(Gap(lineno, None, None, f"input ends mid-line (truncated capture?): {text[:80]!r}"))
    else:
        problems.append(Problem(lineno, text, "unrecognised line"))


def parse_trace_report(text: str, source: str = "<text>") -> ParsedInput:
    """Parse ``trace-cmd report`` output into events, gaps and problems."""
    lines = text.splitlines(keepends=True)
    events: list[Event] = []
    append = events.append
    gaps: list[Gap] = []
    problems: list[Problem] = []
    ignored: Counter[str] = Counter()
    comms: dict[str, str] = {}
    last_ts: dict[int, tuple[int, int]] = {}
    cpus: Optional[int] = None
    match = TRACE_LINE_RE.match
    names = _EVENT_NAMES
    scale = _FRACTION_SCALE
    n_lines = len(lines)
    for lineno, raw in enumerate(lines, 1):
        m = match(raw)
        if m is None:
            if lineno == 1 or cpus is None:
                c = CPUS_RE.match(raw)
                if c:
                    cpus = int(c.group(1))
                    continue
            d = DROPPED_RE.match(raw)
            if d:
                cpu = int(d.group(1))
                count = int(d.group(2)) if d.group(2) else None
                what = f"CPU {cpu} lost {count if count is not None else 'an unknown number of'} events here"
                gaps.append(Gap(lineno, cpu, count, what))
                continue
            e = FTRACE_ENTRIES_RE.match(raw)
            if e and int(e.group(2)) > int(e.group(1)):
                gaps.append(
                    Gap(lineno, None, int(e.group(2)) - int(e.group(1)),
                        f"ring buffer overwritten: {e.group(1)} of {e.group(2)} entries kept")
                )
                continue
            if HEADER_RE.match(raw):
                continue
            _problem_or_gap(lineno, raw, lineno == n_lines, problems, gaps)
            continue
        comm, pid, cpu_s, lcpu, stamp, name, info = m.groups()
        ev = names.get(name)
        if ev is None:
            ignored[name] += 1
            continue
        if lineno == n_lines and not raw.endswith("\n"):
            # The last line may be cut anywhere, even inside a field.
            gaps.append(Gap(lineno, None, None, f"input ends mid-line (truncated capture?): {raw[:80]!r}"))
            continue
        dot = stamp.find(".")
        if dot < 0:
            ts = int(stamp)
        else:
            frac = stamp[dot + 1 : dot + 10]
            ts = int(stamp[:dot]) * 1_000_000_000 + int(frac) * scale[len(frac)]
        cpu = int(cpu_s if cpu_s is not None else lcpu)
        prev = last_ts.get(cpu)
        if prev is not None and ts < prev[0]:
            gaps.append(
                Gap(lineno, cpu, None,
                    f"CPU {cpu} clock went backwards from line {prev[1]} ({prev[0]} ns) to {ts} ns")
            )
        last_ts[cpu] = (ts, lineno)
        c2 = comms.get(comm)
        if c2 is None:
            c2 = comms[comm] = comm.strip()
        append(Event(lineno, ts, cpu, int(pid), c2, ev, info.rstrip("\r")))
    return ParsedInput(
        source=source,
        fmt=InputFormat.TRACE_CMD,
        cpus=cpus,
        line_count=n_lines,
        events=tuple(events),
        gaps=tuple(gaps),
        problems=tuple(problems),
        ignored=dict(ignored),
    )


def parse_dmesg(text: str, source: str = "<text>") -> ParsedInput:
    """Parse dmesg text: only initcall_debug's calling/returned lines count;
    other kernel messages are normal and skipped.

    Without printk timestamps, times are rebuilt from the ``after N usecs``
    durations (a running clock), so the order is still right.
    """
    lines = text.splitlines(keepends=True)
    events: list[Event] = []
    gaps: list[Gap] = []
    clock = 0
    n_lines = len(lines)
    for lineno, raw in enumerate(lines, 1):
        if "calling" not in raw and "initcall" not in raw:
            continue
        m = DMESG_CALLING_RE.match(raw)
        if m:
            stamp, func, mod, pid, tail = m.groups()
            ts = ts_to_ns(stamp) if stamp else clock
            clock = ts
            info = f"func={func}" + (f" [{mod}]" if mod else "") + f" @ {pid}{tail.rstrip()}"
            events.append(Event(lineno, ts, -1, int(pid), "", EventName.DMESG_CALLING, info))
            continue
        r = DMESG_RETURNED_RE.match(raw)
        if r:
            stamp, func, mod, ret, usecs, tail = r.groups()
            if lineno == n_lines and not raw.endswith("\n"):
                gaps.append(Gap(lineno, None, None, "input ends mid-line (truncated capture?)"))
                continue
            ts = ts_to_ns(stamp) if stamp else clock + int(usecs) * 1000
            clock = ts
            info = (f"func={func}" + (f" [{mod}]" if mod else "")
                    + f" ret={ret} usecs={usecs}{tail.rstrip()}")
            events.append(Event(lineno, ts, -1, -1, "", EventName.DMESG_RETURNED, info))
    return ParsedInput(
        source=source,
        fmt=InputFormat.DMESG,
        cpus=None,
        line_count=n_lines,
        events=tuple(events),
        gaps=tuple(gaps),
        problems=(),
        ignored={},
    )


def parse_text(text: str, source: str = "<text>") -> ParsedInput:
    """Detect the format of ``text`` and parse it.

    Raises :class:`InputError` when nothing in it is an event we read.
    """
    head = text[:200_000].splitlines(keepends=True)
    fmt = detect_format(head)
    if fmt is InputFormat.DMESG:
        parsed = parse_dmesg(text, source)
    else:
        parsed = parse_trace_report(text, source)
    if not parsed.events and not parsed.gaps:
        if parsed.problems:
            p = parsed.problems[0]
            raise InputError(f"line {p.line}: no event could be read; first bad line: {p.text[:60]!r}")
        names = ", ".join(sorted(parsed.ignored)) or "none"
        raise InputError(
            f"no initcall, module or initexit events in {source} (events seen: {names})"
        )
    return parsed


def unknown_initexit_events(parsed: ParsedInput) -> list[str]:
    """Event names in the initexit system this parser does not know: a sign
    the kernel's events changed and the parser must follow."""
    return sorted(n for n in parsed.ignored if n.startswith(INITEXIT_PREFIX))

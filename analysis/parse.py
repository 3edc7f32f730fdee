"""Read ``trace-cmd report`` text, a trace.dat, or dmesg with initcall_debug.

The parser is tolerant: a line it cannot read becomes a :class:`Problem`
with its line number, a lost-events marker becomes a :class:`Gap`, events
it does not model are counted.  Only input that holds nothing it can read
at all is an :class:`InputError`.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from dataclasses import dataclass
from typing import IO, Iterable, Iterator, Optional

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

FAST_LINE_RE = re.compile(r" *(.+?-\d+ +\[\d+\]) +(\d+)\.(\d{9}): (\w+): +(.*)")
"""The line of ``trace-cmd report -N -t`` as the analysis itself runs it:
:data:`TRACE_LINE_RE` narrowed to ``[cpu]`` and a 9-digit fraction, which
matches in less time.  The task and CPU are one group (``comm-pid [cpu]``),
split once per distinct value.  Lines it misses go through
:data:`TRACE_LINE_RE`."""

_TASK_RE = re.compile(r"(.+?)-(\d+) +\[(\d+)\]$")
"""The task group of :data:`FAST_LINE_RE`: comm, pid, cpu."""

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

#: The trace events the model reads, by name; others are counted as ignored.
EVENT_NAMES: dict[str, EventName] = {
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


def _trace_cmd_report_lines(path: str) -> Iterator[str]:
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


@dataclass(frozen=True)
class InputLines:
    """An opened input: its name and its lines (each with its ``\\n``)."""

    source: str
    lines: Iterator[str]
    dat: Optional[str] = None  # the trace.dat's path while open (for its kallsyms)


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
                yield InputLines("<stdin>", _trace_cmd_report_lines(path), path)
            return
        with io.TextIOWrapper(io.BytesIO(data), encoding="utf-8", errors="replace", newline="\n") as t:
            yield InputLines("<stdin>", iter(t))
        return
    try:
        with open(name, "rb") as f:
            is_dat = f.read(len(TRACE_DAT_MAGIC)) == TRACE_DAT_MAGIC
        if is_dat:
            yield InputLines(name, _trace_cmd_report_lines(name), name)
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


#: How far back :func:`untie_run` looks for a task's CPU before a tied run.
_UNTIE_LOOKBACK = 100_000


def _last_cpu_of(pid: int, events: list[Event]) -> Optional[int]:
    """The CPU of ``pid``'s last event among the last _UNTIE_LOOKBACK."""
    for i in range(len(events) - 1, max(-1, len(events) - 1 - _UNTIE_LOOKBACK), -1):
        if events[i].pid == pid:
            return events[i].cpu
    return None


def untie_run(run: list[Event], before: list[Event], moved: dict[int, int]) -> Optional[str]:
    """Put back in order the events of one timestamp that a task printed
    from two CPUs; return a note saying what moved, or None.

    ``trace-cmd report`` merges the per-CPU buffers by timestamp, and events
    with equal timestamps come out CPU by CPU.  Within one CPU the order is
    exact.  But the trace clock can stand still: under ``trace_clock=global``
    a CPU whose clock runs behind gets the last time any CPU read, so a
    task that moved from CPU 1 to CPU 0 prints its CPU 0 events first,
    although it ran them after its CPU 1 events (a finish then seems to
    close the wrong start).  A task runs on one CPU at a time, so its events
    on the CPU it was on before the run (the last of ``before``) come first;
    its other events keep their order after them.  Only that task's events
    move, within the places they held; pid 0 is one idle task per CPU and
    never moves.  ``run`` is changed in place, and ``moved`` gets each moved
    event's line -> the line of the place it took (ParsedInput.moved).
    """
    cpus_of: dict[int, set[int]] = {}
    for e in run:
        cpus_of.setdefault(e.pid, set()).add(e.cpu)
    notes: list[str] = []
    for pid, cpus in cpus_of.items():
        if len(cpus) < 2 or pid == 0:
            continue
        slots = [i for i, e in enumerate(run) if e.pid == pid]
        first_cpu = _last_cpu_of(pid, before)
        if first_cpu is None or run[slots[0]].cpu == first_cpu:
            continue  # nothing to go by, or already in that order
        mine = sorted((run[i] for i in slots), key=lambda e: e.cpu != first_cpu)
        for i, e in zip(slots, mine):
            if e.line != run[i].line:
                moved[e.line] = run[i].line
            run[i] = e
        order = " then ".join(str(c) for c in dict.fromkeys(e.cpu for e in mine))
        lines = sorted(e.line for e in mine)
        sec, ns = divmod(mine[0].ts_ns, 1_000_000_000)
        notes.append(
            f"lines {lines[0]}-{lines[-1]}: {len(mine)} events of {mine[0].comm}-{pid} share the "
            f"timestamp {sec}.{ns:09d} on two or more CPUs; read as CPU {order}, since the task ran on "
            f"CPU {first_cpu} before (a stalled trace clock; trace-cmd prints such ties CPU by CPU)"
        )
    return "; ".join(notes) if notes else None


class TraceReportReader:
    """Reads ``trace-cmd report`` lines one at a time.

    :meth:`read` yields each event as soon as its line is read, so a consumer
    (the span builder) can work while ``trace-cmd report`` is still printing;
    :meth:`result` then gives the whole :class:`ParsedInput`.  Lines are
    split on ``\\n`` only; a last line without one is a truncated capture.
    """

    def __init__(self, source: str) -> None:
        self.source = source
        self.events: list[Event] = []
        self.gaps: list[Gap] = []
        self.problems: list[Problem] = []
        self.ignored: Counter[str] = Counter()
        self.cpus: Optional[int] = None
        self.line_count = 0
        self.reordered: list[str] = []
        self.moved: dict[int, int] = {}

    def read(self, lines: Iterable[str]) -> Iterator[Event]:
        events = self.events
        append = events.append
        gaps = self.gaps
        ignored = self.ignored
        # comm-pid [cpu] -> (comm, pid, cpu): a capture has few distinct tasks.
        tasks: dict[str, tuple[str, int, int]] = {}
        # The last event of each CPU, for the clock-went-backwards check.
        last_of_cpu: dict[int, Event] = {}
        fast = FAST_LINE_RE.match
        match = TRACE_LINE_RE.match
        names = EVENT_NAMES
        scale = _FRACTION_SCALE
        new_event = tuple.__new__  # Event(...) without the NamedTuple wrapper
        # Each event is held until the next one shows whether it shares its
        # timestamp; a run of equal timestamps goes through untie_run().
        held: Optional[Event] = None
        tied: Optional[list[Event]] = None
        lineno = 0
        for raw in lines:
            lineno += 1
            f = fast(raw)
            if f is not None:
                task, sec, frac, name, info = f.groups()
                ev = names.get(name)
                if ev is None:
                    ignored[name] += 1
                    continue
                ts = int(sec + frac)
                t = tasks.get(task)
                if t is None:
                    m = _TASK_RE.match(task)
                    assert m is not None  # FAST_LINE_RE matched the same text
                    t = tasks[task] = (m.group(1).strip(), int(m.group(2)), int(m.group(3)))
                comm, pid, cpu = t
            else:
                m = match(raw)
                if m is None:
                    self._other_line(lineno, raw)
                    continue
                comm, pid_s, cpu_s, lcpu, stamp, name, info = m.groups()
                ev = names.get(name)
                if ev is None:
                    ignored[name] += 1
                    continue
                dot = stamp.find(".")
                if dot < 0:
                    ts = int(stamp)
                else:
                    frac = stamp[dot + 1 : dot + 10]
                    ts = int(stamp[:dot]) * 1_000_000_000 + int(frac) * scale[len(frac)]
                comm, pid, cpu = comm.strip(), int(pid_s), int(cpu_s if cpu_s is not None else lcpu)
            if not raw.endswith("\n"):
                # Only the last line can lack its newline: a capture cut
                # anywhere, even inside a field.
                gaps.append(Gap(lineno, None, None, f"input ends mid-line (truncated capture?): {raw[:80]!r}"))
                continue
            if info.endswith("\r"):
                info = info.rstrip("\r")
            event: Event = new_event(Event, (lineno, ts, cpu, pid, comm, ev, info))
            prev = last_of_cpu.get(cpu)
            if prev is not None and ts < prev[1]:
                gaps.append(
                    Gap(lineno, cpu, None,
                        f"CPU {cpu} clock went backwards from line {prev[0]} ({prev[1]} ns) to {ts} ns")
                )
            last_of_cpu[cpu] = event
            if tied is not None:
                if ts == tied[0][1]:
                    tied.append(event)
                    continue
                yield from self._release(tied)
                tied = None
            elif held is not None:
                if ts == held[1]:
                    tied = [held, event]
                    held = None
                    continue
                append(held)
                yield held
            held = event
        if tied is not None:
            yield from self._release(tied)
        elif held is not None:
            append(held)
            yield held
        self.line_count = lineno

    def _release(self, run: list[Event]) -> list[Event]:
        """A run of events with one timestamp, in the order they ran."""
        note = untie_run(run, self.events, self.moved)
        if note is not None:
            self.reordered.append(note)
        self.events.extend(run)
        return run

    def _other_line(self, lineno: int, raw: str) -> None:
        """A line that is not an event: the cpus= header, a lost-events
        marker, an ftrace header, or a problem."""
        if lineno == 1 or self.cpus is None:
            c = CPUS_RE.match(raw)
            if c:
                self.cpus = int(c.group(1))
                return
        d = DROPPED_RE.match(raw)
        if d:
            cpu = int(d.group(1))
            count = int(d.group(2)) if d.group(2) else None
            what = f"CPU {cpu} lost {count if count is not None else 'an unknown number of'} events here"
            self.gaps.append(Gap(lineno, cpu, count, what))
            return
        e = FTRACE_ENTRIES_RE.match(raw)
        if e and int(e.group(2)) > int(e.group(1)):
            self.gaps.append(
                Gap(lineno, None, int(e.group(2)) - int(e.group(1)),
                    f"ring buffer overwritten: {e.group(1)} of {e.group(2)} entries kept")
            )
            return
        if HEADER_RE.match(raw):
            return
        _problem_or_gap(lineno, raw, not raw.endswith("\n"), self.problems, self.gaps)

    def result(self) -> ParsedInput:
        return ParsedInput(
            source=self.source,
            fmt=InputFormat.TRACE_CMD,
            cpus=self.cpus,
            line_count=self.line_count,
            events=tuple(self.events),
            gaps=tuple(self.gaps),
            problems=tuple(self.problems),
            ignored=dict(self.ignored),
            reordered=tuple(self.reordered),
            moved=self.moved,
        )


def parse_trace_report(text: str, source: str = "<text>") -> ParsedInput:
    """Parse ``trace-cmd report`` output into events, gaps and problems."""
    reader = TraceReportReader(source)
    for _ in reader.read(iter_text_lines(text)):
        pass
    return reader.result()


def iter_text_lines(text: str) -> Iterator[str]:
    """The lines of ``text``, each with its ``\\n``, split on ``\\n`` only
    (str.splitlines also splits on form feeds and other separators)."""
    find = text.find
    pos, n = 0, len(text)
    while pos < n:
        end = find("\n", pos)
        if end < 0:
            yield text[pos:]
            return
        yield text[pos:end + 1]
        pos = end + 1


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
    _head, fmt = split_head(iter_text_lines(text))
    if fmt is InputFormat.DMESG:
        parsed = parse_dmesg(text, source)
    else:
        parsed = parse_trace_report(text, source)
    check_not_empty(parsed)
    return parsed


def check_not_empty(parsed: ParsedInput) -> None:
    """Raise :class:`InputError` when nothing in the input is an event we read."""
    if parsed.events or parsed.gaps:
        return
    if parsed.problems:
        p = parsed.problems[0]
        raise InputError(f"line {p.line}: no event could be read; first bad line: {p.text[:60]!r}")
    names = ", ".join(sorted(parsed.ignored)) or "none"
    raise InputError(f"no initcall, module or initexit events in {parsed.source} (events seen: {names})")


def split_head(lines: Iterator[str], limit: int = 200_000) -> tuple[list[str], InputFormat]:
    """Read lines until the format is known (or ``limit`` characters); return
    them with the format.  The caller goes on with the rest of ``lines``."""
    head: list[str] = []
    size = 0
    for line in lines:
        head.append(line)
        size += len(line)
        if CPUS_RE.match(line) or TRACE_LINE_RE.match(line) or DROPPED_RE.match(line):
            return head, InputFormat.TRACE_CMD
        if DMESG_CALLING_RE.match(line) or DMESG_RETURNED_RE.match(line):
            return head, InputFormat.DMESG
        if size >= limit:
            break
    return head, detect_format(head)


def unknown_initexit_events(parsed: ParsedInput) -> list[str]:
    """Event names in the initexit system this parser does not know: a sign
    the kernel's events changed and the parser must follow."""
    return sorted(n for n in parsed.ignored if n.startswith(INITEXIT_PREFIX))

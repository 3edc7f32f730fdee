"""Reading the lines of ``trace-cmd report`` text or dmesg into events.

The line grammar is analysis/grammar.py's, opening and sniffing the input
analysis/source.py's, the fields inside an event analysis/schema.py's (read
by analysis/build.py), and putting tied events back in order
analysis/untie.py's.

The parser is tolerant: a line it cannot read becomes a :class:`Problem`
with its line number, a lost-events marker becomes a :class:`Gap`, events
it does not model are counted.  Only input that holds nothing it can read
at all is an :class:`InputError`.
"""

from __future__ import annotations

from collections import Counter
from typing import Iterable, Iterator, Optional

from analysis.grammar import (
    CPUS_RE,
    DMESG_BLACKLISTED_RE,
    DMESG_CALLING_RE,
    DMESG_DEFERRAL_RE,
    DMESG_INITEXIT_RE,
    DMESG_LEVEL_RE,
    DMESG_LINUX_VERSION_RE,
    DMESG_PROBE_RE,
    DMESG_RETURNED_RE,
    DMESG_RUN_INIT_RE,
    DMESG_TASK_COMM_RE,
    DROPPED_RE,
    EVENT_NAMES,
    FAST_LINE_RE,
    FRACTION_SCALE,
    FTRACE_ENTRIES_RE,
    HEADER_RE,
    TRACE_LINE_RE,
    TASK_RE,
)
from analysis.kernel_log import Clock, StampClock, duration_note, probe_note, split
from analysis.model import (
    INITEXIT_PREFIX,
    Event,
    EventName,
    Gap,
    InputFormat,
    DeferralLine,
    KernelNotice,
    ParsedInput,
    ProbeLine,
    Problem,
)
from analysis.source import InputError, InputText, open_input, read_input, split_head
from analysis.untie import CALL_EDGES, track_call, untie_run

__all__ = ["InputError", "InputText", "TraceReportReader", "check_not_empty", "iter_text_lines",
           "open_input", "parse_dmesg", "parse_text", "parse_trace_report", "read_input",
           "ts_to_ns", "unknown_initexit_events"]

#: How many unreadable lines a reader keeps (with their text); the rest are counted.
MAX_PROBLEMS = 1000


def ts_to_ns(stamp: str) -> int:
    """``0.225379123`` (or ``0.225379``) seconds to integer nanoseconds.

    A stamp without a dot is a raw clock counter (a non-time trace_clock);
    it is kept as is.
    """
    dot = stamp.find(".")
    if dot < 0:
        return int(stamp)
    frac = stamp[dot + 1 : dot + 10]
    ns: int = int(stamp[:dot]) * 1_000_000_000 + int(frac) * FRACTION_SCALE[len(frac)]
    return ns


class TraceReportReader:
    """Reads ``trace-cmd report`` lines one at a time.

    :meth:`read` yields each event as soon as its line is read, so a consumer
    (the span builder) can work while ``trace-cmd report`` is still printing;
    :meth:`result` then gives the whole :class:`ParsedInput`.  Lines are
    split on ``\\n`` only; a last line without one is a truncated capture.

    ``keep_events``: keep every event in the result (tests, ``parse``, the
    renders of small captures); a streaming check keeps none, and the
    reader's memory is then the distinct tasks and CPUs, not the length.
    """

    def __init__(self, source: str, keep_events: bool = True) -> None:
        self.source = source
        self.keep_events = keep_events
        self.events: list[Event] = []
        self.event_count = 0
        self.gaps: list[Gap] = []
        self.problems: list[Problem] = []
        self.problem_count = 0
        self.ignored: Counter[str] = Counter()
        self.cpus: Optional[int] = None
        self.line_count = 0
        self.reordered: list[str] = []
        self.moved: dict[int, int] = {}
        #: pid -> CPU of its last released event (the tie reordering's "before").
        self.cpu_of_pid: dict[int, int] = {}
        #: pid -> the calls it started and has not finished (func= text), as
        #: released: what a tie's finishes must close (untie_run).
        self.open_of_pid: dict[int, list[str]] = {}
        self.last_ts_ns = 0

    def read(self, lines: Iterable[str]) -> Iterator[Event]:
        # The hot loop of the analysis: it runs once per line of a capture of
        # millions.  Its speed tricks, the only ones in the reader: bound
        # methods and constants in locals; FAST_LINE_RE for the exact line
        # `trace-cmd report -N -t` prints (TRACE_LINE_RE only for the rest);
        # the task column `comm-pid [cpu]` split once per distinct value;
        # events built with tuple.__new__ (a NamedTuple's own constructor is
        # a Python function).
        gaps = self.gaps
        ignored = self.ignored
        keep = self.events.append if self.keep_events else None
        cpu_of_pid = self.cpu_of_pid
        tasks: dict[str, tuple[str, int, int]] = {}
        # The last event of each CPU, for the clock-went-backwards check.
        last_of_cpu: dict[int, Event] = {}
        high = 0  # the latest timestamp a CPU went back from
        fast = FAST_LINE_RE.match
        match = TRACE_LINE_RE.match
        names = EVENT_NAMES
        scale = FRACTION_SCALE
        new_event = tuple.__new__
        # Each event is held until the next one shows whether it shares its
        # timestamp; a run of equal timestamps goes through untie_run().
        held: Optional[Event] = None
        tied: Optional[list[Event]] = None
        lineno = 0
        count = 0
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
                    m = TASK_RE.match(task)
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
            count += 1
            prev = last_of_cpu.get(cpu)
            if prev is not None and ts < prev[1]:
                gaps.append(
                    Gap(lineno, cpu, None,
                        f"CPU {cpu} clock went backwards from line {prev[0]} ({prev[1]} ns) to {ts} ns")
                )
                if prev[1] > high:
                    high = prev[1]
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
                if keep is not None:
                    keep(held)
                cpu_of_pid[held[3]] = held[2]
                if held[5] in CALL_EDGES:
                    track_call(self.open_of_pid, held)
                yield held
            held = event
        if tied is not None:
            yield from self._release(tied)
        elif held is not None:
            if keep is not None:
                keep(held)
            cpu_of_pid[held[3]] = held[2]
            if held[5] in CALL_EDGES:
                track_call(self.open_of_pid, held)
            yield held
        self.line_count = lineno
        self.event_count = count
        self.last_ts_ns = max([high] + [e[1] for e in last_of_cpu.values()])

    def _release(self, run: list[Event]) -> list[Event]:
        """A run of events with one timestamp, in the order they ran."""
        note = untie_run(run, self.cpu_of_pid.get, self.moved,
                         lambda pid: self.open_of_pid.get(pid, []))
        if note is not None:
            self.reordered.append(note)
        if self.keep_events:
            self.events.extend(run)
        for e in run:
            self.cpu_of_pid[e.pid] = e.cpu
            if e.name in CALL_EDGES:
                track_call(self.open_of_pid, e)
        return run

    def _problem(self, problem: Problem) -> None:
        self.problem_count += 1
        if len(self.problems) < MAX_PROBLEMS:
            self.problems.append(problem)

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
        text = raw.rstrip("\n")
        if not raw.endswith("\n"):
            self.gaps.append(Gap(lineno, None, None, f"input ends mid-line (truncated capture?): {text[:80]!r}"))
        else:
            self._problem(Problem(lineno, text, "unrecognised line"))

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
            event_count=self.event_count,
            last_ts_ns=self.last_ts_ns,
            problem_count=self.problem_count,
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


def _notice(lineno: int, msg: str, raw: str) -> Optional[KernelNotice]:
    m = DMESG_INITEXIT_RE.match(msg)
    text = raw.rstrip("\r\n")
    if m is None:
        r = DMESG_RUN_INIT_RE.match(msg)
        return KernelNotice(lineno, "run-init", func=r.group(1), text=text) if r else None
    g = m.groupdict()
    if g["ordered"] is not None:
        return KernelNotice(lineno, "ordered", value=int(g["ordered"]), ns=int(g["ns"]), text=text)
    if g["skipped"] is not None:
        return KernelNotice(lineno, "skipped", g["origin"], g["skipped"], int(g["sprio"]), text=text)
    if g["blacklisted"] is not None:
        return KernelNotice(lineno, "blacklisted", g["origin"], g["blacklisted"], int(g["bprio"]), text=text)
    if g["noexit"] is not None:
        return KernelNotice(lineno, "refused", g["origin"], g["noexit"], text=text, other=g["later"], why="undoable")
    if g["oinit"] is not None:
        return KernelNotice(lineno, "refused", g["origin"], g["oinit"], int(g["oprio"]), text=text,
                            other=g["oentry"], why="band")
    if g["entries"] is not None:
        return KernelNotice(lineno, "refused", g["origin"], value=int(g["entries"]), text=text, why="entries")
    if g["split"] is not None:
        return KernelNotice(lineno, "refused", g["origin"], g["split"], text=text, why="split")
    tail = g["ftail"] or ""
    why = "unwinding" if tail.startswith(", unwinding") else "nothing" if "nothing to unwind" in tail else ""
    return KernelNotice(lineno, "failed", g["origin"], g["failed"], int(g["fprio"]), int(g["error"]), text=text,
                        why=why)


def _probe_line(lineno: int, raw: str, clock: StampClock, probes: list[ProbeLine],
                deferrals: list[DeferralLine]) -> bool:
    """Read a probe line or a deferral message into ``probes`` or
    ``deferrals``; False when ``raw`` is neither.

    A probe line's time is its stamp when the log has the kernel's own;
    otherwise the time of the last call line before it plus its duration
    (the probe ran inside or after that call; the running clock is not
    moved on, as the call's own ``after N usecs`` holds the probe's time).
    """
    line = split(raw)
    msg = line.message
    text = raw.rstrip("\r\n")
    stamped = clock.clock in (None, Clock.KERNEL) and line.clock is Clock.KERNEL and line.ns is not None
    m = DMESG_PROBE_RE.match(msg)
    if m is not None:
        dev, ret, usecs = m.group(1), int(m.group(2)), int(m.group(3))
        end = line.ns if stamped and line.ns is not None else clock.now + usecs * 1000
        probes.append(ProbeLine(lineno, end, dev, ret, usecs, text, stamped, line.caller))
        return True
    d = DMESG_DEFERRAL_RE.match(msg)
    if d is not None:
        kind = ("pending" if d.group("pending") else "defer" if d.group("defer")
                else "timeout" if d.group("timeout") else "no driver")
        ts = line.ns if stamped and line.ns is not None else clock.now
        deferrals.append(DeferralLine(lineno, ts, d.group(2), d.group(1), kind,
                                      d.group("reason").strip(), text))
        return True
    return False


def parse_dmesg(text: str, source: str = "<text>") -> ParsedInput:
    """Parse a kernel log: initcall_debug's calling/returned lines are
    events, its ``entering initcall level`` lines initcall_level events, the
    series' ``initexit:`` messages, the kernel's ``initcall F blacklisted``
    and ``Run /init`` are notices; other
    kernel messages are normal and skipped.

    Each line's envelope (dmesg's, journalctl's, syslog's: see
    analysis/kernel_log.py) is taken off first; its stamps give the times
    (:class:`analysis.kernel_log.StampClock`), and without the kernel's own
    stamps times are rebuilt from the ``after N usecs`` durations (a
    running clock), so the order is still right (the notes say so).
    """
    lines = text.splitlines(keepends=True)
    events: list[Event] = []
    gaps: list[Gap] = []
    notices: list[KernelNotice] = []
    probe_lines: list[ProbeLine] = []
    deferral_lines: list[DeferralLine] = []
    task_names: list[tuple[int, int, str]] = []
    clock = StampClock()
    version: Optional[tuple[int, int]] = None
    n_lines = len(lines)
    for lineno, raw in enumerate(lines, 1):
        if "initexit: " in raw or "as init process" in raw:
            n = _notice(lineno, split(raw).message, raw)
            if n is not None:
                notices.append(n)
                continue
        if version is None and "Linux version " in raw:
            v = DMESG_LINUX_VERSION_RE.search(raw)
            if v is not None:
                version = (int(v.group(1)), int(v.group(2)))
        if " Comm: " in raw:
            t = DMESG_TASK_COMM_RE.search(raw)
            if t is not None:
                task_names.append((lineno, int(t.group(1)), t.group(2)))
                continue
        if ("probe" in raw and ("probe of " in raw or "EPROBE_DEFER" in raw or "deferred probe " in raw)
                or "ignoring dependency for device" in raw):
            if _probe_line(lineno, raw, clock, probe_lines, deferral_lines):
                continue
        if "calling" not in raw and "initcall" not in raw:
            continue
        line = split(raw)
        msg = line.message
        m = DMESG_CALLING_RE.match(msg)
        if m:
            func, mod, pid, tail = m.groups()
            info = f"func={func}" + (f" [{mod}]" if mod else "") + f" @ {pid}{tail.rstrip()}"
            events.append(Event(lineno, clock.start(line), -1, int(pid), "", EventName.DMESG_CALLING, info))
            continue
        r = DMESG_RETURNED_RE.match(msg)
        if r:
            func, mod, ret, usecs, tail = r.groups()
            if lineno == n_lines and not raw.endswith("\n"):
                gaps.append(Gap(lineno, None, None, "input ends mid-line (truncated capture?)"))
                continue
            info = (f"func={func}" + (f" [{mod}]" if mod else "")
                    + f" ret={ret} usecs={usecs}{tail.rstrip()}")
            events.append(Event(lineno, clock.finish(line, int(usecs)), -1, -1, "", EventName.DMESG_RETURNED, info))
            continue
        lv = DMESG_LEVEL_RE.match(msg)
        if lv:
            events.append(Event(lineno, clock.start(line), -1, -1, "", EventName.INITCALL_LEVEL,
                                f"level={lv.group(1)}"))
            continue
        b = DMESG_BLACKLISTED_RE.match(msg)
        if b:
            notices.append(KernelNotice(lineno, "blacklisted", func=b.group(1), text=raw.rstrip("\r\n")))
    calls = sum(1 for e in events if e.name is EventName.DMESG_RETURNED)
    notes = tuple(n for n in (clock.note(), duration_note(version),
                              probe_note(version, calls, len(probe_lines))) if n)
    return ParsedInput(
        source=source,
        fmt=InputFormat.DMESG,
        cpus=None,
        line_count=n_lines,
        events=tuple(events),
        gaps=tuple(gaps),
        problems=(),
        ignored={},
        notices=tuple(notices),
        notes=notes,
        probe_lines=tuple(probe_lines),
        deferral_lines=tuple(deferral_lines),
        task_names=tuple(task_names),
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
    if parsed.n_events or parsed.gaps:
        return
    if parsed.problems:
        p = parsed.problems[0]
        raise InputError(f"line {p.line}: no event could be read; first bad line: {p.text[:60]!r}")
    names = ", ".join(sorted(parsed.ignored)) or "none"
    raise InputError(f"no initcall, module or initexit events in {parsed.source} (events seen: {names})")


def unknown_initexit_events(parsed: ParsedInput) -> list[str]:
    """Event names in the initexit system this parser does not know: a sign
    the kernel's events changed and the parser must follow."""
    return sorted(n for n in parsed.ignored if n.startswith(INITEXIT_PREFIX))

"""The model of one capture: events as read, spans built from them, findings.

Everything here is immutable (frozen dataclasses, Enums).  Times are integer
nanoseconds on the trace clock; ``None`` means "not in the capture".

Speed, for the hot loops that make and test millions of these (the reader
in parse.py, the handlers in build.py, the field parsers in schema.py,
CheckPass.span in checks.py): events and spans are NamedTuples, not frozen
dataclasses (a tuple is built in a third of the time); every Enum hashes
by identity (``__hash__ = object.__hash__``: members are singletons, and
Enum's own hash is Python code), so a dict keyed by members is looked up
in C; and the hot loops bind the members they test to module constants
(in Python 3.11 ``SpanKind.PAIR_INIT`` is a descriptor call).
"""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Iterable, Mapping, NamedTuple, Optional

if TYPE_CHECKING:
    from analysis.declared import DeclaredMatch


class InputFormat(enum.Enum):
    """What kind of text the input was."""

    __hash__ = object.__hash__  # see the module docstring

    TRACE_CMD = "trace-cmd-report"
    DMESG = "dmesg"


class EventName(enum.Enum):
    """Every event the model understands; anything else is counted as ignored."""

    __hash__ = object.__hash__  # see the module docstring

    INITCALL_LEVEL = "initcall_level"
    INITCALL_BAND = "initcall_band"
    INITCALL_START = "initcall_start"
    INITCALL_FINISH = "initcall_finish"
    MODULE_LOAD = "module_load"
    MODULE_FREE = "module_free"
    MODULE_GET = "module_get"
    MODULE_PUT = "module_put"
    MODULE_REQUEST = "module_request"
    INIT_START = "initexit_init_start"
    INIT_FINISH = "initexit_init_finish"
    EXIT_START = "initexit_exit_start"
    EXIT_FINISH = "initexit_exit_finish"
    UNWIND = "initexit_unwind"
    # dmesg initcall_debug lines, mapped onto the same model.
    DMESG_CALLING = "calling"
    DMESG_RETURNED = "returned"


#: The trace system prefix of the series' own events.
INITEXIT_PREFIX = "initexit_"


class CallPath(enum.Enum):
    """Where a call ran: the built-in boot walk or a module load/unload."""

    __hash__ = object.__hash__  # see the module docstring

    BOOT = "boot"
    MODULE = "module"
    #: The series' KUnit suite runs pair tables of its own: not checked.
    TEST = "test"


class SpanKind(enum.Enum):
    """What a span on the timeline is."""

    __hash__ = object.__hash__  # see the module docstring

    INITCALL = "initcall"  # a plain initcall (no pair), or a legacy module init
    PAIR_INIT = "init"  # the init of a module_init_exit() pair
    PAIR_EXIT = "exit"  # the exit of a pair, on unload or unwind


class Status(enum.Enum):
    """How a call ended."""

    __hash__ = object.__hash__  # see the module docstring

    OK = "ok"
    FAILED = "failed"  # returned < 0
    UNFINISHED = "unfinished"  # the capture ends (or breaks) before its finish


class ExitReason(enum.Enum):
    """Why an exit ran (the ``reason=`` field)."""

    __hash__ = object.__hash__  # see the module docstring

    UNLOAD = "unload"
    UNWIND = "unwind"


#: Initcall levels as ``initcall_level`` reports them, in boot order.
LEVELS: tuple[str, ...] = (
    "pure",
    "core",
    "postcore",
    "arch",
    "subsys",
    "fs",
    "device",
    "late",
)

#: Priority of each band (SPEC §2.2); a level holds its own band and its
#: ``_sync`` band (fs also holds rootfs).
BANDS: Mapping[str, int] = {
    "pure": -5500,
    "core": -5000,
    "core_sync": -4500,
    "postcore": -4000,
    "postcore_sync": -3500,
    "arch": -3000,
    "arch_sync": -2500,
    "subsys": -2000,
    "subsys_sync": -1500,
    "fs": -1000,
    "fs_sync": -750,
    "rootfs": -500,
    "device": 0,
    "device_sync": 500,
    "late": 1000,
    "late_sync": 1500,
}

#: Band names in boot order (the level names are among them).
BAND_NAMES: tuple[str, ...] = tuple(sorted(BANDS, key=BANDS.__getitem__))

#: The bands each level's classic initcalls may belong to, lowest first.
LEVEL_BANDS: Mapping[str, tuple[int, ...]] = {
    "pure": (BANDS["pure"],),
    "core": (BANDS["core"], BANDS["core_sync"]),
    "postcore": (BANDS["postcore"], BANDS["postcore_sync"]),
    "arch": (BANDS["arch"], BANDS["arch_sync"]),
    "subsys": (BANDS["subsys"], BANDS["subsys_sync"]),
    "fs": (BANDS["fs"], BANDS["fs_sync"], BANDS["rootfs"]),
    "device": (BANDS["device"], BANDS["device_sync"]),
    "late": (BANDS["late"], BANDS["late_sync"]),
}


def levels_by_band(level_names: Iterable[str]) -> bool:
    """Whether the marks are per band (the series' ``initcall_band``: every band,
    ``core_sync`` and ``rootfs`` included) rather than per level (stock)."""
    return any(name in BANDS and name not in LEVEL_BANDS for name in level_names)


def band_prios(level: Optional[str], by_band: bool) -> Optional[tuple[int, ...]]:
    """The band priorities a classic initcall run after ``level`` may have,
    lowest first, or None when the level tells nothing (early, console)."""
    if level is None:
        return None
    if by_band:
        return (BANDS[level],) if level in BANDS else None
    return LEVEL_BANDS.get(level)


def level_window(level: Optional[str], by_band: bool = False) -> tuple[Optional[int], Optional[int]]:
    """The priorities [low, high) a pair may have when it runs after ``level``.

    The kernel fires ``initcall_level`` after the pairs below the band, so a
    pair seen after band B has prio(B) <= prio < prio(next).  The next is the
    next band when the capture has an event per band (``by_band``), else the
    next level.  Before any level (None, "early", "console") gives
    (None, prio(pure)).  A None bound is open.
    """
    names = BAND_NAMES if by_band else tuple(LEVEL_BANDS)
    if level is None or level not in names:
        # Before the first level (or in "early"/"console"): below pure.
        return None, BANDS["pure"]
    i = names.index(level)
    high = BANDS[names[i + 1]] if i + 1 < len(names) else None
    return BANDS[level], high


def format_ns(ns: int) -> str:
    """A timestamp as trace-cmd prints it with ``-t``: seconds.nanoseconds."""
    return f"{ns // 1_000_000_000}.{ns % 1_000_000_000:09d}"


def format_duration(ns: Optional[int]) -> str:
    """A duration with a readable unit (ns, us, ms, s)."""
    if ns is None:
        return "?"
    if ns < 10_000:
        return f"{ns} ns"
    if ns < 10_000_000:
        return f"{ns / 1000:.1f} us"
    if ns < 10_000_000_000:
        return f"{ns / 1_000_000:.2f} ms"
    return f"{ns / 1_000_000_000:.3f} s"


class Event(NamedTuple):
    """One recognised input line.

    ``info`` is the event's printed fields (``func=foo+0x0 ret=0``), kept as
    text so the event can be quoted exactly as it was read (its fields are
    read by analysis/schema.py's parsers).  A NamedTuple (module docstring).
    """

    line: int
    ts_ns: int
    cpu: int
    pid: int
    comm: str
    name: EventName
    info: str

    def quote(self) -> str:
        """The event as a finding quotes it: line number, time, task, text."""
        cpu = f"{self.cpu:03d}" if self.cpu >= 0 else "---"
        return (
            f"line {self.line}: {format_ns(self.ts_ns)} [{cpu}] "
            f"{self.comm}-{self.pid} {self.name.value}: {self.info}"
        )


class KernelNotice(NamedTuple):
    """One of the series' kernel messages about built-in objects in dmesg
    (grammar.DMESG_INITEXIT_RE), the kernel's own ``initcall F blacklisted``
    (grammar.DMESG_BLACKLISTED_RE: kind ``blacklisted``, no origin or
    prio), or the boot handing over to init.

    ``kind``: ``ordered`` (``value`` pairs in ``ns``), ``skipped`` (after an
    earlier failure), ``blacklisted``, ``failed`` (``value`` is the error;
    ``why`` ``unwinding`` or ``nothing``: "nothing to unwind"), ``refused``
    (the bind refused the object, none of its pairs runs; ``why``
    ``undoable``: ``func`` has no exit and runs before ``other``; ``band``:
    ``func`` (prio ``prio``) is outside the band of the entry ``other``;
    ``entries``: the run has ``value`` entries, not one; ``split``: the
    pairs of the entry ``func`` are not linked together), ``run-init``
    (``func`` is the init program)."""

    line: int
    kind: str
    origin: str = ""
    func: str = ""
    prio: Optional[int] = None
    value: Optional[int] = None
    ns: Optional[int] = None
    text: str = ""
    other: str = ""
    why: str = ""


class ProbeLine(NamedTuple):
    """One ``probe of DEV returned N after T usecs`` line of a kernel log
    (grammar.DMESG_PROBE_RE), as read: ``end_ns`` is its time (the line's
    stamp: the kernel prints it as the probe returns)."""

    line: int
    end_ns: int
    device: str
    ret: int
    usecs: int
    text: str
    #: The line's time is the kernel's own stamp (not rebuilt from durations).
    stamped: bool = True
    #: CONFIG_PRINTK_CALLER's caller of the line (``T45``: task 45 printed
    #: it; ``C0``: CPU 0, from interrupt context), "" when the log has none.
    caller: str = ""

    @property
    def task(self) -> Optional[int]:
        """The pid of the task that printed the line, None when the log
        does not say (no caller, or a CPU's)."""
        c = self.caller
        return int(c[1:]) if c[:1] == "T" and c[1:].isdigit() else None


class DeferralLine(NamedTuple):
    """A kernel message saying why a device's probe is deferred
    (grammar.DMESG_DEFERRAL_RE): ``kind`` ``pending`` (the deferred probe
    timeout's warning), ``defer`` (dev_err_probe()'s debug message) or
    ``timeout`` (a dependency ignored after the timeout) or ``no driver``
    (a dependency ignored on a kernel without modules)."""

    line: int
    ts_ns: int
    device: str
    owner: str  # the driver or bus dev_printk() names before the device
    kind: str
    reason: str
    text: str


class ProbeMode(enum.Enum):
    """Where a device probe ran, as far as a kernel log tells."""

    __hash__ = object.__hash__  # see the module docstring

    #: Inside a call: its line is between the call's calling and returned
    #: lines and its time within the call's (a synchronous probe).
    IN_CALL = "in-call"
    #: A retry of a device that deferred before, or a probe run while
    #: deferred_probe_initcall waits for the deferred probe work: the work
    #: runs in a kworker, not in the call.
    DEFERRED = "deferred"
    #: Outside every call: asynchronous probing (async_schedule), a bus's
    #: own thread (serio), a probe after the boot that no call started.
    ASYNC = "async"


#: -EPROBE_DEFER; really_probe() returns a driver's error negated (517),
#: a device link's not-ready supplier as it is (-517).
EPROBE_DEFER = 517
#: -ENODEV, -ENXIO negated: the driver does not take this device.
PROBE_NO_MATCH = (19, 6, -19, -6)


class Probe(NamedTuple):
    """One device probe on the timeline (a kernel log's probe line).

    ``start_ns`` is the line's time less the printed duration.  ``call``
    is the start line of the call during which it ran (IN_CALL: the call
    that holds it; DEFERRED: the call that waited for it, as
    deferred_probe_initcall, if any; ASYNC: the call during which another
    task printed it, when CONFIG_PRINTK_CALLER names the task), None
    outside every call.  ``attempt`` counts the device's probes (1 = its
    first).  ``task``: the pid that printed the line (CONFIG_PRINTK_CALLER's
    ``[Tn]``), None when the log does not say; ``task_name`` its name when
    the log gives it (a ``PID: n Comm: NAME`` line), else "".
    """

    line: int
    device: str
    ret: int
    duration_ns: int
    start_ns: int
    end_ns: int
    mode: ProbeMode
    call: Optional[int]
    call_func: str
    attempt: int
    text: str
    task: Optional[int] = None
    task_name: str = ""

    @property
    def task_text(self) -> str:
        """``task 45 (kworker/u8:2)``, ``task 45``, or "" when the log names
        no task."""
        if self.task is None:
            return ""
        return f"task {self.task}" + (f" ({self.task_name})" if self.task_name else "")

    @property
    def result(self) -> str:
        """``bound``, ``deferred``, ``no match`` (the driver did not take
        the device) or ``failed``."""
        if self.ret == 0:
            return "bound"
        if abs(self.ret) == EPROBE_DEFER:
            return "deferred"
        if self.ret in PROBE_NO_MATCH:
            return "no match"
        return "failed"

    @property
    def deferred(self) -> bool:
        return abs(self.ret) == EPROBE_DEFER


@dataclass(frozen=True, slots=True)
class Gap:
    """A place where the capture is known to miss data."""

    line: int
    cpu: Optional[int]
    dropped: Optional[int]  # number of events lost, None if unknown
    what: str  # one line for the reader

    def quote(self) -> str:
        return f"line {self.line}: {self.what}"


@dataclass(frozen=True, slots=True)
class Problem:
    """A line that could not be understood (kept with its number)."""

    line: int
    text: str
    reason: str

    def quote(self) -> str:
        shown = self.text if len(self.text) <= 120 else self.text[:117] + "..."
        return f"line {self.line}: {self.reason}: {shown!r}"


@dataclass(frozen=True, slots=True)
class ParsedInput:
    """The result of reading the input text, before any span is built."""

    source: str
    fmt: InputFormat
    cpus: Optional[int]
    line_count: int
    events: tuple[Event, ...]
    gaps: tuple[Gap, ...]
    problems: tuple[Problem, ...]
    ignored: Mapping[str, int]  # event name -> count, events the model skips
    #: Runs of one timestamp in which a task's events, printed from two
    #: CPUs, were put back in CPU order (see parse.untie_run); one line each.
    reordered: tuple[str, ...] = ()
    #: For each event so moved: its line -> the line whose place it took.
    #: Events are in the order they ran by ``moved.get(line, line)``, not
    #: by ``line``; quotes keep the real line.
    moved: Mapping[int, int] = field(default_factory=dict)
    #: How many events were read, when ``events`` does not keep them all
    #: (a streaming read keeps none); None: ``len(events)``.
    event_count: Optional[int] = None
    #: The last timestamp of the capture, when ``events`` does not keep them.
    last_ts_ns: Optional[int] = None
    #: How many lines were unreadable, when ``problems`` keeps only the first.
    problem_count: Optional[int] = None
    #: dmesg: the series' own messages about built-in pairs, and the boot's end.
    notices: tuple["KernelNotice", ...] = ()
    #: How the input was read, when the reader must say so (a kernel log's
    #: wall-clock or missing stamps, its kernel's microseconds).
    notes: tuple[str, ...] = ()
    #: dmesg: initcall_debug's probe lines, and the deferral messages.
    probe_lines: tuple[ProbeLine, ...] = ()
    deferral_lines: tuple[DeferralLine, ...] = ()
    #: dmesg: the tasks the log names (grammar.DMESG_TASK_COMM_RE), as
    #: (line, pid, name), in line order.
    task_names: tuple[tuple[int, int, str], ...] = ()

    @property
    def n_events(self) -> int:
        return len(self.events) if self.event_count is None else self.event_count

    @property
    def n_problems(self) -> int:
        return len(self.problems) if self.problem_count is None else self.problem_count

    @property
    def end_ns(self) -> int:
        """The capture's last timestamp (0 when it has no event)."""
        if self.last_ts_ns is not None:
            return self.last_ts_ns
        return max((e.ts_ns for e in self.events), default=0)

    def position(self, ev: Event) -> int:
        """Where ``ev`` ran among the events: its line, or the line of the
        place it was moved to."""
        return self.moved.get(ev.line, ev.line)


class UnwindOf(NamedTuple):
    """The failure an ``initexit_unwind`` event names."""

    failed_idx: int
    failed_prio: int
    failed_func: str
    error: int


# Module constants (see the module docstring): Span.status runs for every
# span in every check.
_PAIR_EXIT = SpanKind.PAIR_EXIT
_OK, _FAILED, _UNFINISHED = Status.OK, Status.FAILED, Status.UNFINISHED


class Span(NamedTuple):
    """One call on the timeline: a plain initcall, a pair's init or exit.

    Immutable; a NamedTuple (module docstring).

    ``start`` is the start event; ``finish`` is None when the capture ends
    inside the call.  For pair inits, ``inner`` is the nested
    initcall_start/finish span of the same call (do_one_initcall).  For
    exits run by an unwind, ``unwind`` is the initexit_unwind event.
    """

    kind: SpanKind
    path: CallPath
    origin: str
    func: str
    idx: Optional[int]
    prio: Optional[int]
    level: Optional[str]
    start: Event
    finish: Optional[Event]
    ret: Optional[int]
    duration_ns: Optional[int]
    reason: Optional[ExitReason] = None
    unwind: Optional[Event] = None
    inner: Optional["Span"] = None
    instance: int = 0  # which load of the module (0 = first)
    #: A pair init's ``has_exit=`` (1: the pair has an exit function), None
    #: when the event does not carry it (captures before the field).
    has_exit: Optional[int] = None
    #: An unwind exit's initexit_unwind fields: the failure it names.
    failed: Optional["UnwindOf"] = None

    @property
    def start_ns(self) -> int:
        return self.start.ts_ns

    @property
    def end_ns(self) -> Optional[int]:
        """End on the trace clock: finish event, else start + duration."""
        if self.finish is not None:
            return self.finish.ts_ns
        if self.duration_ns is not None:
            return self.start.ts_ns + self.duration_ns
        return None

    @property
    def status(self) -> Status:
        if self.kind is _PAIR_EXIT:
            return _OK if self.finish is not None else _UNFINISHED
        if self.ret is None:
            return _UNFINISHED
        return _FAILED if self.ret < 0 else _OK

    @property
    def key(self) -> tuple[str, str, Optional[int]]:
        """(path, origin, idx): links exits and unwinds to their pair."""
        return (self.path.value, self.origin, self.idx)

    def label(self) -> str:
        """Short human description, e.g. ``init foo (module bar #2 prio 10)``."""
        where = f"{self.path.value} {self.origin}" if self.origin else self.path.value
        if self.idx is not None:
            where += f" #{self.idx}"
        if self.prio is not None:
            where += f" prio {self.prio}"
        elif self.level is not None:
            where += f" level {self.level}"
        return f"{self.kind.value} {self.func} ({where})"


@dataclass(frozen=True, slots=True)
class Unit:
    """One module load (from load to free) or one built-in object at boot:
    the scope within which inits ascend, and failures and unloads unwind."""

    path: CallPath
    origin: str
    instance: int
    inits: tuple[Span, ...]
    exits: tuple[Span, ...]
    load: Optional[Event] = None
    free: Optional[Event] = None
    stray_unwinds: tuple[Event, ...] = ()  # unwind events with no exit after
    seq: int = 0  # creation order among the capture's units (reports list them so)

    def name(self) -> str:
        if self.path is CallPath.BOOT:
            return f"built-in object {self.origin}"
        suffix = f" (load #{self.instance + 1})" if self.instance else ""
        return f"module {self.origin}{suffix}"


@dataclass(frozen=True, slots=True)
class Capture:
    """The whole model: what was read and the spans and units built from it."""

    parsed: ParsedInput
    spans: tuple[Span, ...]  # every span, by start time
    levels: tuple[Event, ...]  # initcall_level events (initcall_band where one follows)
    units: tuple[Unit, ...]
    build_problems: tuple["Finding", ...]  # pairing problems found while building
    levels_by_band: bool = False  # marks per band (initcall_band), not per level
    #: The classic boot initcalls matched to the kernel's declared order
    #: (analysis/declared.py), None without a map; the note says why.
    declared: Optional["DeclaredMatch"] = None
    declared_note: str = ""
    #: Module inits labelled by their module_load: (label, name as printed),
    #: each distinct one once; ``module_init_label_count`` counts them all.
    module_init_labels: tuple[tuple[str, str], ...] = ()
    module_init_label_count: int = 0
    #: initexit events with path=test (the KUnit suite's tables), skipped.
    test_events: int = 0
    #: The level name of each of ``levels``.
    level_names: tuple[str, ...] = ()
    #: How many spans and units were built, when ``spans``/``units`` keep
    #: only some (a streaming check keeps the boot's; a render past its
    #: limit the first ones); None: all are kept.
    span_count: Optional[int] = None
    unit_count: Optional[int] = None
    #: Why ``spans`` is not every span (a render's limit), for the outputs.
    kept_note: str = ""
    #: line -> each event's fields as analysis/schema.py parsed them (a
    #: record with one attribute per field; None: not in the documented
    #: format), when the build was asked to keep them (the boot test).
    records: Mapping[int, Any] = field(default_factory=dict)
    #: Device probes (a kernel log's initcall_debug lines; a trace has no
    #: probe event in 6.12), by line, and the deferral messages by line.
    probes: tuple[Probe, ...] = ()
    deferrals: tuple[DeferralLine, ...] = ()

    @property
    def n_spans(self) -> int:
        return len(self.spans) if self.span_count is None else self.span_count

    @property
    def n_units(self) -> int:
        return len(self.units) if self.unit_count is None else self.unit_count


@dataclass(frozen=True, slots=True)
class Finding:
    """One violation of a named invariant, with the events that show it."""

    check: str
    message: str
    quotes: tuple[str, ...] = ()


class CheckState(enum.Enum):
    """The outcome of one named check."""

    PASS = "pass"
    FAIL = "fail"
    SKIP = "skip"  # nothing in the capture to check it against


@dataclass(frozen=True, slots=True)
class CheckResult:
    """One named invariant: its state, findings, and a note on its coverage."""

    name: str
    description: str
    state: CheckState
    findings: tuple[Finding, ...] = ()
    note: str = ""


@dataclass(frozen=True, slots=True)
class Verdict:
    """All checks over one capture; ``ok`` when none failed."""

    capture: Capture
    results: tuple[CheckResult, ...]
    notes: tuple[str, ...] = field(default=())
    #: Calls by kind over the whole capture (calls, initcalls, pair_inits,
    #: pair_exits, failed_inits, units): the capture may keep only some spans.
    counts: Mapping[str, int] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return all(r.state is not CheckState.FAIL for r in self.results)

    @property
    def findings(self) -> tuple[Finding, ...]:
        return tuple(f for r in self.results for f in r.findings)


_OFFSET_RE = re.compile(r"\+0x[0-9a-f]+(?:/0x[0-9a-f]+)?$")


def bare_func(func: str) -> str:
    """``foo+0x0/0x30`` -> ``foo`` (kallsyms offset and size stripped)."""
    return _OFFSET_RE.sub("", func)

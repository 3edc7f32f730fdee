"""Build spans and units from parsed events.

Starts and finishes are paired per task (pid), since the kernel runs each
call start to finish in one task while tasks on other CPUs interleave.  A
pair's init runs through do_one_initcall(), so its initcall_start/finish
nest inside initexit_init_start/finish; that inner span is attached to the
pair instead of being counted as a plain initcall.

Each event's fields are parsed once, by analysis/schema.py's parser for
its event, into a typed record read by field name.  Finished spans and
closed units go to a sink as they are made (analysis/units.py): a
:class:`KeepAll` sink holds the whole capture; the streaming check
(analysis/checks.py ``CheckPass``) keeps only what is still needed.
"""

from __future__ import annotations

import re
from operator import attrgetter
from typing import Any, Callable, Iterable, Mapping, Optional, Protocol

from analysis.model import (
    bare_func,
    CallPath,
    Capture,
    Event,
    EventName,
    ExitReason,
    Finding,
    InputFormat,
    ParsedInput,
    Span,
    SpanKind,
    Unit,
    UnwindOf,
    levels_by_band,
)
from analysis.schema import (
    DMESG_CALLING_INFO_RE,
    DMESG_RETURNED_INFO_RE,
    MODULE_NAME_RE,
    ORIGIN_RE,
    PRIO_RE,
    field_parsers,
)
from analysis.probes import build_probes
from analysis.units import UnitBuilder, Units

#: Name of the invariant that pairing problems are reported under.
PAIRING_CHECK = "start-finish-paired"

# Enum members as module constants (analysis/model.py says why).
_INIT = SpanKind.PAIR_INIT
_EXIT = SpanKind.PAIR_EXIT
_INITCALL = SpanKind.INITCALL
_MODULE = CallPath.MODULE
_BOOT = CallPath.BOOT
_TEST = CallPath.TEST
_UNLOAD = ExitReason.UNLOAD
_new_span = tuple.__new__  # Span(...) positionally, without the keyword wrapper
_START_LINE = attrgetter("start.line")
_START_TS = attrgetter("start.ts_ns")

class Sink(Protocol):
    """Where finished spans and closed units go."""

    spans: list[Span]  # the spans kept (all, or some)
    units: list[Unit]  # the units kept

    def span(self, s: Span) -> None: ...

    def unit(self, u: Unit) -> None: ...


class KeepAll:
    """Keeps every span and unit: the whole capture in memory."""

    def __init__(self) -> None:
        self.spans: list[Span] = []
        self.units: list[Unit] = []
        self.span = self.spans.append
        self.unit = self.units.append


class Tee:
    """Hands every span and unit to several sinks; keeps what the first keeps."""

    def __init__(self, first: Sink, *rest: Sink) -> None:
        self.sinks = (first,) + rest
        self.spans = first.spans
        self.units = first.units

    def span(self, s: Span) -> None:
        for k in self.sinks:
            k.span(s)

    def unit(self, u: Unit) -> None:
        for k in self.sinks:
            k.unit(u)


class _Open:
    """A call whose start was seen and whose finish was not (yet)."""

    __slots__ = ("kind", "path", "origin", "func", "idx", "prio", "level", "start", "reason",
                 "unwind", "failed", "inner", "instance", "unit", "has_exit")

    def __init__(self, kind: SpanKind, path: CallPath, origin: str, func: str, idx: Optional[int],
                 prio: Optional[int], level: Optional[str], start: Event,
                 instance: int = 0, unit: Optional[UnitBuilder] = None) -> None:
        self.kind = kind
        self.path = path
        self.origin = origin
        self.func = func
        self.idx = idx
        self.prio = prio
        self.level = level
        self.start = start
        self.reason: Optional[ExitReason] = None
        self.unwind: Optional[Event] = None
        self.failed: Optional[UnwindOf] = None
        self.inner: Optional[Span] = None
        self.instance = instance
        self.unit = unit
        self.has_exit: Optional[int] = None


class _Builder:
    def __init__(self, sink: Sink, moved: Mapping[int, int], keep_records: bool = False) -> None:
        self.sink = sink
        #: line -> the event's parsed fields (None: not in the documented
        #: format), when asked: the boot test reads every field of every event.
        self.records: Optional[dict[int, Any]] = {} if keep_records else None
        self.moved = moved
        self.stacks: dict[int, list[_Open]] = {}
        self.levels: list[Event] = []
        self.level_is_event = False  # the last of levels is an initcall_level
        self.level_names: list[str] = []
        self.level: Optional[str] = None
        self.module_of_pid: dict[int, str] = {}
        self.units = Units(self._emit_unit)
        self.pending_unwind: dict[tuple[CallPath, str, int], tuple[Event, UnwindOf]] = {}
        self.orphan_unwinds: list[Event] = []
        self.findings: list[Finding] = []
        self.span_count = 0
        #: A kernel log's calls, every one whatever the sink keeps: the
        #: probes are placed among them (a log is small, a trace has none).
        self.log_calls: list[Span] = []
        #: (label, name as printed) of each module init labelled by its module.
        self.module_labels: dict[tuple[str, str], int] = {}
        self.test_events = 0
        self.test_pids: set[int] = set()
        self.parsers = {name: p.parse for name, p in field_parsers().items()}

    # -- helpers -----------------------------------------------------------

    def _order(self) -> Callable[[Span], int]:
        """Spans in the order their starts ran: by line, unless a tie across
        CPUs was put in order (ParsedInput.moved; rare, and then slower)."""
        moved = self.moved
        if not moved:
            return _START_LINE

        def order(s: Span) -> int:
            line = s.start.line
            return moved.get(line, line)
        return order

    def _emit_unit(self, u: UnitBuilder) -> None:
        for key in [k for k in self.pending_unwind if k[0] is u.path and k[1] == u.origin]:
            u.stray.append(self.pending_unwind.pop(key)[0])
        self.sink.unit(u.freeze(self._order()))

    def finding(self, message: str, *events: Event) -> None:
        self.findings.append(Finding(PAIRING_CHECK, message, tuple(e.quote() for e in events)))

    def bad_fields(self, ev: Event) -> None:
        self.finding(f"{ev.name.value}: fields not in the documented format, event skipped", ev)

    def unit_for(self, path: CallPath, origin: str, ev: Event, idx: int) -> UnitBuilder:
        u = self.units.current.get((path, origin))
        if u is None or u.closed:
            return self.units.new(path, origin)
        if (
            path is _MODULE
            and u.load is None
            and ev.name is EventName.INIT_START
            and (u.unloaded or (u.failed_idx is not None and idx <= u.failed_idx))
        ):
            # This load had no module_load event (module events were not
            # recorded then): an init after an unload, or a restart from the
            # first pairs after a failure, is a new load.
            return self.units.new(path, origin)
        return u

    def find_open(self, pid: int, kind: SpanKind, key: Optional[tuple[CallPath, str, int]],
                  func: Optional[str]) -> Optional[tuple[int, int]]:
        """(pid, position) of the innermost open call that matches."""
        stack = self.stacks.get(pid)
        i = self._search(stack, kind, key, func) if stack else None
        if i is not None:
            return pid, i
        # A finish on another pid is still a finish (a kthread handing off is
        # not expected, but mis-attributed comm/pid lines are).  Only tasks
        # with open calls are kept in self.stacks, so this stays small.
        for p, st in self.stacks.items():
            if p != pid:
                i = self._search(st, kind, key, func)
                if i is not None:
                    return p, i
        return None

    @staticmethod
    def _search(st: list[_Open], kind: SpanKind, key: Optional[tuple[CallPath, str, int]],
                func: Optional[str]) -> Optional[int]:
        for i in range(len(st) - 1, -1, -1):
            o = st[i]
            if o.kind is not kind:
                continue
            if key is not None and (o.path, o.origin, o.idx) != key:
                continue
            if func is not None and key is None and o.func != func:
                continue
            return i
        return None

    def push(self, pid: int, o: _Open) -> None:
        st = self.stacks.get(pid)
        if st is None:
            self.stacks[pid] = [o]
        else:
            st.append(o)
        if o.unit is not None:
            o.unit.open_calls += 1

    def pop_to(self, pid: int, i: int, finish: Event) -> _Open:
        """Pop the open call at ``i`` of task ``pid`` (and, as unfinished,
        anything opened above it)."""
        st = self.stacks[pid]
        while len(st) > i + 1:
            lost = st.pop()
            self.finding(
                f"{lost.kind.value} {lost.func} started but never finished before "
                f"the finish of an enclosing call",
                lost.start, finish,
            )
            self.close_unfinished(lost)
        o = st.pop()
        if not st:
            del self.stacks[pid]  # keeps the other-task search in find_open short
        return o

    def module_init_label(self, o: _Open) -> str:
        """The name a plain initcall of a module load is shown by: the
        module's, since its init was freed before trace-cmd saved kallsyms
        and is printed as a wrong symbol (``orc_header+0x2e08``) or an
        address."""
        label = f"{o.origin}:init"
        self.label(label, o.func)
        return label

    def label(self, label: str, shown: str) -> None:
        key = (label, shown)
        self.module_labels[key] = self.module_labels.get(key, 0) + 1

    def close_unfinished(self, o: _Open) -> None:
        func = self.module_init_label(o) if o.kind is _INITCALL and o.path is _MODULE else o.func
        span = Span(
            kind=o.kind, path=o.path, origin=o.origin, func=func, idx=o.idx,
            prio=o.prio, level=o.level, start=o.start, finish=None, ret=None,
            duration_ns=None, reason=o.reason, unwind=o.unwind, inner=o.inner,
            instance=o.instance, has_exit=o.has_exit, failed=o.failed,
        )
        self.add_span(span, o.unit)

    def add_span(self, span: Span, unit: Optional[UnitBuilder]) -> None:
        self.span_count += 1
        self.sink.span(span)
        if unit is not None:
            (unit.inits if span.kind is _INIT else unit.exits).append(span)
            self.units.call_ended(unit)

    # -- trace-cmd events --------------------------------------------------

    def on_level(self, ev: Event) -> None:
        f = self.parsers[EventName.INITCALL_LEVEL](ev.info)
        if self.records is not None:
            self.records[ev.line] = f
        if f is None:
            self.bad_fields(ev)
            return
        self.level = f.level
        self.levels.append(ev)
        self.level_names.append(f.level)
        self.level_is_event = True

    def on_band(self, ev: Event) -> None:
        """initcall_band (the series): a band starts, right after its
        level's initcall_level when it is the level's first band.  The
        bands are the marks the checks read (``levels_by_band``): a band
        event named as the level event just before it takes its place."""
        f = self.parsers[EventName.INITCALL_BAND](ev.info)
        if self.records is not None:
            self.records[ev.line] = f
        if f is None:
            self.bad_fields(ev)
            return
        if self.level_names and self.level_names[-1] == f.band and self.level_is_event:
            self.levels[-1] = ev
        else:
            self.levels.append(ev)
            self.level_names.append(f.band)
        self.level = f.band
        self.level_is_event = False

    def initcall_start_handler(self) -> Callable[[Event], None]:
        records = self.records
        parse = self.parsers[EventName.INITCALL_START]
        stacks = self.stacks
        module_of_pid = self.module_of_pid

        def on_initcall_start(ev: Event) -> None:
            f = parse(ev.info)
            if records is not None:
                records[ev.line] = f
            if f is None:
                self.bad_fields(ev)
                return
            if ev.pid in self.test_pids:   # inside a KUnit pair (path=test)
                self.test_events += 1
                return
            mod = module_of_pid.get(ev.pid)
            path = _MODULE if mod is not None else _BOOT
            o = _Open(_INITCALL, path, mod or "", f.func, None, None,
                      self.level if mod is None else None, ev)
            st = stacks.get(ev.pid)
            if st is None:
                stacks[ev.pid] = [o]
            else:
                st.append(o)

        return on_initcall_start

    def initcall_finish_handler(self) -> Callable[[Event], None]:
        records = self.records
        parse = self.parsers[EventName.INITCALL_FINISH]
        stacks = self.stacks
        sink_span = self.sink.span

        def on_initcall_finish(ev: Event) -> None:
            fields = parse(ev.info)
            if records is not None:
                records[ev.line] = fields
            if fields is None:
                self.bad_fields(ev)
                return
            if ev.pid in self.test_pids:
                self.test_events += 1
                return
            func, ret = fields.func, fields.ret
            pid = ev.pid
            st = stacks.get(pid)
            o = st[-1] if st else None
            if o is not None and o.kind is _INITCALL and o.func == func:
                # The common case: it closes the call on top of its task.
                st.pop()  # type: ignore[union-attr]
                if not st:
                    del stacks[pid]
                    st = None
            else:
                found = self.find_open(pid, _INITCALL, None, func)
                if found is None:
                    found = self.find_open(pid, _INITCALL, None, None)
                    if found is None:
                        self.finding(f"initcall_finish of {func} without its initcall_start", ev)
                        return
                    other = stacks[found[0]][found[1]]
                    self.finding(f"initcall_finish of {func} closes initcall_start of {other.func}",
                                 other.start, ev)
                o = self.pop_to(found[0], found[1], ev)
                st = stacks.get(found[0])
            name = o.func
            outer = st[-1] if st and st[-1].kind is _INIT and st[-1].inner is None else None
            if o.path is _MODULE:
                if outer is None:
                    name = self.module_init_label(o)
                elif bare_func(name) != outer.func:
                    name = outer.func  # the pair's init, printed as an address
                    self.label(name, o.func)
            # Span(kind, path, origin, func, idx, prio, level, start, finish, ret,
            #      duration_ns, reason, unwind, inner, instance, has_exit, failed)
            span: Span = _new_span(Span, (_INITCALL, o.path, o.origin, name, None, None, o.level,
                                          o.start, ev, ret, ev.ts_ns - o.start.ts_ns, None, None,
                                          None, 0, None, None))
            if outer is not None:
                outer.inner = span
            else:
                self.span_count += 1
                sink_span(span)

        return on_initcall_finish

    def on_module_load(self, ev: Event) -> None:
        m = MODULE_NAME_RE.match(ev.info)
        if m is None:
            self.bad_fields(ev)
            return
        name = m.group(1)
        self.module_of_pid[ev.pid] = name
        self.units.new(CallPath.MODULE, name, load=ev)

    def on_module_free(self, ev: Event) -> None:
        m = MODULE_NAME_RE.match(ev.info)
        if m is None:
            self.bad_fields(ev)
            return
        name = m.group(1)
        u = self.units.current.get((CallPath.MODULE, name))
        if u is not None and not u.closed:
            u.free = ev
            self.units.close(u)
        for pid in [p for p, n in self.module_of_pid.items() if n == name]:
            del self.module_of_pid[pid]

    def pair_start_handler(self, kind: SpanKind) -> Callable[[Event], None]:
        records = self.records
        parse = self.parsers[EventName.INIT_START if kind is _INIT else EventName.EXIT_START]
        pending = self.pending_unwind
        push = self.push

        def on_pair_start(ev: Event) -> None:
            f: Any = parse(ev.info)
            if records is not None:
                records[ev.line] = f
            if f is None:
                self.bad_fields(ev)
                return
            path, origin, idx = f.path, f.origin, f.idx
            if path is _TEST:
                self.test_events += 1
                if kind is _INIT:
                    self.test_pids.add(ev.pid)   # its initcall events too
                return
            unit = self.unit_for(path, origin, ev, idx)
            o = _Open(kind, path, origin, f.func, idx, f.prio,
                      self.level if path is not _MODULE else None, ev, unit.instance, unit)
            if kind is _INIT:
                o.has_exit = f.has_exit
            else:
                o.reason = f.reason
                unwind = pending.pop((path, origin, idx), None)
                if unwind is not None:
                    o.unwind, o.failed = unwind
                if f.reason is _UNLOAD:
                    unit.unloaded = True
            push(ev.pid, o)

        return on_pair_start

    def pair_finish_handler(self, kind: SpanKind) -> Callable[[Event], None]:
        records = self.records
        parse = self.parsers[EventName.INIT_FINISH if kind is _INIT else EventName.EXIT_FINISH]
        stacks = self.stacks
        add_span = self.add_span

        def on_pair_finish(ev: Event) -> None:
            f: Any = parse(ev.info)
            if records is not None:
                records[ev.line] = f
            if f is None:
                self.bad_fields(ev)
                return
            path, origin, idx, prio, func = f.path, f.origin, f.idx, f.prio, f.func
            if path is _TEST:
                self.test_events += 1
                self.test_pids.discard(ev.pid)
                return
            # The common case: the finish closes the call on top of its task.
            st = stacks.get(ev.pid)
            o = st[-1] if st else None
            if o is not None and o.kind is kind and o.idx == idx and o.origin == origin and o.path is path:
                st.pop()  # type: ignore[union-attr]
                if not st:
                    del stacks[ev.pid]
            else:
                found = self.find_open(ev.pid, kind, (path, origin, idx), None)
                if found is None:
                    self.finding(f"{ev.name.value} of {func} ({origin} #{idx}) without its start event", ev)
                    return
                o = self.pop_to(found[0], found[1], ev)
            if o.prio != prio or o.func != func:
                self.finding(
                    f"{ev.name.value} disagrees with its start: prio {o.prio}/{prio}, func {o.func}/{func}",
                    o.start, ev,
                )
            ret: Optional[int] = None
            if kind is _INIT:
                ret = f.ret
                if ret < 0 and o.unit is not None and o.unit.failed_idx is None:  # type: ignore[operator]
                    o.unit.failed_idx = idx
            elif o.reason is not None and f.reason is not o.reason:
                self.finding(f"initexit_exit_finish reason={f.reason.value} but its start said {o.reason.value}",
                             o.start, ev)
            dur = f.duration_ns
            if dur == 0 and ev.ts_ns > o.start.ts_ns:
                dur = ev.ts_ns - o.start.ts_ns  # duration_ns is 0 when the finish event was off
            # Span(kind, path, origin, func, idx, prio, level, start, finish, ret,
            #      duration_ns, reason, unwind, inner, instance, has_exit, failed)
            span: Span = _new_span(Span, (kind, path, origin, func, idx, prio, o.level, o.start, ev, ret,
                                          dur, o.reason, o.unwind, o.inner, o.instance, o.has_exit,
                                          o.failed))
            add_span(span, o.unit)

        return on_pair_finish

    def on_unwind(self, ev: Event) -> None:
        f: Any = self.parsers[EventName.UNWIND](ev.info)
        if self.records is not None:
            self.records[ev.line] = f
        if f is None:
            self.bad_fields(ev)
            return
        if f.path is _TEST:
            self.test_events += 1
            return
        key = (f.path, f.origin, f.idx)
        old = self.pending_unwind.get(key)
        if old is not None:
            u = self.units.current.get((f.path, f.origin))
            (u.stray if u is not None else self.orphan_unwinds).append(old[0])
        self.pending_unwind[key] = (ev, UnwindOf(f.failed_idx, f.failed_prio, f.failed_func, f.error))

    # -- dmesg -------------------------------------------------------------

    def on_dmesg_calling(self, ev: Event) -> None:
        m = DMESG_CALLING_INFO_RE.match(ev.info)
        if m is None:
            self.bad_fields(ev)
            return
        func, mod, _pid, tail = m.groups()
        prio = PRIO_RE.search(tail)
        origin = ORIGIN_RE.search(tail)
        path = CallPath.MODULE if mod else CallPath.BOOT
        # The level is the last `entering initcall level` line's (kernels
        # that print one), as the initcall_level event's in a trace.
        o = _Open(SpanKind.INITCALL, path, mod or (origin.group(1) if origin else ""),
                  func, None, int(prio.group(1)) if prio else None, None if mod else self.level, ev)
        self.stacks.setdefault(0, []).append(o)

    def on_dmesg_returned(self, ev: Event) -> None:
        m = DMESG_RETURNED_INFO_RE.match(ev.info)
        if m is None:
            self.bad_fields(ev)
            return
        func, _mod, ret, usecs, _tail = m.groups()
        found = self.find_open(0, SpanKind.INITCALL, None, func)
        if found is None:
            self.finding(f"`initcall {func} returned` without its `calling` line", ev)
            return
        o = self.stacks[found[0]].pop(found[1])
        if not self.stacks[found[0]]:
            del self.stacks[found[0]]
        span = Span(
            kind=SpanKind.INITCALL, path=o.path, origin=o.origin, func=o.func, idx=None,
            prio=o.prio, level=o.level, start=o.start, finish=ev, ret=int(ret),
            duration_ns=int(usecs) * 1000,
        )
        self.log_calls.append(span)
        self.add_span(span, None)

    # -- driver ------------------------------------------------------------

    def run(self, events: Iterable[Event], finish: Callable[[], ParsedInput]) -> Capture:
        """Consume ``events`` (as they are read, when it is a generator), then
        ``finish()`` gives the whole parsed input."""
        by_name: dict[EventName, Callable[[Event], None]] = {
            EventName.INITCALL_LEVEL: self.on_level,
            EventName.INITCALL_BAND: self.on_band,
            EventName.INITCALL_START: self.initcall_start_handler(),
            EventName.INITCALL_FINISH: self.initcall_finish_handler(),
            EventName.MODULE_LOAD: self.on_module_load,
            EventName.MODULE_FREE: self.on_module_free,
            EventName.INIT_START: self.pair_start_handler(_INIT),
            EventName.INIT_FINISH: self.pair_finish_handler(_INIT),
            EventName.EXIT_START: self.pair_start_handler(_EXIT),
            EventName.EXIT_FINISH: self.pair_finish_handler(_EXIT),
            EventName.UNWIND: self.on_unwind,
            EventName.DMESG_CALLING: self.on_dmesg_calling,
            EventName.DMESG_RETURNED: self.on_dmesg_returned,
        }
        # EventName hashes by identity (model.py), so this lookup is C code.
        get = by_name.get
        for ev in events:
            h = get(ev.name)
            if h is not None:
                h(ev)
        parsed = finish()
        ends = "the capture ends" if not parsed.gaps else "the capture ends (it has gaps)"
        for st in list(self.stacks.values()):
            for o in st:
                what = "calling" if parsed.fmt is InputFormat.DMESG else "start"
                self.finding(f"{o.kind.value} {o.func} has a {what} but {ends} before its finish "
                             f"(truncated capture or hung call)", o.start)
                self.close_unfinished(o)
        self.stacks.clear()
        self.units.close_all()
        for e in self.orphan_unwinds + [ev for ev, _ in self.pending_unwind.values()]:
            self.finding("initexit_unwind for a pair never seen", e)
        # By (start time, start position): two stable sorts, C-level keys
        # when nothing was moved.
        spans = sorted(self.sink.spans, key=self._order())
        spans.sort(key=_START_TS)
        units = sorted(self.sink.units, key=attrgetter("seq"))
        # Probes are placed among all the log's calls, not only those the
        # sink kept (a streaming check keeps the boot's).
        probes = build_probes(parsed, self.log_calls)
        return Capture(
            parsed=parsed,
            spans=tuple(spans),
            levels=tuple(self.levels),
            units=tuple(units),
            build_problems=tuple(self.findings),
            levels_by_band=levels_by_band(self.level_names),
            module_init_labels=tuple(self.module_labels),
            module_init_label_count=sum(self.module_labels.values()),
            test_events=self.test_events,
            level_names=tuple(self.level_names),
            span_count=self.span_count,
            unit_count=self.units.seq,
            records=self.records or {},
            probes=probes,
            deferrals=parsed.deferral_lines,
        )


def build_capture(parsed: ParsedInput, sink: Optional[Sink] = None, keep_records: bool = False) -> Capture:
    """Pair starts with finishes, link exits and unwinds, group into units;
    ``keep_records``: keep every event's parsed fields (Capture.records)."""
    return _Builder(sink or KeepAll(), parsed.moved, keep_records).run(parsed.events, lambda: parsed)


def build_capture_streaming(events: Iterable[Event], finish: Callable[[], ParsedInput],
                            moved: Mapping[int, int], sink: Optional[Sink] = None) -> Capture:
    """As :func:`build_capture`, consuming ``events`` while they are parsed;
    ``finish()`` returns the ParsedInput once ``events`` is exhausted and
    ``moved`` is its ``moved`` map, filled as the events are read."""
    return _Builder(sink or KeepAll(), moved).run(events, finish)

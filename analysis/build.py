"""Build spans and units from parsed events.

Starts and finishes are paired per task (pid), since the kernel runs each
call start to finish in one task while tasks on other CPUs interleave.  A
pair's init runs through do_one_initcall(), so its initcall_start/finish
nest inside initexit_init_start/finish; that inner span is attached to the
pair instead of being counted as a plain initcall.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from operator import attrgetter
from typing import Callable, Iterable, Optional, TypeVar

from analysis.model import (
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
    levels_by_band,
)

#: Name of the invariant that pairing problems are reported under.
PAIRING_CHECK = "start-finish-paired"

# Enum members as module constants: in Python 3.11 ``SpanKind.PAIR_INIT``
# is a descriptor call, and the pair handlers run once per event.
_INIT = SpanKind.PAIR_INIT
_EXIT = SpanKind.PAIR_EXIT
_INITCALL = SpanKind.INITCALL
_MODULE = CallPath.MODULE
_BOOT = CallPath.BOOT
_PATHS: dict[str, CallPath] = {p.value: p for p in CallPath}
_REASONS: dict[str, ExitReason] = {r.value: r for r in ExitReason}
_UNLOAD = ExitReason.UNLOAD
_INIT_START = EventName.INIT_START
_new_span = tuple.__new__  # Span(...) positionally, without the keyword wrapper
_START_LINE = attrgetter("start.line")
_START_TS = attrgetter("start.ts_ns")

PAIR_INIT_START_RE = re.compile(
    r"path=(\S*) origin=(\S*) idx=(\d+) prio=(-?\d+) func=(\S*)(?: has_exit=([01]))?\s*$"
)
"""initexit_init_start fields; ``has_exit=`` is absent in captures from
kernels before the field.

Example: ``path=module origin=ie_demo idx=1 prio=10 func=demo_b_init has_exit=1``
"""

_INIT_FINISH_HEAD = r"path=(\S*) origin=(\S*) idx=(\d+) prio=(-?\d+) func=(\S*) ret=(-?\d+)"
PAIR_INIT_FINISH_RE = re.compile(_INIT_FINISH_HEAD + r" duration_ns=(\d+)\s*$")
"""initexit_init_finish fields.

Example: ``path=boot origin=ie_boot idx=3 prio=-100 func=b_init ret=0 duration_ns=1200``
"""

PAIR_EXIT_START_RE = re.compile(
    r"path=(\S*) origin=(\S*) idx=(\d+) prio=(-?\d+) func=(\S*) reason=(\S*)\s*$"
)
"""initexit_exit_start fields.

Example: ``path=module origin=ie_demo idx=0 prio=0 func=demo_exit reason=unload``
"""

_EXIT_FINISH_HEAD = r"path=(\S*) origin=(\S*) idx=(\d+) prio=(-?\d+) func=(\S*) reason=(\S*)"
PAIR_EXIT_FINISH_RE = re.compile(_EXIT_FINISH_HEAD + r" duration_ns=(\d+)\s*$")
"""initexit_exit_finish fields.

Example: ``path=module origin=ie_demo idx=0 prio=0 func=demo_exit reason=unwind duration_ns=800``
"""

UNWIND_RE = re.compile(
    r"path=(\S*) origin=(\S*) idx=(\d+) prio=(-?\d+) func=(\S*) failed_idx=(\d+)"
    r" failed_prio=(-?\d+) failed_func=(\S*) error=(-?\d+)\s*$"
)
"""initexit_unwind fields.

Example: ``path=module origin=ie_fail idx=0 prio=0 func=a_exit failed_idx=2 failed_prio=20 failed_func=c_init error=-12``
"""

_DURATION = " duration_ns="

#: A finish event's fields without the trailing `` duration_ns=N``: the part
#: that repeats from one load of a module to the next.
_INIT_FINISH_HEAD_RE = re.compile(_INIT_FINISH_HEAD + "$")
_EXIT_FINISH_HEAD_RE = re.compile(_EXIT_FINISH_HEAD + "$")

#: Parsed pair fields: (path, origin, idx, prio, func, last) where last is
#: the exit reason (exit events), the return value (init finish), has_exit
#: (init start: 0, 1, or None when the event has no such field).
PairFields = tuple[CallPath, str, int, int, str, int | ExitReason | None]

#: Field strings that failed to parse (a sentinel cached like a result).
_BAD: PairFields = (CallPath.BOOT, "", -1, -1, "", None)

#: Memo size limit: a stress capture repeats a few thousand distinct field
#: strings; a capture with no repeats must not grow the memo without end.
_MEMO_MAX = 1 << 16


_T = TypeVar("_T")


class _Memo(dict[str, _T]):
    """Field strings -> their parse (always a non-empty tuple, so true), for
    the handlers that run for nearly every event: ``get(text) or
    add(text)`` with ``get, add = memo.get, memo.add`` looks a repeated
    string up in C and parses a new one once.  Cleared at _MEMO_MAX."""

    def __init__(self, parse: Callable[[str], _T]) -> None:
        super().__init__()
        self.parse = parse

    def add(self, text: str) -> _T:
        if len(self) >= _MEMO_MAX:
            self.clear()
        value = self[text] = self.parse(text)
        return value


def _parse_pair_fields(text: str, rx: re.Pattern[str], last: str) -> PairFields:
    """Parse the repeating part of a pair event's fields.  ``last`` says
    what the sixth group is: ``"reason"``, ``"ret"`` or ``"has_exit"``."""
    m = rx.match(text)
    if m is None:
        return _BAD
    g = m.groups()
    path = _PATHS.get(g[0])
    if path is None:
        return _BAD
    tail: int | ExitReason | None = None
    if last == "reason":
        tail = _REASONS.get(g[5])
        if tail is None:
            return _BAD
    elif last == "ret":
        tail = int(g[5])
    elif g[5] is not None:  # has_exit
        tail = int(g[5])
    return (path, g[1], int(g[2]), int(g[3]), g[4], tail)


INITCALL_START_RE = re.compile(r"func=(\S+)\s*$")
"""initcall_start fields.  Example: ``func=init_sigframe_size+0x0``"""

INITCALL_FINISH_RE = re.compile(r"func=(\S+) ret=(-?\d+)\s*$")
"""initcall_finish fields.  Example: ``func=init_sigframe_size+0x0 ret=0``"""


def _parse_initcall_fields(text: str, rx: re.Pattern[str]) -> tuple[str, int]:
    """(func, ret) of an initcall_start (ret 0) or initcall_finish event;
    ("", 0) when the fields do not parse."""
    m = rx.match(text)
    if m is None:
        return ("", 0)
    return (m.group(1), int(m.group(2)) if rx.groups > 1 else 0)

LEVEL_RE = re.compile(r"level=(\S+)\s*$")
"""initcall_level fields.  Example: ``level=core``"""

MODULE_NAME_RE = re.compile(r"(\S+)")
"""module_load / module_free: the name comes first.  Example: ``ie_demo OE``"""

DMESG_CALLING_INFO_RE = re.compile(r"func=(\S+)(?: \[(\S+)\])? @ (\d+)(.*)$")
"""A dmesg calling line as parse.py stores it.

Example: ``func=foo_init+0x0/0x30 [foo] @ 123 prio=0 origin=foo``
"""

DMESG_RETURNED_INFO_RE = re.compile(r"func=(\S+)(?: \[(\S+)\])? ret=(-?\d+) usecs=(\d+)(.*)$")
"""A dmesg returned line as parse.py stores it.

Example: ``func=foo_init+0x0/0x30 [foo] ret=0 usecs=12 prio=0 origin=foo``
"""

PRIO_RE = re.compile(r"\bprio=(-?\d+)")
"""``prio=`` anywhere in a patched initcall_debug line.  Example: ``prio=-3000``"""

ORIGIN_RE = re.compile(r"\borigin=(\S+)")
"""``origin=`` anywhere in a patched initcall_debug line.  Example: ``origin=signal``"""

_OFFSET_RE = re.compile(r"\+0x[0-9a-f]+(?:/0x[0-9a-f]+)?$")


def bare_func(func: str) -> str:
    """``foo+0x0/0x30`` -> ``foo`` (kallsyms offset and size stripped)."""
    return _OFFSET_RE.sub("", func)


@dataclass(slots=True)
class _Open:
    """A call whose start was seen and whose finish was not (yet)."""

    kind: SpanKind
    path: CallPath
    origin: str
    func: str
    idx: Optional[int]
    prio: Optional[int]
    level: Optional[str]
    start: Event
    reason: Optional[ExitReason] = None
    unwind: Optional[Event] = None
    inner: Optional[Span] = None
    instance: int = 0
    unit: Optional["_UnitBuilder"] = None
    has_exit: Optional[int] = None


@dataclass(slots=True)
class _UnitBuilder:
    path: CallPath
    origin: str
    instance: int
    load: Optional[Event] = None
    free: Optional[Event] = None
    inits: list[Span] = field(default_factory=list)
    exits: list[Span] = field(default_factory=list)
    failed_idx: Optional[int] = None
    unloaded: bool = False
    closed: bool = False

    def freeze(self, stray: tuple[Event, ...], order: Callable[[Span], int]) -> Unit:
        return Unit(
            path=self.path,
            origin=self.origin,
            instance=self.instance,
            inits=tuple(sorted(self.inits, key=order)),
            exits=tuple(sorted(self.exits, key=order)),
            load=self.load,
            free=self.free,
            stray_unwinds=stray,
        )


class _Builder:
    def __init__(self) -> None:
        self.stacks: dict[int, list[_Open]] = {}
        self.spans: list[Span] = []
        self.levels: list[Event] = []
        self.level_names: list[str] = []
        self.level: Optional[str] = None
        self.module_of_pid: dict[int, str] = {}
        self.units: dict[tuple[CallPath, str], _UnitBuilder] = {}
        self.all_units: list[_UnitBuilder] = []
        self.instances: dict[tuple[CallPath, str], int] = {}
        self.pending_unwind: dict[tuple[CallPath, str, int], Event] = {}
        self.stray_unwinds: dict[int, list[Event]] = {}
        self.findings: list[Finding] = []
        #: (label, name as printed) of each module init labelled by its module.
        self.module_labels: list[tuple[str, str]] = []

    # -- helpers -----------------------------------------------------------

    def finding(self, message: str, *events: Event) -> None:
        self.findings.append(Finding(PAIRING_CHECK, message, tuple(e.quote() for e in events)))

    def bad_fields(self, ev: Event) -> None:
        self.finding(f"{ev.name.value}: fields not in the documented format, event skipped", ev)

    def new_unit(self, path: CallPath, origin: str, load: Optional[Event] = None) -> _UnitBuilder:
        key = (path, origin)
        inst = self.instances.get(key, 0)
        self.instances[key] = inst + 1
        u = _UnitBuilder(path, origin, inst, load=load)
        self.units[key] = u
        self.all_units.append(u)
        return u

    def unit_for(self, path: CallPath, origin: str, ev: Event, idx: int) -> _UnitBuilder:
        u = self.units.get((path, origin))
        if u is None or u.closed:
            return self.new_unit(path, origin)
        if (
            path is _MODULE
            and u.load is None
            and ev.name is _INIT_START
            and (u.unloaded or (u.failed_idx is not None and idx <= u.failed_idx))
        ):
            # This load had no module_load event (module events were not
            # recorded then): an init after an unload, or a restart from the
            # first pairs after a failure, is a new load.
            return self.new_unit(path, origin)
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
        self.module_labels.append((label, o.func))
        return label

    def close_unfinished(self, o: _Open) -> None:
        func = self.module_init_label(o) if o.kind is _INITCALL and o.path is _MODULE else o.func
        span = Span(
            kind=o.kind, path=o.path, origin=o.origin, func=func, idx=o.idx,
            prio=o.prio, level=o.level, start=o.start, finish=None, ret=None,
            duration_ns=None, reason=o.reason, unwind=o.unwind, inner=o.inner,
            instance=o.instance, has_exit=o.has_exit,
        )
        self.add_span(span, o)

    def add_span(self, span: Span, o: _Open) -> None:
        self.spans.append(span)
        if o.unit is not None:
            if span.kind is _INIT:
                o.unit.inits.append(span)
            else:
                o.unit.exits.append(span)

    # -- trace-cmd events --------------------------------------------------

    def on_level(self, ev: Event) -> None:
        m = LEVEL_RE.match(ev.info)
        if m is None:
            self.bad_fields(ev)
            return
        self.level = m.group(1)
        self.levels.append(ev)
        self.level_names.append(self.level)

    def initcall_start_handler(self) -> Callable[[Event], None]:
        # func= repeats from one load of a module to the next: memoized.
        memo = _Memo(lambda text: _parse_initcall_fields(text, INITCALL_START_RE))
        get, add = memo.get, memo.add
        stacks = self.stacks
        module_of_pid = self.module_of_pid

        def on_initcall_start(ev: Event) -> None:
            func = (get(ev.info) or add(ev.info))[0]
            if not func:
                self.bad_fields(ev)
                return
            mod = module_of_pid.get(ev.pid)
            path = _MODULE if mod is not None else _BOOT
            o = _Open(_INITCALL, path, mod or "", func, None, None,
                      self.level if mod is None else None, ev)
            st = stacks.get(ev.pid)
            if st is None:
                stacks[ev.pid] = [o]
            else:
                st.append(o)

        return on_initcall_start

    def initcall_finish_handler(self) -> Callable[[Event], None]:
        memo = _Memo(lambda text: _parse_initcall_fields(text, INITCALL_FINISH_RE))
        get, add = memo.get, memo.add
        stacks = self.stacks
        spans = self.spans

        def on_initcall_finish(ev: Event) -> None:
            func, ret = get(ev.info) or add(ev.info)
            if not func:
                self.bad_fields(ev)
                return
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
                    self.module_labels.append((name, o.func))
            # Span(kind, path, origin, func, idx, prio, level, start, finish, ret,
            #      duration_ns, reason, unwind, inner, instance, has_exit)
            span: Span = _new_span(Span, (_INITCALL, o.path, o.origin, name, None, None, o.level,
                                          o.start, ev, ret, ev.ts_ns - o.start.ts_ns, None, None,
                                          None, 0, None))
            if outer is not None:
                outer.inner = span
            else:
                spans.append(span)

        return on_initcall_finish

    def on_module_load(self, ev: Event) -> None:
        m = MODULE_NAME_RE.match(ev.info)
        if m is None:
            self.bad_fields(ev)
            return
        name = m.group(1)
        self.module_of_pid[ev.pid] = name
        old = self.units.get((CallPath.MODULE, name))
        if old is not None:
            old.closed = True
        self.new_unit(CallPath.MODULE, name, load=ev)

    def on_module_free(self, ev: Event) -> None:
        m = MODULE_NAME_RE.match(ev.info)
        if m is None:
            self.bad_fields(ev)
            return
        name = m.group(1)
        u = self.units.get((CallPath.MODULE, name))
        if u is not None and not u.closed:
            u.free = ev
            u.closed = True
        for pid in [p for p, n in self.module_of_pid.items() if n == name]:
            del self.module_of_pid[pid]

    # The pair handlers are made per event kind (closures, no partial()):
    # they run for nearly every event of a large capture.  Each keeps a memo
    # of the field strings it parsed: a capture of repeated loads and
    # unloads (the large ones) repeats them, and a dict lookup costs a tenth
    # of the regex match it saves.

    def pair_start_handler(self, kind: SpanKind) -> Callable[[Event], None]:
        rx, last = (PAIR_INIT_START_RE, "has_exit") if kind is _INIT else (PAIR_EXIT_START_RE, "reason")
        memo = _Memo(lambda text: _parse_pair_fields(text, rx, last))
        get, add = memo.get, memo.add
        stacks = self.stacks

        def on_pair_start(ev: Event) -> None:
            text = ev.info.rstrip()
            f = get(text) or add(text)
            if f is _BAD:
                self.bad_fields(ev)
                return
            path, origin, idx, prio, func, tail = f
            unit = self.unit_for(path, origin, ev, idx)
            o = _Open(kind, path, origin, func, idx, prio,
                      self.level if path is not _MODULE else None, ev,
                      None, None, None, unit.instance, unit)
            if isinstance(tail, ExitReason):
                o.reason = tail
                o.unwind = self.pending_unwind.pop((path, origin, idx), None)
                if tail is _UNLOAD:
                    unit.unloaded = True
            else:
                o.has_exit = tail
            st = stacks.get(ev.pid)
            if st is None:
                stacks[ev.pid] = [o]
            else:
                st.append(o)

        return on_pair_start

    def pair_finish_handler(self, kind: SpanKind) -> Callable[[Event], None]:
        rx, last = (_INIT_FINISH_HEAD_RE, "ret") if kind is _INIT else (_EXIT_FINISH_HEAD_RE, "reason")
        memo = _Memo(lambda text: _parse_pair_fields(text, rx, last))
        get, add = memo.get, memo.add
        stacks = self.stacks
        spans = self.spans

        def on_pair_finish(ev: Event) -> None:
            text, sep, d = ev.info.rpartition(_DURATION)
            d = d.rstrip()
            f = (get(text) or add(text)) if sep and d.isascii() and d.isdigit() else _BAD
            if f is _BAD:
                self.bad_fields(ev)
                return
            dur = int(d)
            path, origin, idx, prio, func, tail = f
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
                assert isinstance(tail, int)
                ret = tail
                if ret < 0 and o.unit is not None and o.unit.failed_idx is None:
                    o.unit.failed_idx = idx
            elif o.reason is not None and tail is not o.reason:
                said = tail.value if isinstance(tail, ExitReason) else tail
                self.finding(f"initexit_exit_finish reason={said} but its start said {o.reason.value}",
                             o.start, ev)
            if dur == 0 and ev.ts_ns > o.start.ts_ns:
                dur = ev.ts_ns - o.start.ts_ns  # duration_ns is 0 when the finish event was off
            # Span(kind, path, origin, func, idx, prio, level, start, finish, ret,
            #      duration_ns, reason, unwind, inner, instance, has_exit)
            span: Span = _new_span(Span, (kind, path, origin, func, idx, prio, o.level, o.start, ev, ret,
                                          dur, o.reason, o.unwind, o.inner, o.instance, o.has_exit))
            spans.append(span)
            unit = o.unit
            if unit is not None:
                (unit.inits if kind is _INIT else unit.exits).append(span)

        return on_pair_finish

    def on_unwind(self, ev: Event) -> None:
        m = UNWIND_RE.match(ev.info)
        if m is None:
            self.bad_fields(ev)
            return
        g = m.groups()
        path = CallPath.BOOT if g[0] == "boot" else CallPath.MODULE
        key = (path, g[1], int(g[2]))
        old = self.pending_unwind.get(key)
        if old is not None:
            self.stray_unwinds.setdefault(id(self.units.get((path, g[1]))), []).append(old)
        self.pending_unwind[key] = ev

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
        o = _Open(SpanKind.INITCALL, path, mod or (origin.group(1) if origin else ""),
                  func, None, int(prio.group(1)) if prio else None, None, ev)
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
            prio=o.prio, level=None, start=o.start, finish=ev, ret=int(ret),
            duration_ns=int(usecs) * 1000,
        )
        self.spans.append(span)

    # -- driver ------------------------------------------------------------

    def run(self, events: Iterable[Event], finish: Callable[[], ParsedInput]) -> Capture:
        """Consume ``events`` (as they are read, when it is a generator), then
        ``finish()`` gives the whole parsed input."""
        by_name: dict[EventName, Callable[[Event], None]] = {
            EventName.INITCALL_LEVEL: self.on_level,
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
        for st in self.stacks.values():
            for o in st:
                what = "calling" if parsed.fmt is InputFormat.DMESG else "start"
                self.finding(f"{o.kind.value} {o.func} has a {what} but {ends} before its finish "
                             f"(truncated capture or hung call)", o.start)
                self.close_unfinished(o)
        stray_by_unit: dict[int, list[Event]] = dict(self.stray_unwinds)
        for (path, origin, _idx), ev in self.pending_unwind.items():
            stray_by_unit.setdefault(id(self.units.get((path, origin))), []).append(ev)
        # Spans in the order their starts ran: by line, unless a tie across
        # CPUs was put in order (ParsedInput.moved; rare, and then slower).
        moved = parsed.moved
        order: Callable[[Span], int] = _START_LINE
        if moved:
            def order(s: Span) -> int:
                line = s.start.line
                return moved.get(line, line)
        units = tuple(u.freeze(tuple(stray_by_unit.get(id(u), ())), order) for u in self.all_units)
        orphans = [e for k, evs in stray_by_unit.items()
                   if k not in {id(u) for u in self.all_units} for e in evs]
        for e in orphans:
            self.finding("initexit_unwind for a pair never seen", e)
        # By (start time, start position): two stable sorts, C-level keys
        # when nothing was moved.
        spans = sorted(self.spans, key=order)
        spans.sort(key=_START_TS)
        return Capture(
            parsed=parsed,
            spans=tuple(spans),
            levels=tuple(self.levels),
            units=units,
            build_problems=tuple(self.findings),
            levels_by_band=levels_by_band(self.level_names),
            module_init_labels=tuple(self.module_labels),
        )


def build_capture(parsed: ParsedInput) -> Capture:
    """Pair starts with finishes, link exits and unwinds, group into units."""
    return _Builder().run(parsed.events, lambda: parsed)


def build_capture_streaming(events: Iterable[Event], finish: Callable[[], ParsedInput]) -> Capture:
    """As :func:`build_capture`, consuming ``events`` while they are parsed;
    ``finish()`` returns the ParsedInput once ``events`` is exhausted."""
    return _Builder().run(events, finish)

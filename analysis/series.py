"""The reference model of the series: what the kernel must do with a table
of module_init_exit() pairs.

Given the pairs as declared (in link order, then declaration order), it
says in which order the inits run, which exits run (on an unwind, in
reverse, and on unload), which pairs are skipped or blacklisted (built-in),
which built-in objects the kernel refuses at boot and whether a module is
refused before any init runs.  Two users, one model: analysis/synth.py
writes the synthetic fixtures from it, and tests/boot/bootcheck.py predicts
the boot test objects' events from it (the boot test's oracle).

The rules (init/main.c do_initcalls and initexit_run_object,
kernel/initexit.c initexit_bind_objects, kernel/module/initexit.c,
Documentation/core-api/initexit.rst):

- a built-in object's pairs run at its *entry*, the ordinary initcall
  ``module_init_exit_entry(fn)`` (device level; ``late_init_exit_entry(fn)``
  and the other levels' variants) defines where its module_init(fn) stood:
  the entry runs where its level's classic initcalls put it (link order),
  as any initcall, and nothing else runs while it runs;
- at boot the built-in table (link order) is bound object by object: a run
  of records with one origin must hold exactly one entry record, else
  none of its pairs runs (and an entry of it returns -ENOEXEC); the entry
  record moves to the run's start and the pairs are sorted after it by
  priority, ties in link then declaration order (a stable sort); a
  record's position in that bound table is its ``idx`` in the events
  (entry records take a position too);
- the bind refuses an object (its entry returns -ENOEXEC, none of its pairs
  runs, the kernel says why) whose pairs are not one run, one of whose
  pairs' priority lies outside its entry's band [lo, hi), or in which an
  init without an exit runs before another init (nothing could undo it);
- the entry runs the object's inits in table order; a pair without an init
  counts as succeeded; a positive return counts as success; when one fails
  (``initcall_blacklist=`` naming a pair's init makes it fail with -EPERM:
  its init events are there, do_one_initcall() refuses the call, the kernel
  says so), the exits of the pairs that succeeded run at once, in reverse,
  each announced by an ``initexit_unwind`` naming the failure (the kernel
  says "unwinding", or "nothing to unwind" when none has an exit), the
  later pairs are skipped (the kernel says so) and the entry returns the
  error; other objects go on;
- ``initcall_blacklist=`` naming an entry stops the whole object: the
  entry is not called (no event), none of its pairs runs;
- a module in which a pair with an init and no exit runs before another
  init is refused with -ENOEXEC before any init runs, and so is one with
  an entry that has neither function; a module's load runs every pair in
  table order until one fails, which unwinds the succeeded ones as above
  and fails the load;
- on unload every exit runs, in reverse table order.
"""

from __future__ import annotations

import errno
from dataclasses import dataclass, replace
from typing import Iterable, Mapping, Optional, Sequence, Union

from analysis.model import BAND_NAMES, BANDS

#: The error a refused module load returns.
ENOEXEC = -errno.ENOEXEC

#: The largest priority (include/linux/initexit.h: INT_MAX ends late_sync's band).
INT_MAX = 2**31 - 1

#: What a blacklisted init "returns": do_one_initcall() refuses it.
EPERM = -errno.EPERM


@dataclass(frozen=True)
class Pair:
    """One module_init_exit() pair as declared, and what its init returns
    in the scenario (0 unless a test makes it fail)."""

    origin: str
    prio: int
    init: Optional[str]
    exit: Optional[str]
    ret: int = 0


@dataclass(frozen=True)
class Entry:
    """A built-in object's entry record (``module_init_exit_entry(func)``
    and the other levels' variants): ``func`` is an ordinary initcall of
    ``band`` (the entry macro's level: ``device``, ``late``, ...), its pairs
    are the records of ``origin`` linked next to it, and each of their
    priorities must lie in the band [band_range(band))."""

    origin: str
    func: str
    band: str = "device"


#: A record of the built-in table: a pair or an entry.
Record = Union[Pair, Entry]


def band_range(band: str) -> tuple[int, int]:
    """[lo, hi) of an entry of ``band``: its priority up to the next band's
    (INT_MAX after the last), as include/linux/initexit.h's entry macros."""
    i = BAND_NAMES.index(band)
    hi = BANDS[BAND_NAMES[i + 1]] if i + 1 < len(BAND_NAMES) else INT_MAX
    return BANDS[band], hi


@dataclass(frozen=True)
class Step:
    """One call the kernel makes for a pair.

    ``kind``: ``init``, ``exit`` (``reason`` ``unload`` or ``unwind``).  An
    unwind exit is announced by an ``initexit_unwind`` event naming
    ``failed`` (the table position of the failed pair).  ``at`` is the
    table position of the init whose run made this step.  ``blacklisted``:
    an init do_one_initcall() refused (its init events are there, with
    -EPERM, but no initcall_start/finish inside them)."""

    kind: str
    idx: int
    pair: Pair
    at: int
    reason: Optional[str] = None
    failed: Optional[int] = None
    blacklisted: bool = False


@dataclass(frozen=True)
class Notice:
    """What the kernel says in dmesg about a built-in object (``origin``):

    - ``blacklisted``: pair ``idx`` is named by initcall_blacklist= (its
      init then fails with -EPERM);
    - ``failed``: pair ``idx`` failed with ``value``; ``why`` ``unwinding``
      (some exit runs) or ``nothing`` ("nothing to unwind");
    - ``skipped``: pair ``idx`` after an earlier failure of its object;
    - ``refused``: the bind refused the object, none of its pairs runs;
      ``why`` says which rule: ``band`` (pair ``idx`` lies outside the
      entry's band, ``value`` its priority, ``other`` the entry), ``undoable``
      (pair ``idx``'s init has no exit and runs before ``other``),
      ``entries`` (the run holds ``value`` entries, not one) or ``split``
      (the object's pairs are not linked together, ``other`` its entry)."""

    kind: str
    origin: str
    idx: Optional[int] = None
    pair: Optional[Pair] = None
    other: Optional[str] = None
    why: Optional[str] = None
    value: Optional[int] = None


@dataclass(frozen=True)
class Outcome:
    """What the kernel does with a module's table: the sorted table, the
    calls in order, whether the load was refused before any init and what
    the load returns."""

    table: tuple[Pair, ...]
    steps: tuple[Step, ...]
    notices: tuple[Notice, ...] = ()
    refused: Optional[str] = None
    error: int = 0

    @property
    def ok(self) -> bool:
        return self.error == 0


@dataclass(frozen=True)
class Call:
    """One initcall do_initcalls() makes, in ``band``: a classic one, or a
    built-in object's entry (``origin`` set), with the pair calls nested in
    it (``steps``) and what it returns.  ``blacklisted``: initcall_blacklist=
    names it, do_one_initcall() does not call it (no event)."""

    func: str
    band: str
    origin: Optional[str] = None
    steps: tuple[Step, ...] = ()
    ret: int = 0
    blacklisted: bool = False


@dataclass(frozen=True)
class BootOutcome:
    """The boot: the bound table (every record, entry records included: a
    position is an event's ``idx``), the initcalls in order, and what the
    kernel says (bind refusals first, then per object as it runs)."""

    table: tuple[Record, ...]
    calls: tuple[Call, ...]
    notices: tuple[Notice, ...]
    objects: tuple[BoundObject, ...] = ()

    @property
    def steps(self) -> tuple[Step, ...]:
        """Every pair call, in order."""
        return tuple(s for c in self.calls for s in c.steps)

    def pair_at(self, idx: int) -> Pair:
        rec = self.table[idx]
        assert isinstance(rec, Pair), f"table position {idx} is an entry record"
        return rec

    @property
    def bound(self) -> int:
        """What "initexit: ordered N built-in pairs" says: the pairs of the
        runs with exactly one entry (refused objects' too)."""
        return sum(len(o.pairs) for o in self.objects)


@dataclass(frozen=True)
class BoundObject:
    """An object initexit_bind_objects() bound to its entry: its pairs,
    sorted, from table position ``first``; ``refused`` by a rule."""

    entry: Entry
    first: int  # table position of its first pair
    pairs: tuple[Pair, ...]
    refused: bool


def sort_table(pairs: Iterable[Pair]) -> tuple[Pair, ...]:
    """Ascending priority, ties in the order given (link, then declaration)."""
    return tuple(sorted(pairs, key=lambda p: p.prio))


def _unwind(table: Sequence[Record], done: list[int], failed: int) -> list[Step]:
    """The exits of ``done`` (succeeded, in run order) that have one, in reverse."""
    out = []
    for j in reversed(done):
        p = table[j]
        if isinstance(p, Pair) and p.exit is not None:
            out.append(Step("exit", j, p, failed, "unwind", failed))
    return out


def bind(records: Iterable[Record]) -> tuple[tuple[Record, ...], tuple[BoundObject, ...], tuple[Notice, ...]]:
    """initexit_bind_objects(): the bound table, the objects bound to an
    entry, and the refusals the kernel prints."""
    recs = list(records)
    table: list[Record] = []
    objects: list[BoundObject] = []
    notices: list[Notice] = []
    bound: set[Entry] = set()
    start = 0
    while start < len(recs):
        end = start + 1
        while end < len(recs) and recs[end].origin == recs[start].origin:
            end += 1
        run = recs[start:end]
        origin = run[0].origin
        entries = [r for r in run if isinstance(r, Entry)]
        pos = len(table)
        start = end
        if len(entries) != 1:
            table.extend(run)
            notices.append(Notice("refused", origin, why="entries", value=len(entries)))
            continue
        entry = entries[0]
        pairs = sort_table(r for r in run if isinstance(r, Pair))
        table.append(entry)
        table.extend(pairs)
        if entry in bound:
            notices.append(Notice("refused", origin, why="split", other=entry.func))
            continue
        bound.add(entry)
        lo, hi = band_range(entry.band)
        refused = False
        for i, p in enumerate(pairs):
            if not lo <= p.prio < hi:
                notices.append(Notice("refused", origin, pos + 1 + i, p, entry.func, "band", p.prio))
                refused = True
        if not refused:
            inits = [i for i, p in enumerate(pairs) if p.init is not None]
            bad = next((i for i in inits[:-1] if pairs[i].exit is None), None)
            if bad is not None:
                notices.append(Notice("refused", origin, pos + 1 + bad, pairs[bad],
                                      pairs[inits[-1]].init, "undoable"))
                refused = True
        objects.append(BoundObject(entry, pos + 1, pairs, refused))
    return tuple(table), tuple(objects), tuple(notices)


def _run_object(table: Sequence[Record], obj: BoundObject, blacklisted: frozenset[str],
                notices: list[Notice]) -> tuple[tuple[Step, ...], int]:
    """initexit_run_object(): the pair calls of one entry and what it returns."""
    if obj.refused:
        return (), ENOEXEC
    steps: list[Step] = []
    done: list[int] = []
    for k, p in enumerate(obj.pairs):
        i = obj.first + k
        if p.init is None:
            done.append(i)
            continue
        refused = p.init in blacklisted
        if refused:
            notices.append(Notice("blacklisted", p.origin, i, p))
            p = replace(p, ret=EPERM)
        steps.append(Step("init", i, p, i, blacklisted=refused))
        if p.ret >= 0:
            done.append(i)
            continue
        undo = _unwind(table, done, i)
        notices.append(Notice("failed", p.origin, i, p, why="unwinding" if undo else "nothing", value=p.ret))
        steps += undo
        for j, q in enumerate(obj.pairs[k + 1:], i + 1):
            notices.append(Notice("skipped", q.origin, j, q))
        return tuple(steps), p.ret
    return tuple(steps), 0


def boot(records: Iterable[Record], blacklisted: frozenset[str] = frozenset(),
         classic: Optional[Mapping[str, Sequence[str]]] = None) -> BootOutcome:
    """The built-in walk, as do_initcalls() makes it: bind the table
    (``records`` in link order), then per band (ascending priority) its
    initcalls.  ``classic``: band name -> the band's initcalls in order, in
    which an entry's name stands where it runs; an entry not named there
    runs after them, in link order (with ``classic`` None a band holds only
    its entries)."""
    table, objects, bind_notices = bind(records)
    notices = list(bind_notices)
    # Every entry record, bound or not: an unbound one returns -ENOEXEC.
    by_func: dict[tuple[str, str], Optional[BoundObject]] = {}
    for r in table:
        if isinstance(r, Entry):
            by_func.setdefault((r.band, r.func), None)
    for o in objects:
        if by_func.get((o.entry.band, o.entry.func)) is None:
            by_func[(o.entry.band, o.entry.func)] = o
    calls: list[Call] = []
    for band in BAND_NAMES:
        listed = list((classic or {}).get(band, ()))
        names = listed + [f for (b, f) in by_func if b == band and f not in listed]
        for func in names:
            if (band, func) not in by_func:
                calls.append(Call(func, band, blacklisted=func in blacklisted))
                continue
            obj = by_func[(band, func)]
            origin = obj.entry.origin if obj is not None else next(
                r.origin for r in table if isinstance(r, Entry) and r.func == func and r.band == band)
            if func in blacklisted:
                calls.append(Call(func, band, origin, ret=EPERM, blacklisted=True))
                continue
            if obj is None:
                calls.append(Call(func, band, origin, ret=ENOEXEC))
                continue
            steps, ret = _run_object(table, obj, blacklisted, notices)
            calls.append(Call(func, band, origin, steps, ret))
    return BootOutcome(table, tuple(calls), tuple(notices), objects)


def undoable(table: tuple[Pair, ...]) -> Optional[str]:
    """Why the module loader refuses ``table`` before any init runs, or None."""
    for i, p in enumerate(table):
        if p.init is None and p.exit is None:
            return f"entry {i} has neither init nor exit"
    inits = [i for i, p in enumerate(table) if p.init is not None]
    if not inits:
        return None
    last = inits[-1]
    for i in inits:
        if i < last and table[i].exit is None:
            return (f"{table[i].init}() has no exit, but {table[last].init}() runs after it "
                    f"and may fail")
    return None


def module_load(pairs: Iterable[Pair]) -> Outcome:
    """insmod: refused, or every pair in table order until one fails, which
    unwinds the succeeded ones and fails the load with its error."""
    table = sort_table(pairs)
    why = undoable(table)
    if why is not None:
        return Outcome(table, (), refused=why, error=ENOEXEC)
    steps: list[Step] = []
    done: list[int] = []
    for i, p in enumerate(table):
        if p.init is None:
            done.append(i)
            continue
        steps.append(Step("init", i, p, i))
        if p.ret >= 0:
            done.append(i)
            continue
        steps += _unwind(table, done, i)
        return Outcome(table, tuple(steps), error=p.ret)
    return Outcome(table, tuple(steps))


def module_unload(pairs: Iterable[Pair]) -> Outcome:
    """rmmod: every exit, in reverse table order."""
    table = sort_table(pairs)
    steps = [Step("exit", i, table[i], i, "unload")
             for i in range(len(table) - 1, -1, -1) if table[i].exit is not None]
    return Outcome(table, tuple(steps))


def permanent(pairs: Iterable[Pair]) -> bool:
    """Whether a loaded module is ``[permanent]`` (rmmod refuses it): a pair
    with an init has no exit."""
    return any(p.init is not None and p.exit is None for p in pairs)

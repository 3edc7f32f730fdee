"""The reference model of the series: what the kernel must do with a table
of module_init_exit() pairs.

Given the pairs as declared (in link order, then declaration order), it
says in which order the inits run, which exits run (on an unwind, in
reverse, and on unload), which pairs are skipped or blacklisted (built-in)
and whether a module is refused before any init runs.  Two users, one
model: analysis/synth.py writes the synthetic fixtures from it, and
tests/boot/bootcheck.py predicts the boot test objects' events from it
(the boot test's oracle).

The rules (init/main.c do_initcalls, kernel/initexit.c,
kernel/module/initexit.c, Documentation/core-api/initexit.rst):

- the table is sorted by priority, ties in link then declaration order (a
  stable sort); a pair's position in it is its ``idx`` in the events;
- each init runs in table order; a pair without an init counts as
  succeeded; a positive return counts as success;
- when an init fails, the exits of the pairs that succeeded before it in
  the same unit (a module, or a built-in object: one ``origin``) run in
  reverse, each announced by an ``initexit_unwind`` naming the failure;
  a module's load then stops (and returns the error); a built-in object's
  later pairs are skipped (and the kernel says so), other objects go on;
- at boot the unwind happens only when it is sound: no init that
  succeeded before the failure lacks an exit (a module like that is
  refused at load), and no other call (a classic initcall, another
  object's pair init) ran between the object's first succeeded pair and
  the failed init.  Otherwise no exit runs, the kernel names the exit-less
  init or the first such call (``not-unwound``) and the later pairs are
  skipped.  The classic initcalls of a band run after the pairs below its
  priority and before the pairs at it; a pair without an init takes no
  call of its own;
- ``initcall_blacklist=`` names a built-in init that is not run (the
  kernel says so): it fails with -EPERM as if it had returned it (its
  init events are there, ``do_one_initcall()`` refuses the call), so its
  object unwinds and skips as after any failure;
- a module in which a pair with an init and no exit runs before another
  init is refused with -ENOEXEC before any init runs, and so is one with
  an entry that has neither function;
- on unload every exit runs, in reverse table order.
"""

from __future__ import annotations

import errno
from dataclasses import dataclass, replace
from typing import Iterable, Mapping, Optional, Sequence

from analysis.model import BANDS

#: The error a refused module load returns.
ENOEXEC = -errno.ENOEXEC

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
class Step:
    """One call the kernel makes.

    ``kind``: ``init``, ``exit`` (``reason`` ``unload`` or ``unwind``).  An
    unwind exit is announced by an ``initexit_unwind`` event naming
    ``failed`` (the table position of the failed pair).  ``at`` is the
    table position of the init whose run made this step (a built-in
    boot interleaves the steps with the initcall bands by it)."""

    kind: str
    idx: int
    pair: Pair
    at: int
    reason: Optional[str] = None
    failed: Optional[int] = None


@dataclass(frozen=True)
class Notice:
    """What the kernel says in dmesg about a built-in pair: ``skipped``
    (after an earlier failure of its object), ``blacklisted`` (which then
    fails: its init step has ``ret`` -EPERM), or ``not-unwound`` (it failed
    and ``other``, the first other call since its object's first init, ran
    in between, ``why`` ``ran``; or ``other``, an init that succeeded
    before it, has no exit, ``why`` ``no-exit``: no exit runs)."""

    kind: str
    idx: int
    pair: Pair
    other: Optional[str] = None
    why: Optional[str] = None


@dataclass(frozen=True)
class Outcome:
    """What the kernel does with a table: the sorted table, the calls in
    order, the pairs it says it did not run, and (modules) whether the
    load was refused before any init and what the load returns."""

    table: tuple[Pair, ...]
    steps: tuple[Step, ...]
    notices: tuple[Notice, ...] = ()
    refused: Optional[str] = None
    error: int = 0

    def steps_at(self, at: int) -> list[Step]:
        return [s for s in self.steps if s.at == at]

    @property
    def ok(self) -> bool:
        return self.error == 0


def sort_table(pairs: Iterable[Pair]) -> tuple[Pair, ...]:
    """Ascending priority, ties in the order given (link, then declaration)."""
    return tuple(sorted(pairs, key=lambda p: p.prio))


def _unwind(table: tuple[Pair, ...], done: list[int], failed: int) -> list[Step]:
    """The exits of ``done`` (succeeded, in run order) that have one, in reverse."""
    return [Step("exit", j, table[j], failed, "unwind", failed)
            for j in reversed(done) if table[j].exit is not None]


def boot(pairs: Iterable[Pair], blacklisted: frozenset[str] = frozenset(),
         classic: Optional[Mapping[str, Sequence[str]]] = None) -> Outcome:
    """The built-in walk, as do_initcalls() makes it: per band (ascending
    priority), the pairs below the band's priority, the band's classic
    initcalls (``classic``: band name -> functions; none if None), the pairs
    at its priority; each object (origin) unwinding or skipping on its own."""
    table = sort_table(pairs)
    steps: list[Step] = []
    notices: list[Notice] = []
    failed: set[str] = set()
    calls = 0
    call_of: dict[int, int] = {}  # table position -> number of its init call
    classic_at: dict[int, str] = {}  # call number -> classic initcall
    nxt = 0

    def foreign(f: int) -> Optional[str]:
        """The first other call since ``f``'s object's first pair, or None.
        A pair without an init holds the number of the call after it."""
        nxt_call = 0
        for j in [j for j in range(f) if j in call_of and table[j].origin == table[f].origin] + [f]:
            if nxt_call and call_of[j] != nxt_call:
                return next((str(table[k].init) for k, c in call_of.items()
                             if c == nxt_call and table[k].init is not None), None) or classic_at[nxt_call]
            nxt_call = call_of[j] + (1 if table[j].init is not None else 0)
        return None

    def run_below(limit: float) -> None:
        nonlocal nxt, calls
        while nxt < len(table) and table[nxt].prio < limit:
            i, p = nxt, table[nxt]
            nxt += 1
            if p.origin in failed:
                notices.append(Notice("skipped", i, p))
                continue
            if p.init is None:
                call_of[i] = calls + 1
                continue
            if p.init in blacklisted:
                notices.append(Notice("blacklisted", i, p))
                p = replace(p, ret=EPERM)
            calls += 1
            call_of[i] = calls
            steps.append(Step("init", i, p, i))
            if p.ret >= 0:
                continue
            failed.add(p.origin)
            done = [j for j in range(i) if table[j].origin == p.origin and j in call_of]
            if not any(table[j].exit is not None for j in done):
                continue  # nothing to unwind
            kept = next((table[j].init for j in done if table[j].init is not None and table[j].exit is None), None)
            if kept is not None:
                notices.append(Notice("not-unwound", i, p, kept, "no-exit"))
                continue
            other = foreign(i)
            if other is not None:
                notices.append(Notice("not-unwound", i, p, other, "ran"))
                continue
            steps.extend(_unwind(table, done, i))

    for band, prio in sorted(BANDS.items(), key=lambda kv: kv[1]):
        run_below(prio)
        for func in (classic or {}).get(band, ()):
            calls += 1
            classic_at[calls] = func
        run_below(prio + 1)
    run_below(float("inf"))
    return Outcome(table, tuple(steps), tuple(notices))


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

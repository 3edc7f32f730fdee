"""Ties across CPUs: events of one timestamp that a task printed from two
CPUs, put back in the order the task ran them.

``trace-cmd report`` merges the per-CPU buffers by timestamp, and events
with equal timestamps come out CPU by CPU.  Within one CPU the order is
exact.  But the trace clock can stand still: under ``trace_clock=global``
a CPU whose clock runs behind gets the last time any CPU read, so a task
that moved from CPU 1 to CPU 0 prints its CPU 0 events first, although it
ran them after its CPU 1 events (a finish then seems to close the wrong
start).  A task runs on one CPU at a time and each CPU's events are in
order, so the task's events are its per-CPU sequences merged: at each
step the next event is the head of one CPU's sequence.  The merge takes
the head that closes the call the task has open (a finish whose func=
is the innermost start not yet finished), else a start, else (nothing
fits) a head on the CPU the task is on; at the first step that CPU is the
one of its last event before the run.  So a task that moved CPU 1 -> 0 ->
1 within one timestamp is read as it ran.  Only that task's events move,
within the places they held; pid 0 is one idle task per CPU and never
moves.
"""

from __future__ import annotations

import re
from typing import Callable, Optional

from analysis.model import Event, EventName

#: The events that open a call of a task and those that close it.
CALL_OPENS = frozenset({EventName.INITCALL_START, EventName.INIT_START, EventName.EXIT_START})
CALL_CLOSES = frozenset({EventName.INITCALL_FINISH, EventName.INIT_FINISH, EventName.EXIT_FINISH})
CALL_EDGES = CALL_OPENS | CALL_CLOSES

FUNC_RE = re.compile(r"(?:^| )func=(\S+)")
"""The called function of an event's fields, e.g. ``func=foo_init+0x0 ret=0``."""


def func_of(e: Event) -> str:
    m = FUNC_RE.search(e.info)
    return m.group(1) if m else ""


def track_call(open_of: dict[int, list[str]], e: Event) -> None:
    """Keep ``open_of[pid]``, the calls the task has open, up to date with
    one more of its events (in the order it ran)."""
    stack = open_of.setdefault(e.pid, [])
    if e.name in CALL_OPENS:
        stack.append(func_of(e))
    elif stack and stack[-1] == func_of(e):
        stack.pop()


def _merge(mine: list[Event], first_cpu: Optional[int], open_calls: list[str]) -> list[Event]:
    """One task's events of a tie, per-CPU order kept, merged as it ran."""
    queues: dict[int, list[Event]] = {}
    for e in mine:
        queues.setdefault(e.cpu, []).append(e)
    stack = list(open_calls)
    cpu = first_cpu
    out: list[Event] = []
    while queues:
        heads = [(c, q[0]) for c, q in queues.items()]

        def rank(item: tuple[int, Event]) -> tuple[int, int]:
            c, e = item
            if e.name in CALL_CLOSES:
                fit = 0 if stack and stack[-1] == func_of(e) else 2
            else:
                fit = 1
            return (fit, 0 if c == cpu else 1)

        c, e = min(heads, key=rank)
        out.append(e)
        queues[c].pop(0)
        if not queues[c]:
            del queues[c]
        cpu = c
        if e.name in CALL_OPENS:
            stack.append(func_of(e))
        elif e.name in CALL_CLOSES and stack and stack[-1] == func_of(e):
            stack.pop()
    return out


def untie_run(run: list[Event], cpu_before: Callable[[int], Optional[int]],
              moved: dict[int, int],
              open_before: Callable[[int], list[str]] = lambda pid: []) -> Optional[str]:
    """Put ``run`` (events of one timestamp) in the order they ran; return a
    note saying what moved, or None.  ``cpu_before(pid)`` is the CPU of the
    task's last event before the run (None when unknown), ``open_before(pid)``
    the calls it had open then, innermost last.  ``run`` is changed in
    place, and ``moved`` gets each moved event's line -> the line of the
    place it took (ParsedInput.moved)."""
    cpus_of: dict[int, set[int]] = {}
    for e in run:
        cpus_of.setdefault(e.pid, set()).add(e.cpu)
    notes: list[str] = []
    for pid, cpus in cpus_of.items():
        if len(cpus) < 2 or pid == 0:
            continue
        slots = [i for i, e in enumerate(run) if e.pid == pid]
        first_cpu = cpu_before(pid)
        mine = _merge([run[i] for i in slots], first_cpu, open_before(pid))
        if [e.line for e in mine] == [run[i].line for i in slots]:
            continue  # already in the order it ran
        for i, e in zip(slots, mine):
            if e.line != run[i].line:
                moved[e.line] = run[i].line
            run[i] = e
        order = " then ".join(str(c) for c in dict.fromkeys(e.cpu for e in mine))
        lines = sorted(e.line for e in mine)
        sec, ns = divmod(mine[0].ts_ns, 1_000_000_000)
        notes.append(
            f"lines {lines[0]}-{lines[-1]}: {len(mine)} events of {mine[0].comm}-{pid} share the "
            f"timestamp {sec}.{ns:09d} on two or more CPUs; read as CPU {order}, each finish closing the "
            f"call the task had open (it ran on CPU {first_cpu} before; a stalled trace clock: "
            f"trace-cmd prints such ties CPU by CPU)"
        )
    return "; ".join(notes) if notes else None

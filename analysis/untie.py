"""Ties across CPUs: events of one timestamp that a task printed from two
CPUs, put back in the order the task ran them.

``trace-cmd report`` merges the per-CPU buffers by timestamp, and events
with equal timestamps come out CPU by CPU.  Within one CPU the order is
exact.  But the trace clock can stand still: under ``trace_clock=global``
a CPU whose clock runs behind gets the last time any CPU read, so a task
that moved from CPU 1 to CPU 0 prints its CPU 0 events first, although it
ran them after its CPU 1 events (a finish then seems to close the wrong
start).  A task runs on one CPU at a time, so its events on the CPU it was
on before the run come first; its other events keep their order after
them.  Only that task's events move, within the places they held; pid 0
is one idle task per CPU and never moves.
"""

from __future__ import annotations

from typing import Callable, Optional

from analysis.model import Event


def untie_run(run: list[Event], cpu_before: Callable[[int], Optional[int]],
              moved: dict[int, int]) -> Optional[str]:
    """Put ``run`` (events of one timestamp) in the order they ran; return a
    note saying what moved, or None.  ``cpu_before(pid)`` is the CPU of the
    task's last event before the run (None when unknown).  ``run`` is
    changed in place, and ``moved`` gets each moved event's line -> the
    line of the place it took (ParsedInput.moved)."""
    cpus_of: dict[int, set[int]] = {}
    for e in run:
        cpus_of.setdefault(e.pid, set()).add(e.cpu)
    notes: list[str] = []
    for pid, cpus in cpus_of.items():
        if len(cpus) < 2 or pid == 0:
            continue
        slots = [i for i, e in enumerate(run) if e.pid == pid]
        first_cpu = cpu_before(pid)
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

"""Device probes: initcall_debug's probe lines as spans, and deferrals.

A kernel booted with ``initcall_debug`` prints, as each driver probe
returns, ``probe of DEV returned N after T usecs`` (drivers/base/dd.c,
really_probe_debug()).  The line names the device, the result and the
duration, not the task nor the CPU, so where a probe ran is read from
where its line is:

- **in a call**: the line is between a call's ``calling`` and
  ``initcall ... returned`` lines and (with the kernel's own stamps) the
  probe started after the call did: a synchronous probe, nested in the
  call (the innermost such call);
- **deferred**: a retry of a device whose probe deferred before (returned
  517, -EPROBE_DEFER negated, or -517), or any probe while
  deferred_probe_initcall waits for the deferred probe work: that work
  runs in a kworker, so these get a lane of their own;
- **async**: outside every call: asynchronous probing (a driver's
  PROBE_PREFER_ASYNCHRONOUS, ``driver_async_probe=``), a bus's own thread
  (serio's), a probe after the boot that no call started.

With CONFIG_PRINTK_CALLER each line names the task that printed it
(``[    T45]`` after the stamp; ``[    C0]`` from interrupt context) and
each ``calling ... @ PID`` line the task that runs the call: a probe line
printed by another task than a call's is not in that call (the innermost
enclosing call of its own task holds it, if any), so an asynchronous
probe that printed during a call (a kworker's, serio's) is on the async
lane, ``during`` that call, and the lanes name the tasks
(:func:`lane_label`; with the task's name when a ``PID: N Comm: NAME``
line of the log gives it).  A line with no caller or a CPU's is placed
as below.

What a log without callers cannot tell: an asynchronous probe that ran
entirely inside some other call's time and printed before that call's
end is drawn in that call (:func:`placement_note` says so).

A 6.12 trace records no probe: there is no probe trace event (drivers/
base's only one, devres_log, logs each managed resource by device name:
that a probe of the device allocated, not its start, end or result), and
the initcall, module and initexit events do not see probes.  A trace's
capture therefore has no probes; a kernel log's has them.  (A kernel with
CONFIG_KPROBE_EVENTS could record really_probe() with ``kprobe_event=``;
the test kernel has no kprobes, and these events are not read.)

The deferral's cause is printed only in ``deferred probe pending: REASON``
(the deferred probe timeout's warning, for each device still deferred)
and, with dynamic debug on for drivers/base/core.c, dev_err_probe()'s
``error -EPROBE_DEFER: REASON``; :func:`deferred_devices` lists them per
device.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Optional, Sequence

from analysis.model import (
    Capture,
    DeferralLine,
    ParsedInput,
    Probe,
    ProbeMode,
    Span,
    bare_func,
)

#: How much earlier than its call a probe may seem to start and still be
#: in it: the stamps are microseconds, and the call's stamp is printk's
#: clock while the durations are ktime_get()'s.
TOLERANCE_NS = 20_000

#: The late initcall that runs the deferred probes of the boot (and waits
#: for them: they run in the deferred probe work's kworker).
DEFERRED_PROBE_INITCALL = "deferred_probe_initcall"


def build_probes(parsed: ParsedInput, spans: Sequence[Span]) -> tuple[Probe, ...]:
    """Each probe line of ``parsed`` as a :class:`Probe`, placed (see the
    module docstring) among the finished calls of ``spans``."""
    if not parsed.probe_lines:
        return ()
    calls = sorted((s for s in spans if s.finish is not None),
                   key=lambda s: s.start.line)
    seen: dict[str, int] = {}
    deferred: set[str] = set()
    out: list[Probe] = []
    names = _task_names(parsed.task_names)
    for pl in parsed.probe_lines:
        dur = pl.usecs * 1000
        start = pl.end_ns - dur
        task = pl.task
        holder: Optional[Span] = None
        # The innermost call another task ran while this one printed.
        during: Optional[Span] = None
        # Innermost first: the call that began last before the line.
        for s in reversed(calls):
            if s.start.line > pl.line:
                continue
            fin = s.finish
            assert fin is not None
            if fin.line < pl.line:
                continue
            if task is not None and s.start.pid != task:
                during = during or s
                continue  # CONFIG_PRINTK_CALLER: printed by another task
            if pl.stamped and start < s.start_ns - TOLERANCE_NS:
                continue  # began before the call: another task's
            holder = s
            break
        attempt = seen.get(pl.device, 0) + 1
        seen[pl.device] = attempt
        where = holder or during
        func = bare_func(where.func) if where is not None else ""
        if pl.device in deferred or func == DEFERRED_PROBE_INITCALL:
            mode = ProbeMode.DEFERRED
        elif holder is not None:
            mode = ProbeMode.IN_CALL
        else:
            mode = ProbeMode.ASYNC
        p = Probe(pl.line, pl.device, pl.ret, dur, start, pl.end_ns, mode,
                  where.start.line if where is not None else None, func, attempt, pl.text,
                  task, _name_at(names, task, pl.line))
        if p.deferred:
            deferred.add(pl.device)
        out.append(p)
    return tuple(out)


def _task_names(lines: Sequence[tuple[int, int, str]]) -> dict[int, list[tuple[int, str]]]:
    """pid -> (line, name) in line order."""
    out: dict[int, list[tuple[int, str]]] = {}
    for line, pid, name in lines:
        out.setdefault(pid, []).append((line, name))
    return out


def _name_at(names: dict[int, list[tuple[int, str]]], task: Optional[int], line: int) -> str:
    """The name the log gives ``task`` nearest before ``line`` (a pid can
    be reused), else its first after; "" when none."""
    seen = names.get(task) if task is not None else None
    if not seen:
        return ""
    before = [n for ln, n in seen if ln < line]
    return before[-1] if before else seen[0][1]


#: The lanes of the probes no call holds (page, SVG, Chrome JSON).
PROBE_LANE_LABELS = {
    ProbeMode.DEFERRED: "deferred probes (kworker)",
    ProbeMode.ASYNC: "probes outside any call (async)",
}

#: How many tasks a lane's label names.
LANE_TASKS = 3


def lane_label(mode: ProbeMode, probes: Iterable[Probe]) -> str:
    """The label of ``mode``'s lane holding ``probes``: with the tasks that
    printed them when the log names them (CONFIG_PRINTK_CALLER), e.g.
    ``probes outside any call (async), printed by task 45 (kworker/0:2)``."""
    base = PROBE_LANE_LABELS.get(mode, PROBE_LANE_LABELS[ProbeMode.ASYNC])
    tasks = list(dict.fromkeys(p.task_text for p in probes if p.task is not None))
    if not tasks:
        return base
    more = len(tasks) - LANE_TASKS
    return (f"{base}, printed by {', '.join(tasks[:LANE_TASKS])}"
            + (f" and {more} more" if more > 0 else ""))


def placement_note(cap: Capture) -> str:
    """How the probes were placed: by the tasks the log names, or by the
    lines' places and times alone ("" without probes)."""
    ps = cap.probes
    if not ps:
        return ""
    if any(p.task is not None for p in ps):
        n = sum(1 for p in ps if p.mode is ProbeMode.ASYNC and p.call is not None)
        return ("the probe lines name the task that printed them (CONFIG_PRINTK_CALLER): "
                "a probe another task printed during a call is not in that call but on "
                f"the async lane ({n} here); lines without a task are placed by their time")
    return ("the log names no task (no CONFIG_PRINTK_CALLER): each probe is placed by where "
            "its line is and its time, so an asynchronous probe that ran and printed during "
            "a call is drawn in that call")


@dataclass(frozen=True, slots=True)
class DeviceDeferral:
    """One device whose probe deferred: its probes in order, the causes
    the kernel printed, and whether it was bound in the end."""

    device: str
    probes: tuple[Probe, ...]
    causes: tuple[DeferralLine, ...]

    @property
    def bound(self) -> Optional[Probe]:
        """The probe that bound it, None if none did."""
        return next((p for p in self.probes if p.ret == 0), None)

    @property
    def reasons(self) -> tuple[str, ...]:
        """The distinct reasons printed, in order."""
        out: list[str] = []
        for c in self.causes:
            text = c.reason or c.kind
            if text not in out:
                out.append(text)
        return tuple(out)

    def summary(self) -> str:
        """One line: ``DEV: deferred 2x, bound by a deferred retry after 5.4 ms (why)``."""
        n = sum(1 for p in self.probes if p.deferred)
        b = self.bound
        if b is None:
            end = "never bound in the capture"
        else:
            end = f"bound at attempt {b.attempt} ({b.mode.value}" + (
                f", during {b.call_func}" if b.call_func else "") + ")"
        why = "; ".join(self.reasons) if self.reasons else "no cause printed"
        return f"{self.device}: deferred {n}x, {end}; cause: {why}"


def deferred_devices(cap: Capture) -> tuple[DeviceDeferral, ...]:
    """Every device that deferred (a probe returned +-517, or a deferral
    message names it), in the order of its first sign."""
    order: list[str] = []
    probes: dict[str, list[Probe]] = {}
    causes: dict[str, list[DeferralLine]] = {}
    for p in cap.probes:
        probes.setdefault(p.device, []).append(p)
        if p.deferred and p.device not in order:
            order.append(p.device)
    for d in cap.deferrals:
        causes.setdefault(d.device, []).append(d)
        if d.device not in order:
            order.append(d.device)
    firsts = {dev: min([p.line for p in probes.get(dev, []) if p.deferred]
                       + [d.line for d in causes.get(dev, [])]) for dev in order}
    order.sort(key=firsts.__getitem__)
    return tuple(DeviceDeferral(dev, tuple(probes.get(dev, ())), tuple(causes.get(dev, ())))
                 for dev in order)


def probe_counts(cap: Capture) -> dict[str, int]:
    """The verdict's probe counts: all, by where they ran, by result."""
    ps = cap.probes
    return {
        "probes": len(ps),
        "probes_in_call": sum(1 for p in ps if p.mode is ProbeMode.IN_CALL),
        "probes_deferred_lane": sum(1 for p in ps if p.mode is ProbeMode.DEFERRED),
        "probes_async": sum(1 for p in ps if p.mode is ProbeMode.ASYNC),
        "probes_returned_defer": sum(1 for p in ps if p.deferred),
        "probes_failed": sum(1 for p in ps if p.result == "failed"),
        "devices_deferred": len(deferred_devices(cap)),
    }


def probe_label(p: Probe) -> str:
    """``probe DEV`` with its result when not bound."""
    return f"probe {p.device}" + ("" if p.ret == 0 else f" ({p.result}, {p.ret})")

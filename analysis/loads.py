"""What a guest's scenario did to one module, or to one built-in object at
boot, read from a capture: the queries the host-side tests ask.

The guest only loads, fails and unloads; the host brings the capture home
(scenario.dat, dmesg.txt) and asks here which pair inits each load ran
(index, priority, function, return) and which exits its unload or its
unwind ran, in the order they ran.  The answers come from the spans and
units analysis/build.py makes (each event's fields parsed once, by
analysis/schema.py): a test that uses them never reads event text, so an
event's new field changes the schema alone.
"""

from __future__ import annotations

from typing import NamedTuple, Optional

from analysis.model import CallPath, Capture, ExitReason, SpanKind, bare_func


class Call(NamedTuple):
    """One init as it ran: its index in the sorted table and priority (None
    where the capture does not say: a classic initcall, a kernel log
    without them), its function (without ``+0x..``), its return value
    (None: it never returned within the capture)."""

    idx: Optional[int]
    prio: Optional[int]
    func: str
    ret: Optional[int]


class ModuleLoad(NamedTuple):
    """One load of a module, from module_load to module_free (or to the
    capture's end): its pair inits, in the order they ran; the exits its
    unload ran and those its failure's unwind ran, each in the order they
    ran."""

    module: str
    instance: int  # 0: the capture's first load of the module
    inits: tuple[Call, ...]
    unload: tuple[str, ...]
    unwind: tuple[str, ...]

    @property
    def failed(self) -> Optional[Call]:
        """The init that failed the load (returned < 0), or None."""
        return next((c for c in self.inits if c.ret is not None and c.ret < 0), None)


def module_loads(capture: Capture, module: str) -> list[ModuleLoad]:
    """Every load of ``module`` in the capture, in load order, with its
    pair inits and exits (initexit events: a stock kernel's loads have
    none, and are listed with empty tuples when module_load is recorded)."""
    out = []
    for u in capture.units:
        if u.path is not CallPath.MODULE or u.origin != module:
            continue
        inits = tuple(Call(s.idx, s.prio, bare_func(s.func), s.ret) for s in u.inits if s.kind is SpanKind.PAIR_INIT)
        exits = [s for s in u.exits if s.kind is SpanKind.PAIR_EXIT]
        out.append(ModuleLoad(
            module=module,
            instance=u.instance,
            inits=inits,
            unload=tuple(bare_func(s.func) for s in exits if s.reason is ExitReason.UNLOAD),
            unwind=tuple(bare_func(s.func) for s in exits if s.reason is ExitReason.UNWIND),
        ))
    return out


def boot_calls(capture: Capture, origin: str) -> list[Call]:
    """The calls of the boot path whose origin is ``origin``, in the order
    they started: for a kernel log with the series' initcall_debug lines
    (``modname=``), the built-in code of that KBUILD_MODNAME; for a trace,
    the pairs of that built-in object (``origin=``, KBUILD_MODFILE).  A
    call that never returned has ret None."""
    return [Call(s.idx, s.prio, bare_func(s.func), s.ret)
            for s in capture.spans
            if s.path is CallPath.BOOT and s.origin == origin and s.kind is not SpanKind.PAIR_EXIT]


def boot_object(capture: Capture, origin: str) -> ModuleLoad:
    """A built-in object's pairs at boot, from a boot trace (initexit
    events of ``path=boot``; ``origin`` is the object's KBUILD_MODFILE, as
    ``fs/fuse/fuse``), as a ModuleLoad: its pair inits in the order they
    started and the exits its failure's unwind ran, in the order they ran
    (built-in code never unloads: ``unload`` is empty unless the capture
    says otherwise)."""
    inits: list[Call] = []
    unload: list[str] = []
    unwind: list[str] = []
    for s in capture.spans:
        if s.path is not CallPath.BOOT or s.origin != origin:
            continue
        if s.kind is SpanKind.PAIR_INIT:
            inits.append(Call(s.idx, s.prio, bare_func(s.func), s.ret))
        elif s.kind is SpanKind.PAIR_EXIT:
            (unwind if s.reason is ExitReason.UNWIND else unload).append(bare_func(s.func))
    return ModuleLoad(origin, 0, tuple(inits), tuple(unload), tuple(unwind))

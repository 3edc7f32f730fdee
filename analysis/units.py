"""Units: one module load (from load to free) or one built-in object at boot,
the scope within which inits ascend and failures and unloads unwind.

The span builder (analysis/build.py) fills a :class:`UnitBuilder` while the
unit is open and hands the frozen :class:`~analysis.model.Unit` to its sink
once the unit is closed (freed, reloaded, or the capture ended) and no call
of it is still open, so a streaming check sees each unit once and can drop
it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Optional

from analysis.model import CallPath, Event, Span, Unit


@dataclass(slots=True)
class UnitBuilder:
    path: CallPath
    origin: str
    instance: int
    seq: int
    load: Optional[Event] = None
    free: Optional[Event] = None
    inits: list[Span] = field(default_factory=list)
    exits: list[Span] = field(default_factory=list)
    stray: list[Event] = field(default_factory=list)
    failed_idx: Optional[int] = None
    unloaded: bool = False
    closed: bool = False
    emitted: bool = False
    open_calls: int = 0

    def freeze(self, order: Callable[[Span], int]) -> Unit:
        return Unit(
            path=self.path,
            origin=self.origin,
            instance=self.instance,
            inits=tuple(sorted(self.inits, key=order)),
            exits=tuple(sorted(self.exits, key=order)),
            load=self.load,
            free=self.free,
            stray_unwinds=tuple(self.stray),
            seq=self.seq,
        )


class Units:
    """The open unit of each (path, origin), and how many loads each had."""

    def __init__(self, emit: Callable[[UnitBuilder], None]) -> None:
        self.current: dict[tuple[CallPath, str], UnitBuilder] = {}
        self.instances: dict[tuple[CallPath, str], int] = {}
        self.seq = 0
        self.emit = emit

    def new(self, path: CallPath, origin: str, load: Optional[Event] = None) -> UnitBuilder:
        key = (path, origin)
        old = self.current.get(key)
        if old is not None:
            self.close(old)
        inst = self.instances.get(key, 0)
        self.instances[key] = inst + 1
        u = UnitBuilder(path, origin, inst, self.seq, load=load)
        self.seq += 1
        self.current[key] = u
        return u

    def close(self, u: UnitBuilder) -> None:
        """No more calls start in ``u``; emit it once its open calls end."""
        u.closed = True
        if u.open_calls == 0 and not u.emitted:
            u.emitted = True
            self.emit(u)

    def call_ended(self, u: UnitBuilder) -> None:
        u.open_calls -= 1
        if u.closed and u.open_calls == 0 and not u.emitted:
            u.emitted = True
            self.emit(u)

    def close_all(self) -> None:
        """The capture ended: every unit still open, in creation order."""
        for u in sorted(self.current.values(), key=lambda b: b.seq):
            u.open_calls = 0
            self.close(u)
        self.current.clear()

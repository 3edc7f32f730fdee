"""The kernel's declared initcall order: an independent truth for the checks.

Every classic initcall is an entry ``__initcall__kmod_<obj>__<id>_<line>_<fn><level>``
in System.map and kallsyms (``...virtio_pci_driver_init6``,
``...con_initcon``, ``...init_hw_perf_eventsearly``, ``6s`` for sync), and
the entries' addresses are in link order.  So the map gives each initcall's
declared level (band, on the series' kernels) and its link position, which
the trace cannot fake: a trace only says which ``initcall_level`` event a
call followed.

On the series' kernels the map also bounds the built-in pair table: the
entries between ``__start___initexit_pairs`` and ``__stop___initexit_pairs``
(one static ``__UNIQUE_ID_initexitN`` each, ``__initexit_pair__*`` with Clang
LTO) are every pair declared with
module_init_exit() in built-in code, and a boot pair event's ``idx`` is a
position in that table.

A trace.dat carries the guest's kallsyms (``trace-cmd dump --kallsyms``);
text and dmesg inputs take ``--system-map FILE`` (System.map, or that dump).
"""

from __future__ import annotations

import bisect

import os
import re
import shutil
import subprocess
from dataclasses import dataclass, field, replace
from typing import Iterable, Mapping, Optional

from analysis.model import BAND_NAMES, CallPath, Capture, InputFormat, Span, SpanKind, bare_func
from analysis.source import TRACE_DAT_MAGIC, InputError

INITCALL_SYMBOL_RE = re.compile(r"__initcall__kmod_(.+?)__(\d+)_(\d+)_(.+?)(early|con|rootfs|[0-7]s?)$")
"""One initcall entry's symbol: object, counter, source line, function, level id.

Example: ``__initcall__kmod_virtio_pci__325_677_virtio_pci_driver_init6``
(``populate_rootfsrootfs`` is ``populate_rootfs`` at level ``rootfs``: the
function is the shortest prefix that leaves a level id).
"""

MAP_LINE_RE = re.compile(r"\s*([0-9a-fA-F]+)\s+(\S)\s+(\S+)(?:\s+\[(\S+)\])?\s*$")
"""A System.map or kallsyms line: address, type, name, [module].

Example: ``ffffffff81b54590 d __initcall__kmod_virtio_pci__325_677_virtio_pci_driver_init6``
"""

#: Level id in the symbol -> the band (initcall level) it declares.
LEVEL_IDS: Mapping[str, str] = {
    "con": "console", "early": "early",
    "0": "pure", "1": "core", "1s": "core_sync", "2": "postcore", "2s": "postcore_sync",
    "3": "arch", "3s": "arch_sync", "4": "subsys", "4s": "subsys_sync", "5": "fs",
    "5s": "fs_sync", "rootfs": "rootfs", "6": "device", "6s": "device_sync",
    "7": "late", "7s": "late_sync",
}

#: Every band in the order the kernel runs them: console_init() in
#: start_kernel, early in do_pre_smp_initcalls(), then do_initcalls().
RUN_ORDER: tuple[str, ...] = ("console", "early") + BAND_NAMES


def level_of(band: str) -> str:
    """The stock kernel's level (its ``initcall_level`` event) that holds a
    band: ``fs_sync`` and ``rootfs`` run inside ``fs``."""
    if band == "rootfs":
        return "fs"
    return band[: -len("_sync")] if band.endswith("_sync") else band


@dataclass(frozen=True, slots=True)
class Declared:
    """One ``__initcall__kmod_*`` entry of the map."""

    func: str
    obj: str
    src_line: int
    band: str
    address: int
    order: int  # position in the map's address order (0 = first entry)
    symbol: str
    map_line: int = 0  # its line in the map file (1 = first)

    @property
    def level(self) -> str:
        return level_of(self.band)


@dataclass(frozen=True, slots=True)
class DeclaredOrder:
    """Every initcall entry of one map, in link (address) order."""

    truth: str  # how findings name it: "System.map", "the trace.dat's kallsyms"
    source: str  # the file it came from
    entries: tuple[Declared, ...]
    by_func: Mapping[str, tuple[Declared, ...]] = field(default_factory=dict)
    pairs: Optional["PairTable"] = None  # the series' built-in pair table, when the map has it

    def quote(self, d: Declared) -> str:
        """An entry as findings quote it, like an event: its line in the map."""
        return f"line {d.map_line} of {os.path.basename(self.source)}: {d.address:016x} {d.symbol}"

    def position(self, d: Declared) -> int:
        """Link position of ``d`` within its level (1 = first)."""
        return 1 + sum(1 for e in self.entries if e.level == d.level and e.order < d.order)


@dataclass(frozen=True, slots=True)
class PairTable:
    """The built-in pair table as the map bounds it."""

    count: int  # entries between __start___initexit_pairs and __stop___initexit_pairs
    entry_size: int  # bytes per entry ((stop - start) / count; 0 when empty)
    start_line: int  # the __start___initexit_pairs line (1 = first)

    def describe(self, source: str) -> str:
        size = f", {self.entry_size} bytes each" if self.count else ""
        return (f"{self.count} built-in pair table record(s) (pairs and entries) between __start___initexit_pairs and "
                f"__stop___initexit_pairs (line {self.start_line} of {os.path.basename(source)}{size})")


PAIRS_START = "__start___initexit_pairs"
PAIRS_STOP = "__stop___initexit_pairs"
PAIR_ENTRY_PREFIXES = ("__UNIQUE_ID_initexit", "__initexit_pair__")
PAIR_ENTRY_RE = re.compile(r"(?:__UNIQUE_ID_initexit\d+|__initexit_pair__\S*__\d+_\d+)$")
"""One built-in pair's static ``struct initexit_pair``: module_init_exit()
names it ``__UNIQUE_ID_initexit<counter>``, or with Clang LTO (where each
entry has a section of its own) ``__initexit_pair__kmod_<name>__<counter>_<line>``;
its name strings and references have suffixes, such as
``__UNIQUE_ID_initexit7_origin``."""


def _pair_table(symbols: list[tuple[int, int, str]], source: str) -> Optional[PairTable]:
    """From (address, line, name) of a map's built-in symbols; None when
    the map has no pair table (stock, or an older series)."""
    bounds = {name: (addr, n) for addr, n, name in symbols if name in (PAIRS_START, PAIRS_STOP)}
    if PAIRS_START not in bounds and PAIRS_STOP not in bounds:
        return None
    if len(bounds) != 2:
        missing = PAIRS_STOP if PAIRS_START in bounds else PAIRS_START
        raise InputError(f"{source}: has one bound of the built-in pair table but not {missing}")
    (start, line), (stop, _) = bounds[PAIRS_START], bounds[PAIRS_STOP]
    if start == stop == 0:
        return None  # kallsyms read without the right to see addresses
    if stop < start:
        raise InputError(f"{source}: {PAIRS_STOP} is below {PAIRS_START}")
    count = sum(1 for addr, _n, name in symbols if start <= addr < stop and PAIR_ENTRY_RE.match(name))
    size = (stop - start) // count if count else 0
    if count and size * count != stop - start:
        raise InputError(f"{source}: the built-in pair table is {stop - start} bytes, "
                         f"not a multiple of its {count} entries")
    return PairTable(count, size, line + 1)


@dataclass(frozen=True, slots=True)
class DeclaredMatch:
    """The capture's classic boot initcalls matched to the map's entries."""

    order: DeclaredOrder
    matched: tuple[tuple[Span, Declared], ...]  # in run order
    unmatched_spans: tuple[Span, ...]  # ran, but not in the map
    never_ran: tuple[Declared, ...]  # in the map, but not in the capture
    boot_initcalls: int  # classic boot initcalls in the capture
    dmesg: bool = False  # dmesg input: pairs look like initcalls, no console initcalls

    @property
    def fits(self) -> bool:
        """Whether the map looks like this capture's kernel: at least half
        of the classic boot initcalls are declared in it."""
        return self.boot_initcalls > 0 and 2 * len(self.matched) >= self.boot_initcalls

    def fit_note(self) -> str:
        return (f"{self.order.truth} does not fit this capture: only {len(self.matched)} of its "
                f"{self.boot_initcalls} classic boot initcalls are declared in it (another kernel's map?)")


def parse_map(text: str, truth: str, source: str) -> DeclaredOrder:
    """The initcall entries of a System.map or kallsyms text (other lines,
    such as ``trace-cmd dump``'s ``[Kallsyms, N bytes]`` header, are
    skipped).  Raises InputError when it holds no initcall entry."""
    found: list[tuple[int, int, str, re.Match[str]]] = []
    pair_syms: list[tuple[int, int, str]] = []
    lines = 0
    for n, raw in enumerate(text.splitlines()):
        m = MAP_LINE_RE.match(raw)
        if m is None:
            continue
        lines += 1
        if m.group(4) is not None:
            continue  # a module's symbol: modules have no initcall entries
        name = m.group(3)
        if name.startswith((*PAIR_ENTRY_PREFIXES, PAIRS_START, PAIRS_STOP)):
            pair_syms.append((int(m.group(1), 16), n, name))
            continue
        s = INITCALL_SYMBOL_RE.match(name)
        if s is not None:
            found.append((int(m.group(1), 16), n, name, s))
    if not found:
        what = "no symbol lines" if not lines else f"{lines} symbols but no __initcall__kmod_* entry"
        raise InputError(f"{source}: not a System.map or kallsyms with initcalls ({what}; "
                         "kallsyms lists them only with CONFIG_KALLSYMS_ALL=y)")
    # Link order is address order; equal addresses (kallsyms read with
    # kptr_restrict shows zeros) keep the file's order, which is the same.
    found.sort(key=lambda f: (f[0], f[1]))
    entries = tuple(
        Declared(func=s.group(4), obj=s.group(1), src_line=int(s.group(3)), band=LEVEL_IDS[s.group(5)],
                 address=addr, order=i, symbol=sym, map_line=n + 1)
        for i, (addr, _n, sym, s) in enumerate(found))
    by_func: dict[str, list[Declared]] = {}
    for d in entries:
        by_func.setdefault(d.func, []).append(d)
    return DeclaredOrder(truth, source, entries, {k: tuple(v) for k, v in by_func.items()},
                         _pair_table(pair_syms, source))


def dat_kallsyms(path: str) -> str:
    """The kallsyms a trace.dat saved (``trace-cmd dump --kallsyms``)."""
    exe = shutil.which("trace-cmd")
    if exe is None:
        raise InputError(f"{path}: reading its kallsyms needs trace-cmd, which is not installed")
    try:
        r = subprocess.run([exe, "dump", "--kallsyms", "-i", path], capture_output=True, check=False)
    except OSError as e:
        raise InputError(f"{path}: trace-cmd dump failed: {e.strerror or e}") from None
    if r.returncode != 0:
        err = r.stderr.decode("utf-8", "replace").strip().splitlines()
        raise InputError(f"{path}: trace-cmd dump --kallsyms failed: {err[-1] if err else r.returncode}")
    return r.stdout.decode("utf-8", "replace")


def read_map(path: str) -> DeclaredOrder:
    """``--system-map FILE``: a System.map, kallsyms text, or a trace.dat
    (its saved kallsyms).  Raises InputError with a one-line message."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        raise InputError(f"{path}: cannot read: {e.strerror or e}") from None
    if data.startswith(TRACE_DAT_MAGIC):
        return parse_map(dat_kallsyms(path), "the kallsyms saved in " + path, path)
    return parse_map(data.decode("utf-8", "replace"), "System.map", path)


def dat_declared(path: str) -> tuple[Optional[DeclaredOrder], str]:
    """The declared order from a trace.dat's own kallsyms, or None and a
    note saying why there is none."""
    try:
        return parse_map(dat_kallsyms(path), "the trace.dat's kallsyms", path), ""
    except InputError as e:
        return None, f"no declared order from the trace.dat's kallsyms: {e}; pass --system-map FILE"


def _boot_initcalls(spans: Iterable[Span]) -> list[Span]:
    return [s for s in spans if s.kind is SpanKind.INITCALL and s.path is CallPath.BOOT]


def match(cap: Capture, order: DeclaredOrder) -> DeclaredMatch:
    """Match each classic boot initcall that ran to its map entry by name.
    A name declared k times (static functions in different files) matches
    its k entries in link order, one per run."""
    used: dict[str, int] = {}
    matched: list[tuple[Span, Declared]] = []
    unmatched: list[Span] = []
    boot = _boot_initcalls(cap.spans)
    taken: set[int] = set()
    for s in boot:
        name = bare_func(s.func)
        decls = order.by_func.get(name)
        if decls is None and "." in name:  # a compiler suffix: foo.isra.0
            name = name.split(".", 1)[0]
            decls = order.by_func.get(name)
        k = used.get(name, 0)
        if decls is None or k >= len(decls):
            unmatched.append(s)
            continue
        used[name] = k + 1
        matched.append((s, decls[k]))
        taken.add(decls[k].order)
    # dmesg never shows console initcalls: console_init() runs them with no
    # initcall_debug line.
    dmesg = cap.parsed.fmt is InputFormat.DMESG
    never = tuple(d for d in order.entries
                  if d.order not in taken and not (dmesg and d.band == "console"))
    return DeclaredMatch(order, tuple(matched), tuple(unmatched), never, len(boot), dmesg)


def with_declared(cap: Capture, order: Optional[DeclaredOrder], note: str = "") -> Capture:
    """The capture with its declared order attached (or the note why none)."""
    return replace(cap, declared=match(cap, order) if order is not None else None,
                   declared_note=note)


def longest_ascending(values: list[int]) -> set[int]:
    """Indices of one longest strictly ascending subsequence of ``values``:
    the calls kept in link order (the checks) or in B's order (the diff);
    the others are the ones that moved."""
    tails: list[int] = []  # index of the smallest tail of each length
    prev: list[int] = [-1] * len(values)
    tail_vals: list[int] = []
    for i, v in enumerate(values):
        k = bisect.bisect_left(tail_vals, v)
        if k == len(tail_vals):
            tail_vals.append(v)
            tails.append(i)
        else:
            tail_vals[k] = v
            tails[k] = i
        prev[i] = tails[k - 1] if k > 0 else -1
    keep: set[int] = set()
    i = tails[-1] if tails else -1
    while i >= 0:
        keep.add(i)
        i = prev[i]
    return keep

#!/usr/bin/python3
"""The fault sweep's judge: what each step of a sweep means, decided on the
host from the facts the guest recorded (issue 33, point 4).

    sweep_judge.py judge [-o FILE] [--format ktap|json] RECORDS|-
    sweep_judge.py agree [-o FILE] FOLDER

tests/guest/tools/fault-sweep --records FILE writes one JSON object per
line (the format: tests/fault-sweep/records/README.md): a "sweep" header
(module, boot facts: exact counts or not, KASAN's quarantine, alloc tags,
the noise list, REPEATS), "base" snapshots of every slab cache, one "warm"
line (the load and unload without faults before the sweep), one "step"
line per N (the load's result, its fault's site and stack, the slab
counts after it and after each round of repeats and clean cycles, as
differences from a base, kmemleak's output, the kernel log's report lines),
"probe" lines (--steps) and an "end" line. This module decides per step
clean / leak / known stock leak / inconclusive / mismatch and prints the
KTAP the guest's own report has always had (the same case names, the
same summary line), so tests/fault-sweep/guest-sweep.sh's controls and
scripts/test's judges read it unchanged.

It never calls noise a leak and never passes what it could not judge:
without exact counts (no slub_debug=F) a step's slab part is inconclusive;
a growth the guest's repeats did not settle (a round the rule needs that
the guest did not record, fewer aimed repeats than REPEATS that faulted at
the site) is inconclusive too. Exit 0: every step held; 1: a leak, a
mismatch, a kernel report, or the sweep stopped early; 3: nothing failed
but something could not be judged (the boot parameters to add are named);
2: usage or unreadable input. Stdlib only.
"""

from __future__ import annotations

import argparse
import enum
import json
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence

sys.path.insert(0, str(Path(__file__).resolve().parent))
import verdict  # noqa: E402

RECORD_VERSION = 1

ALLOC_TAG_RE_FMT = r"^([^ ]+:[0-9]+) module {name} func:([^ ]+) has ([0-9]+) allocated at module unload$"
"""The module's own alloc-tag warning (lib/alloc_tag.c), formatted with
its name, e.g. ``fs/fuse/inode.c:2003 module fuse func:fuse_init has 256
allocated at module unload``."""

ALLOC_TAG_WARNING_RE = re.compile(r"^WARNING: .* at lib/alloc_tag\.c:")
"""The WARNING that follows the alloc-tag lines, e.g. ``WARNING: CPU: 1
PID: 5640 at lib/alloc_tag.c:180 alloc_tag_module_unload+0x1/0x2``."""

CALLS_RE = re.compile(r"\(([0-9]+) calls\)")
"""modload's count of allocations, e.g. ``modload: x.ko: ok (34 calls)``."""

STOCK_FRAME = "sysfs_slab_add+0x"
"""A reliable frame of stock 6.12's sysfs_slab_add(), e.g.
``sysfs_slab_add+0x98/0x110``: a failure inside it leaks the cache's
kobject name (mm/slub.c: no kobject_put())."""

KOBJECT_NAME_FRAME = "kobject_set_name_vargs+0x"
"""kmemleak's backtrace of that name, e.g. ``kobject_set_name_vargs+0x4a/0xb0``."""

KMALLOC_CACHE_RE = re.compile(r"^kmalloc-[0-9]+k?$")
"""A kmalloc cache, e.g. ``kmalloc-16``: where the kobject name lands."""

INEXACT_HINT = ("boot with slub_debug=F slab_nomerge (scripts/run --append "
                "'slub_debug=F slab_nomerge sysctl.vm.mem_profiling=1')")

# ------------------------------------------------------------------ records


class RecordError(ValueError):
    """One record line that does not have the fields its kind needs."""


Slab = dict[str, "int | None"]
"""Object counts per cache: absolute in a base; in a step, the caches whose
count differs from its base (None: the cache is gone)."""


def _get(d: dict[str, Any], key: str, kind: type | tuple[type, ...], default: Any = ...) -> Any:
    if key not in d:
        if default is ...:
            raise RecordError(f"no field {key!r}")
        return default
    v = d[key]
    if isinstance(v, bool) and kind is int:
        raise RecordError(f"field {key!r}: want a number, got {v!r}")
    if not isinstance(v, kind):
        raise RecordError(f"field {key!r}: want {kind}, got {v!r}")
    return v


def _strs(d: dict[str, Any], key: str) -> tuple[str, ...]:
    v = _get(d, key, list, [])
    if not all(isinstance(s, str) for s in v):
        raise RecordError(f"field {key!r}: want a list of strings")
    return tuple(v)


def _slab(d: dict[str, Any], key: str, default: Any = ...) -> Slab | None:
    v = _get(d, key, (dict, type(None)), default)
    if v is None:
        return None
    for k, c in v.items():
        if c is not None and (isinstance(c, bool) or not isinstance(c, int)):
            raise RecordError(f"field {key!r}: cache {k!r} has {c!r}, want a count or null")
    return dict(v)


def _err(d: dict[str, Any], key: str) -> int | str:
    v = _get(d, key, (int, str))
    if isinstance(v, str) and v != "died":
        raise RecordError(f"field {key!r}: want an errno or \"died\", got {v!r}")
    return v  # type: ignore[no-any-return]


@dataclass(frozen=True)
class Header:
    """The sweep's "sweep" line: what was swept and how the boot counts."""

    module: str
    params: str
    exact: bool          # slab counts exact (slub_debug=F), as the guest took them
    quarantine: bool     # generic KASAN: every cache shrunk before each count
    held: str            # the shrink files' holder, as the guest reports it
    tags: bool           # alloc tags on (sysctl.vm.mem_profiling=1)
    kmemleak: bool
    repeats: int
    known_rule: bool     # FAULT_SWEEP_KNOWN: stock's sysfs_slab_add() leak set aside
    steps: bool          # --steps
    max: int
    noise: str           # an awk ERE over cache names
    cmdline: str


@dataclass(frozen=True)
class Warm:
    """The load and unload without faults before the sweep."""

    err: int | str
    out: str
    unload: str | None   # the unload's error output, None when it worked
    reports: tuple[str, ...]


@dataclass(frozen=True)
class Settle:
    """One look at the state after a step (at most four, 1 s apart)."""

    slab: Slab
    lists: tuple[str, ...]  # "sysfs > /sys/...": lines that differ from the base's lists


@dataclass(frozen=True)
class Repeat:
    """One aimed repeat (a load with fail-nth NTH, then the reload)."""

    nth: int
    injected: bool
    sig: str
    slab: Slab


@dataclass(frozen=True)
class Round:
    """One round of repeats and clean cycles, as confirm() ran it."""

    pass_: int                 # 1, or 2 for reconfirm's
    mode: str                  # at_n | at_site | last
    c0: Slab
    c1: Slab | None            # after the repeats (at_n, last)
    sigs: tuple[str, ...]      # the repeats' faults' stacks (at_n, last)
    repeats: tuple[Repeat, ...]  # at_site
    c2: Slab


@dataclass(frozen=True)
class Reload:
    err: int | str
    out: str
    unload: str | None


@dataclass(frozen=True)
class Step:
    """One N: its load and everything the guest did to look at it."""

    line: int
    n: int
    again: bool
    base: int
    err: int | str
    injected: bool
    out: str
    site: str
    step: str
    sig: str
    unload: str | None
    still_loaded: bool
    reload: Reload | None
    settle: tuple[Settle, ...]
    kmemleak: str | None
    rounds: tuple[Round, ...]
    reports_load: tuple[str, ...]
    reports_step: tuple[str, ...]
    log_lost: bool

    @property
    def done(self) -> bool:
        """No fault left to inject: the load succeeded without one."""
        return self.err == 0 and not self.injected


@dataclass(frozen=True)
class Probe:
    n: int
    step: str
    reports: tuple[str, ...]


@dataclass(frozen=True)
class End:
    n: int
    done: bool
    probes: int
    reprobes: int
    rechecks: int
    probed: tuple[str, ...]
    checked: tuple[str, ...]
    kmemleak: str | None


@dataclass(frozen=True)
class Records:
    header: Header | None
    bases: dict[int, dict[str, int]]
    warm: Warm | None
    steps: tuple[Step, ...]
    probes: tuple[Probe, ...]
    end: End | None
    problems: tuple[str, ...]  # "line N: why", for lines that could not be read


def _round(d: dict[str, Any]) -> Round:
    mode = _get(d, "mode", str)
    if mode not in ("at_n", "at_site", "last"):
        raise RecordError(f"round mode {mode!r}")
    reps = []
    for r in _get(d, "repeats", list, []):
        if not isinstance(r, dict):
            raise RecordError("a repeat is not an object")
        reps.append(Repeat(_get(r, "nth", int), _get(r, "injected", bool), _get(r, "sig", str, ""),
                           _slab(r, "slab") or {}))
    return Round(_get(d, "pass", int, 1), mode, _slab(d, "c0") or {}, _slab(d, "c1", None),
                 _strs(d, "sigs"), tuple(reps), _slab(d, "c2") or {})


def _step(d: dict[str, Any], line: int) -> Step:
    rl = _get(d, "reload", (dict, type(None)), None)
    reload = None if rl is None else Reload(_err(rl, "err"), _get(rl, "out", str, ""),
                                            _get(rl, "unload", (str, type(None)), None))
    settle = []
    for s in _get(d, "settle", list, []):
        if not isinstance(s, dict):
            raise RecordError("a settle look is not an object")
        settle.append(Settle(_slab(s, "slab") or {}, _strs(s, "lists")))
    rounds = []
    for r in _get(d, "rounds", list, []):
        if not isinstance(r, dict):
            raise RecordError("a round is not an object")
        rounds.append(_round(r))
    return Step(line, _get(d, "n", int), _get(d, "again", bool, False), _get(d, "base", int),
                _err(d, "err"), _get(d, "injected", bool), _get(d, "out", str, ""),
                _get(d, "site", str, ""), _get(d, "step", str, ""), _get(d, "sig", str, ""),
                _get(d, "unload", (str, type(None)), None), _get(d, "still_loaded", bool, False),
                reload, tuple(settle), _get(d, "kmemleak", (str, type(None)), None), tuple(rounds),
                _strs(d, "reports_load"), _strs(d, "reports_step"), _get(d, "log_lost", bool, False))


def read_records(text: str) -> Records:
    """The records of one sweep. Tolerant: a line that is not JSON or lacks
    a field is a problem (with its line number), not a crash; a file cut
    short (the guest died) is a normal input, judged as far as it goes."""
    header: Header | None = None
    bases: dict[int, dict[str, int]] = {}
    warm: Warm | None = None
    steps: list[Step] = []
    probes: list[Probe] = []
    end: End | None = None
    problems: list[str] = []
    for n, raw in enumerate(text.splitlines(), 1):
        if not raw.strip():
            continue
        try:
            d = json.loads(raw)
            if not isinstance(d, dict):
                raise RecordError("not a JSON object")
            kind = _get(d, "record", str)
            if kind == "sweep":
                v = _get(d, "version", int)
                if v != RECORD_VERSION:
                    raise RecordError(f"record version {v}, this judge reads {RECORD_VERSION}")
                header = Header(_get(d, "module", str), _get(d, "params", str, ""), _get(d, "exact", bool),
                                _get(d, "quarantine", bool, False), _get(d, "held", str, ""),
                                _get(d, "tags", bool, False), _get(d, "kmemleak", bool, False),
                                _get(d, "repeats", int), _get(d, "known_rule", bool, True),
                                _get(d, "steps", bool, False), _get(d, "max", int, 3000),
                                _get(d, "noise", str), _get(d, "cmdline", str, ""))
            elif kind == "base":
                slab = _slab(d, "slab") or {}
                bases[_get(d, "id", int)] = {k: c for k, c in slab.items() if c is not None}
            elif kind == "warm":
                warm = Warm(_err(d, "err"), _get(d, "out", str, ""),
                            _get(d, "unload", (str, type(None)), None), _strs(d, "reports"))
            elif kind == "step":
                steps.append(_step(d, n))
            elif kind == "probe":
                probes.append(Probe(_get(d, "n", int), _get(d, "step", str, ""), _strs(d, "reports")))
            elif kind == "end":
                end = End(_get(d, "n", int), _get(d, "done", bool), _get(d, "probes", int, 0),
                          _get(d, "reprobes", int, 0), _get(d, "rechecks", int, 0), _strs(d, "probed"),
                          _strs(d, "checked"), _get(d, "kmemleak", (str, type(None)), None))
            else:
                raise RecordError(f"unknown record kind {kind!r}")
        except (ValueError, RecordError) as e:
            problems.append(f"line {n}: {e}")
    return Records(header, bases, warm, tuple(steps), tuple(probes), end, tuple(problems))


# -------------------------------------------------------------------- rules


def leak_rule(f: int, c: int, hits: int, repeats: int) -> bool:
    """The leak rule of one round: the failed loads (HITS of them, all
    REPEATS, at the site) left at least one object each (F in all), that
    many more than the REPEATS clean cycles did (C), and the clean cycles
    did not give back a load's worth (objects freed late: call_rcu(),
    kworkers, KASAN's quarantine; C <= -REPEATS)."""
    return hits == repeats and f >= hits and f - max(c, 0) >= hits and c > -repeats


def last_rule(f: int, c: int, repeats: int) -> bool:
    """The last N injects nothing: it is a clean cycle itself, so a cache
    leaks when each of two rounds of REPEATS cycles grew it by one object
    a cycle."""
    return f >= repeats and c >= repeats


class Outcome(enum.Enum):
    """What one step was found to be."""

    CLEAN = "clean"
    KNOWN_STOCK = "known stock leak"
    INCONCLUSIVE = "inconclusive"
    LEAK = "leak"
    MISMATCH = "mismatch"


@dataclass(frozen=True)
class Candidate:
    """A cache with more objects after the step than in its base."""

    cache: str
    line: str  # "slab kmalloc-16: 884 -> 885 objects (+1)"


@dataclass(frozen=True)
class CacheRound:
    """One cache through one round: the rule's answer (None: the round
    could not answer it) and why, as the KTAP line says it."""

    leak: bool | None
    why: str
    f: int = 0
    hits: int = 0


@dataclass(frozen=True)
class StepJudgement:
    step: Step
    leaks: tuple[str, ...]
    mismatches: tuple[str, ...]
    notes: tuple[str, ...]
    inconclusive: tuple[str, ...]
    known: bool
    known_kmemleak: int
    inexact_moved: bool

    @property
    def outcome(self) -> Outcome:
        if self.leaks:
            return Outcome.LEAK
        if self.mismatches:
            return Outcome.MISMATCH
        if self.inconclusive:
            return Outcome.INCONCLUSIVE
        if self.known:
            return Outcome.KNOWN_STOCK
        return Outcome.CLEAN


def _sg(x: int) -> str:
    return f"+{x}" if x >= 0 else str(x)


def full_slab(base: dict[str, int], delta: Slab | None) -> dict[str, int]:
    """A snapshot: BASE with DELTA's caches changed (None: gone)."""
    out = dict(base)
    for k, v in (delta or {}).items():
        if v is None:
            out.pop(k, None)
        else:
            out[k] = v
    return out


def noise_re(header: Header) -> re.Pattern[str]:
    """The awk ERE of caches that move with the sweep itself."""
    try:
        return re.compile(header.noise)
    except re.error as e:
        raise RecordError(f"the noise pattern {header.noise!r}: {e}") from e


def compare_slabs(before: dict[str, int], after: dict[str, int], noise: re.Pattern[str]
                  ) -> tuple[list[Candidate], list[str], list[str]]:
    """fault-sweep's compare() of two counts: (caches that grew, outside the
    noise list; mismatches: caches new or gone; notes)."""
    cands: list[Candidate] = []
    bad: list[str] = []
    notes: list[str] = []
    for k in sorted(set(before) | set(after)):
        if k not in after:
            bad.append(f"slab {k}: cache gone (had {before[k]})")
            continue
        if k not in before:
            bad.append(f"slab {k}: new cache, {after[k]} objects")
            continue
        d = after[k] - before[k]
        if d == 0:
            continue
        s = f"slab {k}: {before[k]} -> {after[k]} objects ({_sg(d)})"
        if noise.search(k):
            notes.append(s + ", sweep noise (not counted)")
        elif d > 0:
            cands.append(Candidate(k, s))
        else:
            notes.append(s + ", fewer than before (not a leak)")
    return cands, bad, notes


def own_tag_re(module: str) -> re.Pattern[str]:
    return re.compile(ALLOC_TAG_RE_FMT.format(name=re.escape(module)))


def alloc_tag_leaks(lines: Iterable[str], module: str) -> list[str]:
    """The module's own lines whose memory outlived a load, as fault-sweep
    names them."""
    rx = own_tag_re(module)
    out = set()
    for ln in lines:
        m = rx.match(ln)
        if m:
            out.add(f"alloc tag: {m.group(1)} (func:{m.group(2)}): {m.group(3)} bytes of the module's "
                    "own allocation still allocated when it was freed")
    return sorted(out)


def first_report(lines: Iterable[str], module: str) -> str | None:
    """The first report of the kernel among LINES (messages, time stamps
    off), by tests/kernel-reports.txt's message rows; the module's own
    alloc-tag warnings and lib/alloc_tag.c's WARNING after them are its
    leaks, not reports."""
    rx = own_tag_re(module)
    kinds = [k for k in verdict.report_kinds() if not k.whole_line]
    own = False
    for ln in lines:
        if rx.match(ln):
            own = True
            continue
        if own and ALLOC_TAG_WARNING_RE.match(ln):
            own = False
            continue
        if any(k.pattern.search(ln) for k in kinds):
            return ln
    return None


def kmemleak_leaks(text: str, known_rule: bool) -> tuple[list[str], list[str], int]:
    """kmemleak's report split into its objects: (leak lines, notes, how
    many objects were stock's sysfs_slab_add() name leak)."""
    blocks: list[list[str]] = []
    for ln in text.splitlines():
        if ln.startswith("unreferenced object ") or not blocks:
            blocks.append([])
        blocks[-1].append(ln)
    leaks: list[str] = []
    notes: list[str] = []
    known = 0
    for b in blocks:
        body = "\n".join(b)
        if known_rule and STOCK_FRAME in body and KOBJECT_NAME_FRAME in body:
            known += 1
            notes.append(f"kmemleak: {b[0]}; known: stock mm/slub.c sysfs_slab_add() leaks the kobject "
                         "name (not counted)")
        else:
            leaks.extend("kmemleak: " + ln for ln in b if ln.strip())
    return leaks, notes, known


RuleFn = Callable[[int, int, int, int], bool]
LastRuleFn = Callable[[int, int, int], bool]


@dataclass
class _Rules:
    """The rules judge() applies: a test swaps them for mutants."""

    leak: RuleFn = leak_rule
    last: LastRuleFn = last_rule


RULES = _Rules()


def _round_at_n(r: Round, base: dict[str, int], cands: Sequence[Candidate], repeats: int,
                last: bool) -> dict[str, CacheRound]:
    c0, c1, c2 = (full_slab(base, r.c0), full_slab(base, r.c1), full_slab(base, r.c2))
    out = {}
    for cd in cands:
        f = c1.get(cd.cache, 0) - c0.get(cd.cache, 0)
        c = c2.get(cd.cache, 0) - c1.get(cd.cache, 0)
        if last:
            why = f"then {_sg(f)} and {_sg(c)} after two rounds of {repeats} more cycles"
            out[cd.cache] = CacheRound(RULES.last(f, c, repeats), why, f, repeats)
        else:
            why = (f"then {_sg(f)} after {repeats} more failed loads at this N, "
                   f"{_sg(c)} after {repeats} clean cycles")
            out[cd.cache] = CacheRound(RULES.leak(f, c, repeats, repeats), why, f, repeats)
    return out


def _round_at_site(r: Round, base: dict[str, int], cands: Sequence[Candidate], sig: str,
                   repeats: int) -> dict[str, CacheRound]:
    prev = full_slab(base, r.c0)
    f: dict[str, int] = {cd.cache: 0 for cd in cands}
    hits = 0
    for rep in r.repeats:
        now = full_slab(base, rep.slab)
        if rep.injected and rep.sig == sig:
            hits += 1
            for k in f:
                f[k] += now.get(k, 0) - prev.get(k, 0)
        prev = now
    c2 = full_slab(base, r.c2)
    tries = len(r.repeats)
    out = {}
    for cd in cands:
        c = c2.get(cd.cache, 0) - prev.get(cd.cache, 0)
        if hits == 0:
            out[cd.cache] = CacheRound(None, f"none of {tries} more loads at N - 1, N or N + 1 faulted "
                                       "at this site again: not judged", 0, 0)
            continue
        at = "at this site" if tries == hits else f"at this site ({tries} loads at N - 1, N or N + 1)"
        why = (f"then {_sg(f[cd.cache])} after {hits} more failed loads {at}, "
               f"{_sg(c)} after {repeats} clean cycles")
        if hits < repeats and f[cd.cache] < hits:
            # A leak at this site leaves at least one object every failed
            # load there; fewer objects than such loads rules it out with
            # the repeats that did reach the site (the rule's f >= hits).
            out[cd.cache] = CacheRound(False, why + f" ({hits} of {repeats} aimed repeats faulted at this "
                                       "site: fewer objects than failed loads there)", f[cd.cache], hits)
        elif hits < repeats:
            out[cd.cache] = CacheRound(None, why + f": only {hits} of {repeats} aimed repeats faulted at "
                                       "this site, not judged", f[cd.cache], hits)
        else:
            out[cd.cache] = CacheRound(RULES.leak(f[cd.cache], c, hits, repeats), why, f[cd.cache], hits)
    return out


def _one_pass(st: Step, base: dict[str, int], cands: Sequence[Candidate], pass_: int,
              repeats: int) -> dict[str, CacheRound]:
    """confirm_step (or confirm N last) for CANDS, from the rounds of PASS_."""
    rounds = [r for r in st.rounds if r.pass_ == pass_]
    missing = {cd.cache: CacheRound(None, f"no round {pass_} of repeats recorded: not judged") for cd in cands}
    if st.done:
        r = next((r for r in rounds if r.mode == "last"), None)
        return missing if r is None else _round_at_n(r, base, cands, repeats, True)
    r1 = next((r for r in rounds if r.mode == "at_n"), None)
    if r1 is None:
        return missing
    res = _round_at_n(r1, base, cands, repeats, False)
    sig = st.sig if st.injected else ""
    if not sig or sum(1 for s in r1.sigs if s == sig) >= repeats:
        return res
    # A load's count of allocations moved: the repeats at N faulted
    # elsewhere. The caches they moved by less than a load's worth either
    # way are looked at again with repeats aimed at the first load's stack.
    retry = [cd for cd in cands if not res[cd.cache].leak and -repeats < res[cd.cache].f < repeats]
    if not retry:
        return res
    r2 = next((r for r in rounds if r.mode == "at_site"), None)
    if r2 is None:
        for cd in retry:
            res[cd.cache] = CacheRound(None, res[cd.cache].why + "; the repeats faulted elsewhere and no "
                                       "aimed repeats were recorded: not judged")
        return res
    res.update(_round_at_site(r2, base, retry, sig, repeats))
    return res


def _one_object_a_load(r: CacheRound, cache: str) -> bool:
    """One kmalloc object a failed load: the shape of stock's name leak."""
    return bool(KMALLOC_CACHE_RE.match(cache)) and r.hits > 0 and r.hits <= r.f < 2 * r.hits


def _through_stock(sig: str) -> bool:
    return any(fr.startswith(STOCK_FRAME) for fr in sig.split(" < "))


def _confirm(h: Header, st: Step, base: dict[str, int], cands: Sequence[Candidate]
             ) -> tuple[list[str], list[str], list[str], bool]:
    """The candidates through the repeat protocol: (leaks, notes,
    inconclusive, known stock leak found)."""
    leaks: list[str] = []
    notes: list[str] = []
    inconc: list[str] = []
    known = False
    first = _one_pass(st, base, cands, 1, h.repeats)
    again: list[Candidate] = []
    stock_site = st.injected and h.known_rule and _through_stock(st.sig)
    if h.known_rule and st.injected and st.err == 0 and st.site.startswith("an unnamed site"):
        # An absorbed fault without a stack: stock's leak when every repeat
        # at N faulted through sysfs_slab_add().
        at_n = next((r for r in st.rounds if r.pass_ == 1 and r.mode == "at_n"), None)
        if at_n is not None and len(at_n.sigs) == h.repeats and all(_through_stock(s) for s in at_n.sigs):
            stock_site = True
    for cd in cands:
        r = first[cd.cache]
        if r.leak is None and stock_site and _one_object_a_load(r, cd.cache):
            # Fewer aimed repeats reached the site than the rule needs, but
            # each that did left one kmalloc object, through sysfs_slab_add():
            # stock's leak, named as such (a leak of the module's own lines
            # would be in its alloc tags or kmemleak's report).
            known = True
            notes.append(f"{cd.line}; {r.why}: one object a failed load through stock mm/slub.c "
                         "sysfs_slab_add(), which leaks the kobject name (known, not counted)")
        elif r.leak is None:
            inconc.append(f"{cd.line}; {r.why} (inconclusive)")
        elif not r.leak:
            notes.append(f"{cd.line}; {r.why}: moves with the sweep, not with the load (not counted)")
        elif stock_site and _one_object_a_load(r, cd.cache):
            known = True
            notes.append(f"{cd.line}; {r.why}: a leak; known: stock mm/slub.c sysfs_slab_add() leaks the "
                         "kobject name (not counted)")
        else:
            again.append(cd)
    if not again:
        return leaks, notes, inconc, known
    # A leak confirmed once is confirmed again: a cache freed in batches
    # (kfree_rcu(), a pool) can grow by a load's worth in one round.
    second = _one_pass(st, base, again, 2, h.repeats)
    for cd in again:
        r1, r2 = first[cd.cache], second[cd.cache]
        if r2.leak is None:
            inconc.append(f"{cd.line}; {r1.why}: a leak; again, {r2.why} (inconclusive)")
        elif r2.leak:
            leaks.append(f"{cd.line}; {r1.why}: a leak; again, {r2.why}: a leak")
        else:
            notes.append(f"{cd.line}; {r1.why}; again, {r2.why}: moves with the sweep, not with the load "
                         "(not counted)")
    return leaks, notes, inconc, known


def judge_step(h: Header, base: dict[str, int], st: Step) -> StepJudgement:
    """One step, from its record alone."""
    leaks: list[str] = []
    bad: list[str] = []
    notes: list[str] = []
    inconc: list[str] = []
    known_kl = 0
    rep = first_report(st.reports_load, h.module)
    if rep is not None:
        bad.append(f"the kernel reported: {rep}")
    if st.err == 0:
        if st.unload is not None:
            bad.append(f"unload failed: {st.unload}")
    else:
        if not st.injected:
            bad.append(f"the load failed (errno {st.err}) with no fault injected: {st.out}")
        elif st.err == "died":
            bad.append(f"the load did not return (modload died): {st.out}")
        if st.still_loaded:
            bad.append("the module is still there after its failed load")
        if st.kmemleak is not None:
            kl, kn, known_kl = kmemleak_leaks(st.kmemleak, h.known_rule)
            leaks.extend(kl)
            notes.extend(kn)
        if st.reload is not None and st.reload.err != 0:
            bad.append(f"a load without faults failed: {st.reload.out}")
        elif st.reload is not None and st.reload.unload is not None:
            bad.append(f"unload after the load without faults failed: {st.reload.unload}")
    cands: list[Candidate] = []
    if st.settle:
        last = st.settle[-1]
        cands, cbad, cnotes = compare_slabs(base, full_slab(base, last.slab), noise_re(h))
        bad.extend(last.lists)
        bad.extend(cbad)
        notes.extend(cnotes)
    elif st.unload is None and (st.reload is None or (st.reload.err == 0 and st.reload.unload is None)):
        inconc.append("no look at the state after the step was recorded")
    inexact = known = False
    if cands and rep is None:
        if not h.exact:
            # Per-CPU slabs: a growth may be their free objects, and a
            # leak may hide in one. Said, never judged either way.
            notes.extend(f"slab counts not exact, not judged: {cd.line}" for cd in cands)
            inexact = True
        else:
            cl, cn, ci, known = _confirm(h, st, base, cands)
            leaks.extend(cl)
            notes.extend(cn)
            inconc.extend(ci)
    if rep is None:
        if st.log_lost:
            notes.append("(the kernel log since this N began was overwritten: its later loads' reports "
                         "were not looked at)")
            inconc.append("the kernel log of the step's later loads was overwritten")
        else:
            r2 = first_report(st.reports_step, h.module)
            if r2 is not None:
                bad.append("the kernel reported, in the reload, a repeat (fail-nth N - 1, N or N + 1) or a "
                           f"clean cycle of this N: {r2}")
    if h.tags:
        leaks.extend(alloc_tag_leaks(st.reports_step or st.reports_load, h.module))
    if not h.exact and not leaks and not bad:
        inconc.append("slab counts not exact: not judged")
    return StepJudgement(st, tuple(leaks), tuple(bad), tuple(notes), tuple(inconc), known, known_kl, inexact)


# -------------------------------------------------------------------- sweep


@dataclass(frozen=True)
class Case:
    """One KTAP case of the report."""

    ok: bool
    desc: str
    skip: str = ""            # the SKIP reason ("" for none)
    diag: tuple[str, ...] = ()


@dataclass(frozen=True)
class SweepJudgement:
    module: str
    cases: tuple[Case, ...]
    diags: tuple[str, ...]
    steps: tuple[StepJudgement, ...]
    exit_status: int


def _label(st: Step) -> str:
    return f"N={st.n}" + (" again" if st.again else "")


def _where(h: Header, st: Step) -> str:
    if not st.injected:
        return ""
    return st.site + (f", step {st.step}" if h.steps else "")


def step_case(h: Header, j: StepJudgement) -> Case:
    st = j.step
    where = _where(h, st)
    diag = j.leaks + j.mismatches + j.notes
    if j.leaks or j.mismatches:
        desc = (f"{_label(st)}: fault in {where or 'no site'} -> errno {st.err}:"
                + (" LEAK" if j.leaks else "") + (" MISMATCH" if j.mismatches else ""))
        return Case(False, desc, diag=diag)
    if st.done:
        m = CALLS_RE.search(st.out)
        desc = (f"{_label(st)}: no fault left to inject ({m.group(1) if m else ''} calls): loaded, "
                "unloaded, state as before")
    elif st.err == 0:
        desc = f"{_label(st)}: fault in {where}: the load still succeeded; unloaded, state as before"
    else:
        desc = f"{_label(st)}: fault in {where or 'no site'} -> errno {st.err}; module gone, reloads cleanly, state as before"
    if j.inconclusive:
        why = ("slab counts not exact: not judged" if not h.exact else
               "INCONCLUSIVE: " + "; ".join(i for i in j.inconclusive))
        return Case(True, desc, skip=why, diag=diag + tuple(i for i in j.inconclusive if h.exact))
    return Case(True, desc, diag=diag)


def judge(rec: Records) -> SweepJudgement:
    """Every step and the sweep's own cases, as fault-sweep reports them."""
    h = rec.header
    if h is None:
        raise RecordError("no \"sweep\" header record" + (f" ({rec.problems[0]})" if rec.problems else ""))
    name = h.module
    js: list[StepJudgement] = []
    cases: list[Case] = []
    problems = list(rec.problems)
    for st in rec.steps:
        if st.base not in rec.bases:
            problems.append(f"line {st.line}: N={st.n} refers to base {st.base}, which was not recorded")
            continue
        j = judge_step(h, rec.bases[st.base], st)
        js.append(j)
        cases.append(step_case(h, j))
    warm = rec.warm
    warm_ok = warm is not None and warm.err == 0 and warm.unload is None
    end = rec.end
    done = end is not None and end.done
    if not warm_ok:
        out = "" if warm is None else f"{warm.out} {warm.unload or ''}".strip()
        cases.append(Case(False, f"{name} loads and unloads without faults", diag=(out or "no record of it",)))
    elif done:
        cases.append(Case(True, f"{name}: the sweep reached a load with no fault left to inject"))
    else:
        at = (f"stopped at N={end.n} (--max {h.max}, or the load died)" if end is not None else
              "the records end before the sweep did (the guest died or was stopped"
              + (f" after N={rec.steps[-1].n})" if rec.steps else ")"))
        cases.append(Case(False, f"{name}: the sweep reached a load with no fault left to inject", diag=(at,)))
    kl_end = 0
    end_leak = False
    desc = f"{name}: kmemleak reports nothing at the end"
    if not h.kmemleak:
        cases.append(Case(True, desc, skip="no /sys/kernel/debug/kmemleak: CONFIG_DEBUG_KMEMLEAK is not set"))
    elif end is None or end.kmemleak is None:
        cases.append(Case(True, desc, skip="INCONCLUSIVE: the last kmemleak scan was not recorded"))
    else:
        kl, kn, kl_end = kmemleak_leaks(end.kmemleak, h.known_rule)
        end_leak = bool(kl)
        cases.append(Case(False, desc, diag=tuple(kl)) if kl else Case(True, desc, diag=tuple(kn)))
    desc = (f"{name}: a load and unload without faults frees every allocation of the module's own lines "
            "(alloc tags)")
    warm_tags = alloc_tag_leaks(warm.reports if warm else (), name)
    if warm_tags:
        cases.append(Case(False, desc, diag=tuple(warm_tags)))
    elif h.tags:
        cases.append(Case(True, desc))
    else:
        cases.append(Case(True, desc, skip="alloc tags off: boot with sysctl.vm.mem_profiling=1 "
                          "(CONFIG_MEM_ALLOC_PROFILING)"))
    probes = end.probes if end is not None else len(rec.probes)
    preps = [f"probe N={p.n}: {r}" for p in rec.probes for r in [first_report(p.reports, name)] if r]
    desc = f"{name}: no kernel report in the probe loads ({probes} of them)"
    cases.append(Case(False, desc, diag=tuple(preps[:20])) if preps else Case(True, desc))
    inexact_moved = sum(1 for j in js if j.inexact_moved)
    held = h.held
    unjudged = [j for j in js if j.outcome is Outcome.INCONCLUSIVE and h.exact]
    desc = f"{name}: slab counts judged at every step"
    if not h.exact:
        cases.append(Case(True, desc, skip=f"INCONCLUSIVE: the counts are not exact (caches moved at "
                          f"{inexact_moved} step(s)); {INEXACT_HINT}{held}"))
    elif unjudged or problems:
        what = []
        if unjudged:
            what.append(f"{len(unjudged)} step(s) could not be judged from their records: "
                        + ", ".join(_label(j.step) for j in unjudged))
        if problems:
            what.append(f"{len(problems)} record line(s) unreadable")
        cases.append(Case(True, desc + " (exact: slub_debug=F)", skip="INCONCLUSIVE: " + "; ".join(what),
                          diag=tuple(problems[:20])))
    else:
        cases.append(Case(True, desc + " (exact: slub_debug=F)",
                          diag=("slab counts exact: the kernel runs with slub_debug=F"
                                + ("; every cache shrunk before each count (KASAN's quarantine)" + held
                                   if h.quarantine else ""),)))
    diags: list[str] = []
    if h.tags:
        diags.append("alloc tags on (sysctl.vm.mem_profiling=1): a leak of the module's own allocation is "
                     "named by its file:line at every step, slab counts exact or not")
    else:
        diags.append("alloc tags off: leaks are seen by the slab counts" + (" and kmemleak" if h.kmemleak else "")
                     + " only; boot with sysctl.vm.mem_profiling=1 to have them named by file:line")
    sites = sum(1 for j in js if j.step.injected)
    if h.steps:
        diags.append(f"one fault per step (--steps): {probes} probe loads between the {sites} checked faults")
        if end is not None:
            missed = sorted(set(p for p in end.probed if p) - set(end.checked))
            if missed:
                diags.append("steps probed but not checked (the check's fault landed elsewhere): "
                             + " ".join(missed) + " ")
    if end is not None:
        diags.append(f"re-probed at each change of site where every allocation is checked: {end.reprobes} probe "
                     f"loads; sites the sequence had skipped, checked again: {end.rechecks}")
    failed = sum(1 for j in js if j.step.err != 0)
    absorbed = sum(1 for j in js if j.step.err == 0 and j.step.injected)
    leaks = sum(1 for j in js if j.leaks) + (1 if end_leak else 0)
    mism = sum(1 for j in js if j.mismatches)
    known = sum(1 for j in js if j.known)
    known_kl = sum(j.known_kmemleak for j in js) + kl_end
    diags.append(f"fault-sweep {name}{' ' + h.params if h.params else ''}: sites tried: {sites}, failed loads: "
                 f"{failed}, absorbed faults: {absorbed}, leaks: {leaks}, mismatches: {mism}, known stock "
                 f"leaks: {known} (kmemleak: {known_kl} objects)")
    by = {o: sum(1 for j in js if j.outcome is o) for o in Outcome}
    diags.append("judged on the host from the guest's records (scripts/lib/sweep_judge.py): "
                 + ", ".join(f"{o.value}: {by[o]}" for o in Outcome))
    if any(not c.ok for c in cases):
        status = 1
    elif any(c.skip.startswith("INCONCLUSIVE") for c in cases) or not h.exact:
        status = 3
    else:
        status = 0
    return SweepJudgement(name, tuple(cases), tuple(diags), tuple(js), status)


# ------------------------------------------------------------------- output


def render_ktap(j: SweepJudgement) -> str:
    """KTAP as tests/lib/ktap.sh prints it (a '#' in a description is '_')."""
    out = ["KTAP version 1", f"1..{len(j.cases)}"]
    for n, c in enumerate(j.cases, 1):
        d = c.desc.replace("#", "_")
        out.append(f"{'ok' if c.ok else 'not ok'} {n} - {d}" + (f" # SKIP {c.skip}" if c.skip else ""))
        out.extend("# " + ln for d0 in c.diag for ln in d0.split("\n") if ln)
    out.extend("# " + d for d in j.diags)
    p = sum(1 for c in j.cases if c.ok and not c.skip)
    s = sum(1 for c in j.cases if c.skip)
    f = sum(1 for c in j.cases if not c.ok)
    out.append(f"# Totals: pass:{p} fail:{f} xfail:0 xpass:0 skip:{s} error:0")
    return "\n".join(out) + "\n"


def render_json(j: SweepJudgement) -> str:
    """One JSON object per step (N, outcome, findings), then the sweep's."""
    lines = [json.dumps({"n": s.step.n, "again": s.step.again, "outcome": s.outcome.value,
                         "leaks": list(s.leaks), "mismatches": list(s.mismatches),
                         "inconclusive": list(s.inconclusive), "notes": list(s.notes)}) for s in j.steps]
    lines.append(json.dumps({"module": j.module, "exit": j.exit_status,
                             "cases": [{"ok": c.ok, "desc": c.desc, "skip": c.skip} for c in j.cases]}))
    return "\n".join(lines) + "\n"


def guest_cases(tap: str) -> list[tuple[bool, str, bool]]:
    """The cases the guest's KTAP reported (verdict.py's reader), as (ok,
    description, skipped), in order."""
    S = verdict.Status
    return [(c.status in (S.PASS, S.SKIP), c.description, c.status is S.SKIP)
            for c in verdict.read_ktap(tap).cases if c.status is not S.MISSING]


def _say(c: tuple[bool, str, bool]) -> str:
    return f"{'ok' if c[0] else 'not ok'}{' (SKIP)' if c[2] else ''} - {c[1]}"


def _compare(j: SweepJudgement, tap: str, limit: int = 10) -> tuple[list[str], list[str]]:
    """(disagreements, steps the host could not judge that the guest
    passed). The host's verdict counts: a step the guest passed on a rule
    the host does not accept (a growth whose aimed repeats did not all
    reach the site) is inconclusive there, never a pass, and is listed in
    the second list; any other difference is a disagreement."""
    host = [(c.ok, c.desc.replace("#", "_"), bool(c.skip)) for c in j.cases]
    guest = guest_cases(tap)
    out: list[str] = []
    unjudged: list[str] = []
    if len(host) != len(guest):
        out.append(f"the guest reported {len(guest)} cases, the host judged {len(host)}")
    for i, (h, g) in enumerate(zip(host, guest), 1):
        if h == g:
            continue
        if h[0] and g[0] and h[1] == g[1] and h[2] and not g[2]:
            unjudged.append(f"case {i}: {h[1]}")
            continue
        out.append(f"case {i}: guest: {_say(g)} | host: {_say(h)}")
    for lst in (out, unjudged):
        if len(lst) > limit:
            lst[limit:] = [f"... and {len(lst) - limit} more"]
    return out, unjudged


def agree(folder: Path) -> tuple[str, int]:
    """KTAP, one case per sweep of FOLDER (a guest-sweep.sh output:
    STEM.jsonl beside STEM.tap): the host's judgement of the records reads
    as the guest's report did, case for case. Exit 1 when one differs or
    its records cannot be judged, 2 when there is nothing to compare."""
    pairs = sorted(folder.glob("*.jsonl"))
    if not pairs:
        return f"sweep_judge.py: {folder}: no records (*.jsonl) to judge\n", 2
    lines = ["KTAP version 1", f"1..{len(pairs)}"]
    bad = skipped = 0
    for n, rec in enumerate(pairs, 1):
        tap = rec.with_suffix(".tap")
        desc = f"the host judges {rec.stem}'s records as the guest's report did"
        unjudged: list[str] = []
        try:
            diff, unjudged = _compare(judge(read_records(rec.read_text(errors="replace"))),
                                      tap.read_text(errors="replace"))
        except OSError as e:
            diff = [f"{e.filename}: {e.strerror}"]
        except (RecordError, verdict.ReportsFileError) as e:
            diff = [f"{rec.name}: {e}"]
        bad += bool(diff)
        skip = ""
        if unjudged and not diff:
            skipped += 1
            skip = (f" # SKIP the host could not judge {len(unjudged)} step(s) the guest passed "
                    "(inconclusive, not a pass)")
        lines.append(f"{'not ok' if diff else 'ok'} {n} - {desc}{skip}")
        lines.extend("# " + d for d in diff)
        lines.extend("# inconclusive on the host: " + d for d in unjudged)
    lines.append(f"# Totals: pass:{len(pairs) - bad - skipped} fail:{bad} xfail:0 xpass:0 skip:{skipped} error:0")
    return "\n".join(lines) + "\n", 1 if bad else 0


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="sweep_judge.py", description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("judge", help="judge one sweep's records; KTAP (or JSON) on stdout")
    p.add_argument("records", help="the records (JSON lines) of fault-sweep --records, or - for stdin")
    p.add_argument("-o", "--output", help="write the result there instead of stdout")
    p.add_argument("--format", choices=("ktap", "json"), default="ktap")
    p = sub.add_parser("agree", help="KTAP: each STEM.jsonl of FOLDER judged on the host reads as "
                       "the guest's STEM.tap, case for case")
    p.add_argument("folder", type=Path, help="a guest-sweep.sh output (OUT/ROW/guest/fault-sweep)")
    p.add_argument("-o", "--output", help="write the KTAP there instead of stdout")
    try:
        args = ap.parse_args(argv)
    except SystemExit as e:
        return 0 if e.code == 0 else 2
    if args.cmd == "agree":
        out, rc = agree(args.folder)
        if rc == 2:
            sys.stderr.write(out)
        elif args.output:
            Path(args.output).write_text(out)
        else:
            sys.stdout.write(out)
        return rc
    try:
        text = sys.stdin.read() if args.records == "-" else Path(args.records).read_text(errors="replace")
    except OSError as e:
        print(f"sweep_judge.py: {args.records}: {e.strerror}", file=sys.stderr)
        return 2
    try:
        j = judge(read_records(text))
    except (RecordError, verdict.ReportsFileError) as e:
        print(f"sweep_judge.py: {args.records}: {e}", file=sys.stderr)
        return 2
    out = render_ktap(j) if args.format == "ktap" else render_json(j)
    if args.output:
        Path(args.output).write_text(out)
    else:
        sys.stdout.write(out)
    return j.exit_status


if __name__ == "__main__":
    sys.exit(main())

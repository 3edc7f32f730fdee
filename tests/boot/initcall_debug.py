"""initcall_debug in a boot's dmesg: what stock printed is printed again,
and every call says where it runs.

Stock 6.12 prints ``calling  fn+0x0/0x30 @ 1`` and ``initcall fn+0x0/0x30
returned 0 after 12 usecs`` from probes on the initcall tracepoints, which
console_init() fires too.  The series keeps those lines and appends
`` prio=<priority> modname=<KBUILD_MODNAME>``, or ``prio=early`` /
``prio=console`` for those two levels.  Host-side checks over dmesg.txt of
scripts/test's boots; each returns a list of problems (empty = holds).
"""

from __future__ import annotations

import re

from analysis.model import EventName, bare_func
import bootcheck
from bootcheck import read_dmesg
from analysis.schema import DMESG_CALLING_INFO_RE, DMESG_RETURNED_INFO_RE

# The series' suffix of an initcall_debug line, after what stock printed
# (the lines themselves are the analysis's dmesg events).
WHERE_RE = re.compile(r"^ prio=(-?\d+|early|console) modname=\S+$")
"""Example: `` prio=-5000 modname=workqueue``"""

# Console initcalls of the test config (tinyconfig + kconfig/base.config).
CONSOLE_INITCALLS = ("con_init", "univ8250_console_init")

# The series' KUnit suite runs tables of its own through do_one_initcall()
# after the bands, outside any priority: its functions are named so.
KUNIT_PREFIX = "initexit_kunit_"


def boot_lines(dmesg: str) -> list[tuple[str, str, str]]:
    """(kind, function, suffix) of every calling/returned line before the
    kernel runs init, in order; kind is "calling" or "returned"."""
    parsed = read_dmesg(dmesg)
    end = min((n.line for n in parsed.notices if n.kind == "run-init"), default=None)
    out = []
    for e in parsed.events:
        if end is not None and e.line >= end:
            break
        if e.name is EventName.DMESG_CALLING:
            m = DMESG_CALLING_INFO_RE.match(e.info)
            if m and m.group(2) is None:   # not a module's ([module])
                out.append(("calling", bare_func(m.group(1)), m.group(4)))
        elif e.name is EventName.DMESG_RETURNED:
            m = DMESG_RETURNED_INFO_RE.match(e.info)
            if m and m.group(2) is None:
                out.append(("returned", bare_func(m.group(1)), m.group(5)))
    return out


def calls(dmesg: str) -> list[tuple[str, str]]:
    """(function, suffix) of every boot calling line, in order."""
    return [(f, w) for kind, f, w in boot_lines(dmesg) if kind == "calling"]


def check_stock_lines_kept(stock_dmesg: str, patched_dmesg: str) -> list[str]:
    """Stock's boot calling lines (by function) are a subsequence of the
    patched kernel's: none lost, none reordered, console initcalls included."""
    stock = [f for f, _ in calls(stock_dmesg)]
    patched = [f for f, _ in calls(patched_dmesg)]
    problems = []
    if len(stock) < 100:
        problems.append(f"only {len(stock)} calling lines in the stock boot: was initcall_debug on?")
    for name in CONSOLE_INITCALLS:
        if name not in stock:
            problems.append(f"stock printed no 'calling  {name}': the comparison needs it")
    j = 0
    for i, name in enumerate(stock):
        while j < len(patched) and patched[j] != name:
            j += 1
        if j == len(patched):
            where = "missing" if name not in patched else "out of order"
            problems.append(f"stock's calling line {i + 1} ({name}) is {where} in the patched boot "
                            f"(after {stock[i - 1] if i else 'the start'})")
            break
        j += 1
    return problems


def check_every_call_placed(dmesg: str) -> list[str]:
    """Every boot calling and returned line names a priority or a level and
    the KBUILD_MODNAME; the console initcalls say prio=console, and the calls
    before the first band (early) say prio=early."""
    problems = []
    lines = boot_lines(dmesg)
    calling = [(f, w) for kind, f, w in lines if kind == "calling"]
    if len(calling) < 100:
        problems.append("fewer than 100 calling lines: was initcall_debug on?")
    bare_lines = [f"{kind} {f}{w}" for kind, f, w in lines
                  if not WHERE_RE.match(w) and not f.startswith(KUNIT_PREFIX)]
    if bare_lines:
        problems.append(f"{len(bare_lines)} initcall_debug lines name no priority or level, e.g. {bare_lines[:2]}")
    suffix = dict(calling)
    for name in CONSOLE_INITCALLS:
        if name in suffix and not suffix[name].startswith(" prio=console "):
            problems.append(f"{name} is a console initcall but says{suffix[name]!r}")
    levels = [w.split()[0] for _, w in calling if WHERE_RE.match(w)]
    banded = [i for i, p in enumerate(levels) if p not in ("prio=early", "prio=console")]
    early = [i for i, p in enumerate(levels) if p == "prio=early"]
    if not early:
        problems.append("no calling line says prio=early")
    elif banded and early[-1] > banded[0]:
        problems.append("a prio=early call comes after the first band's")
    return problems


#: The converted objects' entries (their old module_init()/late_initcall()
#: names) and the KBUILD_MODNAME of their pairs.
CONVERTED_ENTRIES = {"fuse_init": "fuse", "init_btrfs_fs": "btrfs"}

#: Initcalls the series adds that stock has not: the module loader's debugfs
#: listing of loaded modules' pairs (kernel/module/initexit.c), and KUnit's
#: own (the test config's CONFIG_INITEXIT_KUNIT_TEST selects CONFIG_KUNIT).
SERIES_INITCALLS = ("module_initexit_debugfs_init", "kunit_init")

#: The KBUILD_MODNAMEs of the series' boot test objects
#: (CONFIG_TEST_INITEXIT_BOOT, lib/test_initexit_*; a KBUILD_MODNAME is its
#: origin's last part): their entries and pairs are calls stock has not.
SERIES_TEST_MODNAMES = tuple(sorted({origin.rsplit("/", 1)[-1] for origin in bootcheck.ORIGINS}))


def _modname(suffix: str) -> str:
    m = re.search(r" modname=(\S+)$", suffix)
    return m.group(1) if m else ""


def converted_pairs(dmesg: str) -> tuple[list[str], dict[str, list[str]]]:
    """The boot's calling lines by function, without the pair inits that
    ran inside a converted object's entry (between its calling and its
    returned line, with the object's modname), the series' own initcalls
    and test objects, and the KUnit suite's calls; and those pair inits by
    entry, in call order."""
    seq: list[str] = []
    inside: dict[str, list[str]] = {}
    open_entry = ""
    for kind, f, w in boot_lines(dmesg):
        if kind == "returned":
            if f == open_entry:
                open_entry = ""
            continue
        if open_entry and _modname(w) == CONVERTED_ENTRIES[open_entry]:
            inside[open_entry].append(f)
            continue
        if f in SERIES_INITCALLS or _modname(w) in SERIES_TEST_MODNAMES or f.startswith(KUNIT_PREFIX):
            continue
        seq.append(f)
        if f in CONVERTED_ENTRIES:
            open_entry = f
            inside[f] = []
    return seq, inside


def check_converted_keep_order(stock_dmesg: str, patched_dmesg: str,
                               want_pairs: dict[str, list[str]]) -> list[str]:
    """O1 (issue 34 point 2): with fuse and btrfs built in, the patched
    boot's initcall_debug calling sequence is stock's, except the converted
    objects' pair inits, which run inside their entry (stock's fuse_init and
    init_btrfs_fs, at stock's place), in ``want_pairs`` order.  The series'
    own initcalls and test objects are left out (listed above)."""
    stock = [f for f, _ in calls(stock_dmesg)]
    patched, inside = converted_pairs(patched_dmesg)
    problems = []
    if len(stock) < 100:
        problems.append(f"only {len(stock)} calling lines in the stock boot: was initcall_debug on?")
    for entry in CONVERTED_ENTRIES:
        if entry not in stock:
            problems.append(f"stock called no {entry}: build it with fuse and btrfs built in")
    if patched != stock:
        diff = next((i for i, (a, b) in enumerate(zip(stock, patched)) if a != b), min(len(stock), len(patched)))
        problems.append(f"calling line {diff + 1} differs: stock {stock[diff:diff + 3]}, "
                        f"patched {patched[diff:diff + 3]} ({len(stock)} vs {len(patched)} calls)")
    for entry, want in want_pairs.items():
        if inside.get(entry) != want:
            problems.append(f"inside {entry}: {inside.get(entry)}, expected {want}")
    return problems

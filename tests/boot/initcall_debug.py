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

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

CALLING_RE = re.compile(r"^\[\s*[\d.]+\] calling  (\S+) @ \d+(.*)$")
"""A calling line (PCI quirks print "pci ...: calling ..." and do not match).

Example: ``[    0.013141] calling  con_init+0x0/0x230 @ 0 prio=console modname=vt``
"""

RETURNED_RE = re.compile(r"^\[\s*[\d.]+\] initcall (\S+) returned -?\d+ after \d+ usecs(.*)$")
"""A returned line.  Example: ``[    0.3] initcall foo+0x0/0x30 returned 0 after 12 usecs prio=0 modname=foo``"""

WHERE_RE = re.compile(r"^ prio=(-?\d+|early|console) modname=\S+$")
"""The series' suffix.  Example: `` prio=-5000 modname=workqueue``"""

BOOT_END = "Run /init as init process"

# Console initcalls of the test config (tinyconfig + kconfig/base.config).
CONSOLE_INITCALLS = ("con_init", "univ8250_console_init")


def function(symbol: str) -> str:
    """``con_init+0x0/0x230`` -> ``con_init`` (sizes differ between kernels)."""
    return symbol.split("+", 1)[0]


def boot_lines(dmesg: str) -> list[str]:
    lines = dmesg.splitlines()
    for i, line in enumerate(lines):
        if BOOT_END in line:
            return lines[:i]
    return lines


def calls(dmesg: str) -> list[tuple[str, str]]:
    """(function, suffix) of every boot calling line, in order."""
    out = []
    for line in boot_lines(dmesg):
        m = CALLING_RE.match(line)
        if m:
            out.append((function(m.group(1)), m.group(2)))
    return out


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
    calling = [CALLING_RE.match(line) for line in lines]
    returned = [RETURNED_RE.match(line) for line in lines]
    got = [m for m in calling + returned if m]
    if len([m for m in calling if m]) < 100:
        problems.append("fewer than 100 calling lines: was initcall_debug on?")
    bare = [m.group(0) for m in got if not WHERE_RE.match(m.group(2))]
    if bare:
        problems.append(f"{len(bare)} initcall_debug lines name no priority or level, e.g. {bare[:2]}")
    suffix = {function(m.group(1)): m.group(2) for m in calling if m}
    for name in CONSOLE_INITCALLS:
        if name in suffix and not suffix[name].startswith(" prio=console "):
            problems.append(f"{name} is a console initcall but says{suffix[name]!r}")
    levels = [m.group(2).split()[0] for m in calling if m and WHERE_RE.match(m.group(2))]
    banded = [i for i, p in enumerate(levels) if p not in ("prio=early", "prio=console")]
    early = [i for i, p in enumerate(levels) if p == "prio=early"]
    if not early:
        problems.append("no calling line says prio=early")
    elif banded and early[-1] > banded[0]:
        problems.append("a prio=early call comes after the first band's")
    return problems

"""Every initcall_debug line format of the kernels from 5.10 to the newest
found, as each version's own source prints it, is read by the analysis.

fixtures/kernel-formats.tsv holds the printk format strings of init/main.c
and drivers/base/dd.c for each version, with the tree, commit and blob they
were read from.  Here each format is rendered as the kernel's vsnprintf()
would (the conversions these strings use, with realistic values), put in a
small boot log under that version's banner, and the analysis must give back
the call, its result and duration, the probe inside it, the level and the
blacklisted call.  A conversion this rendering does not know, or a line the
analysis does not read, fails.
"""

from __future__ import annotations

import csv
import os
import re
from typing import NamedTuple

import pytest

from analysis.build import build_capture
from analysis.model import ProbeMode
from analysis.parse import parse_text

HERE = os.path.dirname(os.path.abspath(__file__))
TABLE = os.path.join(HERE, "fixtures", "kernel-formats.tsv")
KINDS = ("calling", "returned", "blacklisted", "level", "probe")


class Format(NamedTuple):
    version: str
    kind: str
    printk: str  # KERN_DEBUG, pr_debug, or "-": this version prints no such line
    literal: str
    arguments: str
    repository: str
    ref: str
    path: str


def _table() -> list[Format]:
    with open(TABLE, encoding="utf-8") as f:
        rows = list(csv.DictReader((line for line in f if not line.startswith("#")), delimiter="\t", quoting=csv.QUOTE_NONE))
    return [Format(r["version"], r["kind"], r["printk"], r["format"], r["arguments"], r["repository"], r["ref"], r["path"])
            for r in rows]


FORMATS = _table()
VERSIONS = sorted({f.version for f in FORMATS}, key=lambda v: tuple(int(x) for x in v.split(".")))


def c_string(literal: str) -> str:
    """The text of a C string literal as the source spells it: ``"a\\n"``."""
    m = re.fullmatch(r'"((?:[^"\\]|\\.)*)"', literal)
    if m is None:
        raise ValueError(f"not a C string literal: {literal}")
    return re.sub(r"\\(.)", lambda e: {"n": "\n", "t": "\t"}.get(e.group(1), e.group(1)), m.group(1))


#: What each conversion prints, kernel style: %pS a symbol with offset/size.
CONVERSION = re.compile(r"%(pS|lld|i|d|s|%)")


def render(fmt: str, *args: object) -> str:
    """``fmt`` with ``args`` substituted as vsnprintf() would for the
    conversions these formats use; any other conversion is an error."""
    values = list(args)
    rest = CONVERSION.sub("", fmt)
    if "%" in rest:
        raise ValueError(f"a conversion this test does not render: {fmt!r}")

    def one(m: re.Match[str]) -> str:
        if m.group(1) == "%":
            return "%"
        v = values.pop(0)
        if m.group(1) in ("i", "d", "lld"):
            assert isinstance(v, int)
            return str(v)
        assert isinstance(v, str)
        return v

    out = CONVERSION.sub(one, fmt)
    if values:
        raise ValueError(f"{fmt!r} takes fewer arguments than {args!r}")
    return out


FUNC = "acpi_init+0x0/0x3c0"
RET, USECS = -19, 1234
DEVICE, PROBE_RET, PROBE_USECS = "0000:00:1f.2", 0, 987
BLACKLISTED = "fuse_init"
LEVEL = "device"


def _boot_log(version: str) -> str:
    """A boot log of kernel ``version``: its banner, the level line (if it
    prints one), a blacklisted call, a call with a probe inside it."""
    fmts = {f.kind: f for f in FORMATS if f.version == version}
    lines = [f"Linux version {version} (builder@host) (gcc (Debian 12.2.0-14) 12.2.0) #1 SMP PREEMPT_DYNAMIC\n"]
    if fmts["level"].printk != "-":
        lines.append(render(c_string(fmts["level"].literal), LEVEL))
    lines.append(render(c_string(fmts["blacklisted"].literal), BLACKLISTED))
    lines.append(render(c_string(fmts["calling"].literal), FUNC, 1))
    lines.append(render(c_string(fmts["probe"].literal), DEVICE, PROBE_RET, PROBE_USECS))
    lines.append(render(c_string(fmts["returned"].literal), FUNC, RET, USECS))
    stamped = []
    for i, line in enumerate(lines):
        assert line.endswith("\n") and line.count("\n") == 1, line
        stamped.append(f"[    {1 + i * 0.001:.6f}] {line}")
    return "".join(stamped)


def test_the_table_covers_5_10_to_the_newest_with_its_sources() -> None:
    majors = {".".join(v.split(".")[:2]) for v in VERSIONS}
    assert {"5.10", "5.15", "6.1", "6.6", "6.12"} <= majors
    assert max(tuple(int(x) for x in m.split(".")) for m in majors) >= (7, 1)
    for v in VERSIONS:
        kinds = [f.kind for f in FORMATS if f.version == v]
        assert sorted(kinds) == sorted(KINDS), v
    for f in FORMATS:
        assert f.repository.startswith(("github:", "debian:")) and f.ref and f.path in (
            "init/main.c", "drivers/base/dd.c"), f
        assert f.printk in ("KERN_DEBUG", "pr_debug", "-"), f
        # Every version prints its calls and probes; level lines came later.
        if f.kind in ("calling", "returned", "probe", "blacklisted"):
            assert f.printk != "-", f


def test_render_is_vsnprintf_for_these_formats() -> None:
    assert render(c_string(r'"calling  %pS @ %i\n"'), FUNC, 1) == f"calling  {FUNC} @ 1\n"
    assert render("100%% %d", 5) == "100% 5"
    with pytest.raises(ValueError):
        render("%llu usecs", 5)
    with pytest.raises(ValueError):
        render("%s", "a", "b")


@pytest.mark.parametrize("version", VERSIONS)
def test_each_versions_lines_are_read(version: str) -> None:
    text = _boot_log(version)
    parsed = parse_text(text, f"kernel-{version}.log")
    cap = build_capture(parsed)
    # The call, its result and its duration.
    assert [(s.func, s.ret, s.duration_ns) for s in cap.spans] == [(FUNC, RET, USECS * 1000)]
    [span] = cap.spans
    # The probe, inside the call.
    assert [(p.device, p.ret, p.duration_ns, p.mode, p.call) for p in cap.probes] == [
        (DEVICE, PROBE_RET, PROBE_USECS * 1000, ProbeMode.IN_CALL, span.start.line)]
    # The level, where the version prints one.
    has_level = any(f.version == version and f.kind == "level" and f.printk != "-" for f in FORMATS)
    assert cap.level_names == ((LEVEL,) if has_level else ())
    assert span.level == (LEVEL if has_level else None)
    # The blacklisted call: a notice naming it (it prints no call lines).
    assert [(n.kind, n.func) for n in parsed.notices] == [("blacklisted", BLACKLISTED)]
    assert not parsed.gaps and not parsed.problems
    # "usecs" of 1024 ns (5.10, 5.15: ktime_to_ns(delta) >> 10) are said to be so.
    [returned] = [f for f in FORMATS if f.version == version and f.kind == "returned"]
    ns_shifted = "ktime_us_delta" not in returned.arguments
    assert any("nanoseconds / 1024" in n for n in parsed.notes) == ns_shifted

#!/usr/bin/python3
"""Copy tracepoints/formats/*.format (and, with --report FILE, a few real
initexit lines of a `trace-cmd report`) into tracepoints/README.md.

  tracepoints/update-reference.py [--report OUT/boot.report.txt ...] [--check]

--report takes the `trace-cmd report` texts of one boot, as scripts/run
writes them (OUT/boot.report.txt, OUT/scenario.report.txt).  From them the
page gets the first line of each event per path (boot, module), per reason
(unload, unwind), and the first failing initexit_init_finish per path, in
time order, under a sentence naming the capture (run folder, files, kernel
version from OUT/dmesg.txt).  Without --report those lines are kept as
they are.

--check changes nothing and exits 1 when README.md is not up to date with
tracepoints/formats/ (tests/boot/test_reference.py runs it).
"""

from __future__ import annotations

import argparse
import difflib
import pathlib
import re
import sys
from typing import Optional

HERE = pathlib.Path(__file__).resolve().parent
README = HERE / "README.md"
FORMATS = HERE / "formats"

#: trace-cmd report's "comm-pid [cpu] secs.nsecs: event: fields" line.
LINE = re.compile(r"\[\d+\]\s+(\d+\.\d+):\s+(initexit_[a-z_]+):\s+.*\bpath=(\w+)")


def formats_block(formats: pathlib.Path = FORMATS) -> str:
    parts = []
    for f in sorted(formats.glob("*.format")):
        parts.append(f"### `{f.stem}`\n\n```\n{f.read_text().rstrip()}\n```\n")
    return "\n".join(parts)


def pick_lines(reports: list[pathlib.Path]) -> list[str]:
    """The first line of each (path, event, reason) seen in the reports, and
    for each path the failing initexit_init_finish that its first unwind
    names (else its first failing init), in time order."""
    picked: dict[tuple[str, str, str, bool], tuple[float, int, str]] = {}
    failing: list[tuple[float, int, str, str]] = []  # (time, n, path, line)
    n = 0
    for report in reports:
        for line in report.read_text(errors="replace").splitlines():
            m = LINE.search(line)
            if not m:
                continue
            n += 1
            entry = (float(m.group(1)), n, line.rstrip())
            ret = re.search(r"\bret=(-?\d+)", line)
            if ret and int(ret.group(1)) < 0:
                failing.append((entry[0], n, m.group(3), entry[2]))
                continue
            reason = re.search(r"\breason=(\w+)", line)
            picked.setdefault((m.group(3), m.group(2), reason.group(1) if reason else "", False), entry)
    for (path, event, _, _), (t, k, line) in list(picked.items()):
        if event != "initexit_unwind":
            continue
        fields = dict(re.findall(r"\b(origin|failed_func|error)=(\S+)", line))
        named = [f for f in failing if f[2] == path and f[1] < k
                 and f"origin={fields.get('origin')} " in f[3]
                 and f"func={fields.get('failed_func')} " in f[3]
                 and f"ret={fields.get('error')} " in f[3]]
        if named:
            picked[(path, "initexit_init_finish", "", True)] = named[-1][:2] + (named[-1][3],)
    for t, k, path, line in failing:
        picked.setdefault((path, "initexit_init_finish", "", True), (t, k, line))
    return [line for _, _, line in sorted(picked.values())]


def kernel_version(report: pathlib.Path) -> Optional[str]:
    dmesg = report.parent / "dmesg.txt"
    if not dmesg.is_file():
        return None
    m = re.search(r"Linux version (\S+)", dmesg.read_text(errors="replace"))
    return m.group(1) if m else None


def report_block(reports: list[pathlib.Path]) -> str:
    """The sentence naming the capture and the picked lines."""
    folders = sorted({f"`{r.resolve().parent.parent.name}`" for r in reports})
    files = ", ".join(f"`{r.resolve().parent.name}/{r.name}`" for r in reports)
    versions = sorted({v for v in (kernel_version(r) for r in reports) if v})
    kernel = f", kernel {', '.join(versions)}" if versions else ""
    head = (
        f"From the capture in {', '.join(folders)} ({files}{kernel}), "
        "by `tracepoints/update-reference.py --report`: the first line of each "
        "event per path and reason, and the failing init each path's first "
        "unwind names, in time order.\n\n"
    )
    return head + "```\n" + "\n".join(pick_lines(reports)) + "\n```\n"


def replace(text: str, name: str, body: str) -> str:
    begin, end = f"<!-- {name}: begin -->\n", f"<!-- {name}: end -->"
    i, j = text.index(begin) + len(begin), text.index(end)
    return text[:i] + body + text[j:]


def render(text: str, formats: pathlib.Path = FORMATS, reports: Optional[list[pathlib.Path]] = None) -> str:
    """The page ``text`` with the format files (and report lines) copied in."""
    new = replace(text, "formats", formats_block(formats))
    if reports:
        new = replace(new, "report-lines", report_block(reports))
    return new


def stale(text: str, formats: pathlib.Path = FORMATS) -> list[str]:
    """Problems when the page ``text`` does not embed the format files of
    ``formats`` exactly (empty when it is up to date)."""
    problems = []
    files = sorted(formats.glob("*.format"))
    if not files:
        problems.append(f"no *.format files in {formats}")
    for f in files:
        if f"### `{f.stem}`" not in text:
            problems.append(f"no section for {f.stem}")
    want = render(text, formats)
    if want != text:
        diff = difflib.unified_diff(text.splitlines(), want.splitlines(), "README.md", "up to date",
                                    lineterm="", n=0)
        problems.append("tracepoints/README.md is stale: run tracepoints/update-reference.py\n" + "\n".join(diff))
    return problems


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--report", type=pathlib.Path, action="append",
                    help="a trace-cmd report text with initexit events (repeatable, one boot)")
    ap.add_argument("--check", action="store_true", help="exit 1 if README.md is stale")
    args = ap.parse_args()
    old = README.read_text()
    if args.check:
        problems = stale(old)
        for p in problems:
            print(p, file=sys.stderr)
        return 1 if problems else 0
    README.write_text(render(old, FORMATS, args.report))
    return 0


if __name__ == "__main__":
    sys.exit(main())

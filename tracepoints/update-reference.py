#!/usr/bin/python3
"""Copy tracepoints/formats/*.format (and, with --report FILE, a few real
initexit lines of a `trace-cmd report`) into tracepoints/README.md.

  tracepoints/update-reference.py [--report OUT/boot.report.txt ...] [--check]

--check changes nothing and exits 1 when README.md is not up to date.
"""

from __future__ import annotations

import argparse
import pathlib
import re
import sys

HERE = pathlib.Path(__file__).resolve().parent
README = HERE / "README.md"


def formats_block() -> str:
    parts = []
    for f in sorted((HERE / "formats").glob("*.format")):
        parts.append(f"### `{f.stem}`\n\n```\n{f.read_text().rstrip()}\n```\n")
    return "\n".join(parts)


def report_block(reports: list[pathlib.Path]) -> str:
    """The first line of each (event, path, reason) seen in the reports."""
    picked: dict[tuple[str, str, str], str] = {}
    for report in reports:
        for line in report.read_text(errors="replace").splitlines():
            m = re.search(r"\b(initexit_[a-z_]+):.*path=(\w+)", line)
            if not m:
                continue
            reason = re.search(r"reason=(\w+)", line)
            key = (m.group(2), m.group(1), reason.group(1) if reason else "")
            picked.setdefault(key, line.rstrip())
    return "```\n" + "\n".join(picked[k] for k in sorted(picked)) + "\n```\n"


def replace(text: str, name: str, body: str) -> str:
    begin, end = f"<!-- {name}: begin -->\n", f"<!-- {name}: end -->"
    i, j = text.index(begin) + len(begin), text.index(end)
    return text[:i] + body + text[j:]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--report", type=pathlib.Path, action="append",
                    help="a trace-cmd report text with initexit events (repeatable)")
    ap.add_argument("--check", action="store_true", help="exit 1 if README.md is stale")
    args = ap.parse_args()
    old = README.read_text()
    new = replace(old, "formats", formats_block())
    if args.report:
        new = replace(new, "report-lines", report_block(args.report))
    if args.check:
        if new != old:
            print("tracepoints/README.md is stale: run tracepoints/update-reference.py", file=sys.stderr)
            return 1
        return 0
    README.write_text(new)
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Sort compiler and sparse warnings into the series' and the rest's.

Usage: series_lines.py TREE BASE WARNINGS

A warning ``path:line[:col]: ...`` is the series' when ``path`` is a file
the series (BASE..HEAD of TREE) adds, or ``line`` is one the series adds
or changes in it (``git diff -U0`` hunks of HEAD); anything else is in
stock code the series did not touch (W=1 and sparse check whole files, and
a header's warning is reported in every file that includes it; modpost's
have no line and are not given to it).  Prints
each warning once, prefixed ``new: `` or ``stock: ``, new ones first, and
exits 0.  scripts/check-configs reports the two counts.
"""

from __future__ import annotations

import re
import subprocess
import sys

WARNING_RE = re.compile(r"^(?:\./)?([^:\s]+):(\d+)(?::\d+)?: ")
HUNK_RE = re.compile(r"^@@ -\S+ \+(\d+)(?:,(\d+))? @@")


def added_lines(tree: str, base: str) -> tuple[set[str], dict[str, set[int]]]:
    """Files the series adds, and per changed file the lines of HEAD it adds."""
    def git(*args: str) -> str:
        return subprocess.run(["git", "-C", tree, *args], check=True, capture_output=True,
                              text=True).stdout
    plain = ("--no-renames", "--no-ext-diff", "--no-color", "--src-prefix=a/", "--dst-prefix=b/")
    new_files = set(git("diff", *plain, "--name-only", "--diff-filter=A", base, "HEAD").split())
    lines: dict[str, set[int]] = {}
    path = ""
    for line in git("diff", *plain, "-U0", "--diff-filter=M", base, "HEAD").splitlines():
        if line.startswith("+++ b/"):
            path = line[6:]
            lines[path] = set()
        m = HUNK_RE.match(line)
        if m and path:
            start, count = int(m.group(1)), int(m.group(2) or 1)
            lines[path].update(range(start, start + count))
    return new_files, lines


def main(argv: list[str]) -> int:
    if len(argv) != 4:
        sys.stderr.write(__doc__.split("\n\n")[1] + "\n")
        return 2
    tree, base, warnings = argv[1:]
    new_files, lines = added_lines(tree, base)
    seen: set[str] = set()
    new: list[str] = []
    stock: list[str] = []
    with open(warnings, encoding="utf-8", errors="replace") as f:
        for raw in f:
            w = raw.rstrip("\n")
            if not w or w in seen:
                continue
            seen.add(w)
            m = WARNING_RE.match(w)
            ours = m is not None and (m.group(1) in new_files or int(m.group(2)) in lines.get(m.group(1), ()))
            (new if ours else stock).append(w)
    for w in new:
        print("new: " + w)
    for w in stock:
        print("stock: " + w)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

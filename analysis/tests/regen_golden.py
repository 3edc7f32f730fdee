"""Rewrite the golden files after an intended output change; review the diff.

Run from the repository root: ``/usr/bin/python3 -m analysis.tests.regen_golden``.
"""

from __future__ import annotations

import os

from analysis.tests.golden_outputs import (
    DIFF_GOLDEN,
    GOLDEN,
    GOLDEN_FIXTURES,
    diff_golden_path,
    golden_path,
    render_all,
    render_diff_all,
)


def main() -> None:
    os.makedirs(GOLDEN, exist_ok=True)
    n = 0
    for fixture in GOLDEN_FIXTURES:
        for kind, text in render_all(fixture).items():
            with open(golden_path(fixture, kind), "w", encoding="utf-8") as f:
                f.write(text)
            n += 1
    for name in DIFF_GOLDEN:
        for kind, text in render_diff_all(name).items():
            with open(diff_golden_path(name, kind), "w", encoding="utf-8") as f:
                f.write(text)
            n += 1
    print(f"wrote {n} golden files to {GOLDEN}; check `git diff analysis/tests/golden`")


if __name__ == "__main__":
    main()

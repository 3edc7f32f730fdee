#!/usr/bin/python3
"""Write meta.json for one scripts/run output folder.

Usage: write_meta.py OUT.json STEPS.tsv GUEST_INFO.txt KEY=VALUE...

STEPS.tsv holds "step<TAB>seconds" lines (scripts/lib/common.sh), and
GUEST_INFO.txt "key=value" lines written by the guest's init; either file
may be missing (a run that failed early). KEY=VALUE pairs come from the
host; a KEY ending in ":int" is stored as a number.
"""
import json
import sys
from pathlib import Path


def read_pairs(path: Path) -> dict[str, str]:
    pairs: dict[str, str] = {}
    if path.is_file():
        for line in path.read_text(errors="replace").splitlines():
            key, sep, value = line.partition("=")
            if sep:
                pairs[key] = value
    return pairs


def read_steps(path: Path) -> dict[str, float]:
    steps: dict[str, float] = {}
    if path.is_file():
        for line in path.read_text().splitlines():
            name, _, secs = line.partition("\t")
            if name:
                steps[name] = float(secs or 0)
    return steps


def main(argv: list[str]) -> int:
    if len(argv) < 4:
        print(__doc__, file=sys.stderr)
        return 2
    out, steps, guest = Path(argv[1]), Path(argv[2]), Path(argv[3])
    meta: dict[str, object] = {}
    for arg in argv[4:]:
        key, _, value = arg.partition("=")
        if key.endswith(":int"):
            meta[key[:-4]] = int(value) if value.lstrip("-").isdigit() else None
        else:
            meta[key] = value
    meta["guest"] = read_pairs(guest)
    meta["steps_seconds"] = read_steps(steps)
    out.write_text(json.dumps(meta, indent=2, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

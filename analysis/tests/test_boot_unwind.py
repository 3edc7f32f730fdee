"""The boot path of built-in objects (stage b: each object's pairs run at
its entry): boot-pairs-in-entry, boot-priority-order and
unwind-after-failure on the synthetic boot of analysis/synth.py
(ie_boot_unwind unwinds at once inside bunw_entry; ie_boot_first fails
with nothing to unwind; ie_boot_keep and ie_boot_band are refused at bind
and their entries run nothing), and on copies of it broken the ways a
kernel could get it wrong."""

from __future__ import annotations

import os
import re

from analysis.build import build_capture
from analysis.checks import run_checks
from analysis.model import CheckState, Verdict
from analysis.parse import parse_text

FIXTURE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures", "synthetic-boot-unwind.txt")


def _verdict(text: str) -> Verdict:
    return run_checks(build_capture(parse_text(text, "synthetic-boot-unwind.txt")))


def _findings(text: str, check: str) -> list[str]:
    r = next(r for r in _verdict(text).results if r.name == check)
    return [f.message for f in r.findings] if r.state is CheckState.FAIL else []


def _lines() -> list[str]:
    with open(FIXTURE, encoding="utf-8") as f:
        return f.read().splitlines(keepends=True)


def _at(lines: list[str], pattern: str) -> int:
    rx = re.compile(pattern)
    return next(i for i, x in enumerate(lines) if rx.search(x))


def _move_after(lines: list[str], block: tuple[int, int], after: int) -> str:
    """``block`` [a, b) moved to just after line ``after``, every line
    keeping its own time slot (the stamps stay increasing)."""
    stamps = [re.search(r"\] +(\d+\.\d+):", x) for x in lines]
    chunk = lines[block[0]:block[1]]
    rest = lines[:block[0]] + lines[block[1]:]
    at = after + 1 - (block[1] - block[0] if after >= block[1] else 0)
    moved = rest[:at] + chunk + rest[at:]
    out = []
    for i, x in enumerate(moved):
        m, own = stamps[i], re.search(r"\] +(\d+\.\d+):", x)
        out.append(x.replace(own.group(1), m.group(1), 1) if m and own else x)
    return "".join(out)


def test_the_synthetic_boot_holds() -> None:
    v = _verdict("".join(_lines()))
    assert v.ok, [f.message for r in v.results for f in r.findings]
    state = {r.name: r.state for r in v.results}
    assert state["boot-pairs-in-entry"] is CheckState.PASS
    assert state["unwind-after-failure"] is CheckState.PASS


def test_a_missing_unwind_exit_is_a_finding() -> None:
    text = "".join(x for x in _lines() if not ("origin=ie_boot_unwind" in x and "func=bunw_fs_exit" in x))
    found = _findings(text, "unwind-after-failure")
    assert len(found) == 1 and "missing exits: [#1 the exit of bunw_fs_init]" in found[0], found


def test_an_unwind_after_the_entry_returned_is_a_finding() -> None:
    # The unwind of bunw_fs (its three events) runs after bunw_entry
    # returned: the failure's unwind left the entry.
    ls = _lines()
    a = _at(ls, r"initexit_unwind: .*func=bunw_fs_exit")
    b = _at(ls, r"initexit_exit_finish: .*func=bunw_fs_exit") + 1
    found = _findings(_move_after(ls, (a, b), _at(ls, r"initcall_finish: +func=bunw_entry")),
                      "boot-pairs-in-entry")
    assert len(found) == 1 and "exit bunw_fs_exit" in found[0] and "outside any initcall" in found[0], found


def test_an_entry_that_hides_its_failure_is_a_finding() -> None:
    ls = _lines()
    i = _at(ls, r"initcall_finish: +func=bunw_entry")
    ls[i] = ls[i].replace("ret=-19", "ret=0")
    found = _findings("".join(ls), "boot-pairs-in-entry")
    assert len(found) == 1 and "returned 0, but init bunw_fail_init" in found[0], found
    # And one that fails although all its inits succeeded.
    ls = _lines()
    i = _at(ls, r"initcall_finish: +func=bok_entry")
    ls[i] = ls[i].replace("ret=0", "ret=-5")
    found = _findings("".join(ls), "boot-pairs-in-entry")
    assert len(found) == 1 and "every init inside it succeeded" in found[0], found


def test_a_pair_outside_any_entry_is_a_finding() -> None:
    # bok_entry's own start and finish gone: bok_init runs as a call of
    # do_initcalls() itself, as the old priority merge ran pairs.
    ls = [x for x in _lines() if "func=bok_entry" not in x]
    found = _findings("".join(ls), "boot-pairs-in-entry")
    assert len(found) == 1 and "init bok_init" in found[0] and "outside any initcall" in found[0], found


def test_two_objects_in_one_entry_and_one_object_in_two_are_findings() -> None:
    # bok_entry's start moved before bfirst_entry's: bfirst's pairs now run
    # inside it as well (and bfirst_entry inside bok_entry).
    ls = _lines()
    i = _at(ls, r"initcall_start: +func=bok_entry")
    found = _findings(_move_after(ls, (i, i + 1), _at(ls, r"initcall_start: +func=bfirst_entry") - 1),
                      "boot-pairs-in-entry")
    assert any("ran the pairs of 2 objects: ie_boot_first, ie_boot_ok" in f for f in found), found
    # One object's pairs split over two initcalls.
    ls = _lines()
    i = _at(ls, r"initexit_init_start: .*func=bunw_fs2_init")
    head = ls[i].split("initexit_init_start:")[0]
    split = [head + "initcall_finish:      func=bunw_entry+0x0 ret=0\n",
             head + "initcall_start:       func=bunw_entry2+0x0\n"]
    found = _findings("".join(ls[:i] + split + ls[i:]), "boot-pairs-in-entry")
    assert any("one object, one entry" in f and "bunw_entry2" in f for f in found), found


def test_a_classic_initcall_inside_an_entry_is_a_finding() -> None:
    ls = _lines()
    i = _at(ls, r"initexit_init_start: .*func=bok_init")
    head = ls[i].split("initexit_init_start:")[0]
    call = [head + "initcall_start:       func=stray_init+0x0\n",
            head + "initcall_finish:      func=stray_init+0x0 ret=0\n"]
    found = _findings("".join(ls[:i] + call + ls[i:]), "boot-pairs-in-entry")
    assert len(found) == 1 and "initcall stray_init" in found[0] and "bok_entry" in found[0], found


def test_pairs_out_of_order_or_out_of_band_inside_an_entry_are_findings() -> None:
    # bunw_fs2 (-980) before bunw_fs (-1000), as if the object were not sorted.
    ls = _lines()
    a = _at(ls, r"initexit_init_start: .*func=bunw_fs2_init")
    b = _at(ls, r"initexit_init_finish: .*func=bunw_fs2_init") + 1
    found = _findings(_move_after(ls, (a, b), _at(ls, r"initcall_start: +func=bunw_entry")),
                      "boot-pairs-in-entry")
    assert any("init bunw_fs_init (boot ie_boot_unwind #1 prio -1000) ran after init bunw_fs2_init" in f for f in found), found
    # bok's pair at prio 600 inside a device entry, whose band is [0, 500).
    text = "".join(x.replace("prio=5 func=bok_init", "prio=600 func=bok_init") for x in _lines())
    found = _findings(text, "boot-pairs-in-entry")
    assert len(found) == 1 and "band device, whose window is [0, 500)" in found[0], found


def test_an_entry_of_a_lower_band_after_a_higher_bands_call_is_a_finding() -> None:
    # The fs band fires again before bok_entry: it runs as an fs call after
    # bfirst_entry, a device call.
    ls = _lines()
    i = _at(ls, r"initcall_start: +func=bok_entry")
    head = ls[i].split("initcall_start:")[0]
    ls[i:i] = [head + "initcall_band:        band=fs prio=-1000\n"]
    found = _findings("".join(ls), "boot-priority-order")
    assert len(found) == 1 and "initcall bok_entry" in found[0] and "band fs" in found[0], found
    assert "(band device, prio 0)" in found[0], found

"""The boot unwind rule (unwind-after-failure on the boot path): a built-in
object is unwound only when nothing else ran between its first init and
the failure; otherwise no exit may run.  On the synthetic boot of
analysis/synth.py (ie_boot_unwind: pairs back to back, unwound;
ie_boot_spread: classic initcalls in between, not unwound) and on copies
of it broken the two ways a kernel could get it wrong."""

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


def _unwind_findings(text: str) -> list[str]:
    r = next(r for r in _verdict(text).results if r.name == "unwind-after-failure")
    return [f.message for f in r.findings] if r.state is CheckState.FAIL else []


def _text() -> str:
    with open(FIXTURE, encoding="utf-8") as f:
        return f.read()


def test_the_synthetic_boot_holds() -> None:
    assert _verdict(_text()).ok


def _with_unwind(failed_init: str, pair: str, failed: str) -> str:
    """The synthetic boot with an unwind of ``pair`` (its event fields, up to
    func=) right after ``failed_init``'s finish, naming ``failed``."""
    lines = _text().splitlines(keepends=True)
    at = next(i for i, x in enumerate(lines) if "initexit_init_finish:" in x and f"func={failed_init}" in x) + 1
    ts = re.search(r"(\d+\.\d+):", lines[at - 1]).group(1)  # type: ignore[union-attr]
    head = f"         swapper-1     [000]     {ts}: "
    lines[at:at] = [head + f"initexit_unwind:      {pair} {failed}\n",
                    head + f"initexit_exit_start:  {pair} reason=unwind\n",
                    head + f"initexit_exit_finish: {pair} reason=unwind duration_ns=0\n"]
    return "".join(lines)


def test_an_unwind_across_other_calls_is_a_finding() -> None:
    # ie_boot_spread's arch pair unwound after its device pair failed,
    # although the bands between ran their initcalls.
    found = _unwind_findings(_with_unwind(
        "bspr_dev_init", "path=boot origin=ie_boot_spread idx=0 prio=-3000 func=bspr_arch_exit",
        "failed_idx=5 failed_prio=0 failed_func=bspr_dev_init error=-12"))
    assert len(found) == 1 and "ie_boot_spread" in found[0], found
    assert "although" in found[0] and "ran since #0 bspr_arch_init" in found[0], found


def test_a_missing_unwind_of_adjacent_pairs_is_a_finding() -> None:
    # ie_boot_unwind's pairs ran back to back: its exits must run.
    text = "".join(x for x in _text().splitlines(keepends=True)
                   if not ("origin=ie_boot_unwind" in x and "func=bunw_fs_exit" in x))
    found = _unwind_findings(text)
    assert len(found) == 1 and "missing exits: [#1 the exit of bunw_fs_init]" in found[0], found


def test_an_unwind_around_an_exitless_init_is_a_finding() -> None:
    # ie_boot_keep ran back to back, but bkeep_b_init (has_exit=0) stays:
    # unwinding bkeep_a under it would leave half an object.
    found = _unwind_findings(_with_unwind(
        "bkeep_c_init", "path=boot origin=ie_boot_keep idx=7 prio=600 func=bkeep_a_exit",
        "failed_idx=9 failed_prio=602 failed_func=bkeep_c_init error=-5"))
    assert len(found) == 1 and "ie_boot_keep" in found[0] and "#8 bkeep_b_init" in found[0], found
    assert "has no exit" in found[0], found

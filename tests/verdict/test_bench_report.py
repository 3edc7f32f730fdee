"""scripts/lib/bench_report.py's per-pair figures and scripts/lib/bench_doc.py's
line about them (issue 35, B1): an unload whose median moves by whole timer
ticks is read from its minimum, and the ticks are counted, not hidden."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts" / "lib"))

import bench_doc  # noqa: E402
import bench_report  # noqa: E402
from bench_report import Samples, per_pair_overhead  # noqa: E402


def test_minimum_and_ticks_beside_the_median() -> None:
    # single_256: 2,206 µs of work, one sample an RCU tick later; pairs_256:
    # 5.6 µs more of work, three samples one or two ticks later.
    single = Samples([2206.2, 2206.4, 2206.3, 3206.2, 2206.5])
    pairs = Samples([2211.8, 3211.9, 3212.0, 4211.8, 2212.0])
    ov = per_pair_overhead(single, pairs, 256)
    assert round(ov["min"] * 1e3) == round((2211.8 - 2206.2) / 256 * 1e3)  # 22 instructions
    assert ov["median"] * 1e3 > 3000  # the median counts a tick: 1,000,000 / 256
    assert (ov["ticks_single"], ov["ticks_pairs"], ov["samples"]) == (1.0, 3.0, 5.0)


def test_no_tick_when_the_spread_is_work() -> None:
    single = Samples([100.0, 100.4, 100.2])
    pairs = Samples([130.0, 130.3, 130.1])
    ov = per_pair_overhead(single, pairs, 1)
    assert (ov["ticks_single"], ov["ticks_pairs"]) == (0.0, 0.0)
    assert round(ov["min"], 1) == 30.0 and round(ov["median"], 1) == 29.9


def test_half_a_tick_is_the_threshold() -> None:
    tick = bench_report.TICK_US
    s = Samples([10.0, 10.0 + tick / 2 - 0.1, 10.0 + tick / 2])
    ov = per_pair_overhead(s, s, 1)
    assert ov["ticks_single"] == 1.0


def test_the_cover_letter_says_the_minima_and_the_ticks() -> None:
    ov = per_pair_overhead(Samples([2206.2, 3206.2]), Samples([2211.8, 3211.9]), 256)
    text = bench_doc.cover({"rows": [{"overhead_us": {"unload_256": ov}}], "host": {"runs": "3"}})
    assert "per pair ((pairs_N - single_N) / N, medians): unload N=256 +22" in text
    assert "from the minima" in text and "unload N=256 +22 (1/1 of 2 samples a tick above)" in text

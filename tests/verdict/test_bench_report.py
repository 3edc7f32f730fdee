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


def test_per_pair_by_step_of_load_module() -> None:
    # bench_pairs_16 spends 16 x 500 more in relocation and 16 x 300 more in
    # the init step than bench_single_16; the other steps cost the same.
    single = [{"check": 1000.0, "relocate": 2000.0, "init": 5000.0}] * 3
    pairs = [{"check": 1000.0, "relocate": 2000.0 + 16 * 500, "init": 5000.0 + 16 * 300}] * 2 + [
        {"check": 1100.0, "relocate": 2000.0 + 16 * 500, "init": 5000.0 + 16 * 300, "initexit": 16 * 40.0}]
    got = bench_report.profile_per_pair({"bench_single_16": single, "bench_pairs_16": pairs}, 16)
    assert got["relocate"] == 500 and got["init"] == 300 and got["check"] == 0
    assert got["initexit"] == 0  # the median of 0, 0, 640
    assert got["total"] == 800
    assert bench_report.profile_per_pair({"bench_pairs_1": pairs}, 1) == {}


def test_the_cover_letter_names_the_costliest_steps_first() -> None:
    steps = {"load_256": {"check": 1.0, "relocate": 420.0, "symbols": 1100.0, "total": 1521.0}}
    text = bench_doc.cover({"rows": [{"per_pair_by_step_ns": steps}], "host": {"runs": "3"}})
    assert "load N=256: total +1,521; symbols +1,100, relocate +420, check +1 instructions" in text


# bench/profile_load.py: the stamps go where it says, or nowhere.
sys.path.insert(0, str(ROOT / "bench"))
import profile_load  # noqa: E402

MAIN_C = """static int early_mod_check(struct load_info *info, int flags)
{
	return 0;
}

static int load_module(struct load_info *info, const char __user *uargs,
		       int flags)
{
	struct module *mod;
	long err = 0;
	char *after_dashes;

	err = module_sig_check(info, flags);
	/* Figure out module layout, and allocate all the memory. */
	mod = layout_and_allocate(info, flags);
	module_allocated = true;
	/* Fix up syms, so that st_value is a pointer to location. */
	err = simplify_symbols(mod, info);
	err = apply_relocations(mod, info);
	err = post_relocation(mod, info);
	/* Finally it's fully formed, ready to start executing. */
	err = complete_formation(mod, info);
	/* Link in to sysfs. */
	err = mod_sysfs_setup(mod, info, mod->kp, mod->num_kp);
	if (is_livepatch_module(mod)) {
	}
	return do_init_module(mod);
}
"""


def test_profile_load_stamps_every_step_in_order() -> None:
    got = profile_load.edit(MAIN_C)
    names = [ln.split('"')[1] for ln in got.splitlines() if "initexit_bench_stamp(&bench" in ln]
    # stock: no module_initexit_setup(), so no "relocate" stamp of its own
    assert names == ["start", "check", "layout", "setup", "symbols", "initexit", "post", "formation",
                     "sysfs", "rest", "init"]
    assert "return do_init_module(mod);" not in got and "\treturn err;\n" in got
    assert got.index("struct initexit_bench {") < got.index("static int load_module(")
    with_series = MAIN_C.replace("\terr = post_relocation(mod, info);\n",
                                 "\terr = module_initexit_setup(mod, info);\n\terr = post_relocation(mod, info);\n")
    names = [ln.split('"')[1] for ln in profile_load.edit(with_series).splitlines()
             if "initexit_bench_stamp(&bench" in ln]
    assert names[4:7] == ["symbols", "relocate", "initexit"]


def test_profile_load_refuses_a_file_it_does_not_know() -> None:
    for broken in (MAIN_C.replace("\tmodule_allocated = true;\n", ""),
                   MAIN_C.replace("\treturn do_init_module(mod);\n", "\treturn 0;\n"),
                   profile_load.edit(MAIN_C)):
        try:
            profile_load.edit(broken)
        except SystemExit as e:
            assert "bench/profile_load.py" in str(e)
        else:
            raise AssertionError("no refusal")

"""analysis/phases.py (scripts/lib/bench_report.py's view of a trace) and
the CLI's helpers for the harness (print, parse --count)."""

from __future__ import annotations

import os
import pathlib
import re

import pytest

from analysis import phases, synth
from analysis.cli import main
from analysis.source import TRACE_CMD_REPORT_ARGS

HERE = os.path.dirname(os.path.abspath(__file__))
CAPTURED = os.path.join(HERE, "fixtures", "captured")


def test_boot_phases_of_a_synthetic_boot(tmp_path: pathlib.Path) -> None:
    w = synth.TraceWriter()
    out = synth.simulate_boot(w, synth.PATCHED_PLAIN, synth.BOOT_RECORDS)
    report = tmp_path / "boot.report.txt"
    report.write_text(w.text())
    (tmp_path / "dmesg.txt").write_text("[    0.2] initexit: ordered 9 built-in pairs in 5123 ns\n")
    r = phases.boot_phases(report, tmp_path / "dmesg.txt")
    assert r is not None
    # Classic initcalls and the four entries, the pair inits inside them.
    plain = sum(len(v) for k, v in synth.PATCHED_PLAIN.items() if k != "early")
    pairs = sum(1 for st in out.steps if st.kind == "init")
    assert len(out.calls) == plain and pairs == 8
    assert r["initcalls"] == plain + pairs + len(synth.PATCHED_PLAIN["early"])
    assert r["ordered_pairs"] == 9 and r["ordering_ns"] == 5123
    assert 0 < r["in_builtin_pairs_ms"] < r["do_initcalls_ms"]
    calls = phases.call_durations(report)
    assert calls["virtio_blk_init"] == 10_000


def test_module_phases_one_sample_per_load_and_unload(tmp_path: pathlib.Path) -> None:
    w = synth.TraceWriter()
    pairs = [synth.Pair("bench_pairs_4", k, f"b_init_{k}", f"b_exit_{k}") for k in range(4)]
    for _ in range(3):
        synth.simulate_module_load(w, synth.Task("modloop", 96, 0), "bench_pairs_4", pairs)
        synth.simulate_module_unload(w, synth.Task("modloop", 96, 0), "bench_pairs_4", pairs)
    w.lines = [ln for ln in w.lines if "initcall_" not in ln]  # the rounds record no initcall events
    report = tmp_path / "scenario.report.txt"
    report.write_text(w.text())
    got = phases.module_phases(report)
    assert sorted(got) == [("bench_pairs_4", "exit"), ("bench_pairs_4", "init")]
    assert all(len(v) == 3 and all(span >= inside > 0 for span, inside in v) for v in got.values())


def test_print_flags_are_the_analysis_flags(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["print", "--flags"]) == 0
    assert capsys.readouterr().out.split() == list(TRACE_CMD_REPORT_ARGS[1:])


def test_parse_count(capsys: pytest.CaptureFixture[str], tmp_path: pathlib.Path) -> None:
    path = os.path.join(CAPTURED, "stock-boot.txt")
    assert main(["parse", "-q", "--count", "initcall_start", path]) == 0
    n = int(capsys.readouterr().out)
    with open(path, encoding="utf-8") as f:
        assert n == sum(1 for line in f if " initcall_start: " in line)
    empty = tmp_path / "empty.txt"
    empty.write_text("nothing here\n")
    assert main(["parse", "-q", "--count", "any", str(empty)]) == 0
    assert capsys.readouterr().out == "0\n"


def test_parse_count_about_a_function_or_a_module(capsys: pytest.CaptureFixture[str]) -> None:
    def count(*args: str) -> int:
        assert main(["parse", "-q", "--count", *args]) == 0
        return int(capsys.readouterr().out)

    boot = os.path.join(CAPTURED, "stock-boot.txt")
    with open(boot, encoding="utf-8") as f:
        want = sum(1 for line in f if re.search(r" initcall_start: +func=con_init\+", line))
    assert want == 1 and count("initcall_start", "--about", "con_init", boot) == want
    assert count("initcall_start", "--about", "con_ini", boot) == 0  # the whole name, not a prefix
    dmesg = os.path.join(CAPTURED, "patched-boot.dmesg")
    with open(dmesg, encoding="utf-8") as f:
        called = [m.group(1) for m in (re.search(r"\] calling  ([\w.]+)\+", line) for line in f) if m]
    assert called and count("calling", "--about", called[0], dmesg) == called.count(called[0])
    mods = os.path.join(CAPTURED, "module-load-unload-failed-load.txt")
    with open(mods, encoding="utf-8") as f:
        loads = [line.split("module_load: ", 1)[1].split()[0] for line in f if " module_load: " in line]
    assert loads and count("module_load", "--about", loads[0], mods) == loads.count(loads[0])
    assert count("module_load", "--about", "no_such_module", mods) == 0


def test_initcall_debug_bytes_counts_only_the_calling_and_returned_lines(tmp_path: pathlib.Path) -> None:
    calling = "[    0.257467] calling  irq_sysfs_init+0x0/0x69 @ 1 prio=-4000 modname=irqdesc"
    returned = "[    0.257601] initcall irq_sysfs_init+0x0/0x69 returned 0 after 0 usecs prio=-4000 modname=irqdesc"
    other = "[    0.257700] initexit: ordered 18 built-in pairs in 274525 ns"
    p = tmp_path / "dmesg.txt"
    p.write_text("\n".join([other, calling, other, returned, ""]))
    assert phases.initcall_debug_bytes(p) == len(calling) + 1 + len(returned) + 1
    assert phases.initcall_debug_bytes(tmp_path / "missing.txt") == 0


def test_load_profiles_per_module_without_cold_or_failed_loads(tmp_path: pathlib.Path) -> None:
    """scripts/bench's profile run: bench/guest-modules.sh marks each modloop
    call, the kernel bench/profile_load.py stamped prints a line per load
    (any dmesg envelope); the first load after a mark (cold) and failed
    loads are not counted."""
    log = tmp_path / "profile.log"
    log.write_text(
        "bench-profile: disabled bench_pairs_16 1\n"
        "[   12.000001] initexit-bench: load bench_pairs_16 0: check=1 layout=2 init=3\n"
        "[   12.000002] initexit-bench: load bench_pairs_16 0: check=10 layout=20 init=30\n"
        "<6>[   12.000003] initexit-bench: load bench_pairs_16 -12: check=10 layout=20 init=30\n"
        "[   12.000004] bench_pairs_16: something else the load printed\n"
        "bench-profile: disabled bench_single_16 1\n"
        "<6>[   12.000005] initexit-bench: load bench_single_16 0: check=1 init=3\n"
        "<6>[   12.000006] initexit-bench: load bench_single_16 0: check=5 init=7\n"
        "bench-profile: disabled bench_pairs_16 2\n"
        "[   13.000001] initexit-bench: load bench_pairs_16 0: check=99 layout=99 init=99\n"
        "[   13.000002] initexit-bench: load bench_pairs_16 0: check=11 layout=21 init=31\n")
    got = phases.load_profiles(log)
    assert got == {"bench_pairs_16": [{"check": 10.0, "layout": 20.0, "init": 30.0},
                                      {"check": 11.0, "layout": 21.0, "init": 31.0}],
                   "bench_single_16": [{"check": 5.0, "init": 7.0}]}
    assert phases.load_profiles(tmp_path / "missing.log") == {}

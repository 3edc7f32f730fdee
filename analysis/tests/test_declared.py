"""The declared initcall order (System.map, a trace.dat's kallsyms), module
inits labelled by module, has_exit=, and ``analysis diff``."""

from __future__ import annotations

import json
import os

import pytest

from analysis import synth
from analysis.build import build_capture
from analysis.checks import run_checks
from analysis.cli import main
from analysis.declared import INITCALL_SYMBOL_RE, LEVEL_IDS, parse_map
from analysis.parse import InputError, parse_text
from analysis.tests.golden_outputs import (
    DIFF_GOLDEN,
    DIFF_SUFFIXES,
    diff_golden_path,
    render_diff_all,
)

HERE = os.path.dirname(os.path.abspath(__file__))
CAPTURED = os.path.join(HERE, "fixtures", "captured")
MAP = os.path.join(CAPTURED, "patched-boot.System.map")
KALLSYMS = os.path.join(CAPTURED, "patched-boot.kallsyms")
DAT = os.path.join(CAPTURED, "module-scenario.dat")
DECLARED = ("declared-level", "declared-link-order", "declared-initcalls-ran")


def _verdict(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, dict[str, object]]:
    status = main(["check", "-q", "--format", "json", *args])
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return status, json.loads(out)


def _states(v: dict[str, object]) -> dict[str, str]:
    checks = v["checks"]
    assert isinstance(checks, list)
    return {c["name"]: c["state"] for c in checks}


@pytest.mark.parametrize("symbol,func,level", [
    ("__initcall__kmod_virtio_pci__325_677_virtio_pci_driver_init6", "virtio_pci_driver_init", "6"),
    ("__initcall__kmod_initramfs__380_762_populate_rootfsrootfs", "populate_rootfs", "rootfs"),
    ("__initcall__kmod_vt__420_3580_con_initcon", "con_init", "con"),
    ("__initcall__kmod_core__419_2214_init_hw_perf_eventsearly", "init_hw_perf_events", "early"),
    ("__initcall__kmod_dd__300_1000_deferred_probe_initcall7s", "deferred_probe_initcall", "7s"),
    ("__initcall__kmod_x__1_2_foo26", "foo2", "6"),
])
def test_symbol_names_function_and_level(symbol: str, func: str, level: str) -> None:
    m = INITCALL_SYMBOL_RE.match(symbol)
    assert m is not None and (m.group(4), m.group(5)) == (func, level)
    assert level in LEVEL_IDS


def test_system_map_and_kallsyms_agree() -> None:
    with open(MAP, encoding="utf-8") as f:
        a = parse_map(f.read(), "System.map", MAP)
    with open(KALLSYMS, encoding="utf-8") as f:  # with trace-cmd dump's header lines
        b = parse_map(f.read(), "kallsyms", KALLSYMS)
    assert [(d.func, d.band) for d in a.entries] == [(d.func, d.band) for d in b.entries]
    # Every __initcall__kmod_ line of the trimmed map is an entry.
    with open(MAP, encoding="utf-8") as f:
        assert len(a.entries) == sum(1 for line in f if "__initcall__kmod_" in line) == 288
    assert a.entries[0].band == "early" and a.entries[-1].band == "console"


@pytest.mark.parametrize("name,check", [
    ("broken-declared-level", "declared-level"),
    ("broken-declared-link-order", "declared-link-order"),
])
def test_moved_and_swapped_initcalls_fail_with_the_map_and_pass_without(
        capsys: pytest.CaptureFixture[str], name: str, check: str) -> None:
    path = os.path.join(CAPTURED, name + ".txt")
    status, v = _verdict(capsys, path)
    assert status == 0, "without the map the trace alone cannot see it (circular)"
    assert all(_states(v)[c] == "skip" for c in DECLARED)
    status, v = _verdict(capsys, "--system-map", MAP, path)
    assert status == 1 and v["failed_checks"] == [check]
    finding = next(c for c in v["checks"] if c["name"] == check)["findings"][0]  # type: ignore[attr-defined]
    assert "System.map" in finding["message"]
    if check == "declared-level":
        assert "declared in System.map at level fs" in finding["message"]


def test_a_stock_kernels_dmesg_is_checked_with_its_map(capsys: pytest.CaptureFixture[str]) -> None:
    # From dmesg alone every order check of a stock kernel is SKIP; its
    # System.map makes the declared ones real, and a moved initcall fails.
    stock_map = os.path.join(CAPTURED, "stock-boot.System.map")
    good = os.path.join(CAPTURED, "stock-boot-declared-dmesg.dmesg")
    bad = os.path.join(CAPTURED, "broken-stock-dmesg-level.dmesg")
    status, v = _verdict(capsys, good)
    assert status == 0 and all(_states(v)[c] == "skip" for c in DECLARED)
    status, v = _verdict(capsys, "--system-map", stock_map, "--expect-all", good)
    assert status == 0 and all(_states(v)[c] == "pass" for c in DECLARED)
    status, v = _verdict(capsys, bad)
    assert status == 0, "without the map dmesg alone cannot see it"
    status, v = _verdict(capsys, "--system-map", stock_map, bad)
    assert status == 1 and v["failed_checks"] == ["declared-level"]
    finding = next(c for c in v["checks"] if c["name"] == "declared-level")["findings"][0]  # type: ignore[attr-defined]
    assert "nmi_warning_debugfs" in finding["message"] and "declared in System.map at level fs" in finding["message"]


def test_never_ran_is_a_note_and_a_finding_with_expect_all(capsys: pytest.CaptureFixture[str]) -> None:
    path = os.path.join(CAPTURED, "broken-declared-initcalls-ran.txt")
    status, v = _verdict(capsys, "--system-map", MAP, path)
    assert status == 0
    note = next(c for c in v["checks"] if c["name"] == "declared-initcalls-ran")["note"]  # type: ignore[attr-defined]
    assert "never ran: late_trace_init (late_sync)" in note
    status, v = _verdict(capsys, "--system-map", MAP, "--expect-all", path)
    assert status == 1 and v["failed_checks"] == ["declared-initcalls-ran"]


def test_dmesg_becomes_checkable_with_the_map(capsys: pytest.CaptureFixture[str]) -> None:
    path = os.path.join(CAPTURED, "patched-boot-declared-dmesg.dmesg")
    status, v = _verdict(capsys, path)
    assert all(_states(v)[c] == "skip" for c in DECLARED)
    status, v = _verdict(capsys, "--system-map", KALLSYMS, "--expect-all", path)
    assert status == 0 and all(_states(v)[c] == "pass" for c in DECLARED)
    # Two calls of one level swapped in the dmesg text: a finding.
    with open(path, encoding="utf-8") as f:
        text = f.read()
    a, b = "msr_init+", "intel_uncore_init+"
    swapped = text.replace(a, "\0").replace(b, a).replace("\0", b)
    d = run_checks(build_capture(parse_text(swapped, "x.dmesg")))
    assert d.ok  # nothing without the map
    from analysis.declared import read_map, with_declared
    cap = with_declared(build_capture(parse_text(swapped, "x.dmesg")), read_map(KALLSYMS))
    assert [r.name for r in run_checks(cap).results if r.findings] == ["declared-link-order"]


def test_a_dat_brings_its_own_kallsyms(capsys: pytest.CaptureFixture[str]) -> None:
    status, v = _verdict(capsys, DAT)
    assert status == 0
    note = next(c for c in v["checks"] if c["name"] == "declared-level")["note"]  # type: ignore[attr-defined]
    assert note == "no classic boot initcalls in the capture"  # the map was read, nothing to match


def test_a_map_of_another_kernel_is_not_trusted(capsys: pytest.CaptureFixture[str], tmp_path: object) -> None:
    other = os.path.join(str(tmp_path), "other.map")
    with open(other, "w", encoding="utf-8") as f:
        f.write("ffffffff81b54330 d __initcall__kmod_x__1_2_something_else6\n")
    status, v = _verdict(capsys, "--system-map", other, os.path.join(CAPTURED, "broken-declared-level.txt"))
    assert status == 0
    note = next(c for c in v["checks"] if c["name"] == "declared-level")["note"]  # type: ignore[attr-defined]
    assert "does not fit this capture" in note


@pytest.mark.parametrize("content,error", [
    ("", "not a System.map"),
    ("hello world\n", "not a System.map"),
    ("ffffffff81000000 T _text\n", "no __initcall__kmod_* entry"),
])
def test_bad_map_is_one_line_error(capsys: pytest.CaptureFixture[str], tmp_path: object,
                                   content: str, error: str) -> None:
    bad = os.path.join(str(tmp_path), "bad.map")
    with open(bad, "w", encoding="utf-8") as f:
        f.write(content)
    status = main(["check", "-q", "--system-map", bad, os.path.join(CAPTURED, "stock-boot.txt")])
    out, err = capsys.readouterr()
    assert status == 2 and out == "" and len(err.strip().splitlines()) == 1
    assert error in err and "Traceback" not in err
    assert main(["check", "-q", "--system-map", bad + ".missing", DAT]) == 2
    assert "cannot read" in capsys.readouterr().err


def _check(v: dict[str, object], name: str) -> dict[str, str]:
    c: dict[str, str] = next(c for c in v["checks"] if c["name"] == name)  # type: ignore[attr-defined]
    return c


def test_declared_pairs_bound_the_boot_pairs(capsys: pytest.CaptureFixture[str]) -> None:
    """The map's built-in pair table (33 records between the section
    bounds: 7 objects' entry records and their 26 pairs): every boot pair
    event is a position in it; the positions that ran nothing are named
    (the entry records 0, 7, 13, 17, 23, 27, 30; tiu3, tiu4 after tiu2
    failed; the exit-only tia1 unwound, tia4 skipped after tia3; keep's
    three, refused at boot)."""
    status, v = _verdict(capsys, "--system-map", MAP, os.path.join(CAPTURED, "patched-boot-declared.txt"))
    c = _check(v, "declared-pairs")
    assert status == 0 and c["state"] == "pass", c
    assert c["note"].startswith("33 built-in pair table record(s) (pairs and entries) between "
                                "__start___initexit_pairs")
    assert "88 bytes each" in c["note"] and "20 ran an init or exit at boot; 13 ran nothing" in c["note"]
    assert "(positions 0, 7, 11, 12, 13, 17, 22, 23, 24, 25, 26, 27, 30)" in c["note"]
    status, v = _verdict(capsys, "--system-map", MAP, os.path.join(CAPTURED, "broken-declared-pairs.txt"))
    c = _check(v, "declared-pairs")
    assert status == 1 and c["state"] == "fail" and "tin2_init ran as built-in pair 33" in str(c["findings"])
    # A stock kernel's map has no table: the check says so.
    stock = os.path.join(CAPTURED, "stock-boot.System.map")
    status, v = _verdict(capsys, "--system-map", stock, os.path.join(CAPTURED, "stock-boot.txt"))
    c = _check(v, "declared-pairs")
    assert c["state"] == "skip" and "no built-in pair table" in c["note"]


ENTRY = "ffffffff8217a680 d __initcall__kmod_core__420_2214_init_hw_perf_eventsearly\n"


@pytest.mark.parametrize("table,error", [
    ("ffffffff82112000 D __start___initexit_pairs\n", "not __stop___initexit_pairs"),
    ("ffffffff82112000 D __stop___initexit_pairs\nffffffff82112050 D __start___initexit_pairs\n",
     "below __start___initexit_pairs"),
    ("ffffffff82112000 D __start___initexit_pairs\nffffffff82112000 d __UNIQUE_ID_initexit3\n"
     "ffffffff82112030 d __UNIQUE_ID_initexit5\nffffffff82112051 D __stop___initexit_pairs\n",
     "not a multiple of its 2 entries"),
])
def test_a_broken_pair_table_is_one_line_error(capsys: pytest.CaptureFixture[str], tmp_path: object,
                                               table: str, error: str) -> None:
    bad = os.path.join(str(tmp_path), "bad.map")
    with open(bad, "w", encoding="utf-8") as f:
        f.write(ENTRY + table)
    assert main(["check", "-q", "--system-map", bad, os.path.join(CAPTURED, "stock-boot.txt")]) == 2
    err = capsys.readouterr().err
    assert error in err and len(err.strip().splitlines()) == 1, err


def test_pair_table_sizes() -> None:
    names = ("ffffffff82112000 D __start___initexit_pairs\nffffffff82112000 d __UNIQUE_ID_initexit3\n"
             "ffffffff82112000 r __UNIQUE_ID_initexit3_origin\nffffffff82112038 d __UNIQUE_ID_initexit5\n"
             "ffffffff82112070 D __stop___initexit_pairs\n")
    t = parse_map(ENTRY + names, "System.map", "x").pairs
    assert t is not None and (t.count, t.entry_size) == (2, 56)  # 56-byte entries, as on 32-bit
    # With Clang LTO the entries are named for their section (initexit.h).
    lto = names.replace("__UNIQUE_ID_initexit3", "__initexit_pair__kmod_tie_b__3_22").replace(
        "__UNIQUE_ID_initexit5", "__initexit_pair__kmod_tie_a__5_22")
    t = parse_map(ENTRY + lto, "System.map", "x").pairs
    assert t is not None and (t.count, t.entry_size) == (2, 56)
    empty = parse_map(ENTRY + "ffffffff82112000 D __start___initexit_pairs\n"
                      "ffffffff82112000 D __stop___initexit_pairs\n", "System.map", "x").pairs
    assert empty is not None and (empty.count, empty.entry_size) == (0, 0)
    # Bounds but no entry symbol the check can count, with boot pairs in
    # the capture: not a finding per pair, a skip that says why.
    with open(MAP, encoding="utf-8") as f:
        renamed = f.read().replace("__UNIQUE_ID_initexit", "__UNIQUE_ID_initexit.llvm.")
    order = parse_map(renamed, "System.map", "renamed.map")
    assert order.pairs is not None and order.pairs.count == 0
    from analysis.checks import check_declared_pairs
    from analysis.declared import with_declared
    with open(os.path.join(CAPTURED, "patched-boot-declared.txt"), encoding="utf-8") as f:
        cap = with_declared(build_capture(parse_text(f.read())), order)
    r = check_declared_pairs(cap)
    assert r.state.value == "skip" and "cannot be counted" in r.note, r
    hidden = parse_map(ENTRY.replace("ffffffff8217a680", "0" * 16) + "0000000000000000 D __start___initexit_pairs\n"
                       "0000000000000000 D __stop___initexit_pairs\n", "kallsyms", "x").pairs
    assert hidden is None  # kallsyms read without kptr rights: no table to bound


def _stock_module_load() -> str:
    """A stock kernel's module load: trace-cmd prints the freed init as
    another symbol (as on Debian's kernel)."""
    return "cpus=1\n" + "".join([
        synth.format_line("insmod", 300, 0, 5_000_000_000, "module_load", "virtio_rng"),
        synth.format_line("insmod", 300, 0, 5_000_100_000, "initcall_start", "func=orc_header+0x2e08"),
        synth.format_line("insmod", 300, 0, 5_000_900_000, "initcall_finish", "func=orc_header+0x2e08 ret=0"),
    ])


def test_module_init_is_labelled_by_its_module() -> None:
    v = run_checks(build_capture(parse_text(_stock_module_load())))
    [span] = v.capture.spans
    assert span.func == "virtio_rng:init" and "orc_header" in span.start.info
    assert any("labelled by their module_load" in n and "orc_header+0x2e08" in n for n in v.notes)


def test_pair_inner_printed_as_address_takes_the_pairs_name() -> None:
    with open(os.path.join(CAPTURED, "module-load-unload-failed-load.txt"), encoding="utf-8") as f:
        cap = build_capture(parse_text(f.read()))
    inner = [s.inner for s in cap.spans if s.inner is not None]
    assert inner and all(not i.func.startswith("0x") for i in inner)


def test_has_exit_is_read_and_old_events_still_parse() -> None:
    line = synth.format_line("insmod", 1, 0, 1000, "initexit_init_start",
                             "path=module origin=m idx=0 prio=0 func=a_init has_exit=0")
    fin = synth.format_line("insmod", 1, 0, 2000, "initexit_init_finish",
                            "path=module origin=m idx=0 prio=0 func=a_init ret=0 duration_ns=1000")
    [s] = build_capture(parse_text("cpus=1\n" + line + fin)).spans
    assert s.has_exit == 0
    [s] = build_capture(parse_text("cpus=1\n" + line.replace(" has_exit=0", "") + fin)).spans
    assert s.has_exit is None
    bad = build_capture(parse_text("cpus=1\n" + line.replace("has_exit=0", "has_exit=2") + fin))
    assert bad.build_problems


def test_exit_of_a_pair_that_said_no_exit_is_a_finding() -> None:
    w = synth.TraceWriter()
    pairs = [synth.Pair("m", 0, "a_init", "a_exit")]
    synth.simulate_module_load(w, synth.Task("insmod", 1, 0), "m", pairs)
    synth.simulate_module_unload(w, synth.Task("rmmod", 2, 0), "m", pairs)
    text = w.text().replace("has_exit=1", "has_exit=0")
    v = run_checks(build_capture(parse_text(text)))
    assert [r.name for r in v.results if r.findings] == ["exit-exactly-once"]
    assert "has_exit=0" in v.findings[0].message


# -- diff ------------------------------------------------------------------------

CASES = [(n, k) for n in DIFF_GOLDEN for k in DIFF_SUFFIXES]


@pytest.mark.parametrize("name,kind", CASES, ids=[f"{n}:{k}" for n, k in CASES])
def test_diff_matches_golden(name: str, kind: str) -> None:
    with open(diff_golden_path(name, kind), encoding="utf-8") as f:
        assert render_diff_all(name)[kind] == f.read(), \
            "output changed: run python3 -m analysis.tests.regen_golden and review"


def test_diff_exit_status_and_options(capsys: pytest.CaptureFixture[str]) -> None:
    a = os.path.join(CAPTURED, "patched-boot-declared.txt")
    assert main(["diff", "-q", a, a, "--fail-on-change"]) == 0
    assert "same order and results" in capsys.readouterr().out
    for broken, field in (("broken-declared-link-order", "order_within_level"),
                          ("broken-declared-level", "order_across_levels")):
        b = os.path.join(CAPTURED, broken + ".txt")
        assert main(["diff", "-q", "--format", "json", a, b]) == 0
        d = json.loads(capsys.readouterr().out)
        assert d["changed"] and len(d[field]) == 1
        assert main(["diff", "-q", "--fail-on-change", a, b]) == 1
        capsys.readouterr()
    stock = os.path.join(CAPTURED, "stock-boot.txt")
    assert main(["diff", "-q", "--fail-on-change", "--min-change", "0", stock, a]) == 0
    d_out = capsys.readouterr().out
    # Only in the patched boot: the 7 test objects' entries, 19 test pair
    # inits (tiu3, tiu4, tia4 skipped, tia1 exit only, keep refused), 5
    # unwind exits, module_initexit_debugfs_init, and 6 initcalls of options
    # the stock capture predates (fault injection twice, KUnit, backing
    # files, warn debugfs, alloc tags).
    only_b = d_out.split("Only in B: ", 1)[1].split("\n", 1)[0]
    assert only_b == "38" and "Duration changes >= 0 ns:" in d_out
    assert main(["diff", "-q", "--min-change", "soon", a, a]) == 2
    err = capsys.readouterr().err
    assert "--min-change" in err and len(err.strip().splitlines()) == 1
    assert main(["diff", "-q", a, a + ".missing"]) == 2


def test_diff_of_stock_and_series_dmesg_matches_the_boot_calls(capsys: pytest.CaptureFixture[str]) -> None:
    """A stock dmesg names no object and has no level; the series' dmesg
    (with its kallsyms beside it) names both. The boot calls still match by
    function, and an unknown level moves nothing to another level."""
    stock = os.path.join(CAPTURED, "stock-boot-declared-dmesg.dmesg")
    series = os.path.join(CAPTURED, "patched-boot.dmesg")
    assert main(["diff", "-q", "--format", "json", stock, series]) == 0
    d = json.loads(capsys.readouterr().out)
    # Only in stock: the inits of the three legacy test modules and fuse's
    # module_init, which its scenario loads; the series' capture is the
    # blacklist boot's, whose scenario loads btrfs alone.
    assert len(d["only_a"]) == 4 and d["a"]["calls"] == 281, d["only_a"]
    assert d["order_across_levels"] == [] and d["order_within_level"] == []


def test_diff_out_dir_writes_every_format(tmp_path: "os.PathLike[str]", capsys: pytest.CaptureFixture[str],
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """``--out-dir DIR --name NAME`` (what scripts/run's --diff-with uses)
    writes the three renderings of one comparison and prints its summary."""
    name = "diff-stock-vs-patched-boot"
    monkeypatch.chdir(CAPTURED)   # the outputs name their inputs as given
    a, b = (os.path.basename(p) for p in DIFF_GOLDEN[name])
    assert main(["diff", "-q", "--out-dir", str(tmp_path), "--name", "boot", a, b]) == 0
    want = render_diff_all(name)
    for kind, suffix in DIFF_SUFFIXES.items():
        with open(os.path.join(str(tmp_path), "boot.diff" + suffix), encoding="utf-8") as f:
            assert f.read() == want[kind], kind
    out = capsys.readouterr().out
    assert out.startswith("no order or result change: 0 only in A, 38 only in B,") and out.count("\n") == 1
    assert main(["diff", "-q", "--out-dir", str(tmp_path), "-o", "x", a, b]) == 2


def test_diff_json_lists_result_changes() -> None:
    with open(os.path.join(CAPTURED, "patched-boot-declared.txt"), encoding="utf-8") as f:
        text = f.read()
    from analysis.diff import diff_captures
    a = build_capture(parse_text(text))
    b = build_capture(parse_text(text.replace("func=msr_init+0x0 ret=0", "func=msr_init+0x0 ret=-12")))
    d = diff_captures(a, b)
    assert d.changed and [(r.call, r.a, r.b) for r in d.results] == [
        ("init msr_init [boot]", "ok (ret=0)", "failed (ret=-12)")]


def test_input_error_type() -> None:
    with pytest.raises(InputError):
        parse_map("", "System.map", "x")

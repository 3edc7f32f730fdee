"""The judge of scripts/test and scripts/mutation-test on saved outputs:
one file of data/ per edge case. Each KTAP case is read by both readers
(the kernel's kunit_parser.py when an unpacked tree has it, and
verdict.py's own), which must agree."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts" / "lib"))

import verdict  # noqa: E402
from verdict import BootFacts, Status, Verdict  # noqa: E402

DATA = Path(__file__).parent / "data"
READERS = ["own", pytest.param("kunit", marks=pytest.mark.skipif(
    verdict.kunit_parser() is None, reason="no unpacked kernel tree with tools/testing/kunit/kunit_parser.py"))]

# file, exit status (None: no exit file), passed, failed, skipped, a text in every failure
KTAP_CASES = [
    ("all-pass.tap", 0, 3, 0, 0, ""),
    ("harness-cli.tap", 0, 65, 0, 0, ""),
    ("one-fail.tap", 1, 2, 1, 0, "not ok 2 - sweep: fail_at=1 unwinds in reverse"),
    ("skip.tap", 0, 1, 0, 1, ""),
    ("stopped-early.tap", 0, 3, 3, 0, "never reported"),
    ("short-at-finish.tap", 1, 3, 3, 0, "never reported"),
    ("bail-out.tap", 1, 1, 3, 0, "never reported"),
    ("crashed-mid-test.tap", None, 2, 4, 0, ""),
    ("nonzero-exit.tap", 3, 2, 1, 0, "exited 3 although every case passed"),
    ("extra-results.tap", 1, 2, 1, 0, "1 result(s) after the plan's last case (plan 1..2)"),
    ("no-plan.tap", 0, 2, 1, 0, "no plan"),
    ("trailing-plan.tap", 0, 2, 1, 0, "no plan"),
    ("misnumbered.tap", 0, 3, 2, 0, "Expected test number"),
    ("empty.tap", 0, 0, 1, 0, "Could not find any KTAP output"),
    ("header-only.tap", 0, 0, 3, 0, "never reported"),
]


@pytest.mark.parametrize("reader", READERS)
@pytest.mark.parametrize("name,rc,passed,failed,skipped,text", KTAP_CASES)
def test_ktap(name: str, rc: int | None, passed: int, failed: int, skipped: int, text: str,
              reader: str) -> None:
    v = verdict.judge_ktap("t", (DATA / name).read_text(), rc, reader=reader)
    assert (v.passed, v.failed, v.skipped) == (passed, failed, skipped), v.failures
    assert all(text in f for f in v.failures[-1:]) or any(text in f for f in v.failures)


@pytest.mark.skipif(verdict.kunit_parser() is None, reason="no kunit_parser.py in an unpacked tree")
@pytest.mark.parametrize("name", [c[0] for c in KTAP_CASES])
def test_readers_agree(name: str) -> None:
    """kunit_parser and the own reader find the same plan, cases and problems."""
    text = (DATA / name).read_text()
    own = verdict.read_ktap(text)
    kunit = verdict.read_ktap_kunit(text, verdict.kunit_parser())
    assert own.plan == kunit.plan
    assert [(c.number, c.status) for c in own.cases] == [(c.number, c.status) for c in kunit.cases]
    assert own.problems == kunit.problems


def test_kunit_loop_is_caught() -> None:
    """kunit_parser loops for ever on a plan after the results: the guard
    stops it and the own reader answers."""
    kp = verdict.kunit_parser()
    if kp is None:
        pytest.skip("no kunit_parser.py")
    r = verdict.read_ktap_kunit((DATA / "trailing-plan.tap").read_text(), kp)
    assert r.reader.startswith("verdict") and r.plan is None


def test_skip_is_counted_as_skipped_not_passed() -> None:
    r = verdict.read_ktap((DATA / "skip.tap").read_text())
    assert [c.status for c in r.cases] == [Status.PASS, Status.SKIP]
    assert r.cases[1].description == "order: debugfs initexit/modules"


def test_did_not_finish_names_the_console() -> None:
    v = verdict.judge_ktap("tests/guest/50-module-malformed.sh", (DATA / "crashed-mid-test.tap").read_text(),
                           None, console="out/x/console.log")
    assert v.failures[-1] == ("tests/guest/50-module-malformed.sh: did not finish (no exit status: the guest "
                              "crashed or hung in it; see out/x/console.log)")


# --------------------------------------------------------------- pytest

@pytest.mark.parametrize("name,rc,passed,failed,skipped,text", [
    ("pytest-pass.xml", 0, 2, 0, 0, ""),
    ("pytest-mixed.xml", 1, 1, 2, 1, "test_mix.py::test_fails: AssertionError: order differs"),
    ("pytest-collect-error.xml", 2, 0, 1, 0, "collection failure"),
    ("pytest-no-tests.xml", 5, 0, 1, 0, "pytest exited 5 without a failing test"),
    ("pytest-truncated.xml", 0, 0, 1, 0, "no readable --junitxml"),
    ("no-such.xml", 4, 0, 1, 0, "no readable --junitxml"),
])
def test_junit(name: str, rc: int, passed: int, failed: int, skipped: int, text: str) -> None:
    v = verdict.judge_junit("p", DATA / name, rc, "p.log")
    assert (v.passed, v.failed, v.skipped) == (passed, failed, skipped), v.failures
    assert any(text in f for f in v.failures) or not text


# ------------------------------------------------------------ summary

def test_summary_line_format() -> None:
    vs = [Verdict("a", passed=3), Verdict("b", passed=1, failures=("b: x",))]
    assert verdict.summary(vs) == ("4 passed, 1 failed", ["b: x"])
    assert verdict.summary([Verdict("a", passed=2, skipped=1)])[0] == "2 passed, 0 failed, 1 skipped"
    assert verdict.summary([], ["judge broke"]) == ("0 passed, 1 failed", ["judge broke"])


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(ROOT / "scripts/lib/verdict.py"), *args],
                          capture_output=True, text=True, check=False)


def test_stopped_early_fails_the_summary(tmp_path: Path) -> None:
    """The CLI path scripts/test takes: a KTAP test that stops after its
    third case of six and exits 0 is 3 passed, 3 failed, and the summary
    exits 1."""
    rec = tmp_path / "verdicts.jsonl"
    r = run_cli("ktap", "--record", str(rec), "--name", "tests/guest/99-x.sh", "--exit", "0",
                str(DATA / "stopped-early.tap"))
    assert r.returncode == 0 and "never reported" in r.stderr
    s = run_cli("summary", str(rec))
    assert (s.returncode, s.stdout) == (1, "3 passed, 3 failed\n")


def test_record_round_trip(tmp_path: Path) -> None:
    v = Verdict("n", 1, 2, ("n: a", "n: b"), "d")
    assert Verdict.from_json(v.to_json()) == v
    assert json.loads(v.to_json())["failed"] == 2


def test_run_and_analysis(tmp_path: Path) -> None:
    assert verdict.judge_run("r", 1, "d").passed == 1
    assert "exited 125 (output: d)" in verdict.judge_run("scripts/run", 125, "d").failures[0]
    assert verdict.judge_analysis("a", tmp_path).skipped == 1
    (tmp_path / "meta.json").write_text('{"analysis_check": 1}')
    assert verdict.judge_analysis("a", tmp_path).failed == 1


# ----------------------------------------------------------- mutations

def mutation_run(tmp_path: Path, sweep: str | None, with_boot: bool = True) -> Path:
    """A run folder: 10-module-order passed; 20-module-fail-sweep SWEEP
    (a data/ file; None: it never finished)."""
    k = tmp_path / "run" / "guest" / "ktap"
    k.mkdir(parents=True)
    shutil.copy(DATA / "all-pass.tap", k / "10-module-order.tap")
    (k / "10-module-order.exit").write_text("0\n")
    if sweep:
        shutil.copy(DATA / sweep, k / "20-module-fail-sweep.tap")
        (k / "20-module-fail-sweep.exit").write_text("1\n" if "fail" in sweep else "0\n")
    if with_boot:
        (tmp_path / "run" / "boot.report.txt").write_text("x\n")
    return tmp_path / "run"


TESTS = ["10-module-order", "20-module-fail-sweep"]
PATCH = DATA / "mutation-forward-unwind.patch"


def test_mutation_caught(tmp_path: Path) -> None:
    ok, lines = verdict.judge_mutation(mutation_run(tmp_path, "one-fail.tap"), TESTS, PATCH,
                                       DATA / "pytest-boot.xml")
    assert ok
    assert lines[0] == "  expected 20-module-fail-sweep: unwinds in reverse -> caught"
    assert lines[1].startswith("  expected boot: test_builtin_order -> caught: Left contains one more item: ")
    assert lines[2] == "  failing: 20-module-fail-sweep: not ok 2 - sweep: fail_at=1 unwinds in reverse"


def test_mutation_not_caught(tmp_path: Path) -> None:
    ok, lines = verdict.judge_mutation(mutation_run(tmp_path, "all-pass.tap"), TESTS, PATCH,
                                       DATA / "pytest-pass.xml")
    assert not ok
    assert lines[0] == "  expected 20-module-fail-sweep: unwinds in reverse -> NOT CAUGHT"
    assert "NOT CAUGHT (cannot run: pytest did not run test_builtin_order" in lines[1]


def test_mutation_did_not_finish_is_caught(tmp_path: Path) -> None:
    ok, lines = verdict.judge_mutation(mutation_run(tmp_path, None, with_boot=False), TESTS, PATCH, None)
    assert lines[0] == "  expected 20-module-fail-sweep: unwinds in reverse -> caught: 20-module-fail-sweep did not finish"
    assert "cannot run: " in lines[1] and "boot.report.txt missing" in lines[1]
    assert not ok


def test_mutation_killed_early_is_caught(tmp_path: Path) -> None:
    """An oops in a command of the test kills it (exit 137) before its plan
    ends: caught, as a test that never finished; not when it ended by
    itself (exit 1), nor when killed after its last case."""
    run = mutation_run(tmp_path, "stopped-early.tap")
    exit_file = run / "guest" / "ktap" / "20-module-fail-sweep.exit"
    exit_file.write_text("137\n")
    ok, lines = verdict.judge_mutation(run, TESTS, PATCH, DATA / "pytest-boot.xml")
    assert lines[0] == ("  expected 20-module-fail-sweep: unwinds in reverse -> caught: "
                        "20-module-fail-sweep was killed (exit 137) before its plan ended")
    assert ok
    exit_file.write_text("1\n")
    ok, lines = verdict.judge_mutation(run, TESTS, PATCH, DATA / "pytest-boot.xml")
    assert lines[0] == "  expected 20-module-fail-sweep: unwinds in reverse -> NOT CAUGHT"
    assert not ok
    shutil.copy(DATA / "all-pass.tap", run / "guest" / "ktap" / "20-module-fail-sweep.tap")
    exit_file.write_text("137\n")
    ok, lines = verdict.judge_mutation(run, TESTS, PATCH, DATA / "pytest-boot.xml")
    assert lines[0] == "  expected 20-module-fail-sweep: unwinds in reverse -> NOT CAUGHT"
    assert not ok


def test_unmutated_needs_every_plan_kept(tmp_path: Path) -> None:
    """The series itself: a test that stopped early is a failure there too."""
    ok, lines = verdict.judge_mutation(mutation_run(tmp_path, "stopped-early.tap"), TESTS, None,
                                       DATA / "pytest-boot.xml", [PATCH])
    assert not ok
    assert any("never reported" in ln for ln in lines)
    assert any(ln.startswith("  boot: test_builtin_order: fail: Left contains") for ln in lines)


def test_boot_names() -> None:
    assert verdict.boot_names([PATCH, PATCH]) == ["test_builtin_order"]


# ------------------------------------------------------------- a boot

def boot_dir(tmp_path: Path, console: str | None, status: str | None = "0") -> Path:
    out = tmp_path / "out"
    out.mkdir()
    if console:
        shutil.copy(DATA / console, out / "console.log")
    if status is not None:
        (out / "guest-status").write_text(status + "\n")
    return out


def test_diagnose_clean(tmp_path: Path) -> None:
    d = verdict.diagnose(BootFacts(boot_dir(tmp_path, "console-clean.log"), 0, 300, "ok", 900, "ok"))
    assert (d.exit_status, d.problems, d.oopses, d.warnings) == (0, (), 0, 0)


def test_diagnose_panic(tmp_path: Path) -> None:
    d = verdict.diagnose(BootFacts(boot_dir(tmp_path, "console-panic.log", None), 0, 120, "ok", 900, "none"))
    assert d.exit_status == 125 and d.panicked
    assert d.problems[0] == "the guest kernel panicked: [    1.403207] Kernel panic - not syncing: sysrq triggered crash"
    assert "the guest script did not finish (no exit status)" in d.problems
    # a panic explains the missing scenario trace: not listed on its own
    assert not any("scenario" in p for p in d.problems)


def test_diagnose_hang(tmp_path: Path) -> None:
    d = verdict.diagnose(BootFacts(boot_dir(tmp_path, "console-hang.log", None), 124, 30, "ok", 900, "none"))
    assert d.exit_status == 124
    assert d.problems[0] == "the guest did not finish within --timeout 30 s (hang)"


def test_diagnose_oops(tmp_path: Path) -> None:
    d = verdict.diagnose(BootFacts(boot_dir(tmp_path, "console-oops.log"), 0, 300, "ok", 900, "ok"))
    assert (d.exit_status, d.oopses) == (125, 2)
    assert d.problems[0].startswith("the guest kernel reported 2 Oops/BUG line(s)")


def test_diagnose_warning_is_no_problem(tmp_path: Path) -> None:
    d = verdict.diagnose(BootFacts(boot_dir(tmp_path, "console-warning.log"), 0, 300, "ok", 900, "ok"))
    assert (d.exit_status, d.warnings) == (0, 1)


@pytest.mark.parametrize("report,initcalls,problem", [
    ("none", 0, "no boot trace came back (boot.dat missing or empty)"),
    ("failed", 0, "the host's trace-cmd report cannot read boot.dat"),
    ("ok", 0, "boot.dat holds no initcall_start events (empty trace)"),
])
def test_diagnose_boot_trace(tmp_path: Path, report: str, initcalls: int, problem: str) -> None:
    d = verdict.diagnose(BootFacts(boot_dir(tmp_path, "console-clean.log"), 0, 300, report, initcalls, "ok"))
    assert d.exit_status == 125 and d.problems == (problem,)


def test_diagnose_lines_for_bash(tmp_path: Path) -> None:
    r = run_cli("diagnose", "--qemu-exit", "0", "--timeout", "300", "--boot-report", "ok",
                "--boot-initcalls", "0", "--scenario-report", "ok", str(boot_dir(tmp_path, "console-clean.log")))
    assert r.stdout.splitlines()[:5] == ["exit=125", "panicked=0", "oopses=0", "warnings=0",
                                        "problem=boot.dat holds no initcall_start events (empty trace)"]


# KUnit: one suite's cases from a kernel log (scripts/test judges the
# series' suite from the in-guest test boot's dmesg).
KUNIT_CASES = [
    ("kunit-dmesg.log", 6, 0, ""),
    ("kunit-dmesg-interleaved.log", 6, 0, ""),
    ("kunit-dmesg-fail.log", 5, 1, "not ok 4 - initexit_test_undoable"),
    ("kunit-dmesg-crashed.log", 1, 5, "never reported"),
    ("kunit-dmesg-none.log", 0, 1, "no KUnit suite 'initexit'"),
]


@pytest.mark.parametrize("name,passed,failed,text", KUNIT_CASES)
def test_kunit_suite_from_kernel_log(name: str, passed: int, failed: int, text: str, tmp_path: Path) -> None:
    record = tmp_path / "v.jsonl"
    rc = verdict.main(["kunit", "--name", "k", "--suite", "initexit", "--record", str(record), str(DATA / name)])
    v = Verdict.from_json(record.read_text().strip())
    assert (v.passed, v.failed) == (passed, failed)
    assert all(text in f for f in v.failures)
    assert rc == 0


def test_kunit_suite_is_dedented_and_stops_at_its_result() -> None:
    tap = verdict.kunit_suite((DATA / "kunit-dmesg-interleaved.log").read_text(), "initexit")
    lines = tap.splitlines()
    assert lines[0] == "KTAP version 1"
    assert "1..6" in lines and "ok 6 initexit_test_results" in lines
    assert not any("clocksource" in ln or ln.startswith("ok 1 initexit") and ln.endswith(" initexit") for ln in lines)


# The debug kernel's console (issue 17): one case per report kind, each
# a kernel line with its time stamp, as the debug boot's console has it.
CLEAN_DEBUG_CONSOLE = """\
[    0.000000] Linux version 6.12.0
[    3.100000] FAULT_INJECTION: forcing a failure.
[    3.100001] name failslab, interval 1, probability 0, space 0, times -1
[    3.100002] Call Trace:
[    3.100003]  <TASK>
[    3.100004]  dump_stack_lvl+0x5d/0x80
[    3.200000] kmemleak: Kernel memory leak detector initialized (mem pool available: 15000)
ok 1 - a userspace line saying WARNING: is not the kernel's
# BUG: nor is a KTAP diagnostic
# kmemleak: unreferenced object 0xffff888003f1c000 (size 4096): quoted by a sweep, judged there
[   40.0] kmemleak: 2 new suspected memory leaks (see /sys/kernel/debug/kmemleak)
[   40.1] INFO: lockdep is turned off.
"""
REPORTS = [
    ("KASAN", "[   12.5] BUG: KASAN: slab-use-after-free in initexit_unwind+0x1c/0x90"),
    ("Oops", "[   12.5] Oops: general protection fault, probably for non-canonical address"),
    ("Oops", "[   12.5][  T301] BUG: kernel NULL pointer dereference, address: 0000000000000008"),
    ("WARNING", "[   12.5] WARNING: CPU: 1 PID: 301 at kernel/module/main.c:2800 do_init_module+0x1/0x2"),
    ("WARNING", "[   12.5] WARNING: possible circular locking dependency detected"),
    ("Oops", "[   12.5] BUG: sleeping function called from invalid context at mm/slub.c:4000"),
    ("debugobjects", "[   12.5] ODEBUG: free active (active state 0) object: 0000 object type: timer_list"),
    ("list corruption", "[   12.5] list_add corruption. prev->next should be next (ffff), but was 0000."),
    ("hung task", "[  130.0] INFO: task modload:301 blocked for more than 120 seconds."),
    ("kmemleak", "unreferenced object 0xffff888003f1c000 (size 64):"),
    ("soft lockup", "[   70.0] watchdog: BUG: soft lockup - CPU#0 stuck for 26s! [modload:301]"),
    ("slab corruption", "[   12.5] BUG kmalloc-1k (Not tainted): Object already free"),
    ("RCU stall", "[   80.0] rcu: INFO: rcu_sched detected stalls on CPUs/tasks:"),
    ("kmemleak off", "[   12.5] kmemleak: Cannot allocate a kmemleak_object structure"),
    ("kmemleak off", "[   12.5] kmemleak: Kernel memory leak detector disabled"),
    ("KASAN", "ok 3 - foo[   50.1] BUG: KASAN: use-after-free in f+0x1/0x2"),
    ("panic", "[   12.5] Kernel panic - not syncing: Fatal exception"),
]


def test_reports_clean_console(tmp_path: Path) -> None:
    log = tmp_path / "console.log"
    log.write_text(CLEAN_DEBUG_CONSOLE)
    assert verdict.kernel_reports(CLEAN_DEBUG_CONSOLE) == []
    v = verdict.judge_reports("debug boot", log)
    assert (v.passed, v.failed) == (1, 0)


@pytest.mark.parametrize("kind,line", REPORTS)
def test_reports_each_kind_fails_quoting_it(kind: str, line: str, tmp_path: Path) -> None:
    text = CLEAN_DEBUG_CONSOLE + line + "\n[   12.6] Call Trace:\n[   12.6]  <TASK>\n"
    log = tmp_path / "console.log"
    log.write_text(text)
    found = verdict.kernel_reports(text)
    assert [(k, ln) for _, k, ln in found] == [(kind, line)]
    v = verdict.judge_reports("debug boot", log)
    assert v.passed == 0 and v.failed == 1
    assert f"({kind})" in v.failures[0] and line in v.failures[0]


KINDS = verdict.load_report_kinds()


@pytest.mark.parametrize("row", KINDS, ids=[k.kind for k in KINDS])
def test_kernel_reports_list_each_example_is_its_own_kind(row: verdict.ReportKind) -> None:
    # tests/kernel-reports.txt: each pattern on the console line beside it,
    # which no row above it claims (the first match wins).
    assert verdict.report_kind(row.example) == row.kind


def test_kernel_reports_list_covers_every_kind_the_judges_name() -> None:
    kinds = {k.kind for k in KINDS}
    assert verdict.OOPS_KINDS | verdict.WARNING_KINDS | {"panic"} <= kinds
    assert {kind for kind, _ in REPORTS} <= kinds
    assert len(kinds) == len(KINDS)


def _fault_sweep_kernel_reports(tmp_path: Path, log: str) -> str:
    """fault-sweep's own kernel_reports() (tests/guest/tools/fault-sweep),
    under busybox ash with busybox's sed, awk and grep, as in the guest."""
    busybox = shutil.which("busybox")
    assert busybox, "busybox (busybox-static, which scripts/test installs) runs the guest's side"
    tool = (ROOT / "tests/guest/tools/fault-sweep").read_text()
    funcs = ""
    for name in ("messages", "kernel_reports"):  # kernel_reports calls messages
        start = tool.index(f"\n{name}() {{") + 1
        funcs += tool[start:tool.index("\n}\n", start) + 3]
    res = [k.pattern.pattern for k in KINDS if not k.whole_line]
    (tmp_path / "report-res").write_text("\n".join(res) + "\n")
    (tmp_path / "log").write_text(log)
    script = f"WORK={tmp_path}\nname=initexit_test\n{funcs}kernel_reports {tmp_path}/log\n"
    bindir = tmp_path / "bin"
    bindir.mkdir(exist_ok=True)
    for applet in ("sed", "grep", "awk"):
        (bindir / applet).unlink(missing_ok=True)
        (bindir / applet).symlink_to(busybox)
    proc = subprocess.run([busybox, "ash", "-c", script], capture_output=True, text=True,
                          env={"PATH": f"{bindir}:/usr/bin:/bin"}, timeout=30)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.strip()


@pytest.mark.parametrize("row", [k for k in KINDS if not k.whole_line],
                         ids=[k.kind for k in KINDS if not k.whole_line])
def test_kernel_reports_list_reads_alike_in_the_guest(row: verdict.ReportKind, tmp_path: Path) -> None:
    # The guest's fault-sweep finds the same report in a dmesg with the
    # line among ordinary ones, and quotes its message.
    log = "[    1.000000] virtio_blk virtio0: [vda] 65536 512-byte logical blocks\n" + row.example + \
        "\n[    1.100000] Call Trace:\n"
    got = _fault_sweep_kernel_reports(tmp_path, log)
    assert got and got in row.example, (row.kind, got)


def test_kernel_reports_list_guest_side_quiet_on_a_clean_log(tmp_path: Path) -> None:
    assert _fault_sweep_kernel_reports(tmp_path, CLEAN_DEBUG_CONSOLE) == ""


@pytest.mark.parametrize("text,why", [
    ("KASAN\tmessage\tBUG: KASAN\n", "want kind"),
    ("KASAN\teverywhere\tBUG\tx\n", "want kind"),
    ("KASAN\tmessage\t(BUG\tx\n", "bad pattern"),
    ("# only a comment\n", "no report kind"),
])
def test_kernel_reports_list_malformed_is_a_clear_error(text: str, why: str, tmp_path: Path) -> None:
    f = tmp_path / "reports.txt"
    f.write_text(text)
    with pytest.raises(verdict.ReportsFileError, match=why):
        verdict.load_report_kinds(f)


def test_scan_prints_reports_and_ignores_a_kind(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log = tmp_path / "dmesg.txt"
    log.write_text(CLEAN_DEBUG_CONSOLE + "[    9.0] Kernel panic - not syncing: VFS: Unable to mount root fs\n")
    assert verdict.main(["scan", str(log)]) == 1
    assert ": panic: " in capsys.readouterr().out
    assert verdict.main(["scan", "--ignore", "panic", str(log)]) == 0


@pytest.mark.parametrize("line,kind", [
    ("Unable to handle kernel NULL pointer dereference at virtual address 0000000000000008", "Oops"),
    ("Internal error: Oops: 0000000096000005 [#1] SMP", "Oops"),
    ("WARNING: CPU: 0 PID: 1 at kernel/initexit.c:120 initexit_unwind+0x1c/0x90", "WARNING"),
])
def test_scan_all_kernel_reads_a_console_without_time_stamps(line: str, kind: str, tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    # check-configs' bare boots (no CONFIG_PRINTK_TIME): every line is the
    # kernel's; without --all-kernel an unstamped line is userspace's.
    log = tmp_path / "dmesg.txt"
    log.write_text("Booting Linux on physical CPU 0x0000000000 [0x000f0510]\n" + line + "\n")
    assert verdict.main(["scan", str(log)]) == 0
    assert verdict.main(["scan", "--all-kernel", "--first", str(log)]) == 1
    assert f"2: {kind}: {line}" in capsys.readouterr().out


def test_reports_one_splat_counts_once_two_count_twice() -> None:
    splat = ("[    5.0] BUG: KASAN: use-after-free in f+0x1/0x2\n"
             "[    5.0] Read of size 8 at addr ffff888 by task modload/301\n"
             "[    5.0] WARNING: CPU: 0 PID: 301 at lib/x.c:1 g\n")
    assert [k for _, k, _ in verdict.kernel_reports(splat)] == ["KASAN"]
    two = splat + "\n" * 5 + "[    9.0] WARNING: CPU: 1 PID: 302 at lib/y.c:2 h\n"
    assert [k for _, k, _ in verdict.kernel_reports(two)] == ["KASAN", "WARNING"]


def test_reports_read_dev_kmsg_records() -> None:
    kmsg = ("6,900,3100000,-;FAULT_INJECTION: forcing a failure.\n"
            "4,901,3100001,-;WARNING: CPU: 0 PID: 301 at lib/x.c:1 g+0x1/0x2\n"
            " SUBSYSTEM=cpu\n")
    assert [k for _, k, _ in verdict.kernel_reports(kmsg)] == ["WARNING"]


def test_reports_empty_or_missing_console_fails(tmp_path: Path) -> None:
    assert verdict.judge_reports("x", tmp_path / "none.log").failed == 1
    (tmp_path / "empty.log").write_text("")
    assert verdict.judge_reports("x", tmp_path / "empty.log").failed == 1


def test_kmsg_capture_must_be_whole(tmp_path: Path) -> None:
    whole = "6,10,1,-;a\n6,11,2,-;b\n SUBSYSTEM=x\n6,12,3,-;initexit-debug: end of the log\n"
    assert verdict.kmsg_problems(whole, "initexit-debug: end of the log") == []
    gap = whole.replace("6,11,2,-;b", "6,14,2,-;b").replace("6,12,3", "6,15,3")
    assert "3 record(s)" in verdict.kmsg_problems(gap, "initexit-debug: end")[0]
    cut = "6,10,1,-;a\n6,11,2,-;b\n"
    assert "end marker" in verdict.kmsg_problems(cut, "initexit-debug: end")[0]
    log = tmp_path / "kmsg.txt"
    log.write_text(cut)
    v = verdict.judge_reports("kmsg", log, "initexit-debug: end")
    assert v.failed == 1 and "end marker" in v.failures[0]


# ------------------------------------------------- the series' kselftest

KSFT_RUNNER = """TAP version 13
1..2
# selftests: module/initexit: order.sh
ok 1 selftests: module/initexit: order.sh
# selftests: module/initexit: fail_sweep.sh
not ok 2 selftests: module/initexit: fail_sweep.sh # exit=1
"""
KSFT_TEST = """timeout set to 300
TAP version 13
1..3
ok 1 order: the load succeeds
not ok 2 order: exits in exact reverse of inits
# --- expect
ok 3 order: debugfs lists 18 pairs # SKIP
# Totals: pass:1 fail:1 xfail:0 xpass:0 skip:1 error:0
"""


def test_kselftest_names(tmp_path: Path) -> None:
    """The mutation judge names the runner's KTAP and each test's."""
    k = tmp_path / "guest" / "ktap"
    k.mkdir(parents=True)
    for name in ("kselftest", "kselftest-order", "kselftest-fail_sweep", "70-module-events"):
        (k / f"{name}.tap").write_text("")
    assert verdict.kselftest_names(tmp_path) == ["kselftest", "kselftest-fail_sweep", "kselftest-order"]
    # A run without the kselftest still names the runner: its absence fails.
    assert verdict.kselftest_names(tmp_path / "none") == ["kselftest"]


def test_kselftest_outputs_are_read(tmp_path: Path) -> None:
    """run_kselftest.sh's TAP 13 (results without "- ") and a test's own
    output as ktap-runner.sh saves it (unprefixed)."""
    v = verdict.judge_ktap("kselftest", KSFT_RUNNER, 1, reader="own")
    assert (v.passed, v.failures) == (1, ("kselftest: not ok 2 - selftests: module/initexit: fail_sweep.sh",))
    v = verdict.judge_ktap("kselftest-order", KSFT_TEST, 1, reader="own")
    assert (v.passed, v.skipped) == (1, 1)
    assert v.failures == ("kselftest-order: not ok 2 - order: exits in exact reverse of inits",)
    v = verdict.judge_ktap("kselftest-order", "timeout set to 300\nTAP version 13\n1..0 # SKIP not root\n", 4,
                           reader="own")
    assert v.failures and "0 tests run!" in v.failures[0]


def test_kernel_reports_guest_side_leaves_the_modules_own_alloc_tags_to_the_leak_check(tmp_path: Path) -> None:
    # The swept module's own alloc-tag lines and lib/alloc_tag.c's WARNING
    # after them are leaks (alloc_tag_leaks), not reports; another module's are.
    own = ("[   12.5] mm/x.c:10 module initexit_test func:a_init has 64 allocated at module unload\n"
           "[   12.5] WARNING: CPU: 0 PID: 9 at lib/alloc_tag.c:168 alloc_tag_module_unload+0x1/0x2\n")
    assert _fault_sweep_kernel_reports(tmp_path, own) == ""
    other = own.replace("initexit_test", "fuse")
    assert "module fuse" in _fault_sweep_kernel_reports(tmp_path, other)


# Mutations caught by the KUnit suite: "Expect: kunit: CASE" is met when
# CASE of the series' suite failed in the run's kernel log, or the suite
# stopped before CASE reported.
KUNIT_RESULTS = [
    ("kunit-dmesg.log", "initexit_test_undoable", "pass"),
    ("kunit-dmesg-fail.log", "initexit_test_undoable", "fail: not ok 4 initexit_test_undoable"),
    ("kunit-dmesg-fail.log", "initexit_test_priorities", "pass"),
    ("kunit-dmesg-crashed.log", "initexit_test_undoable", "fail: the suite stopped before initexit_test_undoable reported"),
    ("kunit-dmesg.log", "initexit_test_nonesuch", "cannot run: the suite has no case initexit_test_nonesuch"),
    ("kunit-dmesg-none.log", "initexit_test_undoable", "cannot run: no KUnit suite 'initexit'"),
]


@pytest.mark.parametrize("log,case,want", KUNIT_RESULTS)
def test_kunit_result_of_one_case(log: str, case: str, want: str, tmp_path: Path) -> None:
    shutil.copy(DATA / log, tmp_path / "dmesg.txt")
    assert verdict.kunit_result(tmp_path, case).startswith(want)


def test_mutation_caught_by_kunit(tmp_path: Path) -> None:
    patch = tmp_path / "m.patch"
    patch.write_text("Mutation: the ordering check is off\nExpect: kunit: initexit_test_undoable\n")
    run = mutation_run(tmp_path, None, with_boot=False)
    shutil.copy(DATA / "kunit-dmesg-fail.log", run / "dmesg.txt")
    ok, lines = verdict.judge_mutation(run, [], patch, None)
    assert ok
    assert lines[0] == "  expected kunit: initexit_test_undoable -> caught: not ok 4 initexit_test_undoable"
    shutil.copy(DATA / "kunit-dmesg.log", run / "dmesg.txt")
    ok, lines = verdict.judge_mutation(run, [], patch, None)
    assert not ok
    assert lines[0] == "  expected kunit: initexit_test_undoable -> NOT CAUGHT (pass)"
    # The unmutated run must pass every case a mutation names.
    ok, lines = verdict.judge_mutation(run, [], None, None, all_patches=[patch])
    assert ok, lines
    shutil.copy(DATA / "kunit-dmesg-fail.log", run / "dmesg.txt")
    ok, lines = verdict.judge_mutation(run, [], None, None, all_patches=[patch])
    assert not ok
    assert lines == ["  kunit: initexit_test_undoable: fail: not ok 4 initexit_test_undoable"]

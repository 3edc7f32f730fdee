"""The CLI as users and scripts/run call it: exit codes, streams, files."""

from __future__ import annotations

import json
import os
import pathlib
import re
import subprocess
import sys

import pytest

from analysis.cli import REPORT_FILES, main

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
FIX = os.path.join(HERE, "fixtures")
GOOD = os.path.join(FIX, "synthetic-module-fail-unwind.txt")
BAD = os.path.join(FIX, "broken-unload-reverse-order.txt")


def run(*args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([sys.executable, "-m", "analysis", *args], cwd=ROOT, input=stdin,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, check=False)


def test_help() -> None:
    r = run("--help")
    assert r.returncode == 0
    for word in (b"check", b"timeline", b"export", b"report", b"bench", b"exit status"):
        assert word in r.stdout
    assert run("check", "--help").returncode == 0


def test_usage_errors_exit_2() -> None:
    assert run().returncode == 2
    assert run("check").returncode == 2
    assert run("timeline", "--format", "pdf", GOOD).returncode == 2


def test_missing_file_one_line_error() -> None:
    r = run("check", "/nonexistent.txt")
    assert r.returncode == 2
    assert r.stderr.decode().strip().splitlines()[-1].startswith("analysis: error: /nonexistent.txt")
    assert b"Traceback" not in r.stderr


def test_stdin_and_exit_codes() -> None:
    with open(GOOD, "rb") as f:
        assert run("check", "-q", "-", stdin=f.read()).returncode == 0
    with open(BAD, "rb") as f:
        r = run("check", "-q", "-", stdin=f.read())
    assert r.returncode == 1
    assert b"unload-reverse-order" in r.stdout
    assert r.stderr == b""


def test_binary_garbage_on_stdin() -> None:
    r = run("check", "-", stdin=bytes(range(256)) * 20)
    assert r.returncode == 2 and b"Traceback" not in r.stderr


def test_progress_on_stderr_results_on_stdout() -> None:
    r = run("check", "--format", "json", GOOD)
    json.loads(r.stdout)
    assert b"analysis: " in r.stderr


def test_no_colour_when_not_a_tty() -> None:
    assert b"\033[" not in run("timeline", GOOD).stdout
    assert b"\033[" in run("timeline", "--color", "always", GOOD).stdout


@pytest.mark.parametrize("fmt", ["text", "json", "chrome", "html"])
def test_timeline_formats_to_file(fmt: str, tmp_path: object) -> None:
    out = os.path.join(str(tmp_path), "out." + fmt)
    assert main(["timeline", "-q", "--format", fmt, "-o", out, GOOD]) == 0
    with open(out, encoding="utf-8") as f:
        data = f.read()
    if fmt in ("json", "chrome"):
        json.loads(data)
    assert data


def test_report_writes_every_output(tmp_path: object, capsys: pytest.CaptureFixture[str]) -> None:
    d = str(tmp_path)
    assert main(["report", "-q", "--out-dir", d, "--name", "modules", BAD]) == 1
    for pattern in REPORT_FILES.values():
        assert os.path.getsize(os.path.join(d, pattern.format(name="modules"))) > 0
    out = capsys.readouterr().out
    assert "Verdict: FAIL" in out and "unload-reverse-order" in out


def test_parse_subcommand(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["parse", "-q", GOOD]) == 0
    assert "initexit_init_start" in capsys.readouterr().out
    assert main(["parse", "-q", os.path.join(FIX, "broken-trace-complete.txt")]) == 1


def test_small_bench(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "-q", "--events", "2000", "--format", "json"]) == 0
    r = json.loads(capsys.readouterr().out)
    assert r["events"] >= 2000 and r["verdict_ok"] is True and r["parse_events_per_s"] > 0


def test_bench_on_a_real_dat_times_trace_cmd_the_analysis_and_the_floor(
        capsys: pytest.CaptureFixture[str]) -> None:
    dat = os.path.join(FIX, "captured", "module-scenario.dat")
    assert main(["bench", "-q", "--dat", dat, "--format", "json"]) == 0
    r = json.loads(capsys.readouterr().out)
    # The floor loop must have kept every event the parser kept: a floor
    # that skipped lines would make the bound look lower than it is.
    assert r["events"] == r["floor_events"] > 200
    for key in ("trace_cmd_report_s", "total_s", "parse_s", "floor_s"):
        assert r[key] > 0, key
    assert r["floor_over_trace_cmd"] == r["floor_s"] / r["trace_cmd_report_s"]
    assert main(["bench", "-q", "--dat", dat]) == 0
    assert "ratio floor/trace-cmd: " in capsys.readouterr().out


def test_synth_large_is_valid_trace(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["synth", "large", "--events", "3000", "-q"]) == 0
    text = capsys.readouterr().out
    assert text.startswith("cpus=2\n") and text.count("\n") > 3000


def test_unwind_that_cannot_be_checked_is_said_not_silently_passed(
        capsys: pytest.CaptureFixture[str], tmp_path: object) -> None:
    # A failed load whose exits never ran anywhere in the capture (a kernel
    # that forgot to unwind, or pairs without exits), from a kernel whose
    # initexit_init_start has no has_exit= yet: the trace cannot tell.  The
    # check cannot fail it, but it must say what it could not check.
    with open(GOOD, encoding="utf-8") as f:
        lines = f.readlines()[:20]
    kept = [x for x in lines if "initexit_unwind:" not in x and "initexit_exit_" not in x]
    with_field = os.path.join(str(tmp_path), "no-unwind-has-exit.txt")
    with open(with_field, "w", encoding="utf-8") as f:
        f.writelines(kept)
    # With has_exit= (today's kernel) the missing unwind is a finding.
    assert main(["check", "-q", "--format", "json", with_field]) == 1
    assert json.loads(capsys.readouterr().out)["failed_checks"] == ["unwind-after-failure"]
    path = os.path.join(str(tmp_path), "no-unwind.txt")
    with open(path, "w", encoding="utf-8") as f:
        f.writelines(re.sub(r" has_exit=[01]", "", x) for x in kept)
    assert main(["check", "-q", "--format", "json", path]) == 0
    check = next(c for c in json.loads(capsys.readouterr().out)["checks"]
                 if c["name"] == "unwind-after-failure")
    assert check["state"] == "pass"
    assert check["note"].startswith("not checked: module ie_demo")
    assert "#0 demo_alloc_init, #1 demo_init succeeded before the failure, but none of their exits" in check["note"]
    assert check["note"].endswith("(unload the module once in the same capture to show its exits)")
    assert main(["check", "-q", "--color", "never", path]) == 0
    assert "(not checked: module ie_demo" in capsys.readouterr().out
    # With the exits in the capture, nothing is left unchecked.
    assert main(["check", "-q", "--format", "json", GOOD]) == 0
    check = next(c for c in json.loads(capsys.readouterr().out)["checks"]
                 if c["name"] == "unwind-after-failure")
    assert check["state"] == "pass" and check["note"] == ""


@pytest.mark.parametrize("name", ["broken-no-init-after-failure", "broken-boot-pairs-in-entry", "broken-boot-priority-order",
                                  "broken-unwind-after-failure"])
def test_kunit_path_test_events_are_not_checked(name: str, tmp_path: "pathlib.Path") -> None:
    # The series' KUnit suite runs tables of its own and marks their events
    # path=test: the same broken events with path=test are not findings,
    # and the verdict says how many it left out.
    fixture = os.path.join(FIX, f"{name}.txt")
    with open(fixture) as fh:
        text = fh.read()
    assert "path=module" in text or "path=boot" in text
    moved = text.replace("path=module", "path=test").replace("path=boot", "path=test")
    src = tmp_path / f"{name}-kunit.txt"
    src.write_text(moved)
    broken = subprocess.run([sys.executable, "-m", "analysis", "check", "--format", "json", fixture],
                            capture_output=True, text=True, cwd=ROOT)
    kunit = subprocess.run([sys.executable, "-m", "analysis", "check", "--format", "json", str(src)],
                           capture_output=True, text=True, cwd=ROOT)
    assert broken.returncode == 1
    v = json.loads(kunit.stdout)
    pair_checks = {"no-init-after-failure", "unwind-after-failure", "inits-ascending", "exit-exactly-once",
                   "boot-pairs-in-entry"}
    failed = {c["name"] for c in v["checks"] if c["state"] == "fail"}
    assert not failed & pair_checks, failed
    assert any("KUnit suite (path=test) not checked" in n for n in v["notes"]), v["notes"]

"""Every kernel log a user pastes: one boot (fixtures/kernel-logs/source.kmsg,
a real stock 6.12 boot's lines) as dmesg, journalctl -k and syslog print it
(make_kernel_logs.py) reads to the same calls; each form's stamps give the
times they can; the kernel's level lines give each call's level; anything
else is refused in one line that says what is accepted.  (The verdict of
each fixture against its sidecar is test_fixtures.py's, the streaming
verdict test_streaming.py's.)"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys

import pytest

from analysis.build import build_capture
from analysis.checks import run_checks
from analysis.cli import main
from analysis.kernel_log import Clock, split
from analysis.model import Capture, EventName, InputFormat
from analysis.parse import parse_text
from analysis.source import InputError
from analysis.tests.make_kernel_logs import DMESG_FORMS, MACHINE_DEPENDENT, SOURCE, dmesg

HERE = os.path.dirname(os.path.abspath(__file__))
LOGS = os.path.join(HERE, "fixtures", "kernel-logs")
ROOT = os.path.dirname(os.path.dirname(HERE))

#: Fixture -> (what the first calling line's envelope says printed it,
#: the clock its stamps give).
FORMS: dict[str, tuple[str, Clock]] = {
    "dmesg": ("dmesg", Clock.KERNEL),
    "dmesg-crlf": ("dmesg", Clock.KERNEL),
    "dmesg-r": ("dmesg -r", Clock.KERNEL),
    "dmesg-x": ("dmesg -x", Clock.KERNEL),
    "dmesg-d": ("dmesg -d", Clock.KERNEL),
    "dmesg-T": ("dmesg -T", Clock.WALL),
    "dmesg-iso": ("dmesg --time-format iso", Clock.WALL),
    "printk-time-0": ("a log without timestamps (printk.time=0, dmesg -t)", Clock.NONE),
    "journalctl-short": ("journalctl -k -o short", Clock.WALL),
    "journalctl-short-no-hostname": ("journalctl -k -o short", Clock.WALL),
    "journalctl-short-precise": ("journalctl -k -o short-precise", Clock.WALL),
    "journalctl-short-precise-no-hostname": ("journalctl -k -o short-precise", Clock.WALL),
    "journalctl-short-monotonic": ("journalctl -k -o short-monotonic", Clock.KERNEL),
    "journalctl-short-monotonic-no-hostname": ("journalctl -k -o short-monotonic", Clock.KERNEL),
    "journalctl-short-iso": ("journalctl -k -o short-iso", Clock.WALL),
    "journalctl-short-iso-no-hostname": ("journalctl -k -o short-iso", Clock.WALL),
    "journalctl-short-iso-precise": ("journalctl -k -o short-iso-precise", Clock.WALL),
    "journalctl-short-iso-precise-no-hostname": ("journalctl -k -o short-iso-precise", Clock.WALL),
    "printk-caller-dmesg": ("dmesg", Clock.KERNEL),
    "printk-caller-console": ("dmesg", Clock.KERNEL),
    "syslog": ("syslog", Clock.KERNEL),
    "syslog-rfc3339": ("syslog (RFC 3339 stamps)", Clock.KERNEL),
    "kernel-5.10": ("dmesg", Clock.KERNEL),
    "kernel-6.16-levels": ("dmesg", Clock.KERNEL),
}

SAME_BOOT = [n for n in FORMS if not n.startswith("kernel-")]


def _read(name: str) -> str:
    with open(os.path.join(LOGS, name + ".log"), encoding="utf-8", newline="") as f:
        return f.read()


def _capture(name: str) -> Capture:
    return build_capture(parse_text(_read(name), name + ".log"))


def _calls(cap: Capture) -> list[tuple[str, str, str, int | None, int | None]]:
    return [(s.kind.value, s.path.value, s.func, s.ret, s.duration_ns) for s in cap.spans]


def _source_calls() -> list[tuple[str, int, int]]:
    """(function, ret, usecs) of every initcall_debug call in source.kmsg, by
    a reading of its own (the kernel's record form)."""
    out = []
    with open(SOURCE, encoding="utf-8") as f:
        for line in f:
            m = re.search(r"\] initcall (\S+)(?: \[\S+\])? returned (-?\d+) after (\d+) usecs$", line.rstrip("\n"))
            if m:
                out.append((m.group(1), int(m.group(2)), int(m.group(3))))
    return out


def test_every_form_is_a_fixture() -> None:
    on_disk = sorted(os.path.splitext(n)[0] for n in os.listdir(LOGS) if n.endswith(".log"))
    assert sorted([*FORMS, "kernel-6.16-levels-swapped"]) == on_disk


@pytest.mark.parametrize("name", list(FORMS))
def test_the_envelope_says_what_printed_the_log(name: str) -> None:
    first = next(line for line in _read(name).splitlines(keepends=True)
                 if "calling  init_hw_perf_events" in line)
    got = split(first)
    assert (got.form, got.clock) == FORMS[name]
    assert got.message.startswith("calling  init_hw_perf_events+0x0/0x66a @ 1")
    assert not got.message.endswith(("\r", "\n"))


@pytest.mark.parametrize("name", SAME_BOOT)
def test_every_form_reads_to_the_same_calls(name: str) -> None:
    want = _calls(_capture("dmesg"))
    src = _source_calls()
    # The boot's calls and the kernel's own numbers, in the kernel's order
    # (the pci quirks' `pci ...: calling` lines are not initcalls).
    assert [(c[2], c[3], c[4]) for c in want] == [(f, r, u * 1000) for f, r, u in src]
    assert len(want) == 20
    cap = _capture(name)
    assert cap.parsed.fmt is InputFormat.DMESG
    assert _calls(cap) == want
    assert not cap.parsed.gaps and not cap.build_problems
    assert [n.kind for n in cap.parsed.notices] == ["run-init"]


@pytest.mark.parametrize("name", [n for n in SAME_BOOT if FORMS[n][1] is Clock.KERNEL])
def test_the_kernels_stamps_are_the_times(name: str) -> None:
    want = [(s.start.ts_ns, s.finish.ts_ns if s.finish else None) for s in _capture("dmesg").spans]
    cap = _capture(name)
    assert [(s.start.ts_ns, s.finish.ts_ns if s.finish else None) for s in cap.spans] == want
    assert not any("kernel log read as" in n for n in run_checks(cap).notes)


@pytest.mark.parametrize("name", [n for n in SAME_BOOT if FORMS[n][1] is not Clock.KERNEL])
def test_wall_clock_or_no_stamps_rebuild_times_from_the_durations_and_say_so(name: str) -> None:
    cap = _capture(name)
    spans = cap.spans
    starts = [s.start.ts_ns for s in spans]
    assert starts == sorted(starts) and starts[0] == 0
    for s in spans:
        assert s.finish is not None and s.duration_ns is not None
        # A call's finish is its start plus the kernel's `after N usecs`.
        assert s.finish.ts_ns - s.start.ts_ns == s.duration_ns
    (note,) = [n for n in run_checks(cap).notes if n.startswith("kernel log read as")]
    assert FORMS[name][0] in note and "after N usecs" in note
    if FORMS[name][1] is Clock.WALL:
        # Never before the line's stamp: the module loads, 2.4 s into the
        # boot, start in the second (or microsecond) their lines say.
        plain = next(s for s in spans if s.func.startswith("plain_init"))
        whole = "whole seconds" in note
        assert plain.start.ts_ns >= (2_000_000_000 if whole else 2_467_043_000 - 310_779_000)
        assert whole is (name in ("dmesg-T",) or name.startswith("journalctl-short")
                         and "precise" not in name)


def test_old_kernels_durations_are_said_to_be_short() -> None:
    cap = _capture("kernel-5.10")
    assert _calls(cap) == _calls(_capture("dmesg"))
    (note,) = [n for n in run_checks(cap).notes if n.startswith("Linux 5.10")]
    assert "nanoseconds / 1024" in note
    assert not any(n.startswith("Linux ") for n in run_checks(_capture("dmesg")).notes)


def test_a_kernel_that_printed_probes_with_pr_debug_is_named_when_none_are_there() -> None:
    """drivers/base/dd.c printed the probe line with pr_debug() from 5.8
    until e2f06aa88508 (2023): a 5.10 log without probe lines says why and
    how to get them; with a probe line, or on 6.12, it says nothing."""
    def notes(text: str) -> list[str]:
        return [n for n in run_checks(build_capture(parse_text(text, "t.log"))).notes
                if n.startswith("no device probe lines")]
    old = _read("kernel-5.10")
    assert "probe of " not in old
    (note,) = notes(old)
    assert "Linux 5.10's drivers/base/dd.c" in note and 'dyndbg="file drivers/base/dd.c +p"' in note
    assert notes(old.replace("Linux version 5.10.228", "Linux version 6.3.13")) != []
    assert notes(old.replace("Linux version 5.10.228", "Linux version 5.7.19")) == []
    assert notes(old.replace("Linux version 5.10.228", "Linux version 6.4.16")) == []
    assert notes(_read("dmesg")) == []
    # One probe line is enough: the kernel prints them.
    first = old.index("[    0.310779] calling")
    probed = old[:first] + "[    0.300000] probe of serial0 returned 0 after 12 usecs\n" + old[first:]
    assert notes(probed) == []


def test_level_lines_give_each_call_its_level() -> None:
    cap = _capture("kernel-6.16-levels")
    assert cap.level_names == ("early", "pure", "core", "postcore", "arch", "subsys", "fs", "device", "late")
    assert [e.name for e in cap.levels] == [EventName.INITCALL_LEVEL] * 9
    level = {s.func.split("+")[0]: s.level for s in cap.spans}
    assert level["init_hw_perf_events"] == "early"
    assert level["release_early_probes"] == level["pcc_init"] == "postcore"
    assert level["sbf_init"] == "arch"
    assert level["pci_apply_final_quirks"] == level["populate_rootfs"] == "fs"
    assert level["rapl_pmu_init"] == "device"
    assert level["late_trace_init"] == "late"
    assert level["plain_init"] is None  # a module's init is in no level
    assert [(c[2], c[3], c[4]) for c in _calls(cap)] == [(c[2], c[3], c[4]) for c in _calls(_capture("dmesg"))]
    v = run_checks(cap)
    checked = {c.name: c.state.value for c in v.results}
    assert checked["levels-agree-with-priorities"] == "pass"
    assert checked["boot-priority-order"] == "pass"


def test_levels_out_of_order_are_found() -> None:
    v = run_checks(_capture("kernel-6.16-levels-swapped"))
    found = {f.message for f in v.findings}
    assert "level fs entered after level device" in found
    assert any("rapl_pmu_init" in f or "populate_rootfs" in f for f in found)


def test_pci_quirk_lines_are_not_initcalls() -> None:
    # drivers/pci/quirks.c prints `calling  %pS @ %i` after the device's
    # name under initcall_debug too; in every form it stays a plain message.
    for name in FORMS:
        cap = _capture(name)
        assert not any("quirk_" in s.func for s in cap.spans), name


def test_a_line_without_its_newline_at_the_end_is_a_truncated_capture() -> None:
    p = parse_text(_read("journalctl-short").rstrip("\n"), "cut.log")
    assert [g.what for g in p.gaps] == ["input ends mid-line (truncated capture?)"]


ACCEPTED = ("dmesg", "-r", "-x", "-T", "-t", "journalctl -k", "short-monotonic", "short-precise",
            "host name", "syslog", "printk.time=0", "CRLF", "trace-cmd report")


@pytest.mark.parametrize("text", [
    "hello\nthis is not a trace\n",
    # dmesg -e (reltime): not a form the analysis reads
    "[Dec 6 23:10] calling  foo_init+0x0/0x30 @ 1\n[  +0.000012] initcall foo_init+0x0/0x30 returned 0 after 11 usecs\n",
    # a kernel log without initcall_debug
    "Dec 06 23:10:01 guest kernel: Linux version 6.12.118\nDec 06 23:10:01 guest kernel: Run /init as init process\n",
])
def test_anything_else_is_refused_in_one_line_that_lists_what_is_accepted(
        text: str, tmp_path: object, capsys: pytest.CaptureFixture[str]) -> None:
    path = os.path.join(str(tmp_path), "pasted.log")
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    with pytest.raises(InputError):
        parse_text(text)
    assert main(["check", "-q", path]) == 2
    out, err = capsys.readouterr()
    assert out == "" and "Traceback" not in err
    (line,) = err.strip().splitlines()
    assert line.startswith("analysis: error: line 1: neither")
    for word in ACCEPTED:
        assert word in line, word


def test_the_cli_reads_a_paste_from_stdin() -> None:
    proc = subprocess.run([sys.executable, "-m", "analysis", "check", "-q", "-"], cwd=ROOT,
                          input=_read("journalctl-short").encode(), capture_output=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert b"kernel log read as journalctl -k -o short" in proc.stdout


@pytest.mark.skipif(shutil.which("dmesg") is None, reason="util-linux dmesg is not installed")
@pytest.mark.parametrize("name", [n for n in DMESG_FORMS if n not in MACHINE_DEPENDENT])
def test_dmesg_fixtures_are_what_dmesg_prints(name: str) -> None:
    try:
        fresh = dmesg(SOURCE, *DMESG_FORMS[name])
    except subprocess.CalledProcessError as e:  # a dmesg without -F
        pytest.skip(f"dmesg -F failed: {e.stderr.strip()}")
    assert fresh == _read(name), "rerun python3 -m analysis.tests.make_kernel_logs"



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
from analysis.tests.make_kernel_logs import (
    CALLER_FORMS,
    DMESG_FORMS,
    MACHINE_DEPENDENT,
    NEW_DMESG_FORMS,
    SOURCE,
    caller_form,
    callers,
    console_text,
    dmesg,
    records,
    unpadded,
)

HERE = os.path.dirname(os.path.abspath(__file__))
LOGS = os.path.join(HERE, "fixtures", "kernel-logs")
ROOT = os.path.dirname(os.path.dirname(HERE))

#: The kernel's syslog form without stamps (dmesg -r cannot print it: -r and
#: -t exclude each other).
RAW_NO_STAMP = "the kernel's syslog form without timestamps (printk.time=0: dmesg -S -r, /proc/kmsg)"
#: What dmesg -S prints of a caller without a stamp (its own zero stamp).
REMNANT = "dmesg -S of a kernel with printk.time=0 and CONFIG_PRINTK_CALLER"

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
    "printk-caller-dmesg-t": ("a log without timestamps (printk.time=0, dmesg -t)", Clock.NONE),
    "printk-caller-dmesg-T": ("dmesg -T", Clock.WALL),
    "printk-caller-dmesg-x": ("dmesg -x", Clock.KERNEL),
    "printk-caller-dmesg-x-t": ("dmesg -x -t", Clock.NONE),
    "printk-caller-dmesg-r": ("dmesg -r", Clock.KERNEL),
    "printk-caller-dmesg-kmsg-r": ("dmesg -r", Clock.KERNEL),
    "printk-caller-dmesg-iso": ("dmesg --time-format iso", Clock.WALL),
    "printk-caller-time-0-r": (RAW_NO_STAMP, Clock.NONE),
    "printk-caller-time-0-dmesg": (REMNANT, Clock.NONE),
    "printk-caller-time-0-dmesg-t": (REMNANT, Clock.NONE),
    "syslog": ("syslog", Clock.KERNEL),
    "syslog-rfc3339": ("syslog (RFC 3339 stamps)", Clock.KERNEL),
    "kernel-5.10": ("dmesg", Clock.KERNEL),
    "kernel-6.16-levels": ("dmesg", Clock.KERNEL),
}

SAME_BOOT = [n for n in FORMS if not n.startswith("kernel-")]
#: The forms with CONFIG_PRINTK_CALLER's callers (make_kernel_logs.callers()).
CALLER = [n for n in FORMS if n.startswith("printk-caller-")]


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
        assert whole is (name in ("dmesg-T", "printk-caller-dmesg-T") or name.startswith("journalctl-short")
                         and "precise" not in name)


@pytest.mark.parametrize("name", CALLER)
def test_the_caller_is_read_on_every_line(name: str) -> None:
    """Each line of a CONFIG_PRINTK_CALLER form, after the stamp or in its
    place, or the remnant dmesg -S leaves of it: the line's message is the
    record's and its caller the record's (T1, or C0)."""
    recs = records()
    # (The kernel's stamp takes the spaces a message begins with, as before.)
    got = [(line.message.lstrip(), line.caller) for line in map(split, _read(name).splitlines(keepends=True))]
    assert got == [(msg.lstrip(), c) for (_lv, _us, msg), c in zip(recs, callers(recs))]
    assert {c for _m, c in got} == {"T1", "C0"}


def test_a_console_without_stamps_prints_what_dmesg_t_prints() -> None:
    """printk.time=0 on a console: print_caller()'s ``[%6s] `` in the
    stamp's place, the text dmesg -t prints (util-linux 2.38 with -S; 2.40
    on from /dev/kmsg, where pid_max is 32768 as here)."""
    recs = records()
    assert console_text(recs, False) == _read("printk-caller-dmesg-t")
    assert console_text(recs, True) == _read("printk-caller-console")
    assert _read("printk-caller-dmesg-t").startswith("[    C0] Linux version 6.12.118+")


@pytest.mark.parametrize("line,form,clock", [
    # util-linux 2.40 and later: /dev/kmsg's caller padded to pid_max's width
    # (4194304: 8), -S's to 5.
    ("[      T1] calling  foo_init+0x0/0x20 @ 1", "a log without timestamps (printk.time=0, dmesg -t)",
     Clock.NONE),
    ("[   T1] calling  foo_init+0x0/0x20 @ 1", "a log without timestamps (printk.time=0, dmesg -t)", Clock.NONE),
    ("kern  :debug : [Mon Dec  7 16:59:55 2026] [      T1] calling  foo_init+0x0/0x20 @ 1", "dmesg -x -T",
     Clock.WALL),
    # dmesg -S of printk.time=0: its zero (or the boot's time) before the caller's remnant.
    ("kern  :debug : [    0.000000]    T1] calling  foo_init+0x0/0x20 @ 1", REMNANT.replace("-S", "-S -x"),
     Clock.NONE),
    ("[Mon Dec  7 16:59:55 2026]    T1] calling  foo_init+0x0/0x20 @ 1", REMNANT, Clock.NONE),
    ("[    0.000000 <    0.000000>]    T1] calling  foo_init+0x0/0x20 @ 1", REMNANT, Clock.NONE),
    ("2026-12-07T16:59:55,000000+00:00    T1] calling  foo_init+0x0/0x20 @ 1", REMNANT, Clock.NONE),
    ("kern  :debug :    T1] calling  foo_init+0x0/0x20 @ 1", REMNANT.replace("-S", "-S -x"), Clock.NONE),
])
def test_every_caller_envelope_dmesg_prints_is_read(line: str, form: str, clock: Clock) -> None:
    """Lines util-linux 2.38.1 and 2.41.5 printed (the fixtures' other
    combinations): the caller is read, the message is the kernel's."""
    got = split(line + "\n")
    assert (got.message, got.caller, got.form, got.clock) == ("calling  foo_init+0x0/0x20 @ 1", "T1", form, clock)


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
            "host name", "syslog", "printk.time=0", "CRLF", "trace-cmd report",
            "CONFIG_PRINTK_CALLER's [T1] after the stamp or in its place", "-S -r")


@pytest.mark.parametrize("text", [
    "hello\nthis is not a trace\n",
    # dmesg -e (reltime): not a form the analysis reads
    "[Dec 6 23:10] calling  foo_init+0x0/0x30 @ 1\n[  +0.000012] initcall foo_init+0x0/0x30 returned 0 after 11 usecs\n",
    # one stamped line among text is not a kernel log
    "[    0.000000] Linux version 6.12.118\nhello\nthis is not a trace\n",
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


@pytest.mark.parametrize("text,form", [
    ("Dec 06 23:10:01 guest kernel: Linux version 6.12.118\nDec 06 23:10:01 guest kernel: Run /init as init process\n",
     "journalctl -k -o short"),
    ("[    0.000000] Linux version 6.18.44\n[    0.000000] Command line: console=ttyS0 quiet\n"
     "\n[    0.412345] Run /init as init process\n", "dmesg"),
    ("<6>[    0.000000] Linux version 6.12.118\n<6>[    0.100000] Run /init as init process\n", "dmesg -r"),
])
def test_a_kernel_log_without_initcall_debug_says_how_to_get_one(
        text: str, form: str, tmp_path: object, capsys: pytest.CaptureFixture[str]) -> None:
    """A boot log without initcall_debug (as most boots are) is recognised
    as one, and the one-line error says what to boot with, not only what
    the analysis accepts."""
    path = os.path.join(str(tmp_path), "pasted.log")
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    assert main(["check", "-q", path]) == 2
    out, err = capsys.readouterr()
    (line,) = err.strip().splitlines()
    assert out == "" and "Traceback" not in err
    assert line.startswith(f"analysis: error: line 1: a kernel log ({form}) without initcall_debug's lines")
    assert "boot with initcall_debug on the kernel command line" in line
    for word in ACCEPTED:
        assert word in line, word


def test_the_cli_reads_a_paste_from_stdin() -> None:
    proc = subprocess.run([sys.executable, "-m", "analysis", "check", "-q", "-"], cwd=ROOT,
                          input=_read("journalctl-short").encode(), capture_output=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert b"kernel log read as journalctl -k -o short" in proc.stdout


def _dmesg_version() -> tuple[int, int]:
    out = subprocess.run(["dmesg", "--version"], capture_output=True, text=True).stdout
    m = re.search(r"util-linux (\d+)\.(\d+)", out)
    return (int(m.group(1)), int(m.group(2))) if m else (0, 0)


@pytest.mark.skipif(shutil.which("dmesg") is None, reason="util-linux dmesg is not installed")
@pytest.mark.parametrize("name", [n for n in [*DMESG_FORMS, *CALLER_FORMS, *NEW_DMESG_FORMS]
                                  if n not in MACHINE_DEPENDENT])
def test_dmesg_fixtures_are_what_dmesg_prints(name: str) -> None:
    """This machine's dmesg prints each fixture of dmesg's again; the
    callers' padding is 2.38's (the kernel's) before util-linux 2.40 and
    the width of pid_max (or 5 with -F) from 2.40 on."""
    new = _dmesg_version() >= (2, 40)
    if name in NEW_DMESG_FORMS and not new:
        pytest.skip("these forms need util-linux 2.40's dmesg (-K, the caller from /dev/kmsg)")
    try:
        fresh = dmesg(SOURCE, *DMESG_FORMS[name]) if name in DMESG_FORMS else caller_form(name)
    except subprocess.CalledProcessError as e:  # a dmesg without -F
        pytest.skip(f"dmesg -F failed: {e.stderr.strip()}")
    if new and name not in DMESG_FORMS:
        assert unpadded(fresh) == unpadded(_read(name))
    else:
        assert fresh == _read(name), "rerun python3 -m analysis.tests.make_kernel_logs"



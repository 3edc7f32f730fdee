"""Parser unit tests on single lines in trace-cmd's exact formats."""

from __future__ import annotations

import io
import os

import pytest

from analysis.build import build_capture
from analysis.checks import run_checks
from analysis.load import load_capture
from analysis.model import EventName, InputFormat
from analysis.parse import iter_text_lines, parse_dmesg, parse_text, ts_to_ns
from analysis.source import TRACE_DAT_MAGIC, InputError, read_input
from analysis.synth import format_line


def test_ts_to_ns() -> None:
    assert ts_to_ns("0.225379") == 225_379_000
    assert ts_to_ns("0.225379123") == 225_379_123
    assert ts_to_ns("12.5") == 12_500_000_000
    assert ts_to_ns("123456") == 123456  # a raw counter clock


def test_spec_example_line() -> None:
    line = "    swapper-1     [000]     0.225379: initcall_start:       func=init_sigframe_size+0x0\n"
    p = parse_text("cpus=1\n" + line)
    (ev,) = p.events
    assert (ev.comm, ev.pid, ev.cpu, ev.ts_ns) == ("swapper", 1, 0, 225_379_000)
    assert ev.name is EventName.INITCALL_START
    assert ev.info == "func=init_sigframe_size+0x0"
    assert ev.line == 2
    assert p.cpus == 1


@pytest.mark.parametrize("comm", ["kworker/u4:1-events", "my app", "a-1", "swapper/0", "<...>"])
def test_comm_with_dashes_and_spaces(comm: str) -> None:
    line = format_line(comm, 4242, 1, 1_000_000_001, "module_load", "ie_demo OE")
    (ev,) = parse_text(line).events
    assert ev.comm == comm.strip()
    assert ev.pid == 4242 and ev.cpu == 1 and ev.ts_ns == 1_000_000_001


def test_latency_format_line() -> None:
    line = "  insmod-112     0d..1.     0.100050: module_load:          ie_demo OE\n"
    (ev,) = parse_text(line).events
    assert ev.pid == 112 and ev.cpu == 0


def test_ftrace_trace_file_line() -> None:
    text = ("# tracer: nop\n#\n# entries-in-buffer/entries-written: 2/5   #P:2\n"
            "         systemd-1       [001] .....    22.555418: initcall_start: func=fuse_len_args+0x0/0x30\n")
    p = parse_text(text)
    assert len(p.events) == 1
    assert p.gaps and p.gaps[0].dropped == 3


@pytest.mark.parametrize("marker,count", [("CPU:1 [1234 EVENTS DROPPED]", 1234),
                                          ("CPU:0 [EVENTS DROPPED]", None)])
def test_dropped_markers(marker: str, count: int | None) -> None:
    text = "cpus=2\n" + marker + "\n" + format_line("sh", 1, 0, 5, "module_free", "x")
    p = parse_text(text)
    (gap,) = p.gaps
    assert gap.line == 2 and gap.dropped == count


def test_unknown_events_counted() -> None:
    text = (format_line("sh", 1, 0, 5, "sched_switch", "prev_comm=sh")
            + format_line("sh", 1, 0, 6, "module_free", "x"))
    p = parse_text(text)
    assert p.ignored == {"sched_switch": 1}


def test_garbage_is_input_error() -> None:
    with pytest.raises(InputError, match="line 1"):
        parse_text("not a trace\n")


def test_dmesg_detected() -> None:
    text = ("[    0.100000] calling  foo_init+0x0/0x30 @ 1 prio=-3000 origin=foo\n"
            "[    0.100020] initcall foo_init+0x0/0x30 returned 0 after 17 usecs prio=-3000 origin=foo\n")
    p = parse_text(text)
    assert p.fmt is InputFormat.DMESG and len(p.events) == 2


def test_read_input_missing_file() -> None:
    with pytest.raises(InputError, match="cannot read"):
        read_input("/nonexistent/trace.dat")


def test_read_input_stdin_text() -> None:
    t = read_input("-", io.BytesIO(b"cpus=1\n"))
    assert t.source == "<stdin>" and t.text == "cpus=1\n"


def test_read_input_dat_needs_trace_cmd_and_reports_failure(tmp_path: object) -> None:
    # A file with the trace.dat magic but no content: trace-cmd (if
    # installed) refuses it, and that becomes a one-line InputError.
    path = os.path.join(str(tmp_path), "broken.dat")
    with open(path, "wb") as f:
        f.write(TRACE_DAT_MAGIC + b"\x00" * 8)
    with pytest.raises(InputError):
        read_input(path)


CAPTURED_DAT = os.path.join(os.path.dirname(__file__), "fixtures", "captured", "module-scenario.dat")


def test_dat_streamed_while_trace_cmd_prints_equals_its_text() -> None:
    # load_capture parses trace-cmd's lines as they come; the result must be
    # what parsing the whole printed text gives.
    streamed = load_capture(CAPTURED_DAT).parsed
    whole = parse_text(read_input(CAPTURED_DAT).text, CAPTURED_DAT)
    assert streamed.events == whole.events
    assert streamed.line_count == whole.line_count > 100
    assert streamed.gaps == whole.gaps and streamed.problems == whole.problems


def test_text_lines_split_on_newline_only() -> None:
    # A form feed inside a line is not a line break (str.splitlines says it is).
    assert list(iter_text_lines("a\x0cb\nc")) == ["a\x0cb\n", "c"]
    p = parse_text("cpus=1\n" + "garbage\x0cmore\n"
                   "  insmod-1 [000] 1.000000000: initcall_start: func=a+0x0\n")
    assert [e.line for e in p.events] == [3]
    assert [q.line for q in p.problems] == [2]


def test_module_loads_without_module_events_then_with() -> None:
    # The first loads were recorded with only the initexit events on, a later
    # one with module events too (scripts/bench's capture): each load is
    # still its own unit, and nothing is reported twice.
    from analysis import synth
    w = synth.TraceWriter()
    task = synth.Task("modloop", 92, 0)
    for with_events in (False, False, True):
        synth.simulate_module_load(w, task, "ie_demo", synth.MODULE_PAIRS, with_module_events=with_events)
        synth.simulate_module_unload(w, task, "ie_demo", synth.MODULE_PAIRS, with_module_events=with_events)
    cap = build_capture(parse_text(w.text()))
    units = [u for u in cap.units if u.origin == "ie_demo"]
    assert [u.instance for u in units] == [0, 1, 2]
    assert run_checks(cap).ok


# --- a task's events at one timestamp on two CPUs (a stalled trace clock)

def _ic(cpu: int, ts: int, what: str, func: str, pid: int = 1, comm: str = "swapper/0") -> str:
    info = f"func={func}+0x0" + (" ret=0" if what == "finish" else "")
    return format_line(comm, pid, cpu, ts, f"initcall_{what}", info)


# pid 1 runs a on CPU 1, then b starts at T; it moves to CPU 0, b finishes
# there and c starts, all at T; c finishes later on CPU 0.  trace-cmd prints
# the tie CPU by CPU, so CPU 0's half of it comes first.
T = 2_000_000_000
MOVED_1_TO_0 = ["cpus=2\n",
                _ic(1, T - 500, "start", "a"),
                _ic(0, T, "finish", "b"),     # ran after line 5
                _ic(0, T, "start", "c"),
                _ic(1, T, "finish", "a"),
                _ic(1, T, "start", "b"),
                _ic(0, T + 900, "finish", "c")]


def _funcs(text: str) -> list[tuple[str, str]]:
    return [(e.name.value, e.info.split()[0]) for e in parse_text(text).events]


def test_tie_across_cpus_is_read_in_the_order_the_task_ran() -> None:
    p = parse_text("".join(MOVED_1_TO_0))
    assert [e.line for e in p.events] == [2, 5, 6, 3, 4, 7]
    assert (len(p.reordered) == 1 and "lines 3-6: 4 events of swapper/0-1" in p.reordered[0]
            and "2.000000000" in p.reordered[0] and "CPU 1 then 0" in p.reordered[0])
    cap = build_capture(p)
    verdict = run_checks(cap)
    assert verdict.ok and not cap.build_problems
    assert {s.func: s.duration_ns for s in cap.spans} == {"a+0x0": 500, "b+0x0": 0, "c+0x0": 900}
    assert any("share the timestamp" in n for n in verdict.notes)


def test_tie_already_in_order_or_without_history_is_left_alone() -> None:
    # Moved from CPU 0 to CPU 1: CPU 0's events come first, which is right.
    in_order = ["cpus=2\n", _ic(0, T - 500, "start", "a"), _ic(0, T, "finish", "a"),
                _ic(0, T, "start", "b"), _ic(1, T, "finish", "b"), _ic(1, T + 1, "start", "c")]
    p = parse_text("".join(in_order))
    assert [e.line for e in p.events] == [2, 3, 4, 5, 6] and p.reordered == ()
    # The task's first events ever are the tie: nothing to go by, kept as printed.
    first = ["cpus=2\n", _ic(0, T, "start", "a"), _ic(1, T, "finish", "a")]
    p = parse_text("".join(first))
    assert [e.line for e in p.events] == [2, 3] and p.reordered == ()


def test_tie_moves_only_that_tasks_events_and_never_pid_0() -> None:
    # Another task's event inside the tie keeps its place, and so do the
    # idle tasks: pid 0 is one task per CPU, so two CPUs say nothing.
    def idle(cpu: int, ts: int) -> str:
        return format_line("<idle>", 0, cpu, ts, "initcall_level", "level=core")
    lines = ["cpus=2\n",
             idle(1, T - 900),                          # 2
             _ic(1, T - 500, "start", "a"),            # 3
             idle(0, T),                               # 4: pid 0, tied, CPU 0 first
             _ic(0, T, "finish", "b"),                 # 5
             _ic(0, T, "start", "c"),                  # 6
             _ic(0, T, "start", "x", pid=7, comm="insmod"),  # 7
             idle(1, T),                               # 8
             _ic(1, T, "finish", "a"),                 # 9
             _ic(1, T, "start", "b"),                  # 10
             _ic(0, T + 900, "finish", "c")]           # 11
    p = parse_text("".join(lines))
    assert [e.line for e in p.events] == [2, 3, 4, 9, 10, 7, 8, 5, 6, 11]
    assert len(p.reordered) == 1 and "4 events of swapper/0-1" in p.reordered[0]


def test_tie_at_the_end_of_the_input_and_streamed_equal_whole() -> None:
    # The run is released at the end of the input too; the streaming reader
    # (what a trace.dat goes through) gives the same events as parse_text.
    text = "".join(MOVED_1_TO_0[:-1])
    p = parse_text(text)
    assert [e.line for e in p.events] == [2, 5, 6, 3, 4] and len(p.reordered) == 1
    streamed = load_capture("-", io.BytesIO(text.encode())).parsed
    assert streamed.events == p.events and streamed.reordered == p.reordered


def test_tie_where_the_task_went_back_and_forth_is_read_as_it_ran() -> None:
    # The fresh machine's CI run of 2026-12-07 (guest-tests, boot.report.txt
    # lines 192-203): pid 1 started a on CPU 1, then at one timestamp ran
    # on CPU 0 (a finishes, b starts and finishes, c starts), back on CPU 1
    # (c finishes, d starts), and on CPU 0 again later (d finishes).
    # Putting CPU 1's half first (the CPU it was on before) paired c's
    # finish with a's start; the finishes must close the open calls.
    lines = ["cpus=2\n",
             _ic(1, T - 500, "start", "a"),   # 2
             _ic(0, T, "finish", "a"),        # 3
             _ic(0, T, "start", "b"),         # 4
             _ic(0, T, "finish", "b"),        # 5
             _ic(0, T, "start", "c"),         # 6
             _ic(1, T, "finish", "c"),        # 7
             _ic(1, T, "start", "d"),         # 8
             _ic(0, T + 700, "finish", "d")]  # 9
    p = parse_text("".join(lines))
    assert [e.line for e in p.events] == [2, 3, 4, 5, 6, 7, 8, 9] and p.reordered == ()
    cap = build_capture(p)
    assert run_checks(cap).ok and not cap.build_problems
    assert {s.func: s.duration_ns for s in cap.spans} == {"a+0x0": 500, "b+0x0": 0, "c+0x0": 0, "d+0x0": 700}


def test_real_boot_with_a_stalled_clock() -> None:
    # scripts/run's boot trace: pid 1 went from CPU 1 to CPU 0 while the
    # global trace clock stood at 0.607443116.  Read as printed, the finish
    # of genhd_device_init closed init_bio and acpi_init's 181 ms went to
    # genhd_device_init.
    path = os.path.join(os.path.dirname(__file__), "fixtures", "captured", "patched-boot-clock-tie.txt")
    cap = load_capture(path)
    # (A kernel of an earlier series revision: its pairs ran outside any
    # entry, the capture's only finding, see its expect.json.)
    failed = [r.name for r in run_checks(cap).results if r.state.value == "fail"]
    assert not cap.build_problems and failed == ["boot-pairs-in-entry"]
    dur = {s.func: s.duration_ns for s in cap.spans}
    assert dur["acpi_init+0x0"] == 788_782_612 - 607_443_116
    assert dur["genhd_device_init+0x0"] == 0 and dur["init_bio+0x0"] == 607_443_116 - 606_880_749
    assert len(cap.parsed.reordered) == 1 and "lines 217-228: 12 events" in cap.parsed.reordered[0]


def _pair(cpu: int, ts: int, what: str, idx: int, func: str, *, path: str = "boot", origin: str = "lib/o",
          extra: str = "", pid: int = 1) -> str:
    info = f"path={path} origin={origin} idx={idx} prio={idx * 10} func={func}" + extra
    comm = "swapper/0" if pid == 1 else "insmod"
    return format_line(comm, pid, cpu, ts, f"initexit_{what}", info)


def test_tied_pair_inits_are_checked_in_the_order_they_ran() -> None:
    # Pair 2 started on CPU 0 after pairs 0 and 1 finished on CPU 1, all at
    # one timestamp: printed first, it must still count as run third.
    # (In the object's entry, as every built-in pair runs.)
    lines = ["cpus=2\n",
             _ic(1, T - 600, "start", "o_entry"),
             _pair(1, T - 500, "init_start", 0, "a_init"),
             _pair(0, T, "init_start", 2, "c_init"),
             _pair(1, T, "init_finish", 0, "a_init", extra=" ret=0 duration_ns=500"),
             _pair(1, T, "init_start", 1, "b_init"),
             _pair(1, T, "init_finish", 1, "b_init", extra=" ret=0 duration_ns=0"),
             _pair(0, T + 900, "init_finish", 2, "c_init", extra=" ret=0 duration_ns=900"),
             _ic(0, T + 1000, "finish", "o_entry")]
    p = parse_text("".join(lines))
    assert p.moved == {5: 4, 6: 5, 7: 6, 4: 7}
    cap = build_capture(p)
    (unit,) = cap.units
    assert [s.idx for s in unit.inits] == [0, 1, 2]
    assert [s.func for s in cap.spans] == ["o_entry+0x0", "a_init", "b_init", "c_init"]
    verdict = run_checks(cap)
    assert verdict.ok, [f.message for r in verdict.results for f in r.findings]


def test_tied_failure_and_unwind_are_checked_in_the_order_they_ran() -> None:
    # insmod ran pair 1's init on CPU 1, moved to CPU 0, where the init
    # failed and pair 0 was unwound, all at one timestamp.
    def mod(cpu: int, ts: int, what: str, idx: int, func: str, extra: str = "") -> str:
        return _pair(cpu, ts, what, idx, func, path="module", origin="m", extra=extra, pid=5)
    lines = ["cpus=2\n",
             mod(1, T - 900, "init_start", 0, "a_init"),
             mod(1, T - 800, "init_finish", 0, "a_init", extra=" ret=0 duration_ns=100"),
             mod(0, T, "init_finish", 1, "b_init", extra=" ret=-5 duration_ns=0"),
             mod(0, T, "unwind", 0, "a_exit", extra=" failed_idx=1 failed_prio=10 failed_func=b_init error=-5"),
             mod(0, T, "exit_start", 0, "a_exit", extra=" reason=unwind"),
             mod(1, T, "init_start", 1, "b_init"),
             mod(0, T + 100, "exit_finish", 0, "a_exit", extra=" reason=unwind duration_ns=100")]
    p = parse_text("".join(lines))
    assert [e.line for e in p.events] == [2, 3, 7, 4, 5, 6, 8]
    verdict = run_checks(build_capture(p))
    assert verdict.ok, [f.message for r in verdict.results for f in r.findings]


def _marks(names: list[tuple[str, str]]) -> str:
    return "cpus=1\n" + "".join(format_line("swapper/0", 1, 0, 1_000_000 * (i + 1), ev, info)
                                for i, (ev, info) in enumerate(names))


def test_initcall_band_events_are_the_marks() -> None:
    # The series (issue 34): initcall_level once per level as in stock, and
    # initcall_band per band; a level's first band takes its level's place.
    text = _marks([("initcall_level", "level=early"), ("initcall_level", "level=fs"),
                   ("initcall_band", "band=fs prio=-1000"), ("initcall_band", "band=fs_sync prio=-750"),
                   ("initcall_band", "band=rootfs prio=-500"), ("initcall_level", "level=device"),
                   ("initcall_band", "band=device prio=0")])
    cap = build_capture(parse_text(text))
    assert cap.level_names == ("early", "fs", "fs_sync", "rootfs", "device")
    assert cap.levels_by_band
    assert [ev.name for ev in cap.levels] == [EventName.INITCALL_LEVEL] + [EventName.INITCALL_BAND] * 4
    assert not cap.build_problems


def test_initcall_level_alone_is_per_level() -> None:
    cap = build_capture(parse_text(_marks([("initcall_level", "level=fs"), ("initcall_level", "level=device")])))
    assert cap.level_names == ("fs", "device")
    assert not cap.levels_by_band


def test_initcall_band_with_bad_fields_is_a_problem() -> None:
    cap = build_capture(parse_text(_marks([("initcall_band", "band=fs prio=x")])))
    assert cap.level_names == ()
    assert cap.build_problems


def test_the_series_boot_messages_are_notices() -> None:
    # init/main.c initexit_run_object() and kernel/initexit.c
    # initexit_bind_objects(), as the stage-b kernel prints them.
    text = (
        "[    0.1] initexit: lib/k: tik1_init has no exit and runs before tik2_init: nothing could undo it: none runs\n"
        "[    0.1] initexit: lib/c: module_init_exit(600, c_init, c_exit) is outside the band [0, 500) of its "
        "entry c_entry: none runs\n"
        "[    0.1] initexit: lib/b: 2 entries for its pairs, not 1: none runs\n"
        "[    0.1] initexit: lib/d: the pairs of entry d_entry are not linked together: none runs\n"
        "[    0.1] initexit: ordered 26 built-in pairs in 683084 ns\n"
        "[    0.2] initexit: lib/u: tiu2_init (prio 200) failed with -202, unwinding lib/u\n"
        "[    0.2] initexit: lib/v: v0_init (prio 0) failed with -12, nothing to unwind\n"
        "[    0.2] initexit: lib/u: skipping tiu3_init (prio 300) after an earlier failure\n"
        "[    0.2] initexit: lib/o: tio_blacklist_me_init (prio 100) blacklisted, not run\n")
    got = [(n.kind, n.origin, n.func, n.prio, n.value, n.other, n.why) for n in parse_dmesg(text).notices]
    assert got == [
        ("refused", "lib/k", "tik1_init", None, None, "tik2_init", "undoable"),
        ("refused", "lib/c", "c_init", 600, None, "c_entry", "band"),
        ("refused", "lib/b", "", None, 2, "", "entries"),
        ("refused", "lib/d", "d_entry", None, None, "", "split"),
        ("ordered", "", "", None, 26, "", ""),
        ("failed", "lib/u", "tiu2_init", 200, -202, "", "unwinding"),
        ("failed", "lib/v", "v0_init", 0, -12, "", "nothing"),
        ("skipped", "lib/u", "tiu3_init", 300, None, "", ""),
        ("blacklisted", "lib/o", "tio_blacklist_me_init", 100, None, "", ""),
    ]

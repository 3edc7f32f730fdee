"""Device probes (analysis/probes.py) on real captures: the probe spans
match the kernel log line for line, each is placed where it ran, the
deferral causes are the kernel's, and every output shows them."""

from __future__ import annotations

import json
import os
import re
from typing import Any, Callable

import pytest

from analysis.build import build_capture
from analysis.checks import run_checks
from analysis.diff import diff_captures, diff_text
from analysis.model import Capture, Probe, ProbeMode
from analysis.page_structure import BoxKind, build_structure
from analysis.parse import parse_text
from analysis.probes import deferred_devices
from analysis.render_chrome import chrome_trace
from analysis.render_html import render_html
from analysis.render_json import timeline_dict, verdict_dict
from analysis.render_svg import render_svg
from analysis.render_text import render_text

HERE = os.path.dirname(os.path.abspath(__file__))
PROBES = os.path.join(HERE, "fixtures", "probes")
DEFER = os.path.join(PROBES, "defer-boot.dmesg")
BOOT = os.path.join(HERE, "fixtures", "captured", "patched-boot.dmesg")
#: BOOT with CONFIG_PRINTK_CALLER's caller ids added (derived, not
#: captured: make_caller_fixture.py); serio's probes by a kworker, "T45".
CALLER = os.path.join(PROBES, "patched-boot-caller.dmesg")
#: dmesg's ``[    T45] `` after the stamp.
CALLER_ID = re.compile(r"(?<=\]) \[ *[TC]\d+\]")
#: serio1's first probe line: printed by serio's kworker during slab_late_init.
SERIO1_FIRST = "probe of serio1 returned 19 after 5115 usecs"
#: A dump_stack() head naming task 45 (added by the tests that want a name).
KWORKER_HEAD = "[    0.791000] [   T45] CPU: 0 UID: 0 PID: 45 Comm: kworker/0:2 Not tainted 6.12.118+ #1\n"

#: The kernel's line, read here on its own (not with the analysis's grammar):
#: ``[   33.892633] probe of initexit-probe-consumer returned 0 after 7205 usecs``.
LOG_PROBE = re.compile(r"^\[\s*(\d+)\.(\d{6})\] probe of (\S+) returned (-?\d+) after (\d+) usecs$")


def _text(path: str) -> str:
    with open(path, encoding="utf-8") as f:
        return f.read()


def _capture(text: str, name: str = "t") -> Capture:
    return build_capture(parse_text(text, name))


@pytest.fixture(scope="module")
def defer() -> Capture:
    return _capture(_text(DEFER), DEFER)


@pytest.mark.parametrize("path", [DEFER, BOOT], ids=["defer-boot", "patched-boot"])
def test_probe_spans_match_the_log_line_for_line(path: str) -> None:
    """Every probe line is one span, in order, with the line's device,
    result and duration, ending at the line's stamp."""
    want = []
    for n, line in enumerate(_text(path).splitlines(), 1):
        m = LOG_PROBE.match(line)
        if m:
            sec, usec, dev, ret, dur = m.groups()
            want.append((n, dev, int(ret), int(dur) * 1000, int(sec) * 10**9 + int(usec) * 1000))
    assert len(want) >= 19
    cap = _capture(_text(path), path)
    got = [(p.line, p.device, p.ret, p.duration_ns, p.end_ns) for p in cap.probes]
    assert got == want
    assert all(p.end_ns - p.start_ns == p.duration_ns for p in cap.probes)
    v = run_checks(cap)
    assert v.counts["probes"] == len(want)
    assert verdict_dict(v)["counts"]["probes"] == len(want)


def test_each_probe_is_placed_where_it_ran(defer: Capture) -> None:
    where = [(p.device, p.ret, p.mode, p.call_func, p.attempt) for p in defer.probes
             if p.device.startswith("initexit-probe")]
    assert where == [
        # The consumer's module init registers device and driver: its probe
        # runs (and defers) inside the init.
        ("initexit-probe-consumer", 517, ProbeMode.IN_CALL, "consumer_init", 1),
        # The deferred probe timeout retries it from a kworker.
        ("initexit-probe-consumer", 517, ProbeMode.DEFERRED, "", 2),
        ("initexit-probe-supplier", 0, ProbeMode.IN_CALL, "supplier_init", 1),
        # The supplier's bind triggers the deferred probe work.
        ("initexit-probe-consumer", 0, ProbeMode.DEFERRED, "", 3),
        # PROBE_PREFER_ASYNCHRONOUS: began inside supplier_init, ended after it.
        ("initexit-probe-async", 0, ProbeMode.ASYNC, "", 1),
    ]
    # A probe in a call lies within it.
    spans = {s.start.line: s for s in defer.spans}
    for p in defer.probes:
        if p.mode is ProbeMode.IN_CALL:
            assert p.call is not None
            s = spans[p.call]
            assert s.finish is not None and s.end_ns is not None
            assert s.start.line < p.line < s.finish.line
            assert s.start_ns - 20_000 <= p.start_ns and p.end_ns <= s.end_ns + 20_000


def test_deferral_causes_are_the_kernels(defer: Capture) -> None:
    """The cause listed for the deferred device is the one the kernel
    printed, and the one debugfs's devices_deferred showed in that boot."""
    devs = deferred_devices(defer)
    assert [d.device for d in devs] == ["initexit-probe-consumer"]
    d = devs[0]
    assert [p.ret for p in d.probes] == [517, 517, 0]
    assert d.bound is not None and d.bound.attempt == 3
    dev, reason = _text(os.path.join(PROBES, "defer-boot.devices_deferred")).rstrip("\n").split("\t")
    assert dev == d.device
    assert d.reasons == (reason,)
    assert [c.kind for c in d.causes] == ["pending"]


def test_dynamic_debug_deferral_line_is_a_cause() -> None:
    """dev_err_probe()'s own message (drivers/base/core.c, printed with
    dynamic debug) names the cause too."""
    text = (_text(DEFER).replace(
        "[    2.673724] probe of initexit-probe-consumer returned 517",
        "[    2.673700] platform initexit-probe-consumer: error -EPROBE_DEFER: "
        "initexit-probe-consumer: waiting for a clock\n"
        "[    2.673724] probe of initexit-probe-consumer returned 517"))
    d = deferred_devices(_capture(text))[0]
    assert [c.kind for c in d.causes] == ["defer", "pending"]
    assert d.reasons[0] == "initexit-probe-consumer: waiting for a clock"


def test_no_driver_dependency_line_is_a_cause() -> None:
    """On a kernel without modules, driver_deferred_probe_check_state()
    (drivers/base/dd.c) warns instead of deferring again once the initcalls
    are done: that is the device's cause too."""
    line = "[    2.673700] platform initexit-probe-consumer: ignoring dependency for device, assuming no driver"
    text = _text(DEFER).replace(
        "[    2.673724] probe of initexit-probe-consumer returned 517",
        line + "\n[    2.673724] probe of initexit-probe-consumer returned 517")
    d = deferred_devices(_capture(text))[0]
    assert [c.kind for c in d.causes] == ["no driver", "pending"]
    assert d.causes[0].text == line and d.causes[0].owner == "platform"
    assert d.reasons[0] == "no driver"


def test_without_stamps_probes_keep_their_calls(defer: Capture) -> None:
    """printk.time=0: no stamps; a probe line between a call's lines is in it."""
    bare = "\n".join(re.sub(r"^\[\s*\d+\.\d+\] ", "", ln) for ln in _text(DEFER).splitlines()) + "\n"
    cap = _capture(bare)
    assert [(p.line, p.duration_ns) for p in cap.probes] == \
        [(p.line, p.duration_ns) for p in defer.probes]
    stamped = {p.line: p for p in defer.probes}
    for p in cap.probes:
        if stamped[p.line].mode is ProbeMode.IN_CALL:
            assert p.mode is ProbeMode.IN_CALL and p.call == stamped[p.line].call


def test_every_render_shows_the_probes(defer: Capture) -> None:
    v = run_checks(defer)
    n = len(defer.probes)
    text = render_text(v)
    assert sum(1 for ln in text.splitlines() if " probe " in ln and "probe initexit" in ln) >= 5
    assert "Deferred devices (1):" in text
    assert "initexit-probe-consumer: deferred 2x, bound at attempt 3 (deferred)" in text
    tl = timeline_dict(defer)
    assert len(tl["probes"]) == n
    assert tl["deferred_devices"][0]["device"] == "initexit-probe-consumer"
    # Chrome: one complete event per probe; one in a call on the call's
    # thread and inside it.
    events = chrome_trace(v)["traceEvents"]
    probes = [e for e in events if e.get("cat") == "probe"]
    assert len(probes) == n
    calls = {e["args"]["line"]: e for e in events if e.get("ph") == "X" and e.get("cat") != "probe"}
    for e, p in zip(sorted(probes, key=lambda e: int(e["args"]["line"])), defer.probes):
        if p.mode is ProbeMode.IN_CALL:
            c = calls[p.call]
            assert (e["pid"], e["tid"]) == (c["pid"], c["tid"])
            assert c["ts"] <= e["ts"] and e["ts"] + e["dur"] <= c["ts"] + c["dur"] + 1e-6
    # The page and the SVG: a box per probe.
    html = render_html(v)
    found = re.search(r'id="initexit-data">(.*?)</script>', html, re.S)
    assert found is not None
    data = json.loads(found.group(1))
    assert len(data["probes"]) == n
    assert sum(1 for b in data["boxes"] if b[5] == "probe") == n
    svg = render_svg(v)
    assert svg.count('class="box probe"') == n
    # The legends name the probe colours (only a capture with probes).
    assert "probe deferred (-EPROBE_DEFER)" in html and "probe deferred (-EPROBE_DEFER)" in svg


def test_page_structure_nests_probes_and_gives_the_others_lanes(defer: Capture) -> None:
    ends = [s.end_ns if s.end_ns is not None else defer.parsed.end_ns for s in defer.spans]
    st = build_structure(defer, range(len(defer.spans)), ends, 0)
    labels = [lane.label for lane in st.lanes]
    assert "deferred probes (kworker)" in labels and "probes outside any call (async)" in labels
    line_of = {i: s.start.line for i, s in enumerate(defer.spans)}
    for k, p in enumerate(defer.probes):
        b = st.boxes[st.box_of_probe[k]]
        assert b.kind is BoxKind.PROBE
        if p.mode is ProbeMode.IN_CALL:
            parent = st.boxes[b.parent]
            assert line_of[parent.call] == p.call
            assert parent.start <= b.start <= b.end <= parent.end
            assert parent.row < b.row < parent.row + parent.rows
        else:
            assert b.parent == -1
            want = "deferred probes (kworker)" if p.mode is ProbeMode.DEFERRED \
                else "probes outside any call (async)"
            assert st.lanes[b.lane].label == want


def test_diff_names_probe_moves_and_deferrals(defer: Capture) -> None:
    text = _text(DEFER)
    # A: the same boot, had the consumer never deferred (its two deferring
    # probes and the timeout's warning gone) and i8042's init named otherwise.
    drop = ("probe of initexit-probe-consumer returned 517", "deferred probe pending")
    a_text = "".join(ln for ln in text.splitlines(keepends=True) if not any(d in ln for d in drop))
    a_text = a_text.replace("i8042_init+", "i8042_old_init+")
    d = diff_captures(_capture(a_text, "A"), defer)
    what = [c.what for c in d.probe_changes]
    assert "probe of i8042 moved from initcall i8042_old_init to initcall i8042_init" in what
    assert "initexit-probe-consumer now deferred (2x in B)" in what
    assert "probe of initexit-probe-consumer moved from the async lane to the deferred lane" in what
    assert not d.probes_only_a and not d.probes_only_b
    out = diff_text(d)
    assert "Probe changes: 5" in out  # 00:00 and 00:01 probe in i8042_init too
    # Probes are not order changes (--fail-on-change).
    assert not d.changed


def test_a_probe_while_deferred_probe_initcall_waits_is_deferred(defer: Capture) -> None:
    """deferred_probe_initcall flushes the deferred probe work (a kworker):
    a probe printed inside it is on the deferred lane, during that call."""
    text = _text(DEFER).replace(
        "[    0.838884] initcall deferred_probe_initcall",
        "[    0.838800] probe of late-dev returned 0 after 100 usecs\n"
        "[    0.838884] initcall deferred_probe_initcall")
    (p,) = [p for p in _capture(text).probes if p.device == "late-dev"]
    assert (p.mode, p.call_func) == (ProbeMode.DEFERRED, "deferred_probe_initcall")


def test_page_lists_probes_and_deferral_causes_without_script(defer: Capture) -> None:
    html = render_html(run_checks(defer))
    section = html[html.index("<h2>Device probes</h2>"):html.index("<h2>Checks</h2>")]
    assert f"{len(defer.probes)} probes: 19 in a call, 2 deferred, 3 outside any call" in section
    assert "initexit-probe-consumer: deferred 2x, bound at attempt 3 (deferred)" in section
    assert "line 934: [   32.869257] platform initexit-probe-consumer: deferred probe pending: " \
        "initexit-probe-consumer: waiting for initexit-probe-supplier" in section


@pytest.mark.parametrize("path", [DEFER, BOOT, CALLER], ids=["defer-boot", "patched-boot", "caller"])
def test_the_command_line_places_probes_as_the_model_does(path: str, tmp_path: Any) -> None:
    """`check` (a streaming pass that keeps only the boot's calls) and
    `report` count and place the probes as the whole model does: a probe
    in a module's init stays in it."""
    from analysis.cli import main
    cap = _capture(_text(path), path)
    want = run_checks(cap).counts
    out = str(tmp_path / "v.json")
    main(["check", "-q", "--format", "json", "-o", out, path])
    with open(out, encoding="utf-8") as f:
        counts = json.load(f)["counts"]
    keys = [k for k in want if k.startswith("probes") or k == "devices_deferred"]
    assert {k: counts[k] for k in keys} == {k: want[k] for k in keys}
    main(["report", "-q", "--out-dir", str(tmp_path), "--name", "r", path])
    with open(tmp_path / "r.timeline.json", encoding="utf-8") as f:
        probes = json.load(f)["probes"]
    assert [(p["line"], p["mode"], p["call"]) for p in probes] == \
        [(p.line, p.mode.value, p.call_func or None) for p in cap.probes]


# -- CONFIG_PRINTK_CALLER: the task that printed a probe line -------------------


def _placement(cap: Capture) -> list[tuple[int, str, ProbeMode, Any, str]]:
    return [(p.line, p.device, p.mode, p.call, p.call_func) for p in cap.probes]


def _one(cap: Capture, text: str) -> Probe:
    (p,) = [p for p in cap.probes if text in p.text]
    return p


def test_caller_fixture_is_the_real_capture_with_caller_ids() -> None:
    """The fixture is what make_caller_fixture.py writes from the real
    capture, and without its caller ids it is that capture."""
    from analysis.tests.make_caller_fixture import with_callers
    text, boot = _text(CALLER), _text(BOOT)
    assert text == with_callers(boot)
    assert CALLER_ID.sub("", text) == boot
    assert len(CALLER_ID.findall(text)) == len(boot.splitlines())


def test_a_probe_another_task_printed_during_a_call_is_on_the_async_lane() -> None:
    """serio1's first probe printed during slab_late_init (pid 1's) by
    task 45: by time alone it is in that call; by its task, on the async
    lane, during that call; the counts follow."""
    boot, cap = _capture(_text(BOOT)), _capture(_text(CALLER))
    before, p = _one(boot, SERIO1_FIRST), _one(cap, SERIO1_FIRST)
    assert (before.mode, before.call_func, before.task) == (ProbeMode.IN_CALL, "slab_late_init", None)
    assert (p.mode, p.call_func, p.task, p.task_text) == \
        (ProbeMode.ASYNC, "slab_late_init", 45, "task 45")
    # serio's other probes (async by time already) say the same.
    assert [(q.mode, q.task) for q in cap.probes if q.device.startswith("serio")] == \
        [(ProbeMode.ASYNC, 45)] * 3
    want, got = run_checks(boot).counts, verdict_dict(run_checks(cap))["counts"]
    assert (got["probes_in_call"], got["probes_async"]) == \
        (want["probes_in_call"] - 1, want["probes_async"] + 1) == (16, 3)


def test_a_probe_its_calls_task_printed_stays_in_the_call() -> None:
    """Every probe pid 1 printed inside pid 1's call stays there (i8042's
    in i8042_init); a module init run by pid 508 holds a probe task 508
    printed, not one task 1 printed."""
    boot, cap = _capture(_text(BOOT)), _capture(_text(CALLER))
    same = [(a, b) for a, b in zip(_placement(boot), _placement(cap)) if "serio" not in a[1]]
    assert len(same) == 16 and all(a == b for a, b in same)
    i8042 = _one(cap, "probe of i8042 ")
    assert (i8042.mode, i8042.call_func, i8042.task) == (ProbeMode.IN_CALL, "i8042_init", 1)
    raid = "[   15.178796] [  T508] raid6: using intx1 recovery algorithm\n"
    for caller, mode, func in (("T508", ProbeMode.IN_CALL, "init_module"),
                               ("T1", ProbeMode.ASYNC, "init_module")):
        line = f"[   15.178790] [{caller:>6}] probe of raid-dev returned 0 after 100 usecs\n"
        p = _one(_capture(_text(CALLER).replace(raid, line + raid)), "raid-dev")
        assert (p.mode, p.call_func) == (mode, func), caller


def test_without_caller_ids_probes_are_placed_by_time() -> None:
    """No caller ids (the capture, or the fixture with them taken off), or a
    CPU's (interrupt context): the placement is the time's, as before,
    and the page and the text say the log names no task."""
    boot = _capture(_text(BOOT))
    bare = _capture(CALLER_ID.sub("", _text(CALLER)))
    assert _placement(bare) == _placement(boot)
    assert all(p.task is None for p in boot.probes + bare.probes)
    cpu = _capture(_text(CALLER).replace(f"[   T45] {SERIO1_FIRST}", f"[    C0] {SERIO1_FIRST}"))
    p = _one(cpu, SERIO1_FIRST)
    assert (p.mode, p.call_func, p.task) == (ProbeMode.IN_CALL, "slab_late_init", None)
    v = run_checks(boot)
    html = render_html(v)
    placement = html[html.index('<p id="probe-placement">'):]
    assert placement.startswith('<p id="probe-placement">Placement: the log names no task '
                                "(no CONFIG_PRINTK_CALLER)")
    assert "Placement: the log names no task" in render_text(v)
    ends = [s.end_ns if s.end_ns is not None else boot.parsed.end_ns for s in boot.spans]
    st = build_structure(boot, range(len(boot.spans)), ends, 0)
    assert "probes outside any call (async)" in [lane.label for lane in st.lanes]


#: The kernel's stamp at a line's head (dmesg's plain form).
STAMP = re.compile(r"^\[ *\d+\.\d+\] ", re.M)
#: The caller fixture as the forms without the kernel's stamps print it
#: (the envelopes of fixtures/kernel-logs/printk-caller-*.log).
NO_STAMP_FORMS: dict[str, Callable[[str], str]] = {
    # a console with printk.time=0; dmesg -t
    "dmesg -t": lambda text: STAMP.sub("", text),
    # the syslog form with printk.time=0: dmesg -S -r, /proc/kmsg
    "printk.time=0 syslog form": lambda text: STAMP.sub("<6>", text),
    # dmesg -S of printk.time=0: its zero stamp, the caller less its "[ "
    "dmesg -S, printk.time=0": lambda text: re.sub(r"^\[ *\d+\.\d+\] \[ ", "[    0.000000] ", text, flags=re.M),
    "dmesg -x -t": lambda text: STAMP.sub("kern  :info  : ", text),
    "dmesg -T": lambda text: STAMP.sub("[Mon Dec  7 16:59:55 2026] ", text),
}


@pytest.mark.parametrize("form", list(NO_STAMP_FORMS))
def test_without_stamps_probes_are_placed_by_the_caller(form: str) -> None:
    """With the caller in the stamp's place (or after dmesg's wall clock):
    each probe line's task places it as with the kernel's stamps: serio1's
    first probe on the async lane, during slab_late_init, i8042's in
    i8042_init; without the callers it would be in slab_late_init."""
    text = NO_STAMP_FORMS[form](_text(CALLER))
    assert set(re.findall(r"^\[ *(\d+\.\d+)\]", text, re.M)) <= {"0.000000"}  # none, or dmesg's zeros
    cap = _capture(text)
    assert [(p.line, p.device, p.mode, p.call_func, p.task) for p in cap.probes] == \
        [(p.line, p.device, p.mode, p.call_func, p.task) for p in _capture(_text(CALLER)).probes]
    p = _one(cap, SERIO1_FIRST)
    assert (p.mode, p.call_func, p.task) == (ProbeMode.ASYNC, "slab_late_init", 45)
    i8042 = _one(cap, "probe of i8042 ")
    assert (i8042.mode, i8042.call_func, i8042.task) == (ProbeMode.IN_CALL, "i8042_init", 1)
    assert any(n.startswith("kernel log read as") for n in cap.parsed.notes)
    bare = _one(_capture(STAMP.sub("", CALLER_ID.sub("", _text(CALLER)))), SERIO1_FIRST)
    assert (bare.mode, bare.call_func, bare.task) == (ProbeMode.IN_CALL, "slab_late_init", None)


@pytest.mark.parametrize("named", [False, True], ids=["pid only", "named by the log"])
def test_every_render_shows_the_probe_another_task_printed(named: bool) -> None:
    """The page's data and structure, the SVG, Chrome JSON, the timeline
    JSON and the text: serio1's first probe on the async lane, not inside
    slab_late_init, and the lane names the task: ``task 45``, or its name
    when a dump_stack() head in the log gives it."""
    text = _text(CALLER)
    if named:
        text = text.replace("[    0.791510] [   T45] input: AT", KWORKER_HEAD + "[    0.791510] [   T45] input: AT")
    task = "task 45 (kworker/0:2)" if named else "task 45"
    lane = f"probes outside any call (async), printed by {task}"
    cap = _capture(text)
    v = run_checks(cap)
    k = next(k for k, p in enumerate(cap.probes) if SERIO1_FIRST in p.text)
    # The page's structure: a root box in the async lane, labelled with the task.
    ends = [s.end_ns if s.end_ns is not None else cap.parsed.end_ns for s in cap.spans]
    st = build_structure(cap, range(len(cap.spans)), ends, 0)
    b = st.boxes[st.box_of_probe[k]]
    assert b.parent == -1 and st.lanes[b.lane].label == lane
    # The page's data: the probe's record and the lane.
    html = render_html(v)
    found = re.search(r'id="initexit-data">(.*?)</script>', html, re.S)
    assert found is not None
    data = json.loads(found.group(1))
    assert data["probes"][k][3:5] == ["async", "slab_late_init"] and data["probes"][k][9] == task
    assert lane in json.dumps(data["lanes"])
    assert "a probe another task printed during a call is not in that call but on the async " \
        "lane (2 here)" in html
    # The SVG: the lane's label, the box's title; no serio1 box in slab_late_init's.
    svg = render_svg(v)
    assert f">{lane}</text>" in svg
    assert f"probe of serio1 returned 19 (no match) after 5115.0 us, async, during " \
        f"slab_late_init, {task}, line {cap.probes[k].line}" in svg
    # Chrome: on the probes process's async thread, named with the task.
    events = chrome_trace(v)["traceEvents"]
    (e,) = [e for e in events if e.get("cat") == "probe" and e["args"]["line"] == cap.probes[k].line]
    assert e["args"]["mode"] == "async" and e["args"]["task"] == task
    procs = {m["args"]["name"]: m["pid"] for m in events if m.get("name") == "process_name"}
    threads = {(m["pid"], m["tid"]): m["args"]["name"] for m in events if m.get("name") == "thread_name"}
    assert e["pid"] == procs["probes"] and threads[(e["pid"], e["tid"])] == lane
    # The timeline JSON and the text.
    tj = timeline_dict(cap)["probes"][k]
    assert (tj["mode"], tj["call"], tj["task"], tj["task_name"]) == \
        ("async", "slab_late_init", 45, "kworker/0:2" if named else None)
    assert f"async lane, during slab_late_init, {task}" in render_text(v)

"""Write the hand-made fixtures of analysis/tests/fixtures/ (all named
``synthetic-*``, ``broken-*``, ``bad-*``, ``dmesg-*``) and their
``.expect.json`` sidecars.

Every one is derived from analysis/synth.py's simulation of the kernel
series in the exact text format of ``trace-cmd report -N -t``; the
``broken-*`` ones are that text with one deliberate edit each, breaking
exactly the invariant in their name.  Real captures go to fixtures/captured/
with a sidecar written by hand (see README there).

Run from the repository root: ``/usr/bin/python3 -m analysis.tests.make_fixtures``.
"""

from __future__ import annotations

import json
import os
import re
from typing import Any, Callable

from analysis import synth
from analysis.model import BANDS

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURES = os.path.join(HERE, "fixtures")


def _lines(text: str) -> list[str]:
    return text.splitlines(keepends=True)


def _find(lines: list[str], pattern: str, start: int = 0) -> int:
    rx = re.compile(pattern)
    for i in range(start, len(lines)):
        if rx.search(lines[i]):
            return i
    raise ValueError(f"no line matches {pattern!r}")


def _block(lines: list[str], start_pat: str, end_pat: str, start: int = 0) -> tuple[int, int]:
    a = _find(lines, start_pat, start)
    b = _find(lines, end_pat, a)
    return a, b + 1


def _stamp(line: str) -> str:
    """The timestamp column of an event line ('' for other lines)."""
    if "]" not in line:
        return ""
    return line.split("]", 1)[1].split(":", 1)[0]


def _swap_blocks(lines: list[str], a: tuple[int, int], b: tuple[int, int]) -> list[str]:
    """Swap two blocks, keeping each line's own timestamp slot (the text of
    lines moves, the timestamps stay in increasing order)."""
    assert a[1] <= b[0]
    stamps = [_stamp(ln) for ln in lines]
    moved = lines[: a[0]] + lines[b[0]: b[1]] + lines[a[1]: b[0]] + lines[a[0]: a[1]] + lines[b[1]:]
    return [_restamp(ln, stamps[i]) for i, ln in enumerate(moved)]


def _restamp(line: str, stamp: str) -> str:
    if not stamp or "]" not in line:
        return line
    head, rest = line.split("]", 1)
    _old, tail = rest.split(":", 1)
    return f"{head}]{stamp}:{tail}"


def _move(lines: list[str], block: tuple[int, int], before: int) -> list[str]:
    """Move ``block`` to just before line ``before`` (re-stamping as above)."""
    stamps = [_stamp(ln) for ln in lines]
    chunk = lines[block[0]: block[1]]
    rest = lines[: block[0]] + lines[block[1]:]
    at = before if before < block[0] else before - (block[1] - block[0])
    moved = rest[:at] + chunk + rest[at:]
    return [_restamp(ln, stamps[i]) for i, ln in enumerate(moved)]


def broken_boot_priority_order() -> str:
    ls = _lines(synth.scenario_patched_boot())
    band = _find(ls, r"initcall_band: +band=fs_sync ")
    after = _find(ls, r"initcall_finish: +func=bootdev_entry")
    # The fs_sync band is walked again after the device entry: the device
    # band's later calls run as fs_sync calls after a device one.
    return "".join(_move(ls, (band, band + 1), after + 1))


def broken_levels() -> str:
    ls = _lines(synth.scenario_patched_boot())
    lvl = _find(ls, r"level=postcore")
    pair = _find(ls, r"initexit_init_start: +path=boot origin=ie_boot_demo .*func=bootdemo_late_init")
    # initcall_level postcore fires inside bootdemo_entry (core), before its
    # pair at -4800: the pair is outside postcore's window, and the core
    # band's later calls run after it (so boot-priority-order fails too).
    return "".join(_move(ls, (lvl, lvl + 1), pair))


def broken_levels_by_band() -> str:
    ls = _lines(synth.scenario_patched_boot())
    lvl = _find(ls, r"band=core_sync")
    pair = _find(ls, r"initexit_init_start: +path=boot origin=ie_boot_demo .*func=bootdemo_late_init")
    # core_sync's event fires before the -4800 pair, which so runs in band
    # core_sync [-4500, -4000): a per-level capture could not tell (core is
    # [-5000, -4000)), a per-band one can.
    return "".join(_move(ls, (lvl, lvl + 1), pair))


def broken_boot_pairs_in_entry() -> str:
    ls = _lines(synth.scenario_patched_boot())
    start = _find(ls, r"initcall_start: +func=bootdev_entry")
    last = _block(ls, r"initexit_init_start: .*func=bootdev_last_init", r"initexit_init_finish: .*func=bootdev_last_init")
    after = _find(ls, r"initcall_finish: +func=serial8250_init")
    # bootdev's last pair runs after the entry returned and after
    # serial8250_init: the pairs are not one unit at the entry (the old
    # series' priority merge ran them so).
    assert start < last[0]
    return "".join(_move(ls, last, after + 1))


def broken_inits_ascending() -> str:
    ls = _lines(synth.scenario_module_load_unload())
    last_init = max(i for i, ln in enumerate(ls) if "initexit_init_finish" in ln)
    ls = ls[: last_init + 1]  # the load only
    a = _block(ls, r"init_start: +path=module origin=ie_demo idx=1 ", r"init_finish: path=module origin=ie_demo idx=1 ")
    b = _block(ls, r"init_start: +path=module origin=ie_demo idx=2 ", r"init_finish: path=module origin=ie_demo idx=2 ")
    return "".join(_swap_blocks(ls, a, b))


def broken_no_init_after_failure() -> str:
    ls = _lines(synth.scenario_module_fail_unwind())
    failed = _find(ls, r"init_finish: path=module origin=ie_demo idx=2 .* ret=-12")
    # A later pair's init runs after the failure, in the same load.
    extra = [
        ln.replace("insmod-124", "insmod-120")
        for ln in ls[_find(ls, r"init_start: +path=module origin=ie_demo idx=3 "):
                      _find(ls, r"init_finish: path=module origin=ie_demo idx=3 ") + 1]
    ]
    stamps = [_stamp(ln) for ln in ls]
    out = ls[: failed + 1] + extra + ls[failed + 1:]
    # Keep time increasing: reuse the original stamps and extend at the end.
    last = float(stamps[-1])
    stamps += [f"{last + (k + 1) * 1e-6:15.9f}" for k in range(len(extra))]
    return "".join(_restamp(ln, stamps[i]) for i, ln in enumerate(out))


def broken_unwind_after_failure() -> str:
    ls = _lines(synth.scenario_module_fail_unwind())
    a = _block(ls, r"initexit_unwind: +path=module origin=ie_demo idx=1 ", r"exit_finish: path=module origin=ie_demo idx=1 .*unwind")
    b = _block(ls, r"initexit_unwind: +path=module origin=ie_demo idx=0 ", r"exit_finish: path=module origin=ie_demo idx=0 .*unwind")
    return "".join(_swap_blocks(ls, a, b))


def broken_unload_reverse_order() -> str:
    ls = _lines(synth.scenario_module_load_unload())
    a = _block(ls, r"exit_start: +path=module origin=ie_demo idx=2 ", r"exit_finish: path=module origin=ie_demo idx=2 ")
    b = _block(ls, r"exit_start: +path=module origin=ie_demo idx=1 ", r"exit_finish: path=module origin=ie_demo idx=1 ")
    return "".join(_swap_blocks(ls, a, b))


def broken_exit_exactly_once() -> str:
    ls = _lines(synth.scenario_module_fail_unwind())
    a, b = _block(ls, r"exit_start: +path=module origin=ie_demo idx=1 .*unload",
                  r"exit_finish: path=module origin=ie_demo idx=1 .*unload")
    # demo_exit (known from the unwind) is not run on unload.
    return "".join(ls[:a] + ls[b:])


def broken_start_finish_paired() -> str:
    ls = _lines(synth.scenario_patched_boot())
    i = _find(ls, r"initcall_finish: +func=misc_init")
    return "".join(ls[:i] + ls[i + 1:])


def broken_trace_complete() -> str:
    ls = _lines(synth.scenario_module_load_unload())
    i = _find(ls, r"init_start: +path=module origin=ie_demo idx=3 ")
    return "".join(ls[:i] + ["CPU:0 [12 EVENTS DROPPED]\n"] + ls[i:])


def bad_truncated() -> str:
    text = synth.scenario_patched_boot()
    ls = _lines(text)
    i = _find(ls, r"initcall_start: +func=other_subsys_init")
    # A panic mid-boot: the capture stops inside a pair, mid-line.
    return "".join(ls[:i]) + ls[i][:40]


def bad_garbage_lines() -> str:
    ls = _lines(synth.scenario_module_load_unload())
    return "".join(ls[:5] + ["\x00\x01 binary junk\n", "this is not a trace line\n"] + ls[5:])


def bad_unknown_initexit_event() -> str:
    ls = _lines(synth.scenario_module_load_unload())
    line = synth.format_line("insmod", 112, 0, 100_050_100, "initexit_init_retry",
                             "path=module origin=ie_demo idx=0")
    return "".join(ls[:3] + [line] + ls[3:])


def synthetic_other_events() -> str:
    """Unrelated events (sched, irq) mixed in: ignored and noted, not failing."""
    ls = _lines(synth.scenario_module_load_unload())
    out = []
    for i, ln in enumerate(ls):
        out.append(ln)
        if i % 5 == 2:
            out.append(synth.format_line(
                "kworker/0:1-events", 23, 0, 0, "sched_switch",
                "prev_comm=kworker/0:1 prev_pid=23 prev_prio=120 prev_state=I ==> next_comm=swapper/0 "
                "next_pid=0 next_prio=120").replace("    0.000000000", _stamp(ln).strip().rjust(15)))
    return "".join(out)


def bad_clock_backwards() -> str:
    ls = _lines(synth.scenario_module_load_unload())
    i = _find(ls, r"init_start: +path=module origin=ie_demo idx=2 ")
    ls[i] = _restamp(ls[i], "     0.000000001")
    return "".join(ls)


def bad_wrong_fields() -> str:
    ls = _lines(synth.scenario_module_load_unload())
    i = _find(ls, r"init_start: +path=module origin=ie_demo idx=1 ")
    ls[i] = ls[i].replace(" idx=1", "")  # an older event layout without idx
    return "".join(ls)


def _failed_load_only(has_exit: bool, drop_unwind_of: int | None = None) -> str:
    """A load that fails at the third pair and is never loaded again, so no
    exit is seen anywhere but in the unwind: only has_exit= tells which
    pairs have one.  ``drop_unwind_of``: that pair's unwind is not run."""
    w = synth.TraceWriter(has_exit=has_exit)
    bad = synth.failing(synth.MODULE_PAIRS, "demo_register_init", -12)
    synth.simulate_module_load(w, synth.Task("insmod", 120, 0), "ie_demo", bad)
    ls = _lines(w.text())
    if drop_unwind_of is not None:
        a, b = _block(ls, rf"initexit_unwind: +path=module origin=ie_demo idx={drop_unwind_of} ",
                      rf"exit_finish: path=module origin=ie_demo idx={drop_unwind_of} ")
        ls = ls[:a] + ls[b:]
    return "".join(ls)


def synthetic_usec_timestamps() -> str:
    """trace-cmd report without -t: six-digit timestamps."""
    w = synth.TraceWriter(nsec=False)
    synth.simulate_module_load(w, synth.Task("insmod", 112, 0), "ie_demo", synth.MODULE_PAIRS)
    synth.simulate_module_unload(w, synth.Task("rmmod", 115, 0), "ie_demo", synth.MODULE_PAIRS)
    return w.text()


def _dmesg(patched: bool, broken: bool = False) -> str:
    out = ["[    0.000000] Linux version 6.12.118 (synthetic) #1 SMP\n",
           "[    0.090000] Run /init as init process\n"]
    t = 100_000
    order = [(b, f) for b, fs in synth.STOCK_PLAIN.items() if b != "early" for f in fs]
    if broken:
        order[3], order[8] = order[8], order[3]
    if patched:
        # A built-in object's entry, its pairs' lines nested in its own.
        at = order.index(("device", "serial8250_init"))
        order[at:at] = [("device", "bootdev_entry")]
    for band, func in order:
        prio = BANDS[band]
        tail = f" prio={prio} origin=obj_{band}" if patched else ""
        out.append(f"[    0.{t:06d}] calling  {func}+0x0/0x40 @ 1{tail}\n")
        t += 12
        if func == "bootdev_entry":
            for pfunc, pprio in (("bootdev_init", 0), ("bootdev_last_init", 400)):
                ptail = f" prio={pprio} origin=ie_boot_dev"
                out.append(f"[    0.{t:06d}] calling  {pfunc}+0x0/0x40 @ 1{ptail}\n")
                out.append(f"[    0.{t + 5:06d}] initcall {pfunc}+0x0/0x40 returned 0 after 4 usecs{ptail}\n")
                t += 10
        out.append(f"[    0.{t:06d}] initcall {func}+0x0/0x40 returned 0 after 11 usecs{tail}\n")
        t += 3
    out.append(f"[    0.{t:06d}] calling  demo_init+0x0/0x1000 [ie_demo] @ 112"
               + (" prio=0 origin=ie_demo" if patched else "") + "\n")
    out.append(f"[    0.{t + 40:06d}] initcall demo_init+0x0/0x1000 [ie_demo] returned 0 after 38 usecs"
               + (" prio=0 origin=ie_demo" if patched else "") + "\n")
    return "".join(out)


#: name -> (generator, expected verdict)
FIXTURES_SPEC: dict[str, tuple[Callable[[], str], dict[str, Any]]] = {
    **{name: (fn, {"exit": 0, "failed": []}) for name, fn in synth.SCENARIOS.items()},
    "synthetic-other-events": (synthetic_other_events, {"exit": 0, "failed": []}),
    "synthetic-usec-timestamps": (synthetic_usec_timestamps, {"exit": 0, "failed": []}),
    "synthetic-module-fail-only": (lambda: _failed_load_only(True), {"exit": 0, "failed": []}),
    "synthetic-module-fail-no-has-exit": (lambda: _failed_load_only(False, 0),
                                          {"exit": 0, "failed": []}),
    "broken-unwind-missing-exit": (lambda: _failed_load_only(True, 0),
                                   {"exit": 1, "failed": ["unwind-after-failure"]}),
    "dmesg-stock-boot": (lambda: _dmesg(False), {"exit": 0, "failed": []}),
    "dmesg-patched-boot": (lambda: _dmesg(True), {"exit": 0, "failed": []}),
    "dmesg-broken-boot-priority-order": (lambda: _dmesg(True, True),
                                         {"exit": 1, "failed": ["boot-priority-order"]}),
    "broken-boot-priority-order": (broken_boot_priority_order,
                                   {"exit": 1, "failed": ["boot-priority-order", "levels-agree-with-priorities"]}),
    "broken-boot-pairs-in-entry": (broken_boot_pairs_in_entry,
                                   {"exit": 1, "failed": ["boot-pairs-in-entry"]}),
    "broken-levels-agree-with-priorities": (broken_levels,
                                            {"exit": 1, "failed": ["boot-priority-order",
                                                                   "levels-agree-with-priorities"]}),
    "broken-levels-by-band": (broken_levels_by_band,
                              {"exit": 1, "failed": ["levels-agree-with-priorities"]}),
    "broken-inits-ascending": (broken_inits_ascending, {"exit": 1, "failed": ["inits-ascending"]}),
    "broken-no-init-after-failure": (broken_no_init_after_failure,
                                     {"exit": 1, "failed": ["no-init-after-failure"]}),
    "broken-unwind-after-failure": (broken_unwind_after_failure,
                                    {"exit": 1, "failed": ["unwind-after-failure"]}),
    "broken-unload-reverse-order": (broken_unload_reverse_order,
                                    {"exit": 1, "failed": ["unload-reverse-order"]}),
    "broken-exit-exactly-once": (broken_exit_exactly_once, {"exit": 1, "failed": ["exit-exactly-once"]}),
    "broken-start-finish-paired": (broken_start_finish_paired,
                                   {"exit": 1, "failed": ["start-finish-paired"]}),
    "broken-trace-complete": (broken_trace_complete, {"exit": 1, "failed": ["trace-complete"]}),
    "bad-truncated": (bad_truncated, {"exit": 1, "failed": ["trace-complete", "start-finish-paired"]}),
    "bad-garbage-lines": (bad_garbage_lines, {"exit": 1, "failed": ["trace-complete"]}),
    "bad-unknown-initexit-event": (bad_unknown_initexit_event, {"exit": 1, "failed": ["trace-complete"]}),
    "bad-clock-backwards": (bad_clock_backwards, {"exit": 1, "failed": ["trace-complete"]}),
    "bad-wrong-fields": (bad_wrong_fields, {"exit": 1, "failed": ["start-finish-paired"]}),
    "bad-garbage": (lambda: "hello\nthis is not a trace\n\x7fELF junk\n",
                    {"exit": 2, "error": "line 1: neither"}),
    "bad-empty": (lambda: "", {"exit": 2, "error": "empty input"}),
    "bad-dmesg-without-initcall-debug": (
        lambda: "[    0.000000] Linux version 6.12.118\n[    0.100000] Run /init as init process\n",
        {"exit": 2, "error": "a kernel log (dmesg) without initcall_debug's lines"}),
    "bad-only-other-events": (
        lambda: "cpus=1\n" + synth.format_line("sh", 90, 0, 5_000_000, "sched_switch", "prev_comm=sh"),
        {"exit": 2, "error": "no initcall, module or initexit events"}),
}


def main() -> None:
    os.makedirs(FIXTURES, exist_ok=True)
    for name, (fn, expect) in FIXTURES_SPEC.items():
        with open(os.path.join(FIXTURES, name + ".txt"), "w", encoding="utf-8", newline="") as f:
            f.write(fn())
        with open(os.path.join(FIXTURES, name + ".expect.json"), "w", encoding="utf-8") as f:
            json.dump({"origin": "synthetic (analysis/tests/make_fixtures.py)", **expect}, f, indent=2)
            f.write("\n")
    print(f"wrote {len(FIXTURES_SPEC)} fixtures to {FIXTURES}")


if __name__ == "__main__":
    main()

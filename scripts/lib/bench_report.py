#!/usr/bin/python3
"""Turn a scripts/bench output folder into the table (stdout) and bench.json.

    python3 scripts/lib/bench_report.py OUT     # OUT = scripts/bench --out

Reads only files in OUT (runs.tsv, host.txt, boot-*/, modules-*/,
analysis-*.json, loop-*/), so the table can be rebuilt offline.
Stdlib only.  The phases of a trace (do_initcalls, the calls, a module's
init and exit) are the analysis's (analysis/phases.py, over its spans):
nothing here reads trace text.
"""

from __future__ import annotations

import json
import math
import re
import statistics
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from analysis import phases  # noqa: E402  (the analysis owns the reading of traces)

MODULE_LINE_RE = re.compile(r"^([\w-]+) (bench_\w+) (\d+) (\d+) (\d+) (\d+)$")
"""guest/modules.txt: ``MODE MODULE ROUND ITER LOAD_NS UNLOAD_NS``, e.g.
``disabled bench_pairs_16 1 0 812345 412345``."""

BENCH_N = (1, 16, 256)
CURVE_N = (16, 256, 1024, 4096)

#: Under icount a call whose duration moves by more than this across boots
#: of one kernel waits on something outside the guest's instruction
#: stream (a host I/O thread completing a virtio request, a timer).
NOISY_NS = 2000.0

#: Set by main(): "icount" (guest ns = instructions) or "wall".
CLOCK = "wall"


@dataclass
class Samples:
    """Values of one measurement; empty when it did not run."""
    values: list[float] = field(default_factory=list)

    def ok(self) -> bool:
        return bool(self.values)

    def summary(self) -> dict[str, Any]:
        v = sorted(self.values)
        if not v:
            return {"n": 0}
        med = statistics.median(v)
        q = statistics.quantiles(v, n=4) if len(v) >= 2 else [v[0], v[0], v[0]]
        p10 = statistics.quantiles(v, n=10)[0] if len(v) >= 2 else v[0]
        return {"n": len(v), "min": v[0], "p10": p10, "median": med, "max": v[-1],
                "iqr_rel": (q[2] - q[0]) / med if med else 0.0,
                "range_rel": (v[-1] - v[0]) / abs(med) if med else 0.0}


def read_tsv(path: Path) -> list[list[str]]:
    if not path.exists():
        return []
    return [line.split("\t") for line in path.read_text().splitlines() if line]


def read_meta(d: Path) -> dict[str, Any]:
    try:
        return dict(json.loads((d / "meta.json").read_text()))
    except (OSError, ValueError):
        return {}


def boot_numbers(d: Path) -> Optional[dict[str, float]]:
    """do_initcalls time (ms), initcall count, ordering cost from one boot."""
    return phases.boot_phases(d / "boot.report.txt", d / "dmesg.txt")


def debug_bytes(d: Path) -> float:
    """Bytes of initcall_debug lines in one boot's dmesg.txt."""
    return float(phases.initcall_debug_bytes(d / "dmesg.txt"))


def call_durations(d: Path) -> dict[str, float]:
    """initcall function -> ns spent in it (summed if it ran twice) in one
    boot's boot.report.txt; an unfinished call is left out."""
    return phases.call_durations(d / "boot.report.txt")


def calls_that_differ(base: list[dict[str, float]], new: list[dict[str, float]]) -> dict[str, Any]:
    """Which initcalls make two kernels' do_initcalls differ: the calls only
    one of them runs, the noisy ones (range across one kernel's boots above
    NOISY_NS: they wait on the host), and the stable calls whose median
    durations differ most. noisy_ms holds, per boot, the time in the noisy
    calls, in the order of the boots (the do_initcalls samples' order)."""
    def names(boots: list[dict[str, float]]) -> set[str]:
        return set().union(*boots) if boots else set()
    b_names, n_names = names(base), names(new)
    noisy: dict[str, float] = {}
    for boots in (base, new):
        for fn in names(boots):
            vals = [b[fn] for b in boots if fn in b]
            if len(vals) != len(boots) or max(vals) - min(vals) > NOISY_NS:
                noisy[fn] = max(noisy.get(fn, 0.0), max(vals) - min(vals))
    common = sorted((b_names & n_names) - set(noisy))
    deltas: list[tuple[float, str]] = sorted(
        ((float(statistics.median(b[fn] for b in new)) - float(statistics.median(b[fn] for b in base)), fn)
         for fn in common), key=lambda x: -abs(x[0]))
    return {
        "only_baseline": {fn: statistics.median(b.get(fn, 0.0) for b in base)
                          for fn in sorted(b_names - n_names)},
        "only_new": {fn: statistics.median(b.get(fn, 0.0) for b in new)
                     for fn in sorted(n_names - b_names)},
        "noisy": dict(sorted(noisy.items(), key=lambda x: -float(x[1]))),
        "noisy_ms": {"stock": [sum(b.get(fn, 0.0) for fn in noisy) / 1e6 for b in base],
                     "patchedsc": [sum(b.get(fn, 0.0) for fn in noisy) / 1e6 for b in new]},
        "largest_stable_deltas_ns": {fn: d for d, fn in deltas[:5]},
        "stable_delta_sum_ns": sum(d for d, _ in deltas),
    }


def differ_text(d: dict[str, Any]) -> str:
    u = "instr" if CLOCK == "icount" else "ns"
    parts = []
    if d["only_new"]:
        parts.append("only the series runs " + ", ".join(
            f"{fn} ({v:.0f} {u})" for fn, v in d["only_new"].items()))
    if d["only_baseline"]:
        parts.append("only stock runs " + ", ".join(
            f"{fn} ({v:.0f} {u})" for fn, v in d["only_baseline"].items()))
    if d["noisy"]:
        parts.append("noisy (range across boots of one kernel, they wait on the host's "
                     "device threads or timers): " + ", ".join(
                         f"{fn} {v:.0f}" for fn, v in list(d["noisy"].items())[:6]))
    moved = {fn: v for fn, v in d["largest_stable_deltas_ns"].items() if v}
    parts.append(f"the other calls differ by {d['stable_delta_sum_ns']:+.0f} {u} in all"
                 + (" (one vCPU: the work of kthreads, timers and softirqs lands in whichever call"
                    " is running, so single calls move both ways and only the sum is a cost), most: "
                    + ", ".join(f"{fn} {v:+.0f}" for fn, v in moved.items()) if moved else ""))
    return "; ".join(parts)


TICK_US = 1000.0
"""One timer tick of the bench's guests in µs of guest time: under icount
(shift=0, sleep=off) a guest that waits (an unload's RCU grace period)
jumps to its next timer, 10^6 ns (instructions) later."""


def per_pair_overhead(single: Samples, pairs: Samples, n: int) -> dict[str, float]:
    """(pairs_N - single_N) / N from the medians, the 10th percentiles and
    the minima, in µs, and how many samples of each lie half a tick or more
    above their minimum ("ticks"): a median that moves by whole ticks
    counts timer jumps, not instructions, and the minimum is then the
    figure that counts the work (issue 35, B1)."""
    s, p = single.summary(), pairs.summary()

    def jumps(x: Samples) -> int:
        lo = min(x.values)
        return sum(1 for v in x.values if v - lo >= TICK_US / 2)

    return {"median": (p["median"] - s["median"]) / n, "p10": (p["p10"] - s["p10"]) / n,
            "min": (p["min"] - s["min"]) / n,
            "ticks_single": float(jumps(single)), "ticks_pairs": float(jumps(pairs)),
            "samples": float(min(s["n"], p["n"]))}


def profile_per_pair(profiles: dict[str, list[dict[str, float]]], n: int) -> dict[str, float]:
    """Per step of load_module() on the profile kernel (bench/profile_load.py),
    (median over bench_pairs_N's loads - median over bench_single_N's) / N,
    in guest ns (instructions under icount); "total" is the sum of the steps.
    Empty when either module has no loads."""
    pairs, single = profiles.get(f"bench_pairs_{n}", []), profiles.get(f"bench_single_{n}", [])
    if not pairs or not single:
        return {}
    steps: list[str] = []
    for rec in pairs + single:
        steps += [k for k in rec if k not in steps]

    def med(recs: list[dict[str, float]], step: str) -> float:
        return statistics.median(r.get(step, 0.0) for r in recs)

    res = {step: (med(pairs, step) - med(single, step)) / n for step in steps}
    res["total"] = (statistics.median(sum(r.values()) for r in pairs)
                    - statistics.median(sum(r.values()) for r in single)) / n
    return res


def module_samples(d: Path) -> dict[tuple[str, str, str], Samples]:
    """(mode, module, load|unload) -> µs samples, the first cycle of each
    round dropped (cold caches)."""
    res: dict[tuple[str, str, str], Samples] = {}
    p = d / "guest" / "modules.txt"
    if not p.exists():
        return res
    for line in p.read_text().splitlines():
        m = MODULE_LINE_RE.match(line.strip())
        if not m or m.group(4) == "0":
            continue
        mode, mod = m.group(1), m.group(2)
        res.setdefault((mode, mod, "load"), Samples()).values.append(int(m.group(5)) / 1e3)
        res.setdefault((mode, mod, "unload"), Samples()).values.append(int(m.group(6)) / 1e3)
    return res


def phase_samples(d: Path) -> dict[tuple[str, str], tuple[Samples, Samples]]:
    """(module, init|exit) -> (span, sum of duration_ns) in µs, one sample per
    load or unload, from the "enabled" rounds of the scenario trace: span =
    first *_start to last *_finish of the module's pairs (bench_single_N has
    one pair: its module_init/module_exit); the sum is the time inside the
    init/exit functions themselves (analysis/phases.py module_phases)."""
    res: dict[tuple[str, str], tuple[Samples, Samples]] = {}
    for key, samples in phases.module_phases(d / "scenario.report.txt").items():
        res[key] = (Samples([span for span, _ in samples]), Samples([inside for _, inside in samples]))
    return res


def unit_label(unit: str) -> str:
    """Under icount a guest time unit is a number of instructions."""
    if CLOCK == "icount":
        return {"ms": "M instr", "us": "k instr", "ns": "instr"}.get(unit, unit)
    return unit


def fmt(x: Optional[float], unit: str) -> str:
    if x is None:
        return "-"
    if CLOCK == "icount" and unit in ("ms", "us"):
        return f"{x:.3f}" if abs(x) < 1000 else f"{x:.1f}"
    if unit == "ms":
        return f"{x:.1f}"
    if unit == "us":
        return f"{x:.0f}" if abs(x) >= 100 else f"{x:.1f}"
    if unit == "ns":
        return f"{x:.0f}"
    if unit == "s":
        return f"{x:.1f}"
    return f"{x:g}"


class Table:
    def __init__(self) -> None:
        self.rows: list[list[str]] = []
        self.json_rows: list[dict[str, Any]] = []

    def add(self, name: str, unit: str, base: Samples, new: Samples,
            base_label: str = "stock", new_label: str = "patched") -> None:
        b, n = base.summary(), new.summary()
        if not b["n"] and not n["n"]:
            return  # not measured in this run
        ratio = (n["median"] / b["median"]) if b.get("median") and n.get("median") else None
        spread = max((s["range_rel"] for s in (b, n) if s["n"]), default=None)

        def three(s: dict[str, Any]) -> str:
            if not s["n"]:
                return "-"
            return " / ".join(fmt(s[k], unit) for k in ("min", "median", "max"))
        self.rows.append([f"{name} [{unit_label(unit)}]", f"{base_label}: {three(b)}" if b["n"] else "-",
                          f"{new_label}: {three(n)}" if n["n"] else "-",
                          f"{ratio:.4f}" if ratio else "-",
                          f"{spread * 100:.2f}%" if spread is not None else "-",
                          str(max(b["n"], n["n"]))])
        self.json_rows.append({"measurement": name, "unit": unit, "unit_label": unit_label(unit),
                               "baseline_label": base_label, "baseline": b,
                               "baseline_values": base.values,
                               "label": new_label, "value": n, "values": new.values,
                               "ratio_median": ratio, "spread_range_rel": spread})

    def note(self, name: str, text: str, data: dict[str, Any]) -> None:
        self.rows.append([name, text, "", "", "", ""])
        self.json_rows.append({"measurement": name, "text": text, **data})

    def render(self) -> str:
        head = ["measurement", "stock / baseline (min / median / max)",
                "patched (min / median / max)", "ratio", "spread", "n"]
        rows = [head] + self.rows
        table = [r for i, r in enumerate(rows) if i == 0 or r[2] or r[3]]
        w = [max(len(r[i]) for r in table) for i in range(len(head))]
        out = []
        for i, r in enumerate(rows):
            if i > 0 and not r[2] and not r[3]:
                out.append(f"{r[0]}: {r[1]}")
                continue
            out.append("  ".join(c.ljust(w[j]) for j, c in enumerate(r)).rstrip())
            if i == 0:
                out.append("  ".join("-" * x for x in w))
        return "\n".join(out)


def find_row(rows: list[dict[str, Any]], start: str) -> Optional[dict[str, Any]]:
    """The first measured row whose name starts with START."""
    for r in rows:
        if str(r.get("measurement", "")).startswith(start) and r.get("ratio_median") is not None:
            return r
    return None


def note_data(rows: list[dict[str, Any]], key: str) -> Any:
    for r in rows:
        if key in r:
            return r[key]
    return None


def verdicts(rows: list[dict[str, Any]]) -> list[str]:
    """What the numbers say about the series, and which change they call
    for (or that none is needed), each with the numbers that show it."""
    u = "instructions" if CLOCK == "icount" else "ns"
    out: list[str] = []
    goal = 1.001
    for how in ("initcall_debug=0", "initcall_debug"):
        whole = find_row(rows, f"1. boot, {how}: do_initcalls, stock vs the series")
        stable = find_row(rows, f"1. boot, {how}: do_initcalls minus")
        if not whole:
            continue
        # Without the noisy calls only when they make the whole figure move:
        # when every boot of a kernel agrees, the whole figure is the cost.
        r = stable if stable and whole["spread_range_rel"] > 0.001 else whole
        what = "without the calls that wait on the host" if r is stable else "whole"
        ok = r["ratio_median"] <= goal
        why = f"above the goal {goal}: see the calls that differ."
        off = find_row(rows, "1. boot, initcall_debug=0: do_initcalls, stock vs the series")
        calls = find_row(rows, f"1. boot, {how}: initcalls run, same fragments")
        nbytes = find_row(rows, f"5. boot, {how}: bytes of initcall_debug lines")
        if how == "initcall_debug" and off and calls and not ok:
            extra = ((whole["value"]["median"] - whole["baseline"]["median"])
                     - (off["value"]["median"] - off["baseline"]["median"]))
            per = extra * 1e6 / calls["value"]["median"]
            why = (f"above the goal {goal}, and only with initcall_debug on (off: "
                   f"{off['ratio_median']:.5f}): {extra:+.2f} M {u} more than the difference with it off,"
                   f" {per:+,.0f} per initcall. The series' initcall_debug appends the call's"
                   " priority and module name to every line"
                   + (f" ({(nbytes['value']['median'] - nbytes['baseline']['median']) / calls['value']['median']:+,.0f}"
                      " bytes of log per initcall, which printk formats in far fewer instructions)"
                      if nbytes else "")
                   + "; the rest is consistent with how it finds them: the call is looked up"
                   " among its band's initcall entries and the entry's symbol in kallsyms"
                   " (sprint_symbol_no_offset()), in the start and the finish probe. A change"
                   " the series' owner could make (not made here): let the finish probe reuse"
                   " the start probe's lookup."
                   " None for production boots (initcall_debug off).")
        out.append(f"do_initcalls ({how}), the series with stock's fragments / stock, {what}: "
                   f"{r['ratio_median']:.5f} (whole: {whole['ratio_median']:.5f}, spread "
                   f"{whole['spread_range_rel'] * 100:.2f}%): "
                   + (f"within the goal {goal}: no change needed." if ok else why))
    curve = note_data(rows, "curve")
    if curve and "growth_exponent" in curve:
        k, pl = curve["growth_exponent"], curve["p_log_p_exponent"]
        shape = ("as p log p" if abs(k - pl) <= 0.15 else
                 "faster than p log p" if k > pl else "slower than p log p (a fixed cost dominates)")
        per = [p for key, p in curve.items() if key.isdigit() and "per_pair" in p]
        out.append(f"ordering built-in pairs grows {shape}: p^{k:.3f} against p log p's p^{pl:.3f}; "
                   + ", ".join(f"{p['pairs']} pairs {p['ordering_ns']:.0f} {u} ({p['per_pair']:.0f} per pair)"
                               for p in per)
                   + (". No change needed." if shape == "as p log p" or k < pl else "."))
    plain = [r for r in rows if str(r.get("measurement", "")).startswith("3. load bench_single_")
             and "stock vs" in str(r.get("measurement", "")) and r.get("ratio_median") is not None]
    if plain:
        worst = max(plain, key=lambda r: abs(float(r["ratio_median"]) - 1))
        d = worst["value"]["median"] - worst["baseline"]["median"]
        # A timer interrupt can land in a timed load: within the spread of
        # the two columns is no difference the run can resolve.
        spread = float(worst.get("spread_range_rel") or 0.0)
        same = abs(worst["ratio_median"] - 1) <= max(0.001, spread)
        out.append(f"a plain module_init/module_exit module loads {'the same' if same else 'differently'} "
                   f"on stock and on the series with stock's fragments: worst ratio {worst['ratio_median']:.4f}, "
                   f"spread {spread * 100:.2f}% ({worst['measurement'].split(':')[0][3:]}, {d * 1e3:+.0f} {u})"
                   + (": no difference beyond the noise, no change needed." if same else
                      ": more than the noise: find what the module path does for a module without pairs."))
    ov = note_data(rows, "overhead_us")
    if ov:
        text = ("per pair on a module load, (pairs_N - single_N) / N: "
                + ", ".join(f"{k} {v['median'] * 1e3:.0f}" for k, v in ov.items()) + f" {u}")
        lo, hi = ov.get("load_16"), ov.get("load_256")
        if lo and hi and lo["median"] > 0 and hi["median"] > 4 * lo["median"]:
            k = 1 + math.log(hi["median"] / lo["median"]) / math.log(16)
            text += (f". The per-pair load cost grows with N ({lo['median'] * 1e3:,.0f} at 16,"
                     f" {hi['median'] * 1e3:,.0f} at 256: the load grows as N^{k:.2f}), on the kernel"
                     " without the events too: something in the series' module path is"
                     " superlinear in the number of pairs. A change for the series' owner (not made"
                     " here: patches/ is another engineer's): find it (perf or a trace of"
                     " finit_module with bench_pairs_256) and make it O(N log N).")
        out.append(text + ("" if text.endswith(".") else "."))
    pe = note_data(rows, "per_event_ns")
    if pe:
        out.append("per initexit event enabled: "
                   + ", ".join(f"{k} {v['median']:.0f}" for k, v in pe.items()) + f" {u}.")
    noev = [r for r in rows if "series without its events vs events compiled in" in str(r.get("measurement", ""))
            and r.get("ratio_median") is not None]
    if noev:
        lo = min(float(r["ratio_median"]) for r in noev)
        hi = max(float(r["ratio_median"]) for r in noev)
        out.append(f"the events compiled in and disabled vs the series without them: ratio {lo:.4f} .. {hi:.4f}"
                   " over every load and unload.")
    dbg = [r for r in rows if str(r.get("measurement", "")).startswith("5. boot: do_initcalls, initcall_debug off vs on")
           and r.get("ratio_median") is not None]
    for r in dbg:
        out.append(f"initcall_debug on / off, {r['measurement'].rsplit(', ', 1)[1]}: {r['ratio_median']:.3f} "
                   f"(+{(r['value']['median'] - r['baseline']['median']):.1f} M {u} of do_initcalls)"
                   if CLOCK == "icount" else
                   f"initcall_debug on / off, {r['measurement'].rsplit(', ', 1)[1]}: {r['ratio_median']:.3f}")
    ana = find_row(rows, "host, hyperfine: ")
    if ana:
        out.append(f"python3 -m analysis check takes {ana['ratio_median']:.2f}x the time trace-cmd report "
                   "takes to print the same capture (hyperfine medians).")
    return out


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print("usage: bench_report.py OUT", file=sys.stderr)
        return 2
    out = Path(argv[1])
    global CLOCK
    runs = read_tsv(out / "runs.tsv")
    host = dict(line.split("=", 1) for line in (out / "host.txt").read_text().splitlines()
                if "=" in line) if (out / "host.txt").exists() else {}
    CLOCK = host.get("clock", "wall")
    t = Table()
    accels: set[str] = set()
    clocks: set[str] = set()
    failed = [r[0] for r in runs if len(r) > 1 and r[1] != "0"]

    for r in runs:
        meta = read_meta(Path(r[3])) if len(r) > 3 else {}
        if meta.get("accel"):
            accels.add(str(meta["accel"]))
        cs = meta.get("guest", {}).get("clocksource")
        if cs:
            clocks.add(str(cs))

    # 1 + 5. boot, with initcall_debug (as scripts/run boots) and without
    boot_by: dict[str, dict[str, dict[str, Samples]]] = {}
    calls_by: dict[str, dict[str, list[dict[str, float]]]] = {}
    for prefix, how in (("boot", "initcall_debug"), ("bootnd", "initcall_debug=0")):
        boot: dict[str, dict[str, Samples]] = {"stock": {}, "patched": {}, "patchedsc": {}}
        calls: dict[str, list[dict[str, float]]] = {"stock": [], "patched": [], "patchedsc": []}
        for r in runs:
            m = re.match(prefix + r"-(stock|patched|patchedsc)-\d+$", r[0])
            if not m or r[1] != "0":
                continue
            nums = boot_numbers(Path(r[3]))
            if nums is None:
                failed.append(r[0] + " (no initcall events)")
                continue
            for k, v in nums.items():
                boot[m.group(1)].setdefault(k, Samples()).values.append(v)
            boot[m.group(1)].setdefault("initcall_debug_bytes", Samples()).values.append(
                debug_bytes(Path(r[3])))
            calls[m.group(1)].append(call_durations(Path(r[3])))
        boot_by[prefix], calls_by[prefix] = boot, calls
        if not any(boot.values()):
            continue
        s_, p_, sc = boot["stock"], boot["patched"], boot["patchedsc"]
        if sc:
            t.add(f"1. boot, {how}: do_initcalls, stock vs the series with stock's fragments", "ms",
                  s_.get("do_initcalls_ms", Samples()), sc.get("do_initcalls_ms", Samples()))
            differ = calls_that_differ(calls["stock"], calls["patchedsc"])
            if differ["noisy"]:
                t.add(f"1. boot, {how}: do_initcalls minus the {len(differ['noisy'])} calls "
                      "that wait outside the guest", "ms",
                      Samples([x - y for x, y in zip(s_["do_initcalls_ms"].values,
                                                     differ["noisy_ms"]["stock"])]),
                      Samples([x - y for x, y in zip(sc["do_initcalls_ms"].values,
                                                     differ["noisy_ms"]["patchedsc"])]))
            t.add(f"1. boot, {how}: initcalls run, same fragments", "count",
                  s_.get("initcalls", Samples()), sc.get("initcalls", Samples()))
            if prefix == "boot":
                t.add(f"5. boot, {how}: bytes of initcall_debug lines in dmesg, same fragments", "count",
                      s_.get("initcall_debug_bytes", Samples()), sc.get("initcall_debug_bytes", Samples()))
            t.note(f"1. boot, {how}: the calls that differ",
                   differ_text(differ), {"calls_that_differ": differ})
        t.add(f"boot, {how}: do_initcalls, stock vs patched with the test pairs", "ms",
              s_.get("do_initcalls_ms", Samples()), p_.get("do_initcalls_ms", Samples()))
        t.add(f"boot, {how}: initcalls run (initcall_start events), with the test pairs", "count",
              s_.get("initcalls", Samples()), p_.get("initcalls", Samples()))
        t.add(f"2. boot, {how}: ordering the test config's built-in pairs (dmesg)", "ns",
              sc.get("ordering_ns", Samples()), p_.get("ordering_ns", Samples()),
              base_label="0 pairs", new_label=f"{int(statistics.median(p_['ordered_pairs'].values)) if p_.get('ordered_pairs') else '?'} pairs")
    for k, label in (("stock", "stock"), ("patchedsc", "the series, stock's fragments"),
                     ("patched", "patched with the test pairs")):
        on = boot_by.get("boot", {}).get(k, {}).get("do_initcalls_ms", Samples())
        off = boot_by.get("bootnd", {}).get(k, {}).get("do_initcalls_ms", Samples())
        if on.ok() or off.ok():
            t.add(f"5. boot: do_initcalls, initcall_debug off vs on, {label}", "ms", off, on,
                  base_label="off", new_label="on")

    # 2. the ordering curve: N generated built-in pairs
    curve: dict[int, dict[str, Samples]] = {}
    for r in runs:
        m = re.match(r"curve-(\d+)-\d+$", r[0])
        if not m or r[1] != "0":
            continue
        nums = boot_numbers(Path(r[3]))
        if nums is None:
            failed.append(r[0] + " (no initcall events)")
            continue
        for k, v in nums.items():
            curve.setdefault(int(m.group(1)), {}).setdefault(k, Samples()).values.append(v)
    if curve:
        base_nd = boot_by.get("bootnd", {}).get("patchedsc", {})
        base_ord = base_nd.get("ordering_ns", Samples())
        base_dc = base_nd.get("do_initcalls_ms", Samples())
        points: dict[str, Any] = {}
        for n in sorted(curve):
            c = curve[n]
            ordn = c.get("ordering_ns", Samples())
            t.add(f"2. ordering {n} built-in pairs (sort + table setup, dmesg)", "ns",
                  base_ord, ordn, base_label="0 pairs", new_label=f"{n} pairs")
            pt: dict[str, Any] = {"pairs": n}
            if ordn.ok():
                med = statistics.median(ordn.values)
                pt["ordering_ns"] = med
                pt["per_pair"] = med / n
                pt["per_p_log2_p"] = med / (n * math.log2(n))
            dc = c.get("do_initcalls_ms", Samples())
            t.add(f"2. boot with {n} built-in pairs, initcall_debug=0: do_initcalls", "ms",
                  base_dc, dc, base_label="0 pairs", new_label=f"{n} pairs")
            if dc.ok() and base_dc.ok():
                pt["run_per_pair"] = (statistics.median(dc.values)
                                      - statistics.median(base_dc.values)) * 1e6 / n
            points[str(n)] = pt
        ns = [p for p in points.values() if "ordering_ns" in p]
        runs_at = [p for p in ns if "run_per_pair" in p]
        if len(runs_at) >= 2:
            # The marginal cost between the two largest N: at small N a
            # shift of the boot's other work (kthreads, timers) outweighs
            # the pairs themselves.
            a_, b_ = runs_at[-2], runs_at[-1]
            points["run_slope_per_pair"] = ((b_["run_per_pair"] * b_["pairs"] - a_["run_per_pair"] * a_["pairs"])
                                            / (b_["pairs"] - a_["pairs"]))
            points["run_slope_between"] = [a_["pairs"], b_["pairs"]]
        growth = ""
        if len(ns) >= 2:
            lo, hi = ns[0], ns[-1]
            expo = math.log(hi["ordering_ns"] / lo["ordering_ns"]) / math.log(hi["pairs"] / lo["pairs"])
            plogp = (math.log(hi["pairs"] * math.log2(hi["pairs"])
                              / (lo["pairs"] * math.log2(lo["pairs"])))
                     / math.log(hi["pairs"] / lo["pairs"]))
            growth = (f"; from {lo['pairs']} to {hi['pairs']} pairs the time grows as p^{expo:.3f} "
                      f"(p log p would be p^{plogp:.3f}, p^2 would be p^2)")
            points["growth_exponent"] = expo
            points["p_log_p_exponent"] = plogp
        t.note(f"2. ordering curve, {unit_label('ns')} per pair [per p*log2(p)]"
               " {per pair run at boot: do_initcalls(N) - do_initcalls(0), / N, trace events on}",
               ", ".join(f"{p['pairs']}: {p.get('per_pair', 0):.0f} [{p.get('per_p_log2_p', 0):.1f}]"
                         + (f" {{{p['run_per_pair']:.0f}}}" if "run_per_pair" in p else "")
                         for p in ns) + growth
               + (f"; running a pair at boot, between {points['run_slope_between'][0]} and"
                  f" {points['run_slope_between'][1]} pairs: {points['run_slope_per_pair']:,.0f} per pair"
                  if "run_slope_per_pair" in points else ""),
               {"curve": points})
    # 2 + 3. modules and events
    stock_m = module_samples(out / "modules-stock")
    pat_m = module_samples(out / "modules-patched")
    noev_m = module_samples(out / "modules-noevents")
    # The series with stock's fragments (no test config): the fair baseline
    # against stock and against the series without its events (built from
    # the same copy); the patched kernel of scripts/run when it is missing.
    sc_m = module_samples(out / "modules-patchedsc") or pat_m
    overhead: dict[str, Any] = {}
    per_event: dict[str, Any] = {}
    for op in ("load", "unload"):
        for n in BENCH_N:
            t.add(f"3. {op} bench_single_{n} (plain module_init/exit): stock vs the series with stock's "
                  f"fragments, events off", "us",
                  stock_m.get(("absent", f"bench_single_{n}", op), Samples()),
                  sc_m.get(("disabled", f"bench_single_{n}", op), Samples()))
            t.add(f"3. {op} bench_single_{n} (plain module_init/exit): the series, stock's fragments vs "
                  f"the test config (KUnit, boot tests), events off", "us",
                  sc_m.get(("disabled", f"bench_single_{n}", op), Samples()),
                  pat_m.get(("disabled", f"bench_single_{n}", op), Samples()),
                  base_label="stock's fragments", new_label="test config")
        for n in BENCH_N:
            single = pat_m.get(("disabled", f"bench_single_{n}", op), Samples())
            pairs = pat_m.get(("disabled", f"bench_pairs_{n}", op), Samples())
            t.add(f"3. {op} single_{n} vs pairs_{n} (patched, events off)", "us",
                  single, pairs, base_label="single", new_label="pairs")
            if single.ok() and pairs.ok():
                overhead[f"{op}_{n}"] = per_pair_overhead(single, pairs, n)
    for op in ("load", "unload"):
        for n in BENCH_N:
            mod = f"bench_pairs_{n}"
            off = pat_m.get(("disabled", mod, op), Samples())
            on = pat_m.get(("enabled", mod, op), Samples())
            t.add(f"4. {op} {mod}: series without its events vs events compiled in, disabled", "us",
                  noev_m.get(("absent", mod, op), Samples()), sc_m.get(("disabled", mod, op), Samples()),
                  base_label="no events", new_label="disabled")
            t.add(f"4. {op} {mod}: initexit events off vs on", "us", off, on,
                  base_label="off", new_label="on")
            if off.ok() and on.ok():
                # The legacy slot is absent in bench_pairs_N: 2 events per
                # pair on load (init_start/finish), 2 on unload.
                per_event[f"{op}_{n}"] = {
                    "median": (statistics.median(on.values)
                               - statistics.median(off.values)) * 1e3 / (2 * n),
                    "p10": (on.summary()["p10"] - off.summary()["p10"]) * 1e3 / (2 * n)}
    profiles = phases.load_profiles(out / "modules-profile" / "guest" / "profile.log")
    by_step = {f"load_{n}": profile_per_pair(profiles, n) for n in BENCH_N}
    by_step = {k: v for k, v in by_step.items() if v}
    if by_step:
        t.note("3. per pair on load by step of load_module() (the profile kernel: bench/profile_load.py's"
               f" stamps), (pairs_N - single_N) / N in {unit_label('ns')}, medians",
               "; ".join(f"{k}: " + ", ".join(f"{step} {v:+.0f}" for step, v in steps.items())
                         for k, steps in by_step.items()),
               {"per_pair_by_step_ns": by_step})
    trace_phases = phase_samples(out / "modules-patched")
    per_pair_trace: dict[str, Any] = {}
    for phase in ("init", "exit"):
        for n in BENCH_N:
            single, _ = trace_phases.get((f"bench_single_{n}", phase), (Samples(), Samples()))
            pairs, inside = trace_phases.get((f"bench_pairs_{n}", phase), (Samples(), Samples()))
            t.add(f"{phase} phase in the trace, events on: single_{n} vs pairs_{n}", "us",
                  single, pairs, base_label="single", new_label="pairs")
            if single.ok() and pairs.ok():
                per_pair_trace[f"{phase}_{n}"] = {
                    "vs_single": (statistics.median(pairs.values)
                                  - statistics.median(single.values)) / n,
                    "outside_fn": (statistics.median(pairs.values)
                                   - statistics.median(inside.values)) / n}
    if per_pair_trace:
        t.note(f"3. per pair from the trace in {unit_label('us')}, (pairs_N - single_N) / N"
               " [time outside the init/exit function per pair]",
               ", ".join(f"{k}: {v['vs_single']:.1f} [{v['outside_fn']:.1f}]"
                         for k, v in per_pair_trace.items()),
               {"per_pair_trace_us": per_pair_trace})
    if overhead:
        t.note(f"3. per-pair overhead in {unit_label('us')}, (pairs_N - single_N) / N, from medians"
               " (from 10th percentiles) [from minima; samples a tick or more above their minimum,"
               " single/pairs]",
               ", ".join(f"{k}: {v['median']:.1f} ({v['p10']:.1f}) [{v['min']:.1f};"
                         f" {v['ticks_single']:.0f}/{v['ticks_pairs']:.0f}]"
                         for k, v in overhead.items()),
               {"overhead_us": overhead})
    if per_event:
        t.note(f"4. per-event cost in {unit_label('ns')}, (on - off) / (2 N events), from medians (from 10th percentiles)",
               ", ".join(f"{k}: {v['median']:.0f} ({v['p10']:.0f})"
                         for k, v in per_event.items()),
               {"per_event_ns": per_event})

    # host side: hyperfine's JSON (whole commands: warmup, runs)
    hyper: dict[str, Any] = {}
    for name in ("analysis", "loop-warm", "loop-edit", "loop-cold", "loop-patch"):
        p = out / f"hyperfine-{name}.json"
        if not p.exists():
            continue
        try:
            hyper[name] = json.loads(p.read_text())["results"]
        except (OSError, ValueError, KeyError):
            failed.append(p.name)
    ana = []
    for p in sorted(out.glob("analysis-*.json")):
        try:
            ana.append(json.loads(p.read_text()))
        except (OSError, ValueError):
            failed.append(p.name)
    events = int(ana[0].get("events", 0)) if ana else 0
    if "analysis" in hyper and len(hyper["analysis"]) == 2:
        tc, an = (Samples([float(x) for x in r["times"]]) for r in hyper["analysis"])
        t.add("host, hyperfine: "
              + (f"{events:,} events, " if events else "")
              + "trace-cmd report -N -t vs python3 -m analysis check, same .dat",
              "s", tc, an, base_label="trace-cmd", new_label="analysis")
    if ana:
        t.note("host: analysis stages (python3 -m analysis bench --dat, one run)",
               f"parse only {statistics.median(a['parse_events_per_s'] for a in ana):,.0f} events/s"
               + "".join(f", floor / trace-cmd report {a['floor_over_trace_cmd']:.2f}"
                         for a in ana[:1] if a.get("floor_over_trace_cmd")),
               {"runs": ana})
    loop = {r[0]: r for r in runs if r[0].startswith("loop-")}
    for name, what in (("loop-warm", "warm, nothing changed"),
                       ("loop-edit", "after editing kernel/initexit.c (--prepare)"),
                       ("loop-cold", "cold, empty cache"),
                       ("loop-patch", "then after editing one line of a patch")):
        for res in hyper.get(name, []):
            t.add(f"host, hyperfine: developer loop, scripts/run {what}", "s",
                  Samples(), Samples([float(x) for x in res["times"]]),
                  new_label="scripts/run")
    if "loop-prime" in loop:
        lp = loop["loop-prime"]
        t.note("host: developer loop, first run on the tree copy (primes it, not timed by hyperfine)",
               f"{float(lp[2]):.0f} s" + ("" if lp[1] == "0" else f" [exit {lp[1]}]"),
               {"loop-prime": {"wall_s": float(lp[2]), "status": int(lp[1])}})

    said = verdicts(t.json_rows)
    accel = ",".join(sorted(accels)) or "unknown"
    print(f"initexit bench {host.get('date', '')}: accelerator {accel.upper()}"
          + ("  (TCG: emulated CPU; these are not KVM numbers)" if "tcg" in accels else ""))
    if CLOCK == "icount":
        print("clock: icount; guest ns = instructions, icount shift=0"
              f" (-icount shift=0,sleep=off,align=off, {host.get('guest_smp', '1')} vCPU);"
              " host-side figures: hyperfine, seconds")
    else:
        print("clock: wall (guest times follow the host: TCG/KVM speed)")
    print(f"guest clocksource: {','.join(sorted(clocks)) or 'unknown'}; host: "
          f"{host.get('nproc', '?')} CPUs, load average {host.get('loadavg_start', '?')} at start, "
          f"{host.get('loadavg_end', '?')} at end; wall {host.get('wall_seconds', '?')} s")
    print(f"settings: {host.get('runs', '')}")
    print()
    print(t.render())
    print()
    print("ratio = median(patched) / median(stock or baseline). spread = the larger"
          " (max - min) / median of the two columns (the noise).")
    if said:
        print()
        print("What the numbers say (and the change they call for, if any):")
        for line in said:
            print(f"- {line}")
    if "jiffies" in clocks:
        print("WARNING: a guest ran on the jiffies clocksource: durations step by 1 ms.")
    if failed:
        print("FAILED: " + ", ".join(failed))
    (out / "bench.json").write_text(json.dumps({
        "schema": "initexit-bench-run/2", "clock": CLOCK,
        "clock_note": ("guest ns = instructions, icount shift=0" if CLOCK == "icount"
                       else "guest times are wall clock"),
        "host": host, "accel": sorted(accels),
        "guest_clocksource": sorted(clocks), "failed": failed,
        "runs": [{"label": r[0], "status": r[1], "wall_s": r[2], "out": r[3],
                  "loadavg": r[4] if len(r) > 4 else ""} for r in runs],
        "verdicts": said, "rows": t.json_rows}, indent=1) + "\n")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

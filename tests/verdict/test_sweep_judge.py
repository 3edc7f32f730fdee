"""The fault sweep's host judge (scripts/lib/sweep_judge.py) on saved
records, one file of tests/fault-sweep/records/ per edge case; the leak
rule's mutants must make some case fail; and the guest's JSON writer
(tests/guest/tools/fault-sweep's json functions, run by busybox ash)
must write what Python's json reads back."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts" / "lib"))

import sweep_judge  # noqa: E402
from sweep_judge import Outcome  # noqa: E402

RECORDS = ROOT / "tests" / "fault-sweep" / "records"
SWEEP = ROOT / "tests" / "guest" / "tools" / "fault-sweep"


@dataclass(frozen=True)
class Expect:
    """What one records file must be judged: the exit status, each
    step's outcome (by N), texts the KTAP must hold and must not."""

    exit_status: int
    outcomes: dict[int, Outcome]
    has: tuple[str, ...] = ()
    lacks: tuple[str, ...] = ()


C, K, I, L, M = Outcome.CLEAN, Outcome.KNOWN_STOCK, Outcome.INCONCLUSIVE, Outcome.LEAK, Outcome.MISMATCH

CASES: dict[str, Expect] = {
    # No slub_debug=F: per-CPU slabs move by whole slabs. Nothing is a
    # leak, nothing is ok: every step skipped, exit 3, the boot
    # parameters named.
    "percpu-noise.jsonl": Expect(3, {1: I, 2: I, 3: I}, has=(
        "# slab counts not exact, not judged: slab kmalloc-64: 2210 -> 2242 objects (+32)",
        "slab counts judged at every step # SKIP INCONCLUSIVE: the counts are not exact",
        "slub_debug=F slab_nomerge"), lacks=("not ok", ": LEAK")),
    # Generic KASAN: freed objects wait in the quarantine; a look later
    # sees them gone, a recycled batch is fewer, not more; clean cycles
    # giving a load's worth back are not a leak.
    "kasan-quarantine.jsonl": Expect(0, {1: C, 2: C, 3: C, 4: C}, has=(
        "fewer than before (not a leak)", "every cache shrunk before each count (KASAN's quarantine)",
        "-3 after 3 clean cycles: moves with the sweep")),
    # kfree_rcu() frees kernfs_open_node in batches: +97 in one round,
    # -186 in the next (not a leak); a cache that grows with the clean
    # cycles as much (lazy fill); +2 over three repeats.
    "kfree-rcu-batch.jsonl": Expect(0, {5: C, 6: C, 7: C, 8: C}, has=(
        "+0 after 3 clean cycles; again, then -186 after 3 more failed loads",
        "+3 after 3 more failed loads at this N, +3 after 3 clean cycles: moves with the sweep",
        "then +2 after 3 more failed loads at this N"), lacks=("not ok",)),
    # Stock 6.12's sysfs_slab_add() leaks the kobject name: by the
    # fault's stack, and for an absorbed fault without a stack by its
    # repeats'; kmemleak's object of it too.
    "stock-sysfs-slab-add.jsonl": Expect(0, {4: K, 58: K, 86: C}, has=(
        "known stock leaks: 2 (kmemleak: 1 objects)",
        "kmemleak: unreferenced object 0xffff888004a1c2e0 (size 16):; known: stock"),
        lacks=("not ok",)),
    # The goto ladder's planted leak: both rounds find one kmalloc-4k a
    # load (guest-sweep.sh's control greps these lines).
    "real-leak.jsonl": Expect(1, {49: L, 53: C}, has=(
        "not ok 1 - N=49: fault in __proc_create via sweep_init+0x8c [initexit_sweep_single] (failslab) -> errno 12: LEAK",
        "# slab kmalloc-4k: 52 -> 53 objects (+1); then +3 after 3 more failed loads at this N, +0 after 3 clean "
        "cycles: a leak; again, then +3",
        "leaks: 1, mismatches: 0")),
    # A fault the load absorbed (a fallback): the load succeeded.
    "absorbed-fault.jsonl": Expect(0, {12: C, 13: C, 14: C}, has=(
        "ok 1 - N=12: fault in an unnamed site (no stack: __GFP_NOWARN) (failslab): the load still succeeded",
        "absorbed faults: 2")),
    # The count of allocations moved by one: the repeats at N fault at the
    # neighbour; aimed at the first load's stack they find the leak.
    "count-moves-by-one.jsonl": Expect(1, {35: L, 37: C}, has=(
        "not ok 1 - N=35: fault in two_bufs_init+0x5e [initexit_sweep_two] (failslab) -> errno 12: LEAK",
        "at this site (5 loads at N - 1, N or N + 1), +0 after 3 clean cycles: a leak; again")),
    # ... and when fewer aimed repeats than REPEATS reach the site: not
    # judged, never ok.
    "count-moves-unreached.jsonl": Expect(3, {35: I, 37: C}, has=(
        "only 2 of 3 aimed repeats faulted at this site, not judged",
        "# SKIP INCONCLUSIVE: 1 step(s) could not be judged from their records: N=35"), lacks=("not ok",)),
    # ... but fewer objects than the aimed repeats that did reach the site
    # failed loads rules a leak out (a real btrfs step of a sweeps boot,
    # cut to its header, base, step and end): each leaking load leaves one.
    "short-repeats-fewer-objects.jsonl": Expect(0, {737: C}, has=(
        "then +1 after 2 more failed loads at this site (9 loads at N - 1, N or N + 1), +1 after 3 clean "
        "cycles (2 of 3 aimed repeats faulted at this site: fewer objects than failed loads there)",),
        lacks=("not ok", "SKIP INCONCLUSIVE")),
    # lib/alloc_tag.c's warning for the module's own line: a leak named by
    # its line, not a kernel report, whatever the slab counts did.
    "alloc-tag-leak.jsonl": Expect(1, {34: C, 35: L, 37: C}, has=(
        "# alloc tag: ../kmod/patched/project/initexit/initexit_sweep_two.c:38 (func:two_bufs_init): 256 bytes",),
        lacks=("MISMATCH", "the kernel reported")),
    # A WARNING in the reload (guest-sweep.sh's planted control).
    "report-in-reload.jsonl": Expect(1, {1: M}, has=(
        "not ok 1 - N=1: fault in sweep_init+0x1f [initexit_sweep_single] (failslab) -> errno 12: MISMATCH",
        "# the kernel reported, in the reload, a repeat (fail-nth N - 1, N or N + 1) or a clean cycle of this N: "
        "WARNING: CPU: 0 PID: 377 at planted by guest-sweep.sh's reload control")),
    # State left behind: a sysfs entry, a cache.
    "state-mismatch.jsonl": Expect(1, {31: M, 53: C}, has=(
        "# sysfs > /sys/kernel/slab/sweep_cache", "# slab sweep_cache: new cache, 0 objects")),
    # The guest died mid-line: judged as far as it goes, and a failure.
    "truncated.jsonl": Expect(1, {1: C, 2: C}, has=(
        "not ok 3 - initexit_sweep_single: the sweep reached a load with no fault left to inject",
        "the records end before the sweep did", "1 record line(s) unreadable", "# line 6: ")),
    # A leak by the first round whose second round the guest did not run.
    "second-round-missing.jsonl": Expect(3, {49: I, 53: C}, has=(
        "no round 2 of repeats recorded: not judged",), lacks=("not ok",)),
}


def check(name: str, e: Expect) -> list[str]:
    """What in NAME's judgement differs from E (empty: as expected)."""
    j = sweep_judge.judge(sweep_judge.read_records((RECORDS / name).read_text()))
    ktap = sweep_judge.render_ktap(j)
    wrong = []
    if j.exit_status != e.exit_status:
        wrong.append(f"{name}: exit {j.exit_status}, want {e.exit_status}")
    got = {s.step.n: s.outcome for s in j.steps}
    if got != e.outcomes:
        wrong.append(f"{name}: outcomes {got}, want {e.outcomes}")
    wrong += [f"{name}: no {t!r} in the KTAP" for t in e.has if t not in ktap]
    wrong += [f"{name}: {t!r} in the KTAP" for t in e.lacks if t in ktap]
    return wrong


def test_every_records_file_has_a_case() -> None:
    assert sorted(p.name for p in RECORDS.glob("*.jsonl")) == sorted(CASES)


@pytest.mark.parametrize("name", sorted(CASES))
def test_records(name: str) -> None:
    assert check(name, CASES[name]) == []


@pytest.mark.parametrize("name", sorted(CASES))
def test_ktap_reads_as_judged(name: str) -> None:
    """verdict.py reads the KTAP against its plan: the cases it counts and
    the exit status agree with the judgement (3 is 'exited 3 although
    every case passed': inconclusive never passes scripts/test)."""
    import verdict
    j = sweep_judge.judge(sweep_judge.read_records((RECORDS / name).read_text()))
    v = verdict.judge_ktap("sweep", sweep_judge.render_ktap(j), j.exit_status, reader="own")
    assert v.failed == sum(1 for c in j.cases if not c.ok) + (1 if j.exit_status == 3 else 0), v.failures
    assert v.skipped == sum(1 for c in j.cases if c.skip)


Rule = Callable[[int, int, int, int], bool]
MUTANTS: dict[str, Rule] = {
    # Each drops or loosens one clause of sweep_judge.leak_rule.
    "no clean-cycle subtraction": lambda f, c, h, r: h == r and f >= h and c > -r,
    "no late-free clause": lambda f, c, h, r: h == r and f >= h and f - max(c, 0) >= h,
    "one object in all is enough": lambda f, c, h, r: h == r and f >= 1 and f - max(c, 0) >= 1 and c > -r,
    "never a leak": lambda f, c, h, r: False,
    "half a load is a leak": lambda f, c, h, r: h == r and 2 * f >= h and 2 * (f - max(c, 0)) >= h and c > -r,
}


@pytest.fixture
def mutant_rule(request: pytest.FixtureRequest) -> Iterator[Rule]:
    saved = sweep_judge.RULES.leak
    sweep_judge.RULES.leak = MUTANTS[request.param]
    try:
        yield sweep_judge.RULES.leak
    finally:
        sweep_judge.RULES.leak = saved


@pytest.mark.parametrize("mutant_rule", sorted(MUTANTS), indirect=True)
def test_a_mutated_leak_rule_fails_a_case(mutant_rule: Rule) -> None:
    """The saved cases pin the rule down: every mutant changes a verdict."""
    wrong = [w for name, e in sorted(CASES.items()) for w in check(name, e)]
    assert wrong, "no case noticed the mutated leak rule"


def test_cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "leak.tap"
    assert sweep_judge.main(["judge", "-o", str(out), str(RECORDS / "real-leak.jsonl")]) == 1
    assert out.read_text().startswith("KTAP version 1\n1..7\n")
    assert sweep_judge.main(["judge", "--format", "json", str(RECORDS / "percpu-noise.jsonl")]) == 3
    lines = [json.loads(ln) for ln in capsys.readouterr().out.splitlines()]
    assert [d["outcome"] for d in lines[:-1]] == ["inconclusive"] * 3 and lines[-1]["exit"] == 3
    assert sweep_judge.main(["judge", str(tmp_path / "none.jsonl")]) == 2
    (tmp_path / "nohdr.jsonl").write_text('{"record": "end", "n": 1, "done": true}\n')
    assert sweep_judge.main(["judge", str(tmp_path / "nohdr.jsonl")]) == 2
    assert sweep_judge.main(["bogus"]) == 2


REAL = RECORDS / "real"


def test_real_captures_agree_with_the_guest() -> None:
    # Records and KTAP of real boots (tests/fault-sweep/records/real/README.md):
    # the host judges each sweep as the guest did, case for case.
    out, rc = sweep_judge.agree(REAL)
    assert rc == 0, out
    assert out.count("\nok ") == len(list(REAL.glob("*.jsonl"))) >= 6 and "# SKIP" not in out, out


def test_real_btrfs_stock_leak_with_repeats_that_missed() -> None:
    # btrfs N=247 (a real sweep): kmalloc-16 +1 through sysfs_slab_add(),
    # +2 after the 2 of 3 aimed repeats that reached the site: the stock
    # name leak, named as stock, though the rule's repeats were short.
    j = sweep_judge.judge(sweep_judge.read_records((REAL / "sweeps-btrfs.jsonl").read_text()))
    st = next(s for s in j.steps if s.step.n == 247)
    assert st.outcome is Outcome.KNOWN_STOCK, st
    assert any("sysfs_slab_add()" in n and "2 of 3 aimed repeats" in n for n in st.notes), st.notes
    # The twin leaks at two_bufs_init's second kmalloc(): a leak on the host too.
    twin = sweep_judge.judge(sweep_judge.read_records((REAL / "sweeps-initexit_sweep_two-leak_bug.jsonl").read_text()))
    assert twin.exit_status == 1 and any(s.outcome is Outcome.LEAK and "two_bufs_init+0x5e" in s.step.site
                                         for s in twin.steps)


def test_agree(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # A guest-sweep.sh folder: STEM.jsonl beside the guest's STEM.tap.
    for stem in ("real-leak", "absorbed-fault"):
        (tmp_path / f"{stem}.jsonl").write_text((RECORDS / f"{stem}.jsonl").read_text())
        j = sweep_judge.judge(sweep_judge.read_records((RECORDS / f"{stem}.jsonl").read_text()))
        (tmp_path / f"{stem}.tap").write_text(sweep_judge.render_ktap(j))
    assert sweep_judge.main(["agree", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("KTAP version 1\n1..2\nok 1 - the host judges absorbed-fault's records")
    # The guest said ok where the host finds the leak: they disagree, named.
    tap = tmp_path / "real-leak.tap"
    guest = tap.read_text().replace("not ok", "ok", 1)
    tap.write_text(guest)
    assert sweep_judge.main(["agree", str(tmp_path)]) == 1
    out = capsys.readouterr().out
    assert "not ok 2 - the host judges real-leak's records" in out
    assert "# case " in out and "guest: ok" in out and "host: not ok" in out
    # A case the guest never printed (it stopped early).
    tap.write_text("".join(ln + "\n" for ln in guest.splitlines() if not ln.startswith("ok 7 ")))
    assert sweep_judge.main(["agree", str(tmp_path)]) == 1
    assert "the guest reported 6 cases, the host judged 7" in capsys.readouterr().out
    # The guest passed steps the host cannot judge (aimed repeats that did
    # not all reach the site): skipped, named, never a pass nor a failure.
    stem = "count-moves-unreached"
    (tmp_path / f"{stem}.jsonl").write_text((RECORDS / f"{stem}.jsonl").read_text())
    j = sweep_judge.judge(sweep_judge.read_records((RECORDS / f"{stem}.jsonl").read_text()))
    (tmp_path / f"{stem}.tap").write_text(re.sub(r" # SKIP .*", "", sweep_judge.render_ktap(j)))
    assert sweep_judge.main(["agree", str(tmp_path)]) == 1  # real-leak still disagrees
    out = capsys.readouterr().out
    line = next(ln for ln in out.splitlines() if stem in ln)
    assert line.startswith("ok ") and "# SKIP the host could not judge" in line, out
    assert "# inconclusive on the host: case " in out
    (tmp_path / f"{stem}.jsonl").unlink()
    # No guest report at all, and no records at all.
    tap.unlink()
    assert sweep_judge.main(["agree", str(tmp_path)]) == 1
    assert "real-leak.tap: No such file" in capsys.readouterr().out
    assert sweep_judge.main(["agree", str(tmp_path / "empty")]) == 2


# ------------------------------------------------- the guest's JSON writer

BUSYBOX = shutil.which("busybox")
needs_busybox = pytest.mark.skipif(BUSYBOX is None, reason="no busybox (the guest's shell and awk)")


def guest_functions(*names: str) -> str:
    """The JS awk library and the shell functions NAMES, as the tool has
    them (a function ends at its own line "}", or on its first line)."""
    lines = SWEEP.read_text().splitlines()
    out: list[str] = []
    start = lines.index("JS='BEGIN { for (i = 1; i < 32; i++) ord[sprintf(\"%c\", i)] = i }")
    end = lines.index("}'", start)
    out += lines[start:end + 1]
    for name in names:
        i = next(n for n, ln in enumerate(lines) if ln.startswith(f"{name}() {{"))
        if lines[i].rstrip().endswith("}"):
            out.append(lines[i])
        else:
            j = lines.index("}", i)
            out += lines[i:j + 1]
    return "\n".join(out) + "\n"


def ash(script: str, *args: str, cwd: Path | None = None) -> bytes:
    assert BUSYBOX is not None
    return subprocess.run([BUSYBOX, "ash", "-c", script, "sh", *args], check=True, capture_output=True,
                          cwd=cwd).stdout


TRICKY = ["plain", "", "a \"quoted\" \\backslash\\ and \\\\two", "tab\there", "ctl \x01 \x1b[0m \x1f",
          "two\nlines", "trailing newline\n", "%s %d -n", "-e", "é ü 漢字", "[  T242] {\"json\": [1]}",
          "cr\r", "slab kmalloc-4k: 52 -> 53 objects (+1)"]


@needs_busybox
@pytest.mark.parametrize("text", TRICKY)
def test_guest_jstr(text: str, tmp_path: Path) -> None:
    lib = tmp_path / "j.sh"
    lib.write_text(guest_functions("jstr", "jfile"))
    got = ash('. "$1"; jstr "$2"', str(lib), text)
    # The shell's $(...) drops a value's trailing newlines; jstr keeps
    # what it is given.
    assert json.loads(got) == text


@needs_busybox
def test_guest_jfile_jlines_jslab(tmp_path: Path) -> None:
    lib = tmp_path / "j.sh"
    lib.write_text(guest_functions("jfile", "jlines", "jslab", "jbool", "jnum", "jstr", "jsep"))
    text = "\n".join(TRICKY[:-1]).replace("\r", "")
    (tmp_path / "t").write_bytes(text.encode() + b"\nbad byte \xff\n")
    (tmp_path / "a").write_text("kmalloc-16 884\nkmalloc-4k 52\ngone 3\n")
    (tmp_path / "b").write_text("kmalloc-16 884\nkmalloc-4k 53\nnew\\cache 1\n")
    out = ash('. "$1"; jfile t; echo; jlines t; echo; jslab a b; echo; jslab /dev/null a; echo;'
              ' jbool 1; jbool 0; echo; jnum 12; jnum died; echo; : >l; jsep l 1; jsep l 2; cat l', str(lib),
              cwd=tmp_path)
    rows = out.decode("utf-8", errors="replace").splitlines()
    assert json.loads(rows[0]) == text + "\nbad byte \ufffd"
    assert json.loads(rows[1]) == text.split("\n") + ["bad byte \ufffd"]
    assert json.loads(rows[2]) == {"kmalloc-4k": 53, "new\\cache": 1, "gone": None}
    assert json.loads(rows[3]) == {"kmalloc-16": 884, "kmalloc-4k": 52, "gone": 3}
    assert rows[4:] == ["truefalse", '12"died"', "1,2"]


@needs_busybox
@pytest.mark.parametrize("warn", [False, True])
def test_guest_records_read_back(tmp_path: Path, warn: bool) -> None:
    """The tool's own record writers (rebase, compare's look, jround,
    rec_step), run by busybox ash on files shaped like the guest's, give
    records the judge reads without a problem and judges as the facts say:
    a kmalloc-4k object a load, both rounds."""
    w = tmp_path / "w"
    (w / "s0").mkdir(parents=True)
    (w / "now").mkdir()
    (w / "s0" / "slab").write_text("kmalloc-4k 52\nfilp 610\n")
    (w / "now" / "slab").write_text("kmalloc-4k 53\nfilp 611\n")
    for f, c in (("c0", 53), ("c1", 56), ("c2", 56)):
        (w / f).write_text(f"kmalloc-4k {c}\nfilp 611\n")
    (w / "report-res").write_text("^WARNING: \n^BUG: \n")
    (w / "mismatches").write_text("")
    (w / "step").write_text("")
    stack = ("[   6.0] FAULT_INJECTION: forcing a failure.\n[   6.0]  <TASK>\n"
             "[   6.0]  __proc_create+0x9e/0x2d0\n[   6.0]  sweep_init+0x8c/0x1000 [initexit_sweep_single]\n"
             "[   6.0]  </TASK>\n")
    (w / "log").write_text(stack + ("[   6.1] WARNING: CPU: 0 PID: 1 at \"quoted\\path\"\n" if warn else ""))
    (w / "clog").write_text(stack * 3)
    (w / "j-reps").write_text("")
    lib = tmp_path / "j.sh"
    lib.write_text(guest_functions("rec", "jstr", "jfile", "jlines", "jbool", "jnum", "jslab", "jreports",
                                   "jsep", "stack_sigs", "jround", "rebase", "rec_step"))
    script = r'''
set -eu
. "$1"
WORK=$2 REC=$3 name=initexit_sweep_single params=ladder_bug=1
snapshot() { :; }
since_mark() { cat "$WORK/log"; }
BASE_ID=-1
rec "{\"record\":\"sweep\",\"version\":1,\"module\":$(jstr "$name"),\"params\":$(jstr "$params"),\"exact\":true,\"repeats\":3,\"noise\":$(jstr '^(filp)$')}"
rec '{"record":"warm","err":0,"out":"ok","unload":null,"reports":[]}'
cp "$WORK/s0/slab" "$WORK/keep"; rm -rf "$WORK/s0"; mkdir "$WORK/s0"; cp "$WORK/keep" "$WORK/s0/slab"
BASE_ID=0
rec "{\"record\":\"base\",\"id\":$BASE_ID,\"slab\":$(jslab /dev/null "$WORK/s0/slab")}"
: >"$WORK/j-settle"; : >"$WORK/j-rounds"
jsep "$WORK/j-settle" "{\"slab\":$(jslab "$WORK/s0/slab" "$WORK/now/slab"),\"lists\":$(jlines "$WORK/mismatches")}"
RPASS=1; jround step ""
RPASS=2; jround step ""
n=49 redoing=0 step_base=0 err=12 inj=1 out1='modload: x: error 12 "quoted"' site_now='__proc_create via sweep_init+0x8c [initexit_sweep_single] (failslab)'
steps=0 j_unload=null j_still=0 j_reload='{"err":0,"out":"ok","unload":null}' j_kl=null nmark=1
rec_step
rec '{"record":"end","n":53,"done":true}'
'''
    (w / "tsig").write_text("")
    rec = tmp_path / "rec.jsonl"
    ash(script, str(lib), str(w), str(rec))
    r = sweep_judge.read_records(rec.read_text())
    assert r.problems == ()
    (st,) = r.steps
    assert st.sig == "__proc_create+0x9e/0x2d0 < sweep_init+0x8c/0x1000 [initexit_sweep_single]"
    assert st.reports_load == (('WARNING: CPU: 0 PID: 1 at "quoted\\path"',) if warn else ())
    assert [x.mode for x in st.rounds] == ["at_n", "at_n"] and len(st.rounds[0].sigs) == 3
    j = sweep_judge.judge(r)
    ktap = sweep_judge.render_ktap(j)
    if warn:  # a report in the load: the step fails on it, its counts are not looked at
        assert [s.outcome for s in j.steps] == [Outcome.MISMATCH]
        assert "the kernel reported: WARNING: CPU: 0 PID: 1" in ktap
    else:
        assert [s.outcome for s in j.steps] == [Outcome.LEAK]
        assert "# slab kmalloc-4k: 52 -> 53 objects (+1); then +3 after 3 more failed loads at this N" in ktap

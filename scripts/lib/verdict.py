#!/usr/bin/python3
"""Every test verdict of scripts/test and scripts/mutation-test, and the
diagnosis of a scripts/run boot. The bash builds, boots and runs things;
this decides what their outputs mean.

    verdict.py ktap --name N [--exit RC | --exit-file F] [--record R] TAP
    verdict.py junit --name N --exit RC [--log LOG] [--record R] XML
    verdict.py run --name N --exit RC [--record R] RUNDIR
    verdict.py analysis --name N [--record R] RUNDIR
    verdict.py reports --name N [--end-marker M] [--record R] CONSOLE
    verdict.py scan [--first] [--all-kernel] [--ignore KIND]... LOG
    verdict.py summary [--failure MSG]... R
    verdict.py boot-names PATCH...
    verdict.py guest-script PATCH
    verdict.py mutation --tests DIR [--patch P] [--boot-xml X] RUNDIR
    verdict.py diagnose --qemu-exit RC --timeout S --boot-report ok|failed|none
                        --boot-initcalls N --scenario-report ok|failed|none OUT

A KTAP output is judged against its plan, as the kernel's
tools/testing/kunit/kunit_parser.py judges it (that parser is used when an
unpacked tree has it, else the reader here, which checks the plan the same
way): a case the plan promised but that never reported (a test that
stopped early, a crash mid-test) fails, so do a missing plan, results past
the plan, a wrong case number, and a non-zero exit with no failing case.
`# SKIP` counts as skipped. Each judging subcommand appends one record (a
JSON line) to --record and prints its failures on stderr; `summary` adds
the records up into the line "N passed, N failed[, N skipped]" and exits 1
when anything failed. Exit 2: usage or unreadable input. Stdlib only.
"""

from __future__ import annotations

import argparse
import enum
import importlib
import io
import json
import os
import re
import sys
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Iterator, Sequence

# ------------------------------------------------------------------ KTAP

KTAP_START_RE = re.compile(r"\s*K?TAP version ([0-9]+)$")
"""The header, e.g. ``KTAP version 1`` (kselftest's ``TAP version 13``)."""

KTAP_END_RE = re.compile(r"\s*(List of all partitions:|Kernel panic - not syncing: VFS:|reboot: System halted)")
"""Where kunit_parser stops reading a console, e.g. ``reboot: System halted``."""

PLAN_RE = re.compile(r"^\s*1\.\.([0-9]+)")
"""The plan, e.g. ``1..6``."""

RESULT_RE = re.compile(r"^\s*(ok|not ok) ([0-9]+) (- )?([^#]*)( # .*)?$")
"""A result, e.g. ``not ok 3 - order: exits in reverse``."""

SKIP_RE = re.compile(r"^\s*(ok|not ok) ([0-9]+) (- )?(.*) # SKIP(.*)$")
"""A skipped case, e.g. ``ok 4 - debugfs lists the pairs # SKIP CONFIG_DEBUG_FS not set``."""

HEADER_LIKE_RE = re.compile(r"^\s*# Subtest: ")
"""A nested test's header, e.g. ``# Subtest: order``."""

# kunit_parser's own wording, so that both readers report alike.
MISSING_CASE = "missing expected subtest!"
NO_OUTPUT = "Could not find any KTAP output. Did any KUnit tests run?"


class Status(enum.Enum):
    """One case's result."""

    PASS = "pass"
    FAIL = "fail"
    SKIP = "skip"
    MISSING = "missing"  # promised by the plan, never reported (kunit: crashed)


@dataclass(frozen=True)
class Case:
    """One top-level result line (or a case the plan promised)."""

    number: int
    description: str
    status: Status
    line: str = ""


@dataclass(frozen=True)
class KtapResult:
    """What one reader found in one KTAP output."""

    plan: int | None
    cases: tuple[Case, ...]
    problems: tuple[str, ...]  # suite-level errors other than missing cases
    reader: str


def _own_lines(text: str) -> list[str]:
    """The KTAP lines of TEXT, as kunit_parser.extract_tap_lines cuts them:
    from the header on, its prefix stripped, up to a console end marker."""
    out: list[str] = []
    prefix: int | None = None
    for raw in text.splitlines():
        line = raw.rstrip()
        if prefix is None:
            if KTAP_START_RE.search(line):
                prefix = line.find("TAP version")
                if prefix > 0 and line[prefix - 1] == "K":
                    prefix -= 1
                out.append(line[prefix:])
        elif KTAP_END_RE.search(line):
            break
        else:
            out.append(line[prefix:])
    return out


def read_ktap(text: str) -> KtapResult:
    """Read a flat KTAP output (the project's tests print no nested
    subtests; an indented line is a diagnostic here) and check it against
    its plan the way kunit_parser.parse_test does."""
    lines = _own_lines(text)
    if not lines:
        return KtapResult(None, (), (NO_OUTPUT,), "verdict")
    problems: list[str] = []
    it = iter(lines[1:])
    plan: int | None = None
    pending: str | None = None
    for line in it:
        m = PLAN_RE.match(line)
        if m:
            plan = int(m.group(1))
            break
        if RESULT_RE.match(line) and not line.startswith((" ", "\t")):
            pending = line
            break
    cases: list[Case] = []

    def results() -> Iterator[str]:
        if pending is not None:
            yield pending
        yield from it

    late_plan = extra = 0
    for line in results():
        if line.startswith((" ", "\t")) or HEADER_LIKE_RE.match(line):
            continue
        if PLAN_RE.match(line):
            late_plan += 1
            continue
        m = RESULT_RE.match(line)
        if not m:
            continue
        if plan is not None and len(cases) >= plan:
            extra += 1
            continue
        want = len(cases) + 1
        number = int(m.group(2))
        if number != want:
            problems.append(f"Expected test number {want} but found {number}")
        skip = SKIP_RE.match(line)
        if skip:
            status, desc = Status.SKIP, skip.group(4)
        else:
            status, desc = (Status.PASS if m.group(1) == "ok" else Status.FAIL), m.group(4)
        cases.append(Case(want, desc.strip(), status, line))
    if plan is not None:
        for n in range(len(cases) + 1, plan + 1):
            cases.append(Case(n, "", Status.MISSING))
        if plan == 0:
            problems.append("0 tests run!")
    elif not cases:
        problems.append("0 tests run!")
    _plan_problems(problems, plan, late_plan, extra)
    return KtapResult(plan, tuple(cases), tuple(problems), "verdict")


def _plan_problems(problems: list[str], plan: int | None, late_plan: int, extra: int) -> None:
    """The plan checks kunit_parser leaves to its caller."""
    if plan is None:
        where = " (a plan printed after the results is not read)" if late_plan else ""
        problems.append(f"no plan: no '1..N' line after the KTAP header{where}")
    if extra:
        problems.append(f"{extra} result(s) after the plan's last case (plan 1..{plan})")


# ------------------------------------------------- the kernel's kunit_parser

def kunit_dirs() -> list[Path]:
    """Where the kernel's KTAP parser may be: INITEXIT_KUNIT_DIR, else the
    unpacked trees of the cache (scripts/lib/common.sh's CACHE)."""
    if os.environ.get("INITEXIT_KUNIT_DIR"):
        return [Path(os.environ["INITEXIT_KUNIT_DIR"])]
    return [cache_dir() / t / "tools/testing/kunit" for t in ("linux-patched", "linux-stock")]


def cache_dir() -> Path:
    """scripts/lib/common.sh's CACHE: INITEXIT_CACHE, else
    ${XDG_CACHE_HOME:-~/.cache}/initexit."""
    return Path(os.environ.get("INITEXIT_CACHE") or
                Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "initexit")


_KUNIT: Any = None


def kunit_parser() -> Any:
    """The kernel's kunit_parser module, or None when no tree has it."""
    global _KUNIT
    if _KUNIT is None:
        _KUNIT = False
        for d in kunit_dirs():
            if (d / "kunit_parser.py").is_file():
                sys.path.insert(0, str(d))
                try:
                    _KUNIT = importlib.import_module("kunit_parser")
                except Exception:  # a tree whose parser does not import is no parser
                    _KUNIT = False
                finally:
                    sys.path.remove(str(d))
                break
    return _KUNIT or None


class _Stalled(Exception):
    """kunit_parser peeked at one line many times without taking it: it
    loops for ever on some inputs (a plan after the results)."""


ERROR_LINE_RE = re.compile(r"\[ERROR\] Test: (.*?): (.*)$")
"""kunit_parser's printed error, e.g. ``[12:00:01] [ERROR] Test: main: missing expected subtest!``."""


def read_ktap_kunit(text: str, kp: Any) -> KtapResult:
    """Read TEXT with the kernel's kunit_parser; its printed errors become
    problems, its crashed top-level subtests missing cases. Falls back to
    read_ktap where kunit_parser would loop."""
    buf = io.StringIO()
    saved = kp.stdout
    kp.stdout = type(saved)(buf)  # kunit_printer.Printer, into BUF: its progress is not ours
    try:
        lines = kp.extract_tap_lines(text.splitlines())
        _guard(lines)
        if not lines:
            return KtapResult(None, (), (NO_OUTPUT,), "kunit_parser")
        test = kp.parse_test(lines, 0, [], False)
        rest = list(iter(lines))
    except _Stalled:
        own = read_ktap(text)
        return KtapResult(own.plan, own.cases, own.problems, "verdict (kunit_parser loops on this input)")
    finally:
        kp.stdout = saved
    problems = [m.group(2) for m in map(ERROR_LINE_RE.search, buf.getvalue().splitlines())
                if m and m.group(2) != MISSING_CASE]
    status_of = {"SUCCESS": Status.PASS, "SKIPPED": Status.SKIP, "FAILURE": Status.FAIL}
    cases = []
    for n, sub in enumerate(test.subtests, 1):
        status = status_of.get(sub.status.name, Status.MISSING if sub.name == "" else Status.FAIL)
        cases.append(Case(n, sub.name.strip(), status))
    extra = sum(1 for line in rest if RESULT_RE.match(line) and not line.startswith((" ", "\t")))
    late_plan = sum(1 for line in rest if PLAN_RE.match(line))
    _plan_problems(problems, test.expected_count, late_plan, extra)
    return KtapResult(test.expected_count, tuple(cases), tuple(problems), "kunit_parser")


def _guard(lines: Any, limit: int = 1000) -> None:
    """Make LINES raise _Stalled after LIMIT peeks without a pop."""
    peek, pop = lines.peek, lines.pop
    stalls = [0]

    def guarded_peek() -> str:
        stalls[0] += 1
        if stalls[0] > limit:
            raise _Stalled()
        return str(peek())

    def guarded_pop() -> str:
        s = str(pop())
        stalls[0] = 0
        return s

    lines.peek, lines.pop = guarded_peek, guarded_pop


def read(text: str, reader: str = "auto") -> KtapResult:
    """READER: kunit (the kernel's parser, which must be there), own, or
    auto (the kernel's when there, else own)."""
    kp = kunit_parser() if reader in ("auto", "kunit") else None
    if reader == "kunit" and kp is None:
        raise FileNotFoundError("no kunit_parser.py in " + ", ".join(map(str, kunit_dirs())))
    return read_ktap_kunit(text, kp) if kp is not None else read_ktap(text)


# --------------------------------------------------------------- verdicts

@dataclass(frozen=True)
class Verdict:
    """One judged thing, as scripts/test counts it: every failure is one
    line of `failures`, and counts once in `failed`."""

    name: str
    passed: int = 0
    skipped: int = 0
    failures: tuple[str, ...] = ()
    detail: str = ""  # which reader, where the output is

    @property
    def failed(self) -> int:
        return len(self.failures)

    def to_json(self) -> str:
        return json.dumps({"name": self.name, "passed": self.passed, "failed": self.failed,
                           "skipped": self.skipped, "failures": list(self.failures),
                           "detail": self.detail})

    @staticmethod
    def from_json(line: str) -> Verdict:
        d = json.loads(line)
        return Verdict(str(d["name"]), int(d["passed"]), int(d["skipped"]),
                       tuple(str(f) for f in d["failures"]), str(d.get("detail", "")))


def read_exit_file(path: Path) -> int | None:
    """A test's saved exit status; None when it never finished."""
    try:
        return int(path.read_text().strip())
    except (OSError, ValueError):
        return None


def judge_ktap(name: str, text: str, exit_status: int | None, where: str = "",
               reader: str = "auto", console: str = "") -> Verdict:
    """NAME's KTAP output TEXT and its exit status (None: it never
    finished) as one verdict."""
    r = read(text, reader)
    see = f"; output in {where}" if where else ""
    fails: list[str] = []
    for c in r.cases:
        if c.status is Status.FAIL:
            fails.append(f"{name}: not ok {c.number} - {c.description}")
        elif c.status is Status.MISSING:
            fails.append(f"{name}: case {c.number} of the plan 1..{r.plan} never reported "
                         f"(the test stopped early or crashed{see})")
    fails += [f"{name}: {p}{see}" for p in r.problems]
    if exit_status is None:
        fails.append(f"{name}: did not finish (no exit status: the guest crashed or hung in it; "
                     f"see {console or 'the console log'})")
    elif exit_status != 0 and not fails:
        fails.append(f"{name}: exited {exit_status} although every case passed{see}")
    return Verdict(name, sum(c.status is Status.PASS for c in r.cases),
                   sum(c.status is Status.SKIP for c in r.cases), tuple(fails),
                   f"{r.reader}: {where}" if where else r.reader)


KERNEL_LOG_PREFIX_RE = re.compile(r"^(?:<\d+>)?\[\s*\d+\.\d+\] ?")
"""A kernel log line's time stamp.  Example: ``[    2.014211] ``"""


def kunit_suite(log: str, suite: str) -> str:
    """The KTAP of one KUnit suite from a kernel log, as a flat document.

    KUnit prints each suite as a subtest (``    # Subtest: NAME``, its plan
    and results indented by four spaces) of a top-level document; the
    suite's own block, dedented, is one KTAP document whose cases are the
    suite's test cases.  Other kernel messages in between are left out; a
    log that ends before the suite's result line (a crash) keeps what was
    printed, so the judge sees the missing cases.  Empty when the log has
    no such suite."""
    lines = [KERNEL_LOG_PREFIX_RE.sub("", ln) for ln in log.splitlines()]
    try:
        start = lines.index(f"    # Subtest: {suite}")
    except ValueError:
        return ""
    done = re.compile(rf"^(?:not )?ok \d+ {re.escape(suite)}$")
    out = ["KTAP version 1"]
    for ln in lines[start + 1:]:
        if done.match(ln):
            break   # the suite's own result line, at the top level
        if not ln.startswith("    ") or ln.startswith("        "):
            continue   # other kernel messages; a case's own subtests
        out.append(ln[4:])
    return "\n".join(out) + "\n"


@dataclass(frozen=True)
class JunitCase:
    """One pytest <testcase> of a --junitxml file."""

    nodeid: str
    status: Status
    message: str = ""
    text: str = ""


def read_junit(path: Path) -> list[JunitCase]:
    """The test cases of a pytest --junitxml file (ET.ParseError or OSError
    when it is unreadable)."""
    root = ET.parse(path).getroot()
    cases = []
    for tc in root.iter("testcase"):
        cls, nm = tc.get("classname", ""), tc.get("name", "")
        nodeid = f"{cls.replace('.', '/')}.py::{nm}" if cls else nm
        status, message, text = Status.PASS, "", ""
        for child in tc:
            if child.tag in ("failure", "error"):
                status, message, text = Status.FAIL, child.get("message", ""), child.text or ""
                break
            if child.tag == "skipped":
                status, message = Status.SKIP, child.get("message", "")
        cases.append(JunitCase(nodeid, status, message, text))
    return cases


def judge_junit(name: str, xml: Path, exit_status: int, log: str = "") -> Verdict:
    """A pytest run from its --junitxml file and its exit status."""
    see = f" (see {log})" if log else ""
    try:
        cases = read_junit(xml)
    except (OSError, ET.ParseError) as e:
        return Verdict(name, failures=(f"{name}: pytest (exit {exit_status}) wrote no readable "
                                       f"--junitxml {xml}: {e}{see}",))
    fails = [f"{name}: {c.nodeid}: {first_line(c.message) or 'failed'}"
             for c in cases if c.status is Status.FAIL]
    if exit_status != 0 and not fails:
        fails.append(f"{name}: pytest exited {exit_status} without a failing test{see}")
    return Verdict(name, sum(c.status is Status.PASS for c in cases),
                   sum(c.status is Status.SKIP for c in cases), tuple(fails), str(xml))


def first_line(s: str, width: int = 200) -> str:
    return s.strip().splitlines()[0][:width] if s.strip() else ""


def judge_run(name: str, exit_status: int, run_dir: str) -> Verdict:
    """A scripts/run that had to bring its traces home: exit 0 (the guest
    script passed) or 1 (analysis findings, judged on their own)."""
    if exit_status in (0, 1):
        return Verdict(name, passed=1)
    why = " (timed out: the guest or the step ran over its bound)" if exit_status == 124 else ""
    return Verdict(name, failures=(f"{name} exited {exit_status}{why} (output: {run_dir})",))


def judge_analysis(name: str, run_dir: Path) -> Verdict:
    """The analysis checks scripts/run recorded in meta.json."""
    try:
        check = json.loads((run_dir / "meta.json").read_text()).get("analysis_check")
    except (OSError, ValueError):
        check = None
    if check is None:
        return Verdict(name, skipped=1, detail="analysis check not run")
    if check == 0:
        return Verdict(name, passed=1)
    return Verdict(name, failures=(f"{name}: the analysis checks found problems "
                                   f"(exit {check}; {run_dir}/*.check.txt)",))


def summary(verdicts: Iterable[Verdict], extra: Sequence[str] = ()) -> tuple[str, list[str]]:
    """The last line of scripts/test and every failure."""
    passed = failed = skipped = 0
    failures: list[str] = []
    for v in verdicts:
        passed, skipped = passed + v.passed, skipped + v.skipped
        failures += v.failures
    failures += extra
    failed = len(failures)
    line = f"{passed} passed, {failed} failed" + (f", {skipped} skipped" if skipped else "")
    return line, failures


# ------------------------------------------------------------- mutations

EXPECT_RE = re.compile(r"^Expect: ([^:]*): (.*)$")
"""A mutation's expectation, e.g. ``Expect: 20-module-fail-sweep: unwinds in reverse``."""

MUTATION_RE = re.compile(r"^Mutation: (.*)$")
"""What a mutation breaks, e.g. ``Mutation: unwind runs forward``."""


def expectations(patch: Path) -> list[tuple[str, str]]:
    """PATCH's Expect lines as (TEST, TEXT); TEST `boot` names a
    tests/boot/test_boot.py test."""
    return [(m.group(1), m.group(2)) for m in
            map(EXPECT_RE.match, patch.read_text(errors="replace").splitlines()) if m]


GUEST_RE = re.compile(r"^Guest: (\S+)$", re.M)
"""A mutation booted with another guest script, e.g. ``Guest: tests/fault-sweep/guest-sweep.sh``."""


def guest_script(patch: Path) -> str | None:
    """PATCH's `Guest:` script (relative to the repository), if any."""
    m = GUEST_RE.search(patch.read_text(errors="replace"))
    return m.group(1) if m else None


def boot_names(patches: Iterable[Path]) -> list[str]:
    """Every `Expect: boot: NAME` of PATCHES, once, sorted."""
    return sorted({text for p in patches for test, text in expectations(p) if test == "boot"})


BOOT_E_RE = re.compile(r"^E\s+(.*)$", re.M)
"""An assertion line of pytest's report, e.g. ``E   AssertionError: order differs``."""


KUNIT_SUITE = "initexit"
"""The series' KUnit suite (kernel/initexit_kunit.c), which runs in every boot."""


def kunit_result(run_dir: Path, case: str) -> str:
    """`pass`, `fail: <its not ok line>` or `cannot run: ...` for the case
    CASE of the KUnit suite in RUN_DIR's kernel log (dmesg.txt, else
    console.log).  A suite that stopped before CASE reported (a crash in
    it) is a failure."""
    log = tap = ""
    for name in ("dmesg.txt", "console.log"):
        try:
            log = (run_dir / name).read_text(errors="replace")
        except OSError:
            continue
        tap = kunit_suite(log, KUNIT_SUITE)
        if tap:
            break
    if not tap:
        return f"cannot run: no KUnit suite '{KUNIT_SUITE}' in {run_dir}/dmesg.txt or console.log"
    case_re = re.compile(rf"^(ok|not ok) \d+ (?:- )?{re.escape(case)}\b.*$", re.M)
    m = case_re.search(tap)
    if m is None:
        plain = "\n".join(KERNEL_LOG_PREFIX_RE.sub("", ln) for ln in log.splitlines())
        ended = re.search(rf"^(?:not )?ok \d+ (?:- )?{re.escape(KUNIT_SUITE)}$", plain, re.M)
        if ended is None and re.search(r"^1\.\.\d+", tap, re.M):
            return f"fail: the suite stopped before {case} reported"
        return f"cannot run: the suite has no case {case}"
    return "pass" if m.group(1) == "ok" else f"fail: {m.group(0).strip()}"


def boot_result(run_dir: Path, xml: Path | None, name: str) -> str:
    """`pass`, `fail: <first assertion line>` or `cannot run: ...` for
    tests/boot/test_boot.py::NAME on RUN_DIR's boot."""
    if not (run_dir / "boot.report.txt").is_file() or (run_dir / "boot.report.txt").stat().st_size == 0:
        return f"cannot run: {run_dir}/boot.report.txt missing (the boot did not bring its trace home)"
    try:
        cases = read_junit(xml) if xml else []
    except (OSError, ET.ParseError):
        return f"cannot run: pytest wrote no readable {xml}"
    for c in cases:
        if c.nodeid.rsplit("::", 1)[-1] != name:
            continue
        if c.status is Status.PASS:
            return "pass"
        if c.status is Status.SKIP:
            return f"cannot run: skipped: {c.message}"
        lines = BOOT_E_RE.findall(c.text)
        best = next((ln for ln in lines if ln.startswith("Left contains")), lines[0] if lines else c.message)
        return f"fail: {best.strip()[:200]}"
    return f"cannot run: pytest did not run {name} (see {xml})"


def judge_mutation(run_dir: Path, tests: Sequence[str], patch: Path | None,
                   boot_xml: Path | None, all_patches: Sequence[Path] = (),
                   reader: str = "auto") -> tuple[bool, list[str]]:
    """The verdict lines of one mutation run (PATCH None: the unmutated
    series, where every in-guest test and every boot test a mutation names
    must pass). True when caught (or, unmutated, when all passed)."""
    ktap = run_dir / "guest" / "ktap"
    console = str(run_dir / "console.log")
    if patch is not None and guest_script(patch):
        # Another guest script ran instead of tests/guest: its tests are
        # the ones the Expect lines name.
        tests = sorted({t for t, _ in expectations(patch) if t not in ("boot", "kunit")})
    verdicts = {}
    for t in tests:
        tap = ktap / f"{t}.tap"
        text = tap.read_text(errors="replace") if tap.is_file() else ""
        verdicts[t] = judge_ktap(t, text, read_exit_file(ktap / f"{t}.exit"), reader=reader, console=console)
    failing = [f for t in tests for f in verdicts[t].failures]
    out: list[str] = []
    if patch is None:
        for name in boot_names(all_patches):
            got = boot_result(run_dir, boot_xml, name)
            if got != "pass":
                failing.append(f"boot: {name}: {got}")
        for case in sorted({text for p in all_patches for t, text in expectations(p) if t == "kunit"}):
            got = kunit_result(run_dir, case)
            if got != "pass":
                failing.append(f"kunit: {case}: {got}")
        out += [f"  {f}" for f in failing]
        return not failing, out
    caught = True
    for test, text in expectations(patch):
        if test in ("boot", "kunit"):
            got = (boot_result(run_dir, boot_xml, text) if test == "boot"
                   else kunit_result(run_dir, text))
            if got.startswith("fail:"):
                out.append(f"  expected {test}: {text} -> caught: {got[len('fail: '):]}")
            else:
                out.append(f"  expected {test}: {text} -> NOT CAUGHT ({got})")
                caught = False
        elif read_exit_file(ktap / f"{test}.exit") is None:
            out.append(f"  expected {test}: {text} -> caught: {test} did not finish")
        elif killed_early(ktap / f"{test}.tap", read_exit_file(ktap / f"{test}.exit")):
            # An oops in a process the test ran kills it (SIGKILL: 137):
            # the kernel died in it, as when it never finished.
            out.append(f"  expected {test}: {text} -> caught: {test} was killed "
                       f"(exit {read_exit_file(ktap / f'{test}.exit')}) before its plan ended")
        elif any(text in f for f in not_ok_lines(ktap / f"{test}.tap")):
            out.append(f"  expected {test}: {text} -> caught")
        else:
            out.append(f"  expected {test}: {text} -> NOT CAUGHT")
            caught = False
    out += [f"  failing: {f}" for f in failing]
    return caught, out


def killed_early(tap: Path, exit_status: int | None) -> bool:
    """A test killed by SIGKILL or SIGSEGV (exit status 137 or 139) before
    every case of its plan reported: what an oops in one of its commands
    does to it (the kernel kills the task it oopsed in)."""
    if exit_status not in (128 + 9, 128 + 11):
        return False
    try:
        text = tap.read_text(errors="replace")
    except OSError:
        return True
    plan = re.search(r"^1\.\.(\d+)", text, re.M)
    reported = len(re.findall(r"^(?:not )?ok \d+", text, re.M))
    return plan is None or reported < int(plan.group(1))


def kselftest_names(run_dir: Path) -> list[str]:
    """The KTAP files of the series' kselftest in RUN_DIR's guest/ktap
    (initramfs/ktap-runner.sh): ``kselftest``, run_kselftest.sh's own
    output, then ``kselftest-NAME`` for each test it ran."""
    ktap = run_dir / "guest" / "ktap"
    return ["kselftest"] + sorted(t.stem for t in ktap.glob("kselftest-*.tap"))


def not_ok_lines(tap: Path) -> list[str]:
    """The `not ok` lines of a saved KTAP output (none when missing)."""
    try:
        text = tap.read_text(errors="replace")
    except OSError:
        return []
    return [ln for ln in text.splitlines() if ln.startswith("not ok")]


# --------------------------------------------------------------- a boot

# A boot's diagnosis counts these kinds of tests/kernel-reports.txt: an
# oops fails the run, a warning is printed (some tests warn on purpose).
OOPS_KINDS = frozenset({"Oops", "KASAN"})
WARNING_KINDS = frozenset({"WARNING"})


# What the debug kernel's tools print when they find something (issue 17):
# one pattern per report kind, searched in a kernel line's message (after
# its printk time stamp, wherever that starts: userspace output can run
# into a console line), except kmemleak's object dumps, which a guest
# script cats from debugfs onto the console. kmemleak's own "N new
# suspected memory leaks" line is not one: the sweeps make kmemleak find
# leaks on purpose (the planted one, stock's known one) and judge its
# objects themselves.
KERNEL_LINE_RE = re.compile(r"\[\s*[0-9]+\.[0-9]+\](\[\s*[TC][0-9]+\])?\s|^[0-9]+,[0-9]+,[0-9]+,[^;]*;")
"""A printk line on a console, e.g. ``[   12.345678] `` (or ``[   12.3][ T42] ``),
or a /dev/kmsg record, e.g. ``4,1234,12345678,-;``."""

REPORTS_FILE = Path(__file__).resolve().parents[2] / "tests" / "kernel-reports.txt"
"""The one list of what counts as a kernel report (kind, where, pattern,
example; TAB-separated), which the guest's fault-sweep reads too."""


@dataclass(frozen=True)
class ReportKind:
    """One row of tests/kernel-reports.txt."""
    kind: str
    whole_line: bool  # matched against the whole line, not the printk message
    pattern: re.Pattern[str]
    example: str


class ReportsFileError(Exception):
    """tests/kernel-reports.txt is unreadable or has a malformed row."""


def load_report_kinds(path: Path = REPORTS_FILE) -> tuple[ReportKind, ...]:
    """The rows of PATH, in order (the first that matches a line wins)."""
    kinds: list[ReportKind] = []
    try:
        text = path.read_text()
    except OSError as e:
        raise ReportsFileError(f"{path}: {e.strerror}") from e
    for n, ln in enumerate(text.splitlines(), 1):
        if not ln.strip() or ln.startswith("#"):
            continue
        cols = ln.split("\t")
        if len(cols) != 4 or cols[1] not in ("message", "line") or not all(cols):
            raise ReportsFileError(f"{path}:{n}: want kind, message|line, pattern, example (TAB-separated): {ln!r}")
        try:
            rx = re.compile(cols[2])
        except re.error as e:
            raise ReportsFileError(f"{path}:{n}: bad pattern {cols[2]!r}: {e}") from e
        kinds.append(ReportKind(cols[0], cols[1] == "line", rx, cols[3]))
    if not kinds:
        raise ReportsFileError(f"{path}: no report kind")
    return tuple(kinds)


_REPORT_KINDS: tuple[ReportKind, ...] = ()


def report_kinds() -> tuple[ReportKind, ...]:
    """tests/kernel-reports.txt's rows, read once."""
    global _REPORT_KINDS
    if not _REPORT_KINDS:
        _REPORT_KINDS = load_report_kinds()
    return _REPORT_KINDS


def report_kind(line: str, all_kernel: bool = False) -> str | None:
    """The kind of report LINE (one console line or /dev/kmsg record)
    starts, by the first row of tests/kernel-reports.txt that matches.
    A line without a printk time stamp is not the kernel's, unless
    ALL_KERNEL (a console that only the kernel writes, without
    CONFIG_PRINTK_TIME: check-configs' bare boots)."""
    m = KERNEL_LINE_RE.search(line)
    text = line[m.end():].lstrip() if m else (line.lstrip() if all_kernel else "")
    for k in report_kinds():
        if k.whole_line:
            if k.pattern.search(line):
                return k.kind
        elif text and k.pattern.search(text):
            return k.kind
    return None


KMSG_RECORD_RE = re.compile(r"^[0-9]+,([0-9]+),[0-9]+,[^;]*;")
"""A /dev/kmsg record's prefix: level, sequence number, time, flags."""


def kernel_reports(console: str, all_kernel: bool = False) -> list[tuple[int, str, str]]:
    """Every report of the kernel's debug tools in a console log or a
    /dev/kmsg capture, as (line number, kind, line): the first line of
    each report only (a splat's own lines, "WARNING: ..." after "BUG:
    ...", count once)."""
    found: list[tuple[int, str, str]] = []
    last = -10
    for n, ln in enumerate(console.splitlines(), 1):
        kind = report_kind(ln, all_kernel)
        if kind is None:
            continue
        if n - last > 3:
            found.append((n, kind, ln.strip()))
        last = n
    return found


def kmsg_problems(text: str, end_marker: str) -> list[str]:
    """A /dev/kmsg capture that is not whole: records lost (a gap in the
    sequence numbers: the reader fell behind the ring buffer) or no
    END_MARKER record (the reader died before the end)."""
    problems: list[str] = []
    prev = None
    lost = 0
    for ln in text.splitlines():
        m = KMSG_RECORD_RE.match(ln)
        if not m:
            continue
        seq = int(m.group(1))
        if prev is not None and seq > prev + 1:
            lost += seq - prev - 1
        prev = seq
    if lost:
        problems.append(f"{lost} record(s) of the kernel log were lost (gaps in /dev/kmsg's sequence numbers)")
    if end_marker and end_marker not in text:
        problems.append(f"the capture stops before its end marker '{end_marker}' (the reader died?)")
    return problems


def judge_reports(name: str, console: Path, end_marker: str = "") -> Verdict:
    """A boot whose console (or /dev/kmsg capture) must hold no report:
    any one fails, quoting the first (its line and the 30 after it); a
    capture that lost records or stops early fails too."""
    try:
        text = console.read_text(errors="replace")
    except OSError as e:
        return Verdict(name, failures=(f"{name}: no console log ({e})",))
    if not text.strip():
        return Verdict(name, failures=(f"{name}: the console log {console} is empty",))
    failures = [f"{name}: {p} ({console})" for p in kmsg_problems(text, end_marker)]
    found = kernel_reports(text)
    if found:
        kinds = sorted({k for _, k, _ in found})
        n0 = found[0][0]
        quote = "\n    ".join(text.splitlines()[n0 - 1:n0 + 30])
        failures.append(f"{name}: {len(found)} report(s) ({', '.join(kinds)}) in {console}; "
                        f"the first, line {n0}:\n    {quote}")
    if failures:
        return Verdict(name, failures=tuple(failures))
    return Verdict(name, passed=1, detail=str(console))


@dataclass(frozen=True)
class Diagnosis:
    """What went wrong in one boot, in order of how much it explains."""

    exit_status: int  # 0: nothing; 124: hang; 125: harness failure
    panicked: bool
    oopses: int
    warnings: int
    problems: tuple[str, ...] = ()
    next_steps: tuple[str, ...] = ()

    def lines(self) -> list[str]:
        """key=value lines for the bash (one problem= or next= per item)."""
        return ([f"exit={self.exit_status}", f"panicked={int(self.panicked)}",
                 f"oopses={self.oopses}", f"warnings={self.warnings}"]
                + [f"problem={p}" for p in self.problems] + [f"next={s}" for s in self.next_steps])


@dataclass
class BootFacts:
    """What the bash knows after a boot: QEMU's exit status and whether the
    host's trace-cmd report of each trace worked (ok, failed, or none: not
    tried because the .dat is missing or empty)."""

    out: Path
    qemu_exit: int
    timeout: int
    boot_report: str = "none"
    boot_initcalls: int = 0
    scenario_report: str = "none"
    extra: list[str] = field(default_factory=list)


def diagnose(f: BootFacts) -> Diagnosis:
    """The run diagnosis of scripts/run (panic, Oops, hang, a missing or
    empty trace, a guest script that did not finish)."""
    try:
        console = (f.out / "console.log").read_text(errors="replace").splitlines()
    except OSError:
        console = []
    problems: list[str] = []
    steps: list[str] = []
    kinds = [report_kind(ln) for ln in console]
    panic = next((ln for ln, k in zip(console, kinds) if k == "panic"), None)
    if panic is not None:
        problems.append(f"the guest kernel panicked: {panic}")
        steps.append(f"read the panic and the trace above it in {f.out}/console.log")
    if f.qemu_exit == 124:
        problems.append(f"the guest did not finish within --timeout {f.timeout} s (hang)")
        steps.append("a longer --timeout; --accel tcg if KVM was used; the last console lines show where it stopped")
    elif f.qemu_exit != 0:
        problems.append(f"qemu-system-x86_64 exited with status {f.qemu_exit}")
        steps.append("re-run the QEMU command printed above by hand")
    if f.boot_report == "none":
        problems.append("no boot trace came back (boot.dat missing or empty)")
        steps.append("check that the guest reached userspace (initexit-guest: lines in console.log) "
                     "and that CONFIG_TRACING is on")
    elif f.boot_report != "ok":
        problems.append("the host's trace-cmd report cannot read boot.dat")
    elif f.boot_initcalls == 0:
        problems.append("boot.dat holds no initcall_start events (empty trace)")
        steps.append("check the trace_event= and trace_clock=global parameters in console.log's command line")
    if f.scenario_report == "failed":
        problems.append("the host's trace-cmd report cannot read scenario.dat")
    elif f.scenario_report == "none" and panic is None and f.qemu_exit == 0:
        problems.append("no scenario trace came back (scenario.dat missing or empty)")
        steps.append("look for trace-cmd record errors in console.log")
    try:
        guest_status = (f.out / "guest-status").read_text().strip()
    except OSError:
        guest_status = ""
    if not guest_status:
        problems.append("the guest script did not finish (no exit status)")
    oopses = sum(1 for k in kinds if k in OOPS_KINDS)
    warnings = sum(1 for k in kinds if k in WARNING_KINDS)
    if oopses:
        problems.append(f"the guest kernel reported {oopses} Oops/BUG line(s): "
                        f"grep -n -E 'Oops|BUG' {f.out}/console.log")
    status = 0
    if problems:
        status = 124 if f.qemu_exit == 124 and panic is None else 125
    return Diagnosis(status, panic is not None, oopses, warnings, tuple(problems), tuple(steps))


# -------------------------------------------------------------------- CLI

def _record(args: argparse.Namespace, v: Verdict) -> int:
    for f in v.failures:
        print(f"[initexit] ERROR: FAIL: {f}", file=sys.stderr)
    if args.record:
        with open(args.record, "a", encoding="utf-8") as fh:
            fh.write(v.to_json() + "\n")
    else:
        print(v.to_json())
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="verdict.py", description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)

    def judged(name: str, help_: str) -> argparse.ArgumentParser:
        s = sub.add_parser(name, help=help_)
        s.add_argument("--name", required=True, help="what the failure lines are called")
        s.add_argument("--record", help="append the verdict (a JSON line) here; default: stdout")
        return s

    s = judged("ktap", "a KTAP output against its plan")
    s.add_argument("tap", type=Path)
    g = s.add_mutually_exclusive_group(required=True)
    g.add_argument("--exit", type=int, dest="exit_status")
    g.add_argument("--exit-file", type=Path, help="the saved exit status (missing: never finished)")
    s.add_argument("--console", default="", help="named when the test did not finish")
    s.add_argument("--reader", choices=("auto", "kunit", "own"), default="auto")
    s = judged("kunit", "one KUnit suite's cases, from a kernel log, against its plan")
    s.add_argument("log", type=Path, help="dmesg or console log of the boot")
    s.add_argument("--suite", required=True)
    s = judged("junit", "a pytest run from its --junitxml file")
    s.add_argument("xml", type=Path)
    s.add_argument("--exit", type=int, dest="exit_status", required=True)
    s.add_argument("--log", default="")
    s = judged("run", "a scripts/run that must bring its traces home (exit 0 or 1)")
    s.add_argument("run_dir")
    s.add_argument("--exit", type=int, dest="exit_status", required=True)
    s = judged("analysis", "the analysis checks of a run (meta.json analysis_check)")
    s.add_argument("run_dir", type=Path)
    s = judged("reports", "a console with no report of the kernel's debug tools (KASAN, lockdep, kmemleak, ...)")
    s.add_argument("console", type=Path)
    s.add_argument("--end-marker", default="", help="a /dev/kmsg capture: this line must be in it, and no record lost")
    s = sub.add_parser("scan", help="print each kernel report of a log (LINE: KIND: text); exit 1 when there is one")
    s.add_argument("log", type=Path)
    s.add_argument("--first", action="store_true", help="only the first")
    s.add_argument("--ignore", action="append", default=[], metavar="KIND",
                   help="not this kind (a bare boot's expected panic)")
    s.add_argument("--all-kernel", action="store_true",
                   help="every line is the kernel's, time stamp or not (a console without CONFIG_PRINTK_TIME)")
    s = sub.add_parser("summary", help="add up the records: failures, then N passed, N failed")
    s.add_argument("record", type=Path)
    s.add_argument("--failure", action="append", default=[], help="one more failure line")
    s = sub.add_parser("boot-names", help="every 'Expect: boot: NAME' of the patches")
    s.add_argument("patches", type=Path, nargs="*")
    s = sub.add_parser("guest-script", help="a mutation's Guest: script (nothing when it has none)")
    s.add_argument("patch", type=Path)
    s = sub.add_parser("mutation", help="one mutation run against its Expect lines")
    s.add_argument("run_dir", type=Path)
    s.add_argument("--tests", type=Path, required=True, help="tests/guest")
    s.add_argument("--patch", type=Path, help="the mutation (none: the unmutated series)")
    s.add_argument("--boot-xml", type=Path, help="pytest --junitxml of the boot tests")
    s.add_argument("--all-patches", type=Path, nargs="*", default=[])
    s = sub.add_parser("diagnose", help="what went wrong in one boot (key=value lines)")
    s.add_argument("out", type=Path)
    s.add_argument("--qemu-exit", type=int, required=True)
    s.add_argument("--timeout", type=int, required=True)
    s.add_argument("--boot-report", choices=("ok", "failed", "none"), required=True)
    s.add_argument("--boot-initcalls", type=int, default=0)
    s.add_argument("--scenario-report", choices=("ok", "failed", "none"), required=True)
    a = p.parse_args(argv)

    try:
        if a.cmd == "ktap":
            text = a.tap.read_text(errors="replace") if a.tap.is_file() else ""
            rc = a.exit_status if a.exit_file is None else read_exit_file(a.exit_file)
            return _record(a, judge_ktap(a.name, text, rc, str(a.tap), a.reader, a.console))
        if a.cmd == "kunit":
            log = a.log.read_text(errors="replace") if a.log.is_file() else ""
            tap = kunit_suite(log, a.suite)
            if not tap:
                return _record(a, Verdict(a.name, 0, 0, (
                    f"{a.name}: no KUnit suite '{a.suite}' in {a.log} (CONFIG_KUNIT and the suite's option?)",), ""))
            return _record(a, judge_ktap(a.name, tap, 0, str(a.log), "auto", str(a.log)))
        if a.cmd == "junit":
            return _record(a, judge_junit(a.name, a.xml, a.exit_status, a.log))
        if a.cmd == "run":
            return _record(a, judge_run(a.name, a.exit_status, a.run_dir))
        if a.cmd == "analysis":
            return _record(a, judge_analysis(a.name, a.run_dir))
        if a.cmd == "reports":
            return _record(a, judge_reports(a.name, a.console, a.end_marker))
        if a.cmd == "scan":
            found = [r for r in kernel_reports(a.log.read_text(errors="replace"), a.all_kernel)
                     if r[1] not in a.ignore]
            for lineno, kind, ln in found[:1] if a.first else found:
                print(f"{lineno}: {kind}: {ln}")
            return 1 if found else 0
        if a.cmd == "summary":
            lines = a.record.read_text().splitlines() if a.record.is_file() else []
            line, failures = summary((Verdict.from_json(ln) for ln in lines if ln.strip()), a.failure)
            if failures:
                print("[initexit] ERROR: failures:", file=sys.stderr)
                for f in failures:
                    print(f"  {f}", file=sys.stderr)
            print(line)
            return 1 if failures else 0
        if a.cmd == "boot-names":
            for n in boot_names(a.patches):
                print(n)
            return 0
        if a.cmd == "guest-script":
            gs = guest_script(a.patch)
            if gs:
                print(gs)
            return 0
        if a.cmd == "mutation":
            tests = sorted(t.stem for t in a.tests.glob("*.sh")) + kselftest_names(a.run_dir)
            ok, lines = judge_mutation(a.run_dir, tests, a.patch, a.boot_xml, a.all_patches)
            for ln in lines:
                print(ln)
            return 0 if ok else 1
        if a.cmd == "diagnose":
            d = diagnose(BootFacts(a.out, a.qemu_exit, a.timeout, a.boot_report,
                                   a.boot_initcalls, a.scenario_report))
            for ln in d.lines():
                print(ln)
            return 0
    except (OSError, FileNotFoundError, ReportsFileError) as e:
        print(f"verdict.py {a.cmd}: {e}", file=sys.stderr)
        return 2
    return 2


if __name__ == "__main__":
    sys.exit(main())

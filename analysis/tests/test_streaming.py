"""The checks as one streaming pass (load.check_input, what the CLI runs)
give the same verdict as the checks over the whole capture (run_checks) on
every fixture, and a large capture is checked within a memory limit that
holding the whole capture exceeds."""

from __future__ import annotations

import glob
import json
import os
import subprocess
import sys

import pytest

from analysis.build import build_capture
from analysis.checks import CheckPass, run_checks
from analysis.declared import read_map, with_declared
from analysis.load import check_input
from analysis.parse import parse_text
from analysis.render_json import dumps, verdict_dict
from analysis.source import InputError, read_input
from analysis.synth import large_trace_lines

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
FIXTURES = os.path.join(HERE, "fixtures")
INPUTS = sorted(p for p in glob.glob(os.path.join(FIXTURES, "*")) + glob.glob(os.path.join(FIXTURES, "captured", "*"))
                + glob.glob(os.path.join(FIXTURES, "kernel-logs", "*"))
                if p.endswith((".txt", ".dmesg", ".log")))


def _map(path: str) -> object:
    side = os.path.splitext(path)[0] + ".expect.json"
    args = json.load(open(side, encoding="utf-8")).get("args", []) if os.path.exists(side) else []
    if "--system-map" in args:
        return read_map(os.path.join(os.path.dirname(path), args[args.index("--system-map") + 1]))
    return None


@pytest.mark.parametrize("path", INPUTS, ids=[os.path.relpath(p, FIXTURES) for p in INPUTS])
def test_streaming_verdict_is_the_whole_capture_verdict(path: str) -> None:
    declared = _map(path)
    try:
        text = read_input(path)
        whole = run_checks(with_declared(build_capture(parse_text(text.text, path)), declared))  # type: ignore[arg-type]
    except InputError:
        with pytest.raises(InputError):
            check_input(path)
        return
    want = dumps(verdict_dict(whole))
    assert dumps(verdict_dict(check_input(path, declared=declared))) == want  # type: ignore[arg-type]
    assert dumps(verdict_dict(check_input(path, declared=declared, render=True))) == want  # type: ignore[arg-type]


def test_a_short_window_checks_each_unit_when_has_exit_says_it_all(monkeypatch: pytest.MonkeyPatch) -> None:
    # Every init carries has_exit=: a unit's verdict needs nothing learnt later.
    path = os.path.join(FIXTURES, "synthetic-module-fail-unwind.txt")
    want = dumps(verdict_dict(check_input(path)))
    monkeypatch.setattr(CheckPass, "WINDOW", 0)
    assert dumps(verdict_dict(check_input(path))) == want


def test_render_keeps_a_limited_number_of_spans(tmp_path: object) -> None:
    path = os.path.join(str(tmp_path), "large.txt")
    with open(path, "w", encoding="utf-8") as f:
        f.writelines(large_trace_lines(20_000))
    v = check_input(path, render=True, limit=1000)
    assert v.ok
    assert v.capture.n_spans > 5000 and len(v.capture.spans) == 1000 + 50
    assert any("show the first 1,000 and the 50 slowest" in n for n in v.notes)
    assert v.counts["calls"] == v.capture.n_spans


#: The address-space limit the child runs under, and a capture that needs
#: more than that when it is held whole (about 580 bytes per event).
LIMIT_MB = 256
EVENTS = 700_000

_CHILD = """
import resource, sys
if sys.argv[1] == "check":
    lim = {limit} * 1024 * 1024
    resource.setrlimit(resource.RLIMIT_AS, (lim, lim))
sys.path.insert(0, {root!r})
from analysis.cli import main
from analysis.load import load_capture
if sys.argv[1] == "check":
    rc = main(["check", "-q", sys.argv[2]])
else:
    load_capture(sys.argv[2])
    rc = 0
print("peak-rss-kib", resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
sys.exit(rc)
"""


@pytest.fixture(scope="module")
def large(tmp_path_factory: pytest.TempPathFactory) -> str:
    path = str(tmp_path_factory.mktemp("large") / "large.txt")
    with open(path, "w", encoding="utf-8") as f:
        f.writelines(large_trace_lines(EVENTS))
    return path


def _child(what: str, path: str) -> tuple[int, int, str]:
    """Run one reading in a child; its exit code, peak RSS (MiB), stderr."""
    code = _CHILD.format(limit=LIMIT_MB, root=ROOT)
    r = subprocess.run([sys.executable, "-c", code, what, path], capture_output=True, text=True,
                       timeout=300, check=False)
    peak = [int(line.split()[1]) // 1024 for line in r.stdout.splitlines() if line.startswith("peak-rss-kib ")]
    return r.returncode, peak[0] if peak else -1, r.stderr[-2000:]


def test_large_capture_is_checked_within_the_memory_limit(large: str) -> None:
    # Under an address-space limit the whole capture does not fit in.
    rc, peak, err = _child("check", large)
    assert rc == 0 and 0 < peak < LIMIT_MB, (rc, peak, err)


def test_the_whole_capture_does_not_fit_in_the_limit(large: str) -> None:
    # The same capture, every event and span kept (as before the streaming
    # pass), without the limit: its peak resident size alone is above the
    # limit.  Without this the test above proves nothing.  (No limit here:
    # a child driven into the limit by holding everything can spend minutes
    # failing allocations, as it once did on CI, instead of raising
    # MemoryError at once.)
    rc, peak, err = _child("whole", large)
    assert rc == 0 and peak > LIMIT_MB, (rc, peak, err)

"""Every fixture (synthetic and captured) against its recorded verdict."""

from __future__ import annotations

import glob
import json
import os

import pytest

from analysis.cli import main
from analysis.parse import parse_text, read_input

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURES = os.path.join(HERE, "fixtures")
CAPTURED = os.path.join(FIXTURES, "captured")
INPUT_EXTS = (".txt", ".dat", ".dmesg", ".log")


def _inputs(folder: str) -> list[str]:
    return sorted(p for p in glob.glob(os.path.join(folder, "*")) if p.endswith(INPUT_EXTS))


def _expect(path: str) -> dict[str, object]:
    side = os.path.splitext(path)[0] + ".expect.json"
    if not os.path.exists(side):
        pytest.fail(f"{path} has no sidecar {os.path.basename(side)}: record its expected verdict")
    with open(side, encoding="utf-8") as f:
        data: dict[str, object] = json.load(f)
    return data


def _args(path: str, expect: dict[str, object]) -> list[str]:
    """The sidecar's ``args`` (e.g. ``--system-map FILE``), files relative
    to the fixture's folder."""
    args = expect.get("args", [])
    assert isinstance(args, list)
    here = os.path.dirname(path)
    return [os.path.join(here, a) if not a.startswith("-") else a for a in map(str, args)]


#: One boot's kernel log in every form the analysis reads (make_kernel_logs.py).
KERNEL_LOGS = os.path.join(FIXTURES, "kernel-logs")

ALL = _inputs(FIXTURES) + _inputs(CAPTURED) + _inputs(KERNEL_LOGS)


@pytest.mark.parametrize("path", ALL, ids=[os.path.relpath(p, FIXTURES) for p in ALL])
def test_fixture_verdict(path: str, capsys: pytest.CaptureFixture[str]) -> None:
    expect = _expect(path)
    status = main(["check", "--quiet", "--format", "json", *_args(path, expect), path])
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    assert status == expect["exit"], err or out
    if status == 2:
        lines = err.strip().splitlines()
        assert len(lines) == 1, err
        assert lines[0].startswith("analysis: error: ")
        assert str(expect["error"]) in lines[0]
        assert out == ""
        return
    verdict = json.loads(out)
    failed = expect["failed"]
    assert isinstance(failed, list)
    assert sorted(verdict["failed_checks"]) == sorted(failed)
    assert verdict["ok"] is (status == 0)
    for check in verdict["checks"]:
        for finding in check["findings"]:
            assert finding["message"]
            # Findings about events quote them with their line numbers.
            for q in finding["quotes"]:
                assert q.startswith("line ")


_NO_CAPTURES: list[object] = [pytest.param("", marks=pytest.mark.skip(
    reason="no real captures yet in fixtures/captured/"))]


@pytest.mark.parametrize("path", list(_inputs(CAPTURED)) or _NO_CAPTURES)
def test_captured_parses_cleanly(path: str) -> None:
    text = read_input(path)
    parsed = parse_text(text.text, text.source)
    assert not parsed.problems, [p.quote() for p in parsed.problems[:5]]
    assert parsed.events


def test_every_check_has_a_breaking_fixture() -> None:
    from analysis.checks import CHECKS

    names = {os.path.basename(p) for p in _inputs(FIXTURES) + _inputs(CAPTURED)}
    for check, _desc in CHECKS:
        assert f"broken-{check}.txt" in names, f"no fixture breaks {check}"


def test_fixtures_are_current() -> None:
    """The committed synthetic fixtures are what make_fixtures.py writes."""
    from analysis.tests.make_fixtures import FIXTURES_SPEC

    for name, (fn, _expect) in FIXTURES_SPEC.items():
        with open(os.path.join(FIXTURES, name + ".txt"), encoding="utf-8", newline="") as f:
            assert f.read() == fn(), f"{name}: rerun python3 -m analysis.tests.make_fixtures"

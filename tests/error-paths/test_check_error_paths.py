"""Tests of scripts/check-error-paths on small C fixtures.

Each fixtures/*.c file says in its header comment what the checker must
report, one `expect: FUNCTION RULE SUBJECT` line per finding (or
`expect: none`); the test compares that list with the checker's findings,
both ways. rule-*.c show a rule firing (most on the shape of a real 6.12
bug); fp-*.c are the false-positive shapes met while triaging the 6.12
report, most next to a twin function that has the bug and must still be
reported. A fixture whose name ends in -impl.c only provides helpers to
the others (the checker reads sibling files of a directory).

Run: /usr/bin/python3 -m pytest -q -p no:cacheprovider tests/error-paths
CHECK_ERROR_PATHS=/path/to/a/copy runs them against another copy of the
checker (how each test was shown to fail: break a rule in a copy).
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
CHECKER = Path(os.environ.get("CHECK_ERROR_PATHS",
                              REPO / "scripts" / "check-error-paths"))
FIXTURES = HERE / "fixtures"
# Where scripts/run keeps its kernel trees.
_CACHE = Path(os.environ.get("INITEXIT_CACHE") or
              Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "initexit")
# The managed trees are git repositories whose first commit, tagged
# initexit-base, is the unpacked tarball: stock's file is that blob even
# in a tree where patches/fixes/ has fixed it (the patched tree is all a
# fresh machine has when this runs: the stock tree is unpacked later).
STOCK_REPOS = (_CACHE / "linux-stock", _CACHE / "linux-patched")


def stock_file(rel: str, dest: Path) -> Path | None:
    """6.12's own REL (initexit-base's blob), written to DEST; None if no tree has it."""
    for repo in STOCK_REPOS:
        res = subprocess.run(["git", "-C", str(repo), "show", f"initexit-base:{rel}"],
                             capture_output=True, check=False)
        if res.returncode == 0:
            dest.write_bytes(res.stdout)
            return dest
    return None

EXPECT_RE = re.compile(r"^\s*\*?\s*expect:\s*(\S+)(?:\s+(\S+)\s+(.+?))?\s*$",
                       re.M)
"""` * expect: proto_fam_init leak fam_a_init()` or ` * expect: none`."""


def load_checker() -> ModuleType:
    loader = importlib.machinery.SourceFileLoader("check_error_paths",
                                                  str(CHECKER))
    spec = importlib.util.spec_from_loader("check_error_paths", loader)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["check_error_paths"] = module
    loader.exec_module(module)
    return module


cep = load_checker()


def expected(path: Path) -> set[tuple[str, str, str]]:
    out: set[tuple[str, str, str]] = set()
    for m in EXPECT_RE.finditer(path.read_text()):
        if m.group(1) == "none":
            continue
        assert m.group(2), f"{path.name}: incomplete expect line {m.group(0)!r}"
        out.add((m.group(1), m.group(2), m.group(3)))
    return out


def reported(path: Path) -> set[tuple[str, str, str]]:
    summary = cep.Summary()
    findings = cep.check_file(str(path), path.read_text(), path.name, summary)
    assert not summary.not_parsed, summary.not_parsed
    return {(f.function, f.rule, f.subject) for f in findings}


FIXTURE_FILES = sorted(p for p in FIXTURES.glob("*.c")
                       if not p.name.endswith("-impl.c"))


def fixture_id(path: Path) -> str:
    return path.stem


@pytest.mark.parametrize("path", FIXTURE_FILES, ids=fixture_id)
def test_fixture(path: Path) -> None:
    want = expected(path)
    assert want or "expect: none" in path.read_text(), \
        f"{path.name} states no expectation"
    got = reported(path)
    assert got - want == set(), f"reported but not expected: {sorted(got - want)}"
    assert want - got == set(), f"expected but not reported: {sorted(want - got)}"


def test_every_rule_has_a_fixture() -> None:
    rules = {rule for p in FIXTURE_FILES for _, rule, _ in expected(p)}
    assert rules == set(cep.RULES)


@pytest.mark.parametrize("undo,do,pair", [
    ("atmsvc_exit", "atmsvc_init", True),
    ("atmsvc_exit", "atmpvc_init", False),
    ("unregister_pernet_subsys", "register_pernet_subsys", True),
    ("unregister_pernet_device", "register_pernet_subsys", False),
    ("kmem_cache_destroy", "kmem_cache_create_usercopy", True),
    ("debugfs_remove_recursive", "debugfs_create_dir", True),
    ("crypto_unregister_shashes", "crypto_register_shash", True),
    ("crypto_unregister_alg", "crypto_register_shash", False),
    ("cpuhp_remove_multi_state", "cpuhp_setup_state_multi", True),
    ("misc_deregister", "misc_register", True),
    ("kfree", "kzalloc", True),
    ("release_region", "request_muxed_region", True),
    ("mdesc_release", "mdesc_grab", True),
    ("nand_cleanup", "nand_create_bbt", False),
    ("null_destroy_dev", "null_setup_fault", False),
])
def test_names_pair(undo: str, do: str, pair: bool) -> None:
    assert cep.names_pair(undo, do) is pair


def run(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(CHECKER), *args], input=stdin,
                          capture_output=True, text=True, check=False)


def test_help() -> None:
    res = run("--help")
    assert res.returncode == 0
    for rule in cep.RULES:
        assert rule in res.stdout


def test_usage_error() -> None:
    res = run()
    assert res.returncode == 2
    assert "usage" in res.stderr


def test_exit_status_and_text_report() -> None:
    res = run("--root", str(FIXTURES), str(FIXTURES / "rule-double-undo.c"))
    assert res.returncode == 1
    assert "rule-double-undo.c:" in res.stdout
    assert "proto_fam_init: double-undo: fam_b_exit()" in res.stdout
    assert "path: out_fam_b_exit -> out_fam_a_exit -> out_unregister_proto" \
        in res.stdout
    assert "# findings: 4 in 1 files" in res.stdout
    clean = run(str(FIXTURES / "fp-return-zero.c"))
    assert clean.returncode == 0, clean.stdout


def test_json_and_files_from() -> None:
    listing = "\n".join(str(p) for p in FIXTURE_FILES[:3]) + "\n"
    res = run("--format", "json", "--files-from", "-", stdin=listing)
    data = json.loads(res.stdout)
    assert data["summary"]["files_scanned"] == 3
    for f in data["findings"]:
        assert f["points"] and f["points"][0]["path"]
        assert f["rule"] in cep.RULES


def test_rule_filter() -> None:
    res = run("--format", "json", "--rule", "leak",
              str(FIXTURES / "rule-double-undo.c"))
    rules = {f["rule"] for f in json.loads(res.stdout)["findings"]}
    assert rules == {"leak"}


def test_stock_atm_init(tmp_path: Path) -> None:
    """The known 6.12.118 bug: out_atmpvc_exit: calls atmsvc_exit()."""
    path = stock_file("net/atm/common.c", tmp_path / "common.c")
    if path is None:
        pytest.skip(f"no managed kernel tree with initexit-base in {_CACHE} (scripts/run makes one)")
    got = reported(path)
    assert ("atm_init", "double-undo", "atmsvc_exit()") in got
    assert ("atm_init", "leak", "atmpvc_init()") in got
    assert ("atm_init", "undo-not-done", "atmsvc_exit()") in got
    assert ("atm_init", "wrong-label", "out_atmpvc_exit") in got

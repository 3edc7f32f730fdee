"""The analysis installs from pyproject.toml without network (Debian's pip
and setuptools, ``--no-build-isolation --no-index``) and the installed
``initexit-analyze`` is the command line of ``python3 -m analysis``.

The install runs in a temporary directory from a copy of pyproject.toml and
the package (an in-tree build would leave build/ and *.egg-info/ in the
checkout): into a venv that sees the system's packages, or, when this
Python cannot make one, into a ``--target`` directory.  It skips only when
this Python has no pip, setuptools or wheel (Debian: python3-pip, which
brings python3-setuptools and python3-wheel; scripts/test installs them).
"""

from __future__ import annotations

import glob
import importlib.util
import os
import shutil
import subprocess
import sys
import tomllib
from typing import Optional

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
FIXTURE = os.path.join(HERE, "fixtures", "kernel-logs", "journalctl-short.log")
MISSING = [m for m in ("pip", "setuptools", "wheel") if importlib.util.find_spec(m) is None]

pytestmark = pytest.mark.skipif(
    bool(MISSING), reason=f"{sys.executable} has no {', '.join(MISSING)} (Debian: python3-pip, "
                          "python3-setuptools, python3-wheel)")


def _run(cmd: list[str], env: Optional[dict[str, str]] = None, cwd: Optional[str] = None,
         timeout: int = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cmd, env=env, cwd=cwd, capture_output=True, text=True, timeout=timeout)


def _copy_source(dst: str) -> None:
    os.makedirs(os.path.join(dst, "analysis"))
    shutil.copy(os.path.join(ROOT, "pyproject.toml"), dst)
    for f in glob.glob(os.path.join(ROOT, "analysis", "*.py")) + [os.path.join(ROOT, "analysis", "README.md")]:
        shutil.copy(f, os.path.join(dst, "analysis"))


@pytest.fixture(scope="module", params=["venv", "target"])
def installed(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> tuple[str, dict[str, str]]:
    """(the installed initexit-analyze, the environment to run it in), by
    ``pip install`` into a venv that sees the system's packages, and into a
    ``--target`` directory."""
    tmp = str(tmp_path_factory.mktemp("install"))
    src = os.path.join(tmp, "src")
    _copy_source(src)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL")}
    env["PIP_NO_INDEX"] = "1"  # no network, whatever pip.conf says
    pip = ["-m", "pip", "install", "--no-build-isolation", "--no-index", "--disable-pip-version-check", "-q"]
    if request.param == "venv":
        venv = os.path.join(tmp, "venv")
        made = _run([sys.executable, "-m", "venv", "--without-pip", "--system-site-packages", venv], env=env)
        if made.returncode != 0:
            pytest.skip(f"{sys.executable} -m venv failed (Debian: python3-venv): {made.stderr.strip()[-200:]}")
        python = os.path.join(venv, "bin", "python")
        done = _run([python, *pip, src], env=env, cwd=tmp)
        assert done.returncode == 0, done.stderr
        return os.path.join(venv, "bin", "initexit-analyze"), {**env, "INSTALLED_PYTHON": python}
    target = os.path.join(tmp, "target")
    done = _run([sys.executable, *pip, "--target", target, src], env=env, cwd=tmp)
    assert done.returncode == 0, done.stderr
    return os.path.join(target, "bin", "initexit-analyze"), {**env, "PYTHONPATH": target,
                                                             "INSTALLED_PYTHON": sys.executable}


def test_initexit_analyze_help_is_the_module_clis(installed: tuple[str, dict[str, str]], tmp_path: object) -> None:
    prog, env = installed
    got = _run([prog, "--help"], env=env, cwd=str(tmp_path))
    assert got.returncode == 0, got.stderr
    assert got.stdout.startswith("usage: initexit-analyze ")
    want = _run([sys.executable, "-m", "analysis", "--help"], cwd=ROOT)
    assert want.returncode == 0, want.stderr
    assert want.stdout.startswith("usage: python3 -m analysis ")
    # The same command line: only the program's name differs.
    assert got.stdout.replace("initexit-analyze", "python3 -m analysis") == want.stdout


def test_initexit_analyze_runs_the_installed_package(installed: tuple[str, dict[str, str]], tmp_path: object) -> None:
    prog, env = installed
    # Outside the checkout: the installed package, not the working tree.
    where = _run([env["INSTALLED_PYTHON"], "-c", "import analysis, sys; sys.stdout.write(analysis.__file__)"],
                 env=env, cwd=str(tmp_path))
    assert where.returncode == 0, where.stderr
    assert not where.stdout.startswith(ROOT + os.sep), where.stdout
    got = _run([prog, "check", "-q", FIXTURE], env=env, cwd=str(tmp_path))
    assert got.returncode == 0, got.stderr
    assert "Verdict: OK" in got.stdout
    bad = _run([prog, "check", "-q", os.path.join(HERE, "fixtures", "bad-garbage.txt")], env=env, cwd=str(tmp_path))
    assert bad.returncode == 2 and bad.stdout == ""
    assert bad.stderr.startswith("analysis: error: line 1: neither") and bad.stderr.count("\n") == 1


def test_the_package_needs_nothing_outside_the_standard_library() -> None:
    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as f:
        project = tomllib.load(f)["project"]
    assert project["dependencies"] == []
    assert project["scripts"] == {"initexit-analyze": "analysis.cli:console_script"}

"""The analysis installs with a plain ``pip install .`` and no network, and
the installed ``initexit-analyze`` is the command line of ``python3 -m
analysis``.

pyproject.toml's build backend is build_backend/initexit_build.py, in the
repository, with ``requires = []``: pip's isolated build has nothing to
download.  The tests install the checkout itself, as a user would, with pip
told to use no index (``--no-index``, ``PIP_NO_INDEX=1``, no pip.conf, no
find-links): into a venv made by ``python3 -m venv`` (what a Debian user
types: Debian's pip refuses ``pip install .`` and ``pip install --user .``
outside a venv, "externally-managed-environment") and into a ``--target``
directory.  The wheel pip builds is opened and every RECORD line checked
against the bytes.

A Python that cannot make a venv with pip (Debian: python3-venv missing;
scripts/test installs it) skips the venv cases with that said.
"""

from __future__ import annotations

import base64
import csv
import glob
import hashlib
import importlib.util
import io
import os
import shutil
import subprocess
import sys
import tarfile
import tomllib
import types
import zipfile
from typing import Optional

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
FIXTURE = os.path.join(HERE, "fixtures", "kernel-logs", "journalctl-short.log")
BACKEND = os.path.join(ROOT, "build_backend", "initexit_build.py")
PIP_MISSING = importlib.util.find_spec("pip") is None


def _env() -> dict[str, str]:
    """This environment without network for pip: no index, no find-links, no
    pip.conf, no PYTHONPATH into the checkout."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("PIP_") and k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env.update(PIP_NO_INDEX="1", PIP_CONFIG_FILE=os.devnull, PIP_DISABLE_PIP_VERSION_CHECK="1")
    return env


def _run(cmd: list[str], env: Optional[dict[str, str]] = None, cwd: Optional[str] = None,
         timeout: int = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cmd, env=env, cwd=cwd, capture_output=True, text=True, timeout=timeout)


def _venv(where: str) -> str:
    """A venv with pip at ``where``, its python; skips, naming the Debian
    package, where this Python cannot make one."""
    made = _run([sys.executable, "-m", "venv", where], env=_env())
    python = os.path.join(where, "bin", "python")
    if made.returncode != 0 or not os.path.exists(os.path.join(where, "bin", "pip")):
        pytest.skip(f"{sys.executable} -m venv cannot make a venv with pip (Debian: apt-get install "
                    f"python3-venv; scripts/test installs it): {made.stderr.strip()[-200:]}")
    return python


def _backend() -> types.ModuleType:
    spec = importlib.util.spec_from_file_location("initexit_build", BACKEND)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _tracked_and_untracked() -> str:
    got = _run(["git", "-C", ROOT, "status", "--porcelain", "--ignored", "--untracked-files=all"])
    if got.returncode != 0:
        pytest.skip(f"{ROOT} is not a git checkout: {got.stderr.strip()}")
    # __pycache__ (pip imports the backend from the checkout) is ignored and harmless.
    return "\n".join(line for line in got.stdout.splitlines() if "__pycache__" not in line)


@pytest.fixture(scope="module", params=["venv", "target"])
def installed(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> tuple[str, dict[str, str]]:
    """(the installed initexit-analyze, the environment to run it in), by a
    plain ``pip install CHECKOUT`` without network: in a venv, and with
    this Python's pip into a ``--target`` directory."""
    tmp = str(tmp_path_factory.mktemp("install"))
    env = _env()
    before = _tracked_and_untracked()
    if request.param == "venv":
        python = _venv(os.path.join(tmp, "venv"))
        done = _run([os.path.join(tmp, "venv", "bin", "pip"), "install", ROOT], env=env, cwd=tmp)
        assert done.returncode == 0, done.stdout + done.stderr
        prog, env = os.path.join(tmp, "venv", "bin", "initexit-analyze"), {**env, "INSTALLED_PYTHON": python}
    else:
        if PIP_MISSING:
            pytest.skip(f"{sys.executable} has no pip (Debian: apt-get install python3-pip; scripts/test installs it)")
        target = os.path.join(tmp, "target")
        done = _run([sys.executable, "-m", "pip", "install", "--target", target, ROOT], env=env, cwd=tmp)
        assert done.returncode == 0, done.stdout + done.stderr
        prog, env = os.path.join(target, "bin", "initexit-analyze"), {**env, "PYTHONPATH": target,
                                                                      "INSTALLED_PYTHON": sys.executable}
    # Nothing written into the checkout (setuptools left build/ and *.egg-info/).
    assert _tracked_and_untracked() == before
    return prog, env


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
    want = _run([sys.executable, "-m", "analysis", "check", "-q", FIXTURE], cwd=ROOT)
    assert got.stdout == want.stdout
    bad = _run([prog, "check", "-q", os.path.join(HERE, "fixtures", "bad-garbage.txt")], env=env, cwd=str(tmp_path))
    assert bad.returncode == 2 and bad.stdout == ""
    assert bad.stderr.startswith("analysis: error: line 1: neither") and bad.stderr.count("\n") == 1


def _record_rows(record: bytes) -> list[list[str]]:
    return list(csv.reader(io.StringIO(record.decode("utf-8"))))


def _hash(data: bytes) -> str:
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def test_the_wheel_pip_builds_has_a_true_record(tmp_path: object) -> None:
    """``pip wheel`` of the checkout, offline: the wheel holds the package's
    ``*.py`` and a .dist-info; RECORD lists every file once with its sha256
    (urlsafe base64, no padding) and size, and itself without either."""
    python = _venv(os.path.join(str(tmp_path), "venv"))
    out = os.path.join(str(tmp_path), "wheels")
    done = _run([python, "-m", "pip", "wheel", "--no-deps", "-w", out, ROOT], env=_env(), cwd=str(tmp_path))
    assert done.returncode == 0, done.stdout + done.stderr
    [wheel] = glob.glob(os.path.join(out, "*.whl"))
    assert os.path.basename(wheel) == "initexit_analysis-0.1.0-py3-none-any.whl"
    with zipfile.ZipFile(wheel) as whl:
        names = whl.namelist()
        data = {n: whl.read(n) for n in names}
    info = "initexit_analysis-0.1.0.dist-info"
    package = sorted(f"analysis/{os.path.basename(p)}" for p in glob.glob(os.path.join(ROOT, "analysis", "*.py")))
    assert sorted(n for n in names if not n.startswith(info + "/")) == package
    assert sorted(n for n in names if n.startswith(info + "/")) == [
        f"{info}/{n}" for n in ("METADATA", "RECORD", "WHEEL", "entry_points.txt")]
    for rel in package:
        with open(os.path.join(ROOT, rel), "rb") as f:
            assert data[rel] == f.read(), rel
    rows = _record_rows(data[f"{info}/RECORD"])
    assert sorted(r[0] for r in rows) == sorted(names)  # every file, once
    for path, digest, size in rows:
        if path == f"{info}/RECORD":
            assert (digest, size) == ("", "")
        else:
            assert digest == _hash(data[path]), path
            assert size == str(len(data[path])), path
    assert data[f"{info}/entry_points.txt"].decode() == \
        "[console_scripts]\ninitexit-analyze = analysis.cli:console_script\n"
    meta = data[f"{info}/METADATA"].decode()
    assert meta.startswith("Metadata-Version: 2.1\nName: initexit-analysis\nVersion: 0.1.0\n")
    assert "Requires-Python: >=3.11\n" in meta and "Requires-Dist" not in meta
    assert "Root-Is-Purelib: true\nTag: py3-none-any\n" in data[f"{info}/WHEEL"].decode()


def test_the_sdist_builds_the_same_wheel(tmp_path: object) -> None:
    """The sdist holds what a wheel needs: the wheel built from the unpacked
    sdist is the checkout's wheel, byte for byte (fixed stamps)."""
    tmp = str(tmp_path)
    script = ("import sys; sys.path.insert(0, 'build_backend'); import initexit_build as b; "
              "print(b.{hook}(sys.argv[1]))")
    sdist = _run([sys.executable, "-c", script.format(hook="build_sdist"), tmp], cwd=ROOT, env=_env())
    assert sdist.returncode == 0, sdist.stderr
    name = sdist.stdout.strip()
    assert name == "initexit_analysis-0.1.0.tar.gz"
    with tarfile.open(os.path.join(tmp, name)) as tar:
        members = sorted(m.name for m in tar.getmembers())
        for m in tar.getmembers():  # regular files under one folder only (3.11.2 has no extraction filter)
            assert m.isfile() and not os.path.isabs(m.name) and ".." not in m.name.split("/"), m.name
            f = tar.extractfile(m)
            assert f is not None
            os.makedirs(os.path.dirname(os.path.join(tmp, m.name)), exist_ok=True)
            with open(os.path.join(tmp, m.name), "wb") as dst:
                dst.write(f.read())
    base = "initexit_analysis-0.1.0/"
    assert f"{base}pyproject.toml" in members and f"{base}build_backend/initexit_build.py" in members
    assert f"{base}PKG-INFO" in members and f"{base}analysis/cli.py" in members
    assert not [m for m in members if "/tests/" in m]
    wheels: list[bytes] = []
    for where in (ROOT, os.path.join(tmp, base)):
        into = os.path.join(tmp, f"w{len(wheels)}")
        os.makedirs(into)
        got = _run([sys.executable, "-c", script.format(hook="build_wheel"), into], cwd=where, env=_env())
        assert got.returncode == 0, got.stderr
        with open(os.path.join(into, got.stdout.strip()), "rb") as f:
            wheels.append(f.read())
    assert wheels[0] == wheels[1]


@pytest.mark.parametrize("edit, message", [
    (lambda t: t.replace('dynamic = ["version"]\n', ""), "[project] dynamic must be"),
    (lambda t: t.replace('package = "analysis"', 'package = "nowhere"'), "is not a folder"),
    (lambda t: t.replace("dependencies = []", 'dependencies = ["requests"]'), "dependencies"),
    (lambda t: t.replace("[project", "[projekt"), "no [project] table"),
    (lambda t: t + "[oops", "cannot read"),
])
def test_a_pyproject_the_backend_cannot_read_is_one_line(tmp_path: object, edit: object, message: str) -> None:
    tmp = str(tmp_path)
    with open(os.path.join(ROOT, "pyproject.toml"), encoding="utf-8") as f:
        text = f.read()
    assert callable(edit)
    with open(os.path.join(tmp, "pyproject.toml"), "w", encoding="utf-8") as f:
        f.write(edit(text))
    shutil.copytree(os.path.join(ROOT, "analysis"), os.path.join(tmp, "analysis"),
                    ignore=shutil.ignore_patterns("tests", "__pycache__"))
    backend = _backend()
    with pytest.raises(backend.BuildError) as e:
        backend.Project(tmp).package_files()
    assert message in str(e.value) and "\n" not in str(e.value)


def test_the_package_needs_nothing_outside_the_standard_library() -> None:
    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as f:
        data = tomllib.load(f)
    assert data["project"]["dependencies"] == []
    assert data["project"]["scripts"] == {"initexit-analyze": "analysis.cli:console_script"}
    # Nothing to build it with either: pip's isolated build downloads nothing.
    assert data["build-system"]["requires"] == []

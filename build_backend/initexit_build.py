"""The PEP 517 build backend of pyproject.toml: the analysis as a wheel (and
an sdist), with the standard library alone, so that ``pip install .``
needs no network (pip's isolated build installs ``requires = []``: nothing).

What it packs is what pyproject.toml says: ``[project]``'s name, version
(``__version__`` of the package's ``__init__.py``, read, not imported),
description, readme, requires-python and console scripts; the files are
the ``*.py`` of ``[tool.initexit-build] package``: the package alone, its
tests and fixtures stay in the checkout.  Nothing is written into the
checkout.  A pyproject.toml this backend cannot read stops the build with
one line naming the key.

The wheel follows the binary distribution format (PyPA spec): a
``NAME-VERSION.dist-info`` with METADATA (core metadata 2.1), WHEEL,
entry_points.txt and RECORD (``path,sha256=<urlsafe base64, no padding>,size``;
RECORD's own line has neither).  Stamps are fixed (SOURCE_DATE_EPOCH if
set), so a wheel built twice is the same bytes.
"""

from __future__ import annotations

import ast
import base64
import csv
import hashlib
import io
import os
import re
import tarfile
import time
import tomllib
import zipfile
from typing import Any, Iterator, Optional

__all__ = [
    "build_sdist",
    "build_wheel",
    "get_requires_for_build_sdist",
    "get_requires_for_build_wheel",
    "prepare_metadata_for_build_wheel",
]

#: The checkout: pip runs the backend with the project's root as its
#: working directory (PEP 517); this file's folder's parent is the same.
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

#: The oldest stamp a zip file can hold (1980-01-01).
ZIP_EPOCH = 315532800


class BuildError(Exception):
    """pyproject.toml or the package cannot be built; the message is one line."""


class Project:
    """What pyproject.toml and the package's ``__init__.py`` say."""

    def __init__(self, root: str = ROOT) -> None:
        self.root = root
        path = os.path.join(root, "pyproject.toml")
        try:
            with open(path, "rb") as f:
                data = tomllib.load(f)
        except (OSError, tomllib.TOMLDecodeError) as e:
            raise BuildError(f"{path}: cannot read: {e}") from None
        project = data.get("project")
        if not isinstance(project, dict):
            raise BuildError(f"{path}: no [project] table")
        self.name = _string(project, "name", path)
        own = data.get("tool", {}).get("initexit-build", {})
        self.package = _string(own, "package", path, "[tool.initexit-build] ")
        self.description = _string(project, "description", path)
        self.requires_python = _string(project, "requires-python", path)
        self.readme = _string(project, "readme", path)
        if project.get("dependencies", []) != []:
            raise BuildError(f"{path}: [project] dependencies: this backend writes none, so it takes none")
        scripts = project.get("scripts", {})
        if not isinstance(scripts, dict) or not all(isinstance(v, str) for v in scripts.values()):
            raise BuildError(f"{path}: [project.scripts]: NAME = \"module:function\" lines expected")
        self.scripts: dict[str, str] = dict(scripts)
        if project.get("dynamic") != ["version"]:
            raise BuildError(f"{path}: [project] dynamic must be [\"version\"] (read from {self.package}/__init__.py)")
        if not os.path.isdir(os.path.join(root, self.package)):
            raise BuildError(f"{path}: [tool.initexit-build] package {self.package!r} is not a folder beside it")
        self.version = _version(os.path.join(root, self.package, "__init__.py"))
        # PEP 427 / binary distribution format: the name with runs of
        # -_. as one underscore.
        self.dist = re.sub(r"[-_.]+", "_", self.name)

    @property
    def dist_info(self) -> str:
        return f"{self.dist}-{self.version}.dist-info"

    @property
    def wheel_name(self) -> str:
        return f"{self.dist}-{self.version}-py3-none-any.whl"

    def package_files(self) -> list[str]:
        """The package's ``*.py``, relative to the root, sorted."""
        folder = os.path.join(self.root, self.package)
        return sorted(f"{self.package}/{n}" for n in os.listdir(folder) if n.endswith(".py"))

    def metadata(self) -> bytes:
        """METADATA (core metadata 2.1), the readme as its body."""
        readme = os.path.join(self.root, self.readme)
        try:
            with open(readme, encoding="utf-8") as f:
                body = f.read()
        except OSError as e:
            raise BuildError(f"{readme}: [project] readme: cannot read: {e.strerror}") from None
        head = [
            "Metadata-Version: 2.1",
            f"Name: {self.name}",
            f"Version: {self.version}",
            f"Summary: {self.description}",
            f"Requires-Python: {self.requires_python}",
            "Description-Content-Type: text/markdown",
        ]
        return ("\n".join(head) + "\n\n" + body).encode("utf-8")

    def dist_info_files(self) -> list[tuple[str, bytes]]:
        """(name, bytes) of the .dist-info's files but RECORD."""
        wheel = (
            "Wheel-Version: 1.0\n"
            "Generator: initexit_build\n"
            "Root-Is-Purelib: true\n"
            "Tag: py3-none-any\n"
        ).encode()
        files = [("METADATA", self.metadata()), ("WHEEL", wheel)]
        if self.scripts:
            lines = ["[console_scripts]"] + [f"{k} = {v}" for k, v in sorted(self.scripts.items())]
            files.append(("entry_points.txt", ("\n".join(lines) + "\n").encode()))
        return files


def _string(table: dict[str, Any], key: str, path: str, where: str = "[project] ") -> str:
    value = table.get(key)
    if not isinstance(value, str) or not value:
        raise BuildError(f"{path}: {where}{key}: a non-empty string expected")
    return value


def _version(init: str) -> str:
    """``__version__ = "X"`` of the package's ``__init__.py``, read with ast."""
    try:
        with open(init, encoding="utf-8") as f:
            tree = ast.parse(f.read(), init)
    except (OSError, SyntaxError) as e:
        raise BuildError(f"{init}: cannot read __version__: {e}") from None
    for node in tree.body:
        if (isinstance(node, ast.Assign) and len(node.targets) == 1
                and isinstance(node.targets[0], ast.Name) and node.targets[0].id == "__version__"
                and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)):
            return node.value.value
    raise BuildError(f"{init}: no __version__ = \"X.Y.Z\" line")


def record_hash(data: bytes) -> str:
    """RECORD's hash field: ``sha256=`` and the urlsafe base64 digest without ``=``."""
    digest = hashlib.sha256(data).digest()
    return "sha256=" + base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")


def _epoch() -> int:
    value = os.environ.get("SOURCE_DATE_EPOCH", str(ZIP_EPOCH))
    if not value.isdigit():
        raise BuildError(f"SOURCE_DATE_EPOCH={value!r}: seconds since 1970 expected")
    return max(int(value), ZIP_EPOCH)


def _stamp() -> tuple[int, int, int, int, int, int]:
    t = time.gmtime(_epoch())
    return (t.tm_year, t.tm_mon, t.tm_mday, t.tm_hour, t.tm_min, t.tm_sec)


def _wheel_entries(project: Project) -> Iterator[tuple[str, bytes]]:
    for rel in project.package_files():
        with open(os.path.join(project.root, rel), "rb") as f:
            yield rel, f.read()
    for name, data in project.dist_info_files():
        yield f"{project.dist_info}/{name}", data


def _write_wheel(project: Project, directory: str) -> str:
    path = os.path.join(directory, project.wheel_name)
    record = io.StringIO()
    rows = csv.writer(record, lineterminator="\n")
    stamp = _stamp()
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as whl:
        for name, data in _wheel_entries(project):
            info = zipfile.ZipInfo(name, stamp)
            info.external_attr = 0o644 << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            whl.writestr(info, data)
            rows.writerow([name, record_hash(data), len(data)])
        record_name = f"{project.dist_info}/RECORD"
        rows.writerow([record_name, "", ""])
        info = zipfile.ZipInfo(record_name, stamp)
        info.external_attr = 0o644 << 16
        info.compress_type = zipfile.ZIP_DEFLATED
        whl.writestr(info, record.getvalue().encode())
    return project.wheel_name


# -- PEP 517 hooks --------------------------------------------------------


def get_requires_for_build_wheel(config_settings: Optional[dict[str, Any]] = None) -> list[str]:
    return []


def get_requires_for_build_sdist(config_settings: Optional[dict[str, Any]] = None) -> list[str]:
    return []


def prepare_metadata_for_build_wheel(metadata_directory: str,
                                     config_settings: Optional[dict[str, Any]] = None) -> str:
    project = Project()
    folder = os.path.join(metadata_directory, project.dist_info)
    os.makedirs(folder, exist_ok=True)
    for name, data in project.dist_info_files():
        with open(os.path.join(folder, name), "wb") as f:
            f.write(data)
    return project.dist_info


def build_wheel(wheel_directory: str, config_settings: Optional[dict[str, Any]] = None,
                metadata_directory: Optional[str] = None) -> str:
    # The metadata pip prepared is what this build writes again: one source.
    return _write_wheel(Project(), wheel_directory)


def build_sdist(sdist_directory: str, config_settings: Optional[dict[str, Any]] = None) -> str:
    """NAME-VERSION.tar.gz: pyproject.toml, this backend, the readme, the
    package's ``*.py`` and PKG-INFO (the wheel's METADATA)."""
    project = Project()
    base = f"{project.dist}-{project.version}"
    files = ["pyproject.toml", "build_backend/initexit_build.py", project.readme, *project.package_files()]
    mtime = _epoch()
    name = f"{base}.tar.gz"

    def add(tar: tarfile.TarFile, arcname: str, data: bytes) -> None:
        info = tarfile.TarInfo(f"{base}/{arcname}")
        info.size, info.mtime, info.mode = len(data), mtime, 0o644
        tar.addfile(info, io.BytesIO(data))

    with tarfile.open(os.path.join(sdist_directory, name), "w:gz", format=tarfile.PAX_FORMAT) as tar:
        for rel in sorted(set(files)):
            with open(os.path.join(project.root, rel), "rb") as f:
                add(tar, rel, f.read())
        add(tar, "PKG-INFO", project.metadata())
    return name

"""tracepoints/README.md embeds tracepoints/formats/ exactly (no drift), and
the two format comparisons fail on drifted copies (host only, no guest).

The comparisons under test are the ones the real tests use:
bootcheck.check_formats() (test_boot.py, guest files against
tracepoints/formats/) and update-reference.py's stale() (run by
``update-reference.py --check``, page against tracepoints/formats/).
"""

from __future__ import annotations

import importlib.util
import pathlib
import re
import shutil
import subprocess
import sys
from types import ModuleType

import pytest

import bootcheck

ROOT = pathlib.Path(__file__).resolve().parents[2]
FORMATS = ROOT / "tracepoints" / "formats"
README = ROOT / "tracepoints" / "README.md"


def update_reference() -> ModuleType:
    """tracepoints/update-reference.py as a module (its name has a dash)."""
    spec = importlib.util.spec_from_file_location("update_reference", ROOT / "tracepoints" / "update-reference.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_reference_page_embeds_the_format_files() -> None:
    page = README.read_text()
    formats = sorted(FORMATS.glob("*.format"))
    assert [f.stem for f in formats] == [
        "initexit_exit_finish",
        "initexit_exit_start",
        "initexit_init_finish",
        "initexit_init_start",
        "initexit_unwind",
    ]
    for f in formats:
        assert f.read_text().rstrip() in page, f"{f.name} is not in tracepoints/README.md"
    assert update_reference().stale(page, FORMATS) == []
    r = subprocess.run([sys.executable, str(ROOT / "tracepoints" / "update-reference.py"), "--check"])
    assert r.returncode == 0


def test_band_table_matches_the_series() -> None:
    # analysis/model.py's BANDS (which the analysis and bootcheck use) is the
    # series' INITCALL_PRIO_* table, read from the patch that defines it.
    sys.path.insert(0, str(ROOT))
    from analysis.model import BANDS

    text = "".join(p.read_text() for p in sorted((ROOT / "patches").glob("0*.patch")))
    defined = {m.group(1).lower(): int(m.group(2))
               for m in re.finditer(r"^\+#define INITCALL_PRIO_(\w+)\s+\(?(-?\d+)\)?$", text, re.M)}
    assert len(defined) == 16
    assert defined == dict(BANDS)


def test_builtin_pairs_match_the_series() -> None:
    # bootcheck.BUILTIN_PAIRS and ENTRIES (from which the boot checks derive
    # every expected idx, prio, func and entry) are what the lib test
    # objects patch declares, in lib/Makefile's link order.
    text = "".join(p.read_text() for p in sorted((ROOT / "patches").glob("[0-9]*-lib-add-boot-tests-*.patch")))
    consts = {f"INITCALL_PRIO_{name.upper()}": prio for name, prio in bootcheck.BAND_PRIO.items()}

    def value(expr: str) -> int:
        m = re.fullmatch(r"(\w+)(?: ([+-]) (\d+))?", expr.strip())
        if m is None or m.group(1) not in consts:
            return int(expr)
        return consts[m.group(1)] + (int(m.group(3)) * (1 if m.group(2) == "+" else -1) if m.group(2) else 0)

    def body(path: str) -> str:
        b = text[text.index(f"+++ b/{path}\n"):]
        return b[:b.index("\ndiff --git")] if "\ndiff --git" in b else b

    # Each file's pairs in declaration order, its entry after them.
    files = {bootcheck.ORDER: ["lib/test_initexit_order.c"], bootcheck.UNWIND: ["lib/test_initexit_unwind.c"],
             bootcheck.NEIGHBOUR: ["lib/test_initexit_neighbour/test_initexit_unwind.c"],
             bootcheck.ADJACENT: ["lib/test_initexit_adjacent.c"], bootcheck.KEEP: ["lib/test_initexit_keep.c"],
             bootcheck.LATE: ["lib/test_initexit_late.c"],
             bootcheck.TIE: ["lib/test_initexit_tie/tie_b.c", "lib/test_initexit_tie/tie_a.c"]}
    assert list(files) == list(bootcheck.ORIGINS)
    declared: list[tuple[str, str, int, bool, bool]] = []
    entries: dict[str, tuple[str, str]] = {}
    for origin, paths in files.items():
        for path in paths:
            src = body(path)
            for m in re.finditer(r"^\+(?:BOOT|UNWIND|NEIGHBOUR|LATE)_PAIR\((\w+), ([^)]+?)\);$", src, re.M):
                prefix = {"lib/test_initexit_unwind.c": "tiu", "lib/test_initexit_late.c": "til"}.get(
                    path, "tin" if "neighbour" in path else "")
                declared.append((origin, prefix + m.group(1), value(m.group(2)), True, True))
            for m in re.finditer(r"^\+(?:__)?module_init_exit(?:_unchecked)?\((-?\d+), (\w+), (\w+)\);$", src, re.M):
                init, exit_ = m.group(2), m.group(3)
                name = (init if init != "NULL" else exit_).rsplit("_", 1)[0]
                assert init in (f"{name}_init", "NULL") and exit_ in (f"{name}_exit", "NULL"), m.group(0)
                declared.append((origin, name, int(m.group(1)), exit_ != "NULL", init != "NULL"))
            for m in re.finditer(r"^\+(module|late)_init_exit_entry\((\w+)\);$", src, re.M):
                assert origin not in entries, f"{origin}: two entries"
                entries[origin] = (m.group(2), "device" if m.group(1) == "module" else "late")
    got = [(p.origin, p.name, p.prio, p.has_exit, p.has_init) for p in bootcheck.BUILTIN_PAIRS]
    assert got == declared
    assert entries == {o: (e.func, e.band) for o, e in bootcheck.ENTRIES.items()}
    assert ("test_initexit_order.o \\\n+\t\t\t\t    test_initexit_unwind.o \\\n"
            "+\t\t\t\t    test_initexit_neighbour/ \\\n+\t\t\t\t    test_initexit_adjacent.o \\\n"
            "+\t\t\t\t    test_initexit_keep.o \\\n+\t\t\t\t    test_initexit_late.o \\\n"
            "+\t\t\t\t    test_initexit_tie/\n") in text
    # The tie's two files make one object, tie_b.o linked first: the
    # reverse of their names' order.  KBUILD_MODFILE is the object's path.
    assert "+obj-y += test_initexit_tie.o\n+test_initexit_tie-y := tie_b.o tie_a.o\n" in text
    # Each other origin is a file of the patch: KBUILD_MODFILE is its path without ".c".
    for origin in bootcheck.ORIGINS:
        if origin != bootcheck.TIE:
            assert f"+++ b/{origin}.c\n" in text, origin
    # The neighbour shares the unwind test's KBUILD_MODNAME (its file name).
    assert bootcheck.NEIGHBOUR.rsplit("/", 1)[1] == bootcheck.UNWIND.rsplit("/", 1)[1]
    assert "+obj-y += test_initexit_unwind.o\n" in text


# --- the guest-versus-reference comparison (test_boot.py) fails on drift ---


def guest_copy(tmp: pathlib.Path) -> pathlib.Path:
    """tracepoints/formats/ as the guest saves it: an ``ID:`` line after
    ``name:``, as tracefs prints it."""
    guest = tmp / "guest-formats"
    guest.mkdir()
    for n, f in enumerate(sorted(FORMATS.glob("*.format"))):
        first, rest = f.read_text().split("\n", 1)
        (guest / f.name).write_text(f"{first}\nID: {60 + n}\n{rest}")
    return guest


def edit(path: pathlib.Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, f"{old!r} not in {path}"
    path.write_text(text.replace(old, new, 1))


def test_format_check_passes_on_faithful_copy(tmp_path: pathlib.Path) -> None:
    assert bootcheck.check_formats(guest_copy(tmp_path), FORMATS) == []


DRIFTS = [
    pytest.param("initexit_unwind.format", "int failed_prio;", "int failed_priority;", id="field-renamed"),
    pytest.param("initexit_init_finish.format", "field:int ret;", "field:long ret;", id="type-changed"),
    pytest.param("initexit_exit_start.format", "reason=%s\"", "why=%s\"", id="print-fmt-changed"),
    pytest.param("initexit_init_start.format", "offset:16;\tsize:4;", "offset:16;\tsize:8;", id="size-changed"),
]


@pytest.mark.parametrize("name,old,new", DRIFTS)
def test_format_check_catches_drifted_guest_file(tmp_path: pathlib.Path, name: str, old: str, new: str) -> None:
    guest = guest_copy(tmp_path)
    edit(guest / name, old, new)
    problems = bootcheck.check_formats(guest, FORMATS)
    assert len(problems) == 1 and problems[0].startswith(f"{name} differs"), problems
    assert new in problems[0]


def test_format_check_catches_missing_and_extra_event(tmp_path: pathlib.Path) -> None:
    guest = guest_copy(tmp_path)
    (guest / "initexit_unwind.format").rename(guest / "initexit_unwound.format")
    problems = bootcheck.check_formats(guest, FORMATS)
    assert any(p.startswith("initexit_unwind.format: in") for p in problems), problems
    assert any(p.startswith("initexit_unwound.format: the guest has it") for p in problems), problems


def test_format_check_catches_nothing_saved(tmp_path: pathlib.Path) -> None:
    assert len(bootcheck.check_formats(tmp_path, FORMATS)) == 5


# --- the page-versus-reference comparison (update-reference.py --check) ---


@pytest.mark.parametrize("name,old,new", DRIFTS)
def test_reference_check_catches_stale_page(name: str, old: str, new: str) -> None:
    # The page edited by hand (or left behind) while formats/ did not change.
    page = README.read_text()
    block = (FORMATS / name).read_text().rstrip()
    assert block in page
    stale_page = page.replace(block, block.replace(old, new, 1))
    problems = update_reference().stale(stale_page, FORMATS)
    assert problems and "stale" in problems[-1] and new in problems[-1], problems


@pytest.mark.parametrize("name,old,new", DRIFTS)
def test_reference_check_catches_drifted_format_file(tmp_path: pathlib.Path, name: str, old: str, new: str) -> None:
    # formats/ updated from a new guest, the page not regenerated.
    formats = tmp_path / "formats"
    shutil.copytree(FORMATS, formats)
    edit(formats / name, old, new)
    problems = update_reference().stale(README.read_text(), formats)
    assert problems and "stale" in problems[-1] and new in problems[-1], problems


def test_reference_check_catches_new_event(tmp_path: pathlib.Path) -> None:
    formats = tmp_path / "formats"
    shutil.copytree(FORMATS, formats)
    shutil.copy(formats / "initexit_unwind.format", formats / "initexit_unwind2.format")
    problems = update_reference().stale(README.read_text(), formats)
    assert "no section for initexit_unwind2" in problems, problems

"""The event schema (analysis/schema.py) against the kernel's format files.

tracepoints/formats/*.format are the guest's tracefs format files (the boot
test compares the guest's with them byte for byte); here every event the
schema marks ``format_file`` must have one, with the same fields, types and
print fmt, and every format file must be in the schema.  A drifted field
(renamed, retyped, moved, added, dropped) fails.
"""

from __future__ import annotations

import pathlib

import pytest

from analysis.model import CallPath, EventName, ExitReason
from analysis.schema import SCHEMA, FieldParser, format_drift, read_format

FORMATS = pathlib.Path(__file__).resolve().parents[2] / "tracepoints" / "formats"
WITH_FILES = sorted(n for n, s in SCHEMA.items() if s.format_file)


def test_every_format_file_is_in_the_schema() -> None:
    files = sorted(p.stem for p in FORMATS.glob("*.format"))
    assert files == WITH_FILES


@pytest.mark.parametrize("name", WITH_FILES)
def test_schema_matches_format_file(name: str) -> None:
    fmt = read_format((FORMATS / f"{name}.format").read_text())
    assert format_drift(SCHEMA[name], fmt) == []


def _drifted(name: str, old: str, new: str) -> list[str]:
    text = (FORMATS / f"{name}.format").read_text()
    assert old in text
    return format_drift(SCHEMA[name], read_format(text.replace(old, new)))


@pytest.mark.parametrize("name,old,new,says", [
    ("initexit_unwind", " failed_prio;", " failed_priority;", "failed_priority"),
    ("initexit_unwind", "failed_prio=%d", "failed_priority=%d", "print fmt"),
    ("initexit_init_finish", "field:int ret;", "field:long ret;", "long ret"),
    ("initexit_init_start", "\tfield:unsigned int has_exit;\toffset:28;\tsize:4;\tsigned:0;\n", "",
     "the format file nothing"),
    ("initexit_exit_start", "\tfield:__data_loc char[] reason;",
     "\tfield:int cpu;\toffset:32;\tsize:4;\tsigned:1;\n\tfield:__data_loc char[] reason;", "int cpu"),
])
def test_a_drifted_field_fails(name: str, old: str, new: str, says: str) -> None:
    problems = _drifted(name, old, new)
    assert any(says in p for p in problems), problems


def test_parsers_are_typed_and_named() -> None:
    p = FieldParser(SCHEMA["initexit_init_finish"])
    f = p("path=boot origin=ie_boot idx=3 prio=-100 func=b_init ret=-12 duration_ns=1200")
    assert f is not None
    assert (f.path, f.origin, f.idx, f.prio, f.func, f.ret, f.duration_ns) == (
        CallPath.BOOT, "ie_boot", 3, -100, "b_init", -12, 1200)
    # The memo keeps the head; the measured tail is read each time.
    g = p("path=boot origin=ie_boot idx=3 prio=-100 func=b_init ret=-12 duration_ns=7")
    assert g is not None and g.duration_ns == 7
    e = FieldParser(SCHEMA["initexit_exit_start"])("path=module origin=m idx=0 prio=0 func=x reason=unload")
    assert e is not None and e.reason is ExitReason.UNLOAD
    s = FieldParser(SCHEMA["initexit_init_start"])
    old = s("path=module origin=m idx=0 prio=0 func=x_init")
    assert old is not None and old.has_exit is None  # kernels before the field
    assert s("path=module origin=m idx=0 prio=0 func=x_init has_exit=1").has_exit == 1


@pytest.mark.parametrize("text,says", [
    ("path=boot origin=o idx=0 prio=0 func=f_exit failed_idx=2 failed_func=g_init error=-5", "failed_prio= missing"),
    ("path=boot origin=o idx=x prio=0 func=f_exit failed_idx=2 failed_prio=1 failed_func=g_init error=-5",
     "idx=x is not"),
    ("path=elsewhere origin=o idx=0 prio=0 func=f_exit failed_idx=2 failed_prio=1 failed_func=g error=-5",
     "path=elsewhere"),
])
def test_a_bad_event_is_named(text: str, says: str) -> None:
    p = FieldParser(SCHEMA["initexit_unwind"])
    assert p(text) is None
    assert says in p.diagnose(text)


def test_schema_names_are_model_events() -> None:
    for name in SCHEMA:
        EventName(name)


def test_dmesg_names_the_module_with_modname_or_origin() -> None:
    from analysis.build import build_capture
    from analysis.parse import parse_text
    for word in ("modname", "origin"):
        text = (f"[    0.300000] calling  ksysfs_init+0x0/0x92 @ 1 prio=-5000 {word}=ksysfs\n"
                f"[    0.300010] initcall ksysfs_init+0x0/0x92 returned 0 after 10 usecs prio=-5000 {word}=ksysfs\n"
                f"[    0.010000] calling  con_init+0x0/0x210 @ 0 prio=console {word}=vt\n"
                f"[    0.010010] initcall con_init+0x0/0x210 returned 0 after 10 usecs prio=console {word}=vt\n")
        spans = {s.func.split("+")[0]: s for s in build_capture(parse_text(text)).spans}
        assert (spans["ksysfs_init"].origin, spans["ksysfs_init"].prio) == ("ksysfs", -5000)
        assert (spans["con_init"].origin, spans["con_init"].prio) == ("vt", None)

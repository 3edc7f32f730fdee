"""The two guards of the pairs' link order under Clang LTO, run on small
objects on the host (the lto configuration of scripts/check-configs builds
and boots the real thing):

- the series' scripts/generate_initcall_order.pl lists each pair's section
  in link order and refuses two pairs whose sections share a name (same
  KBUILD_MODNAME, counter and line: one rule would collect both);
- INITEXIT_PAIRS() of include/asm-generic/vmlinux.lds.h fails the link on a
  pair section the script did not list, with GNU ld and with ld.lld;
- the two links of an LTO build (`ld -r` of vmlinux.a with the script's
  rules, then INITEXIT_PAIRS()) put a table in link order.

Both read the patched tree that scripts/test's boot unpacked.
"""

from __future__ import annotations

import os
import pathlib
import re
import shutil
import subprocess
import sys

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "scripts" / "lib"))
import verdict  # noqa: E402  (scripts/lib: the cache the scripts unpack trees into)


def patched_tree() -> pathlib.Path:
    tree = pathlib.Path(os.environ.get("INITEXIT_PATCHED_TREE") or verdict.cache_dir() / "linux-patched")
    if not (tree / "include/linux/initexit.h").is_file():
        pytest.skip(f"no patched tree at {tree}: scripts/test's boot unpacks one")
    return tree


def obj(tmp: pathlib.Path, name: str, decls: str) -> pathlib.Path:
    (tmp / f"{name}.c").write_text(decls)
    subprocess.run(["gcc", "-c", "-o", str(tmp / f"{name}.o"), str(tmp / f"{name}.c")], check=True)
    return tmp / f"{name}.o"


def pair(symbol: str) -> str:
    return f"static int {symbol} __attribute__((used)) = 1;\n"


def order_script(tmp: pathlib.Path, *objs: pathlib.Path) -> subprocess.CompletedProcess[str]:
    script = patched_tree() / "scripts/generate_initcall_order.pl"
    return subprocess.run(["perl", str(script), *[o.name for o in objs]], cwd=tmp, text=True,
                          capture_output=True, env={**os.environ, "NM": "nm", "objtree": str(tmp)})


def test_order_script_lists_pairs_in_link_order(tmp_path: pathlib.Path) -> None:
    # Two files, the second's name sorting first; the per-pair helper symbols
    # (_init_name, ...) are not entries.  The series' ids carry the pair's
    # function names before counter and line
    # (__initexit_pair__<mod>__<init>__<exit>__<counter>_<line>), so that a
    # helper, the id with a suffix, does not end like an entry.
    b = obj(tmp_path, "b", pair("__initexit_pair__zed__z_init__z_exit__4_20")
            + pair("__initexit_pair__zed__NULL__y_exit__9_30")
            + pair("__initexit_pair__zed__z_init__z_exit__4_20_init_name")
            + pair("__initexit_pair__zed__z_init__z_exit__4_20_file"))
    a = obj(tmp_path, "a", pair("__initexit_pair__abc__2_10"))
    r = order_script(tmp_path, b, a)
    assert r.returncode == 0, r.stderr
    rules = re.findall(r"\*\(__initexit_pairs\.\.(\S+)\)", r.stdout)
    assert rules == ["__initexit_pair__zed__z_init__z_exit__4_20", "__initexit_pair__zed__NULL__y_exit__9_30",
                     "__initexit_pair__abc__2_10"]
    assert "__initexit_pairs : {" in r.stdout


def test_order_script_refuses_two_pairs_of_one_name(tmp_path: pathlib.Path) -> None:
    # Same KBUILD_MODNAME ("core", as 138 core.c files have), counter and line
    # in two objects: local symbols, so the link would not object.
    a = obj(tmp_path, "a", pair("__initexit_pair__core__3_10"))
    other = obj(tmp_path, "other", pair("__initexit_pair__core__5_10"))
    b = obj(tmp_path, "b", pair("__initexit_pair__core__3_10"))
    r = order_script(tmp_path, a, other, b)
    assert r.returncode != 0
    m = re.search(r"pairs in (\S+) and (\S+) are both named __initexit_pair__core__3_10", r.stderr)
    assert m, r.stderr
    assert [pathlib.Path(p).name for p in m.groups()] == ["a.o", "b.o"]
    assert "move one of them to another line" in r.stderr
    assert "SECTIONS" not in r.stdout


def archive(tmp: pathlib.Path, name: str, *objs: pathlib.Path, thin: bool = True) -> pathlib.Path:
    """An archive of objs (thin, as vmlinux.a is, or not)."""
    ar = tmp / name
    subprocess.run(["ar", "cDPrST" if thin else "cDPrS", str(ar), *[str(o) for o in objs]], cwd=tmp, check=True)
    return ar


@pytest.mark.parametrize("thin", [True, False])
def test_order_script_reads_archive_members(tmp_path: pathlib.Path, thin: bool) -> None:
    # vmlinux.a: the members in link order, a duplicate across two members
    # named by member.
    (tmp_path / "d1").mkdir()
    (tmp_path / "d2").mkdir()
    b = obj(tmp_path, "d1/core", pair("__initexit_pair__core__0_4"))
    a = obj(tmp_path, "d2/main", pair("__initexit_pair__main__2_9"))
    ok = order_script(tmp_path, archive(tmp_path, "ok.a", b.relative_to(tmp_path), a.relative_to(tmp_path), thin=thin))
    assert ok.returncode == 0, ok.stderr
    assert re.findall(r"\*\(__initexit_pairs\.\.(\S+)\)", ok.stdout) == [
        "__initexit_pair__core__0_4", "__initexit_pair__main__2_9"]
    dup = obj(tmp_path, "d2/core", pair("__initexit_pair__core__0_4"))
    bad = order_script(tmp_path, archive(tmp_path, "bad.a", b.relative_to(tmp_path), dup.relative_to(tmp_path), thin=thin))
    assert bad.returncode != 0
    m = re.search(r"pairs in (\S+) and (\S+) are both named __initexit_pair__core__0_4", bad.stderr)
    assert m, bad.stderr
    if thin:  # vmlinux.a is thin; GNU nm names a full-path member of a normal archive oddly ("d1")
        assert [p.split("/")[-2:] for p in m.groups()] == [["d1", "core.o"], ["d2", "core.o"]]


def pairs_lds(tmp: pathlib.Path) -> pathlib.Path:
    """A linker script whose only output section holds INITEXIT_PAIRS(), the
    macro's text as the series' vmlinux.lds.h defines it."""
    header = (patched_tree() / "include/asm-generic/vmlinux.lds.h").read_text()
    m = re.search(r"^#define INITEXIT_PAIRS\(\)\s*\\\n((?:.*\\\n)*.*\n)", header, re.M)
    assert m, "no INITEXIT_PAIRS() in vmlinux.lds.h"
    lds = tmp / "pairs.lds"
    lds.write_text("SECTIONS {\n .init.data : {\n" + m.group(1).replace("\\\n", "\n") + "\n }\n}\n")
    return lds


def section_obj(tmp: pathlib.Path, name: str, section: str) -> pathlib.Path:
    return obj(tmp, name, f'static int x __attribute__((used, section("{section}"))) = 1;\n')


@pytest.mark.parametrize("linker", ["ld", "ld.lld"])
def test_an_unlisted_pair_section_fails_the_link(tmp_path: pathlib.Path, linker: str) -> None:
    if shutil.which(linker) is None:
        pytest.fail(f"{linker} is not installed (scripts/test installs binutils and lld)")
    lds = pairs_lds(tmp_path)
    listed = section_obj(tmp_path, "listed", "__initexit_pairs")
    unlisted = section_obj(tmp_path, "unlisted", "__initexit_pairs..__initexit_pair__m__1_2")
    ok = subprocess.run([linker, "-T", str(lds), "-o", str(tmp_path / "ok"), str(listed)],
                        capture_output=True, text=True)
    assert ok.returncode == 0, ok.stderr
    bad = subprocess.run([linker, "-T", str(lds), "-o", str(tmp_path / "bad"), str(listed), str(unlisted)],
                         capture_output=True, text=True)
    assert bad.returncode != 0
    assert "initexit: pair section not in .tmp_initcalls.lds" in bad.stderr


def lto_pair(symbol: str) -> str:
    """An entry as an LTO build lays it out: a section named after it."""
    return f'static long {symbol} __attribute__((used, section("__initexit_pairs..{symbol}"))) = 1;\n'


@pytest.mark.parametrize("linker", ["ld", "ld.lld"])
def test_the_two_links_keep_link_order(tmp_path: pathlib.Path, linker: str) -> None:
    # As Makefile.vmlinux_o and the final link do: the script's rules for
    # `ld -r` of vmlinux.a into vmlinux.o, then INITEXIT_PAIRS(). The table
    # is in link order (the second file's name sorts first; within a file,
    # declaration order although GCC emits static data in reverse), and
    # nothing is left for the catch-all.
    if shutil.which(linker) is None:
        pytest.fail(f"{linker} is not installed (scripts/test installs binutils and lld)")
    z = obj(tmp_path, "zed", lto_pair("__initexit_pair__zed__1_10") + lto_pair("__initexit_pair__zed__2_11"))
    a = obj(tmp_path, "abc", lto_pair("__initexit_pair__abc__1_5"))
    lib = archive(tmp_path, "vmlinux.a", z.relative_to(tmp_path), a.relative_to(tmp_path))
    r = order_script(tmp_path, lib)
    assert r.returncode == 0, r.stderr
    (tmp_path / "initcalls.lds").write_text(r.stdout)
    subprocess.run([linker, "-r", "-T", "initcalls.lds", "-o", "vmlinux.o", "--whole-archive", "vmlinux.a"],
                   cwd=tmp_path, check=True, capture_output=True)
    out = subprocess.run([linker, "-T", str(pairs_lds(tmp_path)), "-o", "vmlinux", "vmlinux.o"],
                         cwd=tmp_path, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    syms = subprocess.run(["nm", "vmlinux"], cwd=tmp_path, check=True, capture_output=True, text=True).stdout
    addr = {line.split()[-1]: int(line.split()[0], 16) for line in syms.splitlines() if len(line.split()) == 3}
    start, stop = addr["__start___initexit_pairs"], addr["__stop___initexit_pairs"]
    assert addr["__initexit_pairs_unlisted"] == stop
    entries = sorted((a, n) for n, a in addr.items() if n.startswith("__initexit_pair__") and start <= a < stop)
    assert [n for _, n in entries] == [
        "__initexit_pair__zed__1_10", "__initexit_pair__zed__2_11", "__initexit_pair__abc__1_5"]
    assert stop - start == 3 * 8

"""The tests of the btrfs conversion (tests/boot/test_modules.py on what
tests/guest/85-btrfs.sh did, tests/configs/test_builtin_fs.py) expect the
steps in the order of stock 6.12's table, not in whatever order the
conversion declares them: their list, tests/boot/modcheck.py's
BTRFS_STEPS, is checked here against mod_init_seq[] in stock
fs/btrfs/super.c (the managed tree's initexit-base commit, or the source
tarball).
"""

from __future__ import annotations

import os
import pathlib
import re
import subprocess
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "scripts" / "lib"))
import verdict  # noqa: E402  (scripts/lib: the cache the scripts unpack trees into)
from modcheck import BTRFS_STEPS  # noqa: E402

TARBALL = pathlib.Path(os.environ.get("INITEXIT_SOURCE_TARBALL", "/usr/src/linux-source-6.12.tar.xz"))


def stock_file(path: str) -> str:
    tree = pathlib.Path(os.environ.get("INITEXIT_PATCHED_TREE") or verdict.cache_dir() / "linux-patched")
    got = subprocess.run(["git", "-C", str(tree), "show", f"initexit-base:{path}"],
                         capture_output=True, text=True)
    if got.returncode == 0:
        return got.stdout
    assert TARBALL.is_file(), f"neither {tree} (initexit-base) nor {TARBALL}: run scripts/test, which installs it"
    got = subprocess.run(["tar", "-xJOf", str(TARBALL), f"linux-source-6.12/{path}"],
                         capture_output=True, text=True, check=True)
    return got.stdout


def stock_table() -> list[tuple[str, str]]:
    """(init, exit) of each entry of stock's mod_init_seq[], in order."""
    text = stock_file("fs/btrfs/super.c")
    body = text[text.index("mod_init_seq[] = {"):]
    body = body[:body.index("\n};")]
    entries = re.findall(r"\.init_func = (\w+),\s*\.exit_func = (\w+),", body)
    assert len(entries) == 21, entries
    return entries


def test_btrfs_test_expects_stock_order() -> None:
    # The test kernel has no CONFIG_BTRFS_FS_RUN_SANITY_TESTS: no pair for it.
    table = [(i, e) for i, e in stock_table() if i != "btrfs_run_sanity_tests"]
    assert [s.init for s in BTRFS_STEPS] == [i for i, _ in table]
    # An entry without an exit becomes btrfs_nothing_to_undo; unload runs
    # the exits in reverse (btrfs_cleanup_fs_uuids() is in
    # btrfs_interface_exit() now, no step of its own).
    want_exits = [e if e != "NULL" else "btrfs_nothing_to_undo" for _, e in reversed(table)]
    assert [s.exit for s in reversed(BTRFS_STEPS)] == want_exits


def test_btrfs_test_step_numbers_are_the_table_positions() -> None:
    # A step's number is the entry's position in stock's table (the enum).
    positions = {i: n for n, (i, _) in enumerate(stock_table())}
    for s in BTRFS_STEPS:
        assert s.n == positions[s.init], s

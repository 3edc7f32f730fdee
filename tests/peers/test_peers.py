"""scripts/peers writes docs/peers.md's tables from a run: the numbers in
each tool's column are read from that tool's output, the analysis's are
what the analysis counts on the capture, the times and memory are
measured, and a tool that is not here gets a row saying why, never a
number.

The peers are stubs written here (small Python programs that print what
the real tools print, with counts deliberately different from the
capture's, so a table that copied the generator's own count would fail),
except the analysis, which is the checkout's, and bootgraph.py, which is
also run for real when the unpacked kernel tree has it. No boot; seconds.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent.parent
PEERS = ROOT / "scripts/peers"
CAPTURED = ROOT / "analysis/tests/fixtures/captured"
STOCK = CAPTURED / "stock-boot-declared-dmesg.dmesg"
BROKEN = CAPTURED / "broken-stock-dmesg-level.dmesg"
SMAP = CAPTURED / "stock-boot.System.map"
CACHE = Path(os.environ.get("INITEXIT_CACHE") or Path.home() / ".cache/initexit")
REAL_BOOTGRAPH = CACHE / "linux-stock/tools/power/pm-graph/bootgraph.py"
TOOLS = ["bootgraph.py", "analyze_initcall_debug.py", "`python3 -m analysis`"]

#: bootgraph.py's stub: draws one box per `returned` line but the first
#: three, and says so as bootgraph.py -verbose does.
BOOTGRAPH_STUB = r'''
import re, sys
a = sys.argv[1:]
ballast = bytearray(96 << 20)  # its peak memory must show in the table
if a == ["-v"]:
    print("Version 2.2"); sys.exit(0)
if a == ["-h"]:
    print("Usage: bootgraph <options>\n  -dmesg file   Create HTML output"); sys.exit(0)
fns = [m.group(1) for m in re.finditer(r"\] initcall (\w+)\+\S*(?: \[\S+\])? returned", open(a[a.index("-dmesg") + 1]).read())][3:]
with open("bootgraph.html", "w") as f:
    for i, fn in enumerate(fns):
        f.write(f'<div id="a{i}" title="{fn} (0.1 ms) kernel_mode" class="thread c1" style="">\n')
print(f"   kernel mode: 0.000 - 1.000 ({len(fns) - 2} initcalls)")
print("     user mode: 1.000 - 2.000 (1 initcalls)")
'''

#: analyze_initcall_debug.py's stub: names one initcall fewer than the
#: capture has distinct names, lists every probe's device but the first.
AID_STUB = r'''
import re, sys
a = sys.argv[1:]
if a == ["--version"]:
    print("analyze_initcall_debug.py 9.9.9"); sys.exit(0)
text = open(a[a.index("--dmesg") + 1]).read()
names = set(re.findall(r"\] initcall (\w+)\+", text))
probes = sorted(set(re.findall(r"\] probe of (\S+) returned", text)))[1:]
if "--compare" in a:
    print(" * x -> 1us [+1us vs baseline]\n * y -> 2us [not present in baseline]"); sys.exit(0)
if "--html" in a:
    with open(a[a.index("--output") + 1], "w") as f:
        f.write("".join(f'<tr id="aid-initcall-{n}">' for n in names))
        f.write("".join(f'<tr id="aid-probe-{p}"><title>Probe: {p}</title>' for p in probes))
    sys.exit(0)
print(f"  {len(names) - 1:d} initcalls have been executed, of which 1 before init and 0 after")
print("  4 deferred probes are pending")
print("  3 initcalls/probes failed")
print('Failed matching line 5:"pci: calling  quirk" as call', file=sys.stderr)
'''

PAGE = """# Peers

Hand-written prose stays.

<!-- scripts/peers: run -->
<!-- scripts/peers: end -->
<!-- scripts/peers: reads -->
old table
<!-- scripts/peers: end -->
<!-- scripts/peers: finds -->
<!-- scripts/peers: end -->
<!-- scripts/peers: times -->
<!-- scripts/peers: end -->
<!-- scripts/peers: features -->
<!-- scripts/peers: end -->

More prose.
"""


def stubs(tmp: Path) -> tuple[Path, Path]:
    bg = tmp / "bootgraph.py"
    bg.write_text(BOOTGRAPH_STUB)
    aid = tmp / "aid.py"
    aid.write_text(AID_STUB)
    return bg, aid


def peers(tmp: Path, *args: str, runs: int = 1) -> subprocess.CompletedProcess[str]:
    page = tmp / "peers.md"
    if not page.exists():
        page.write_text(PAGE)
    return subprocess.run(
        [sys.executable, str(PEERS), "--runs", str(runs), "--out", str(page), "--python", sys.executable,
         "--capture", f"stock={STOCK},{SMAP},label=stock boot",
         "--capture", f"broken={BROKEN},{SMAP},label=broken boot",
         "--compare", "stock,broken", "--missing", "gone boot=not kept on this machine", *args],
        capture_output=True, text=True, cwd=tmp, timeout=300)


def block(page: str, name: str) -> str:
    m = re.search(rf"^<!-- scripts/peers: {name} -->\n(.*?)^<!-- scripts/peers: end -->$", page, re.M | re.S)
    assert m, f"no block {name}"
    return m.group(1)


def rows(md: str) -> list[list[str]]:
    """A Markdown table's rows (header first, the --- line left out)."""
    out = []
    for line in md.splitlines():
        if line.startswith("|") and not line.startswith("|---"):
            out.append([c.strip() for c in line.strip().strip("|").split(" | ")])
    return out


def returned(path: Path) -> list[str]:
    return re.findall(r"\] initcall (\w+)\+\S*(?: \[\S+\])? returned", path.read_text())


def probe_names(path: Path) -> set[str]:
    return set(re.findall(r"\] probe of (\S+) returned", path.read_text()))


def analysis_calls(path: Path) -> int:
    r = subprocess.run([sys.executable, "-m", "analysis", "check", "-q", "--format", "json",
                        "--system-map", str(SMAP), str(path)], capture_output=True, text=True, cwd=ROOT)
    return int(json.loads(r.stdout)["counts"]["calls"])


def cut_short(tmp: Path) -> Path:
    """The stock boot cut off just after `calling  pci_subsys_init`: a call
    that never returned, which the analysis counts and a grep of the
    `returned` lines does not."""
    lines = STOCK.read_text().splitlines(keepends=True)
    at = next(i for i, x in enumerate(lines) if "calling  pci_subsys_init+" in x)
    cut = tmp / "cut.dmesg"
    cut.write_text("".join(lines[:at + 1]))
    return cut


def test_tables_are_written_from_the_tools_output(tmp_path: Path) -> None:
    bg, aid = stubs(tmp_path)
    cut = cut_short(tmp_path)
    r = peers(tmp_path, "--bootgraph", str(bg), "--aid", str(aid), "--aid-python", sys.executable,
              "--capture", f"cut={cut},label=cut boot", runs=2)
    assert r.returncode == 0, r.stderr
    page = (tmp_path / "peers.md").read_text()
    assert page.startswith("# Peers\n\nHand-written prose stays.\n") and page.endswith("\nMore prose.\n")
    assert "old table" not in page

    reads = rows(block(page, "reads"))
    assert reads[0] == ["capture", "", "in the capture", *TOOLS]
    assert [r[:2] for r in reads[1:]] == [["stock boot", "calls"], ["", "device probes"],
                                          ["", "lines it could not read"], ["broken boot", "calls"],
                                          ["", "device probes"], ["", "lines it could not read"],
                                          ["cut boot", "calls"], ["", "device probes"],
                                          ["", "lines it could not read"], ["gone boot", ""]]
    # the cut capture tells the analysis's count from the generator's
    assert analysis_calls(cut) != len(returned(cut))
    for cap, first in ((STOCK, 1), (BROKEN, 4), (cut, 7)):
        calls, probes, unread = reads[first], reads[first + 1], reads[first + 2]
        n = len(returned(cap))
        names = len(set(returned(cap)))
        devices = probe_names(cap)
        # the generator's own count of the capture
        assert calls[2] == f"{n} `initcall ... returned` lines"
        assert probes[2].endswith(f"({len(devices)} devices)")
        # each tool's cell is what that tool printed, not the generator's count
        assert calls[3] == f"{n - 3} drawn (it says {n - 4})"
        assert calls[4] == f"{names - 1} initcalls (one per name)"
        shown = max(len(devices) - 1, 0)
        assert probes[4] == f"{shown} devices, {shown} probes drawn"
        assert unread[4] == "1 lines it says it could not match"
        # the analysis's cell is what the analysis counts
        assert calls[5] == f"{analysis_calls(cap)} calls"
    assert reads[10][2] == "not kept on this machine"

    finds = {r[0]: r for r in rows(block(page, "finds"))[1:]}
    assert finds["stock boot"][2] == "exit 0; 3 initcalls/probes failed, 4 deferred probes pending"
    assert finds["stock boot"][3].startswith("exit 0;")
    assert finds["broken boot"][3].startswith("exit 1;") and "(declared-level)" in finds["broken boot"][3]

    times = rows(block(page, "times"))
    assert times[0] == ["capture", "command", "wall time: median (min-max)", "CPU time (user+sys): median",
                        "peak RSS"]
    commands = [(r[0], r[1]) for r in times[1:]]
    for label in ("stock boot", "broken boot"):
        for cmd in ("bootgraph.py: page (HTML)", "analyze_initcall_debug.py: text",
                    "analyze_initcall_debug.py: page (HTML)", "`python3 -m analysis`: page (HTML)",
                    "`python3 -m analysis`: checks (with System.map)"):
            assert (label, cmd) in commands
    assert ("cut boot", "`python3 -m analysis`: checks") in commands
    assert ("compare", "analysis diff (stock -> broken)") in commands
    assert ("none", f"Python {'.'.join(map(str, sys.version_info[:3]))} starting (`{sys.executable} -c pass`)") \
        in commands
    for row in times[1:]:
        m = re.fullmatch(r"(\d+\.\d\d) s \((\d+\.\d\d)-(\d+\.\d\d)\)", row[2])
        assert m, row
        lo, med, hi = float(m.group(2)), float(m.group(1)), float(m.group(3))
        assert 0 < lo <= med <= hi
        assert re.fullmatch(r"\d+\.\d\d s", row[3]), row
        mem = re.fullmatch(r"(\d+) MB", row[4])
        assert mem and int(mem.group(1)) > 0, row
        # the stub bootgraph.py holds 96 MB, the others far less: measured per command
        assert (int(mem.group(1)) >= 96) is row[1].startswith("bootgraph.py"), row

    feats = {r[0]: r[1:] for r in rows(block(page, "features"))[1:]}
    assert feats["compare two captures"][0] == "none: its -h has no compare, diff or baseline option"
    assert "1 differences shown" in feats["compare two captures"][1]
    run = block(page, "run")
    assert "each command 2 times" in run and "analyze_initcall_debug.py 9.9.9" in run


def test_a_tool_that_is_not_here_gets_no_numbers(tmp_path: Path) -> None:
    bg, _ = stubs(tmp_path)
    r = peers(tmp_path, "--bootgraph", str(bg), "--aid", str(tmp_path / "no-such.py"))
    assert r.returncode == 0, r.stderr
    page = (tmp_path / "peers.md").read_text()
    why = f"not available on this machine: no {tmp_path / 'no-such.py'}"
    for name in ("reads", "finds"):
        for row in rows(block(page, name))[1:]:
            if row[0] != "gone boot" and row[-2:] != ["", ""]:
                assert row[-2].startswith(why), row
    aid_times = [r for r in rows(block(page, "times"))[1:] if r[1] == "analyze_initcall_debug.py"]
    assert aid_times and all(r[2].startswith(why) and r[3:] == ["", ""] for r in aid_times)


def test_the_script_is_taken_out_of_its_posting(tmp_path: Path) -> None:
    bg, _ = stubs(tmp_path)
    mbox = tmp_path / "v5.mbox"
    mbox.write_text("From: someone\nSubject: [SCRIPT v5]\n\nHello,\n\n"
                    "------ the analyze_initcall_debug.py script follows ------\n\n" + AID_STUB)
    out = tmp_path / "cache/aid.py"
    r = peers(tmp_path, "--bootgraph", str(bg), "--aid", str(out), "--aid-from-mbox", str(mbox))
    assert r.returncode == 0, r.stderr
    assert out.read_text() == AID_STUB.lstrip("\n")
    assert "analyze_initcall_debug.py 9.9.9" in block((tmp_path / "peers.md").read_text(), "run")


def test_a_page_without_the_blocks_is_refused(tmp_path: Path) -> None:
    bg, aid = stubs(tmp_path)
    (tmp_path / "peers.md").write_text("# Peers\n\nno blocks\n")
    r = peers(tmp_path, "--bootgraph", str(bg), "--aid", str(aid))
    assert r.returncode == 2
    assert "no block run, reads, finds, times, features" in r.stderr
    assert (tmp_path / "peers.md").read_text() == "# Peers\n\nno blocks\n"


@pytest.mark.skipif(not REAL_BOOTGRAPH.is_file(), reason=f"no {REAL_BOOTGRAPH} (scripts/run unpacks the tree)")
def test_the_real_bootgraph_draws_every_call(tmp_path: Path) -> None:
    _, aid = stubs(tmp_path)
    r = peers(tmp_path, "--bootgraph", str(REAL_BOOTGRAPH), "--aid", str(aid))
    assert r.returncode == 0, r.stderr
    reads = rows(block((tmp_path / "peers.md").read_text(), "reads"))
    assert reads[1][3] == f"{len(returned(STOCK))} drawn"
    assert reads[2][3] == "0 drawn"


def test_the_committed_page_is_current(tmp_path: Path) -> None:
    """docs/peers.md's blocks are the generator's: the captures' own counts
    and the analysis's cells (both the same on every machine) are what a
    run writes now. When the analysis or a capture changes, rerun
    scripts/peers."""
    r = subprocess.run([sys.executable, str(PEERS), "--runs", "1", "--out", "-", "--python", sys.executable,
                        "--bootgraph", str(tmp_path / "none"), "--aid", str(tmp_path / "none")],
                       capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert r.returncode == 0, r.stderr
    page = (ROOT / "docs/peers.md").read_text()
    assert block(page, "run").startswith("Generated by `scripts/peers")
    for name, cols in (("reads", (0, 1, 2, 5)), ("finds", (0, 3))):
        now = [[row[i] for i in cols] for row in rows(block(r.stdout, name))]
        committed = [[row[i] for i in cols] for row in rows(block(page, name))]
        assert committed == now, f"docs/peers.md's {name} table is stale: run scripts/peers"

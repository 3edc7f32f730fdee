"""tracepoints/README.md embeds tracepoints/formats/ exactly (no drift)."""

import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]


def test_reference_page_embeds_the_format_files() -> None:
    page = (ROOT / "tracepoints" / "README.md").read_text()
    formats = sorted((ROOT / "tracepoints" / "formats").glob("*.format"))
    assert [f.stem for f in formats] == [
        "initexit_exit_finish",
        "initexit_exit_start",
        "initexit_init_finish",
        "initexit_init_start",
        "initexit_unwind",
    ]
    for f in formats:
        assert f.read_text().rstrip() in page, f"{f.name} is not in tracepoints/README.md"
    r = subprocess.run([sys.executable, str(ROOT / "tracepoints" / "update-reference.py"), "--check"])
    assert r.returncode == 0


def test_band_table_matches_the_series() -> None:
    # analysis/model.py's BANDS (which the analysis and bootcheck use) is the
    # series' INITCALL_PRIO_* table, read from the patch that defines it.
    import re

    sys.path.insert(0, str(ROOT))
    from analysis.model import BANDS

    text = "".join(p.read_text() for p in sorted((ROOT / "patches").glob("0*.patch")))
    defined = {m.group(1).lower(): int(m.group(2))
               for m in re.finditer(r"^\+#define INITCALL_PRIO_(\w+)\s+\(?(-?\d+)\)?$", text, re.M)}
    assert len(defined) == 16
    assert defined == dict(BANDS)

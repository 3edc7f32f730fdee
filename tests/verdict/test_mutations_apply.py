"""Every kernel mutation of tests/mutations/ still applies to the series
(scripts/mutation-test runs them in tier deep only; a change of the
series that moves a mutation's context would otherwise be found there,
sessions later). Checked with `git apply --check` against the managed
patched tree the build row leaves; without one (scripts/test --no-boot)
there is nothing to check against."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts" / "lib"))

import verdict  # noqa: E402

TREE = verdict.cache_dir() / "linux-patched"
MUTATIONS = sorted((ROOT / "tests" / "mutations").glob("*.patch"))

pytestmark = pytest.mark.skipif(not (TREE / ".git").is_dir(),
                                reason=f"no patched tree at {TREE} (the build row makes it)")


def test_there_are_mutations() -> None:
    assert len(MUTATIONS) >= 30


@pytest.mark.parametrize("patch", MUTATIONS, ids=[p.stem for p in MUTATIONS])
def test_mutation_applies_to_the_series(patch: Path) -> None:
    proc = subprocess.run(["git", "-C", str(TREE), "apply", "--check", str(patch)],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, f"{patch.name} no longer applies: {proc.stderr.strip()}"

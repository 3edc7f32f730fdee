"""CONFIG_MODULE_UNLOAD=n (scripts/check-configs' unload-off
configuration): tests/configs/unload-off.sh loads test_initexit_mod_fail
with fail_at=5, then without; which pairs each load ran is judged here
from the scenario trace (scenario.report.txt, brought home by
scripts/run) read through analysis/ (analysis/loads.py): the failed load
unwinds f4..f0 in reverse, module_exit()'s f3 included, which the loader
keeps in init memory until the load ends; the good load runs every pair.

scripts/check-configs runs this on the unload-off boot with
INITEXIT_RUN_DIR set to its output folder (a missing variable or file is
a failure); tests/boot/test_modcheck_selftest.py shows the check failing
on broken loads in every scripts/test.
"""

from __future__ import annotations

import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "boot"))
import modcheck  # noqa: E402  (puts the repository root on sys.path for analysis/)
from analysis.load import load_capture  # noqa: E402
from analysis.loads import module_loads  # noqa: E402


def test_unload_off_failed_load_unwinds_module_exit_too() -> None:
    path = modcheck.run_file("scenario.report.txt", "unload-off")
    assert modcheck.check_unload_off(module_loads(load_capture(path), "test_initexit_mod_fail")) == []

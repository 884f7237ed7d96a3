"""Running a chapter again gives the same glued numbers as the run the site was built from."""

import json
from pathlib import Path

import pytest

from twopaths.machinery import runner

ROOT = Path(__file__).resolve().parents[1]
LAST_RUN = ROOT / "_build" / "results" / "smoke.json"


@pytest.mark.site
@pytest.mark.notebooks
@pytest.mark.parametrize("nb", runner.toc_notebooks(ROOT), ids=lambda p: p.stem)
def test_second_run_glues_identical_numbers(nb, tmp_path):
    if not LAST_RUN.exists():
        pytest.fail(f"{LAST_RUN} is missing: run `make test` (or the runner's smoke profile) first")
    first = json.loads(LAST_RUN.read_text())
    first = {"notebooks": {nb.stem: first["notebooks"][nb.stem]}}
    second = runner.run("smoke", first["notebooks"][nb.stem]["parameters"]["device"], [nb], out_dir=tmp_path,
                        use_cache=False)
    # Same machine, same kernels: every value but the timings repeats bit for bit, tolerances aside.
    a, b = first["notebooks"][nb.stem]["values"], second["notebooks"][nb.stem]["values"]
    assert a.keys() == b.keys()
    moved = {k: (a[k]["value"], b[k]["value"]) for k in a
             if a[k]["vary"]["kind"] != "machine" and a[k] != b[k]}
    assert moved == {}

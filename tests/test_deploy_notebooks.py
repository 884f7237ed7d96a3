"""The deployment chapters stop in their first cells when given a bad parameter."""

from pathlib import Path

import pytest

from twopaths.machinery import runner

NB = Path(__file__).resolve().parents[1] / "notebooks"


@pytest.mark.notebooks
@pytest.mark.parametrize("chapter, name, value, message", [
    ("09-parallelism.ipynb", "gpu", "h300", "gpu: got 'h300'"),
    ("11-prefill-decode.ipynb", "serving", {"pd_ratio": 0}, "pd_ratio: got 0"),
    ("12-offload-duty-cycle.ipynb", "w_idle_api", -5.0, "w_idle_api: got -5.0"),
    ("13-hardware-cost.ipynb", "context", 0, "context: got 0"),
    ("13-hardware-cost.ipynb", "usd_per_gpu_hour", 0, "usd_per_gpu_hour: got 0"),
    ("10-checkpoint-weights.ipynb", "serving", {"usable_fraction": 0}, "usable_fraction: got 0"),
    ("14-audit.ipynb", "serving", {"packing": "unit"}, "assumption: got 'packing'"),
    ("12-offload-duty-cycle.ipynb", "serving", {"capacity": "marketing"}, "capacity: got 'marketing'"),
])
def test_bad_value_stops_the_chapter_in_its_first_cells(tmp_path, chapter, name, value, message):
    with pytest.raises(runner.RunError) as info:
        runner.execute(NB / chapter, tmp_path / "out.ipynb", {"profile": "smoke", "device": "cpu", name: value})
    text = str(info.value)
    assert message in text and "ParameterError" in text
    # Cell 1 is the parameters cell, 2 papermill's injected one; the check right after them must stop it.
    assert "failed in cell 3" in text, text

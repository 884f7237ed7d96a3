"""Chapter 10 re-run for a corpus model on a reader's GPU: its tables name them and show that
model's own numbers, and a bad parameter stops the chapter with its name."""

from pathlib import Path

import pytest

from twopaths.machinery import runner
from twopaths.views import scenario
from twopaths.calc import placement, weights
from twopaths.specs.serving import assumptions
from rerun_case import MY_GPU, NO_HBM, values

NB = Path("notebooks/10-checkpoint-weights.ipynb")
QWEN = "Qwen--Qwen3-235B-A22B"
CASE_B = {"configs": [QWEN], "models": [], "gpus": ["my-gpu"], "gpu_specs": MY_GPU}
CONTEXT = 500_000   # the chapter's default request length


def _run(tmp_path, params):
    return values(NB, tmp_path, params)


def _rows(values, table):
    """The rows of a shown table, as {header: value}."""
    rows = {}
    for key, value in values.items():
        if key.startswith(f"{table}[") and "]." in key:
            i, header = key[len(table) + 1:].split("].", 1)
            rows.setdefault(int(i), {})[header] = value
    return [rows[i] for i in sorted(rows)]


@pytest.mark.notebooks
def test_a_corpus_model_on_a_users_gpu_gets_its_own_numbers(tmp_path):
    values = _run(tmp_path, CASE_B)
    model = scenario.models([], [QWEN])[0]
    gpu = scenario.gpus(["my-gpu"], MY_GPU)[0]
    name = scenario.model_name(model)
    for table in ("ep_weights", "scenarios", "kv_room", "counts", "shipped"):
        assert name in values[f"{table}.title"], table
    for table in ("ep_weights", "scenarios", "kv_room"):
        assert "my-gpu" in values[f"{table}.title"], table
    a = assumptions()
    # One GPU of an EP32 unit with attention DP, as the placement calculator gives it.
    u = placement.memory(model, gpu, placement.Placement(32), CONTEXT, a)
    row = next(r for r in _rows(values, "ep_weights")
               if r["model"] == name and r["unit"] == "EP32, attention DP")
    assert row["GPU"] == "my-gpu"
    assert row["KV room"] == pytest.approx(u.kv_room / 1e9, rel=1e-12)
    assert row["requests / GPU"] == u.requests
    # The article's scenario (every linear layer in FP8) halves this BF16 checkpoint.
    fp8 = a.but(weights="fp8")
    row = next(r for r in _rows(values, "scenarios")
               if r["model"] == name and r["experts in"] == "fp8")
    assert row["checkpoint"] == pytest.approx(sum(weights.weight_bytes(model, fp8.formats()).values()) / 1e9)
    assert values["kv_room.x"] == [8, 16, 32, 64, 128]


@pytest.mark.notebooks
@pytest.mark.parametrize("params, name", [
    ({"gpus": ["my-gpu"], "gpu_specs": NO_HBM}, "gpu_specs"),
    ({"ep_sizes": [32, 32]}, "ep_sizes"),
])
def test_a_bad_parameter_stops_the_chapter_by_name(tmp_path, params, name):
    with pytest.raises(runner.RunError, match=name):
        values(NB, tmp_path, params)

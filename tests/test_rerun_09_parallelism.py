"""Chapter 09 re-run for a corpus GQA model on a made-up GPU: its tables name them and show the
library's numbers for that model; a bad parameter stops the run in the setup cell, named."""

import re
from pathlib import Path

import pytest

from twopaths.views import plans, scenario
from twopaths.machinery import runner
from twopaths.calc import ep, placement
from twopaths.calc.placement import Placement
from rerun_case import MY_GPU, NO_HBM, values

NB = Path("notebooks/09-parallelism.ipynb")
MODEL = "Qwen--Qwen3-235B-A22B"
SHOWN = "Qwen3-235B-A22B (Qwen)"   # how tables name it (specs.from_config)
CONTEXT = 500_000


def _run(tmp_path, **params):
    return values(NB, tmp_path, params)


@pytest.mark.notebooks
def test_a_corpus_model_on_a_user_gpu_is_what_the_tables_show(tmp_path):
    v = _run(tmp_path, configs=[MODEL], models=[], gpu="my-gpu", gpu_specs=MY_GPU)
    # the same model and GPU, registered in this process, computed directly
    (model,), gpu = scenario.models([], [MODEL]), scenario.gpu("my-gpu", MY_GPU)
    a = plans.serving_assumptions({})
    units, dispatch, nodes = "units_qwen_qwen3_235b_a22b", "dispatch", "nodes_by_ep"
    for table in (units, dispatch, nodes, "non_expert"):
        assert SHOWN in v[f"{table}.title"]
    for table in (units, dispatch, nodes):
        assert "my-gpu" in v[f"{table}.title"], v[f"{table}.title"]
    assert "Kimi K3" not in v[f"{nodes}.title"]
    # row 0 of the units table: EP8 with attention DP, on 192 GB
    direct = placement.memory(model, gpu, Placement(8), CONTEXT, a)
    assert v[f"{units}[0].decode unit"] == "EP8, attention DP"
    assert v[f"{units}[0].KV room / GPU"] == pytest.approx(direct.kv_room / 1e9)
    assert v[f"{units}[0].requests / GPU"] == direct.requests
    assert v[f"{dispatch}[0].model"] == SHOWN
    assert v[f"{dispatch}[0].GPUs reached"] == pytest.approx(100 * ep.fanout(model, v[f"{dispatch}[0].EP"]).gpus)
    assert v["kv_room_qwen_qwen3_235b_a22b[as shipped]"][0] == pytest.approx(direct.kv_room / 1e9)
    # the article's sizing keeps its shared names and values, on the H200 whatever `gpu` is
    assert v["smallest_unit_k3"] == "EP32, attention TP2"


@pytest.mark.notebooks
@pytest.mark.parametrize("params, named", [
    ({"gpu": "my-gpu", "gpu_specs": NO_HBM}, "gpu_specs.my-gpu.hbm_bytes: got None"),
    ({"models": ["kimi-k3", "kimi-k3"]}, "models: got"),
    ({"context": 0}, "context: got 0"),
])
def test_a_bad_parameter_stops_the_run_named(tmp_path, params, named):
    with pytest.raises(runner.RunError, match=r"cell \d+ \(ParameterError\): " + re.escape(named)):
        _run(tmp_path, **params)

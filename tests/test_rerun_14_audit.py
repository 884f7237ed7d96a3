"""The audit chapter's sensitivity re-run for a corpus model on a made-up GPU: its table and figure
name them, and the table holds the numbers the fleet calculator gives for that model there."""

from pathlib import Path

import pytest

from twopaths.views import plans, scenario
from twopaths.machinery import runner
from twopaths.calc import fleet
from rerun_case import MY_GPU, values

NB = Path("notebooks/14-audit.ipynb")
CORPUS = "Qwen--Qwen3-235B-A22B"
CASE_B = {"models": ["kimi-k3"], "configs": [CORPUS], "gpu": "my-gpu", "gpu_specs": MY_GPU}


def _values(tmp_path, params):
    return values(NB, tmp_path, params)


@pytest.mark.notebooks
def test_the_sensitivity_follows_a_corpus_model_on_a_user_gpu(tmp_path):
    values = _values(tmp_path, CASE_B)
    qwen, = scenario.models([], [CORPUS])
    gpu = scenario.gpu("my-gpu", MY_GPU)
    name, gpu_name = scenario.model_name(qwen), scenario.gpu_name(gpu)
    for title in ("audit_sensitivity.title", "audit_tornado_2.title", "audit_agent_top.title"):
        assert name in values[title] and gpu_name in values[title], values[title]
    # the base row: the chapter's parameters (10,000 sessions of 500K tokens, 25% resident)
    work = fleet.Workload(10_000, 500_000, 0.25)
    a = plans.serving_assumptions({})
    assert values[f"audit_sensitivity[0].{name} nodes"] == fleet.plan(qwen, gpu, a, work).nodes
    k3 = fleet.plan("kimi-k3", gpu, a, work).nodes
    assert values["audit_sensitivity[0].Kimi K3 nodes"] == k3
    assert values[f"audit_sensitivity[0].Kimi K3 : {name}"] == pytest.approx(
        k3 / fleet.plan(qwen, gpu, a, work).nodes)
    # the prose stays about the article's pair, whatever the table compares
    assert values["sens_ratio_public"] == pytest.approx(
        fleet.ratio(plans.K3, plans.V4, gpu, a, work))


@pytest.mark.notebooks
@pytest.mark.parametrize("params, name", [({"models": ["kimi-k3"]}, "models"),
                                          ({"gpu": "my-gpu", "gpu_specs": {"my-gpu": {}}},
                                           "gpu_specs.my-gpu.hbm_bytes")])
def test_a_bad_parameter_fails_in_the_setup_cell_by_name(tmp_path, params, name):
    with pytest.raises(runner.RunError, match=name.replace(".", r"\.")):
        values(NB, tmp_path, params)

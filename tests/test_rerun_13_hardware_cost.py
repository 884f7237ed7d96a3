"""Chapter 13 re-run for a reader's model, GPU and price (issue 15, item 3): its tables name them
and hold what the library computes for them, and a bad parameter stops it in its setup cell."""

from pathlib import Path

import pytest

from twopaths.views import plans, scenario
from twopaths.machinery import runner
from twopaths import specs
from twopaths.calc import cost, fleet, prefill
from rerun_case import MY_GPU, NO_HBM, values

NB = Path(__file__).resolve().parents[1] / "notebooks" / "13-hardware-cost.ipynb"
CORPUS = "Qwen--Qwen3-235B-A22B"     # a GQA mixture of experts from AIConfigurator's corpus
PRICE = 3.5                          # not the chapter's 2.0, so a cost fixed in code shows


@pytest.fixture(scope="module")
def rerun(tmp_path_factory):
    """Case (b) of the contract at another price: the corpus model on a made-up GPU."""
    params = {"models": [], "configs": [CORPUS], "gpus": ["my-gpu"], "gpu_specs": MY_GPU,
              "usd_per_gpu_hour": PRICE}
    return values(NB, tmp_path_factory.mktemp("ch13"), params)


def _library(price=PRICE):
    """What calc computes for the corpus model on my-gpu at the chapter's defaults otherwise."""
    model, = scenario.models([], [CORPUS])
    gpu, = scenario.gpus(["my-gpu"], MY_GPU)
    p = fleet.plan_or_reason(model, gpu, plans.serving_assumptions({}),
                            fleet.workload(context=500_000, rho=0.25))
    assert isinstance(p, fleet.Plan), p
    return model, gpu, p, cost.fleet_cost(p, price, specs.gpu(gpu).hbm_bandwidth)


@pytest.mark.notebooks
def test_the_tables_name_the_corpus_model_and_the_gpu_and_show_its_numbers(rerun):
    model, gpu, p, c = _library()
    for table in ("hw_single_step", "hw_plans", "hw_capacity", "hw_ttft", "hw_cost"):
        title = rerun[f"{table}.title"]
        assert scenario.model_name(model) in title and scenario.gpu_name(gpu) in title, title
        assert "Kimi K3" not in title and "H200" not in title, title
    assert "3.5 USD per GPU-hour" in rerun["hw_cost.title"]
    assert rerun["hw_cost[0].model"] == scenario.model_name(model)
    assert rerun["hw_cost[0].decode unit"] == p.placement.name
    assert rerun["hw_cost[0].GPUs"] == p.gpus
    assert rerun["hw_ttft[0].TTFT bound"] == pytest.approx(1e3 * prefill.plan_ttft(p, 500_000), rel=1e-12)
    assert rerun["hw_ttft[0].GPUs in the unit"] == p.prefill.unit.gpus
    assert rerun["hw_plans[0].nodes"] == p.nodes
    assert scenario.model_name(model) in rerun["fig_hw_step.title"]
    assert rerun["fig_hw_step.x"][-1] == p.decode.requests


@pytest.mark.notebooks
def test_the_cost_cells_follow_the_price(rerun):
    *_, c = _library()
    assert rerun["hw_cost[0].USD / M tokens"] == pytest.approx(c.usd_per_million_tokens, rel=1e-12)
    assert rerun["hw_cost[0].USD / hour, fleet"] == pytest.approx(c.usd_per_hour, rel=1e-12)
    assert rerun["hw_cost[0].USD / session-hour"] == pytest.approx(c.usd_per_session_hour, rel=1e-12)
    assert c.usd_per_million_tokens == pytest.approx(PRICE / 2.0 * _library(2.0)[-1].usd_per_million_tokens)
    # the prose's figures, about the article's pair, follow the price too
    a = plans.serving_assumptions({})
    k3 = fleet.plan(plans.K3, "h200", a, fleet.workload(context=500_000, rho=0.25))
    assert rerun["usd_k3_h200"] == pytest.approx(cost.fleet_cost(k3, PRICE).usd_per_million_tokens, rel=1e-12)
    assert rerun["usd_per_gpu_hour"] == PRICE


@pytest.mark.notebooks
@pytest.mark.parametrize("name, value, message", [
    ("usd_per_gpu_hour", 0, "usd_per_gpu_hour: got 0"),
    ("b300_bandwidth_TBps", -1.0, "b300_bandwidth_TBps: got -1.0"),
    ("models", ["kimi-k3", "kimi-k3"], "models: got"),
    ("gpus", ["h300"], "gpus: got 'h300'"),
    ("gpu_specs", NO_HBM,
     "gpu_specs.my-gpu.hbm_bytes: got None"),
    # the prose's figures are the article's pair's at this context: K3 holds no 3M-token request
    ("context", 30_000_000, "context: got 30000000"),     # V4-Pro holds no request there
])
def test_a_bad_parameter_stops_the_chapter_in_its_setup_cell(tmp_path, name, value, message):
    with pytest.raises(runner.RunError) as info:
        runner.execute(NB, tmp_path / "out.ipynb", {"profile": "smoke", "device": "cpu", name: value})
    text = str(info.value)
    assert message in text and "ParameterError" in text, text
    assert "failed in cell 3" in text, text

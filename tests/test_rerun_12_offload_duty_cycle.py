"""Chapter 12 re-run for a corpus model on a reader's GPU and a B300: its scenario tables and figure
name them, hold a row (a line) for the model on each GPU and show the calculators' numbers for it;
a bad parameter stops it in the setup cell."""

from pathlib import Path

import pytest

from test_scenario import restore_registry  # noqa: F401  (the registry is restored)
from twopaths.views import plans, scenario
from twopaths.machinery import runner
from twopaths.calc import decode, fleet
from twopaths.specs import deployment as dep
from rerun_case import FIGURES, NO_HBM, values

NB = Path(__file__).resolve().parents[1] / "notebooks" / "12-offload-duty-cycle.ipynb"
CORPUS = "Qwen--Qwen3-235B-A22B"
GPUS = ["my-gpu", "b300"]     # the reader's GPU first, then one of the registry's
CASE = {"configs": [CORPUS], "models": [], "gpus": GPUS, "gpu_specs": {"my-gpu": FIGURES}}
TABLES = ("offload_plans", "offload_peak", "offload_speed", "offload_consistent", "offload_swap", "offload_rho_curve")


def _run(params, out_dir):
    return values(NB, out_dir, params)


@pytest.mark.notebooks
def test_a_corpus_model_on_a_reader_gpu(tmp_path):
    values = _run(CASE, tmp_path)
    model = scenario.models([], [CORPUS])[0]
    gpus = scenario.gpus(GPUS, {"my-gpu": FIGURES})
    for name in TABLES:
        title = values[f"{name}.title"]
        assert scenario.model_name(model) in title, title
        assert all(scenario.gpu_name(g) in title for g in gpus), title
        assert "Kimi K3" not in title and "H200" not in title, title
    a = plans.serving_assumptions()
    api = dep.scenarios()["api"]
    rho = plans.scenario_rho("api")
    # GPU by GPU, the standard API row (upper bound, agent, api, batch), recomputed from the calculators
    for i, g in enumerate(gpus):
        p = fleet.plan(model, g, a, fleet.Workload(10_000, 500_000, rho))
        row = f"offload_plans[{4 * i + 2}]"
        assert values[f"{row}.GPU"] == scenario.gpu_name(g)
        assert values[f"{row}.scenario"] == "standard API"
        assert values[f"{row}.nodes"] == p.nodes
        assert values[f"{row}.decode unit"] == p.placement.name
        full = fleet.plan(model, g, a, fleet.Workload(10_000, 500_000, 1.0))
        assert values[f"offload_speed[{i}].GPU"] == scenario.gpu_name(g)
        assert values[f"offload_speed[{i}].tokens/s per session"] == pytest.approx(
            1 / decode.plan_step(full).step, rel=1e-12)
        line = values[f"offload_rho_curve[{scenario.model_name(model)} on {scenario.gpu_name(g)}]"]
        assert line[-1] == full.nodes          # the figure's last point is rho = 100%
        turns = rho * 10_000 / api.w_decode      # a cache lands on every rank of a group each turn
        per_gpu = turns * p.decode.request_bytes * p.placement.attention_tp / (p.d_nodes * a.gpus_per_node)
        row = f"offload_swap[{3 * i + 1}]"       # agent, api, batch
        assert values[f"{row}.GPU"] == scenario.gpu_name(g)
        assert values[f"{row}.per decode GPU"] == pytest.approx(per_gpu / 1e9, rel=1e-12)
    # the article's prose values stay the article's: K3 and V4-Pro on H200
    k3 = fleet.plan("kimi-k3", "h200", a, fleet.Workload(10_000, 500_000, 0.25))
    assert values["plan_k3_h200_rho25_nodes"] == k3.nodes


@pytest.mark.notebooks
@pytest.mark.parametrize("name, value, message", [
    ("w_idle_agent", 0, "w_idle_agent: got 0"),
    ("quantile", 1.0, "quantile: got 1.0"),
    ("host_link_GBps", 0, "host_link_GBps: got 0"),
    ("gpus", ["my-gpu", "my-gpu"], "gpus: got ['my-gpu', 'my-gpu']"),
    ("gpus", ["h300"], "gpus: got 'h300'"),
    ("gpu_specs", NO_HBM,
     "gpu_specs.my-gpu.hbm_bytes"),
])
def test_a_bad_parameter_stops_the_chapter_in_its_setup_cell(tmp_path, name, value, message):
    params = {"gpus": ["my-gpu"], "gpu_specs": {"my-gpu": FIGURES}, name: value}
    with pytest.raises(runner.RunError) as info:
        _run(params, tmp_path)
    text = str(info.value)
    assert message in text and "ParameterError" in text and "failed in cell 3" in text, text

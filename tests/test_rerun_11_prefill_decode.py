"""Chapter 11 re-run for a reader's model and GPU: its tables name them and show their numbers."""

import re
from pathlib import Path

import pytest

from twopaths.views import plans, scenario
from twopaths.machinery import runner
from twopaths.calc import bare, fleet
from twopaths.specs.deployment import workload
from rerun_case import MY_GPU, NO_HBM, values

pytestmark = pytest.mark.notebooks

NB = Path("notebooks/11-prefill-decode.ipynb")
QWEN = "Qwen--Qwen3-235B-A22B"


def _values(tmp_path, params):
    return values(NB, tmp_path, params)


def test_a_corpus_model_on_a_user_gpu(tmp_path):
    v = _values(tmp_path, {"configs": [QWEN], "models": [], "gpu": "my-gpu", "gpu_specs": MY_GPU})
    (m,), g = scenario.models([], [QWEN]), scenario.gpu("my-gpu", MY_GPU)
    for table in ("bare", "plans", "formats", "prefill", "prefill_prompts", "fig_by_ep", "fig_sweep_0"):
        assert scenario.model_name(m) in v[f"{table}.title"] and "my-gpu" in v[f"{table}.title"], table
    assert "Kimi K3" not in v["plans.title"] and v["plans[0].model"] == scenario.model_name(m)
    # the numbers are this model's on this GPU, recomputed here from the calculators
    a = plans.serving_assumptions({})
    p = fleet.plan(m, g, a, fleet.workload(10_000, 500_000))
    assert (v["plans[0].decode unit"], v["plans[0].nodes"]) == (p.placement.name, p.nodes)
    assert v["prefill[0].prefill nodes by work"] == p.prefill.by_work
    assert v["formats[0].nodes"] == p.nodes     # as shipped, BF16 cache: the plan above
    # the bare count gives each GPU all it offers but the least runtime reserve, SGLang's 10 GiB floor
    b = bare.bare(m, g, basis="public", concurrency=10_000, formats=a.formats(),
                  capacity_bytes=a.usable_bytes(g) - 10 * 2**30, kv_dtype=a.kv_dtype, state_dtype=a.state_dtype)
    assert v["bare[0].bare GPUs"] == b.total
    # the article's case stays the article's
    assert v["article_arithmetic[0].nodes"] == 812 and v["bare_article[0].bare GPUs"] == 4_389


def test_the_issue_case_b300_and_2000_sessions(tmp_path):
    """The re-run issue 15 reported, where 1 of 66 values moved: now the plans are that scenario's."""
    v = _values(tmp_path, {"gpu": "b300", "concurrency": 2_000})
    a, work = plans.serving_assumptions({}), fleet.workload(2_000, workload().average_context)
    assert "B300" in v["plans.title"] and "2,000 sessions" in v["plans.title"]
    for i, m in enumerate(("kimi-k3", "deepseek-v4-pro")):
        p = fleet.plan(m, "b300", a, work)
        got = [v[f"plans[{i}].{c}"] for c in ("decode nodes", "prefill nodes (P:D)", "nodes")]
        assert got == [p.d_nodes, p.p_nodes, p.nodes], m
    assert v["pd_k3_nodes"] == fleet.plan("kimi-k3", "b300", a, work).nodes


@pytest.mark.parametrize("params, named", [
    ({"models": ["kimi-k3", "kimi-k3"]}, "models"),
    ({"gpu": "h300"}, "gpu"),
    ({"gpu": "my-gpu", "gpu_specs": NO_HBM}, "gpu_specs.my-gpu"),
    ({"concurrency": 0}, "concurrency"),
])
def test_a_bad_parameter_fails_named(tmp_path, params, named):
    with pytest.raises(runner.RunError, match=rf"failed in cell 3 \(ParameterError\): {re.escape(named)}"):
        _values(tmp_path, params)

"""A plan priced, a plan's first token and its step curve (calc.cost, calc.prefill, calc.decode):
what chapter 13's re-runnable tables and figures are computed from."""

import math

import numpy as np
import pytest

from twopaths.views import plans
from twopaths.calc import cost, decode, fleet, prefill
from twopaths.errors import ParameterError

K3, V4 = plans.K3, plans.V4
A = plans.serving_assumptions({})
W = fleet.workload(rho=0.25)


def test_a_fleet_cost_is_the_plans_gpus_over_the_tokens_it_decodes():
    p = fleet.plan(K3, "h200", A, W)
    c = cost.fleet_cost(p, 2.0)
    s = decode.plan_step(p)
    assert c.step == s and c.tokens_per_s == pytest.approx(W.resident / s.step)
    assert c.usd_per_million_tokens == cost.usd_per_million_tokens(p.gpus, 2.0, W.resident / s.step)
    assert c.usd_per_hour == p.gpus * 2.0
    assert c.usd_per_session_hour == pytest.approx(p.gpus * 2.0 / W.concurrency)


def test_every_cost_follows_the_price_and_the_bandwidth():
    p = fleet.plan(V4, "b300", A, W)
    two, three = cost.fleet_cost(p, 2.0), cost.fleet_cost(p, 3.5)
    for field in ("usd_per_hour", "usd_per_session_hour", "usd_per_million_tokens"):
        assert getattr(three, field) == pytest.approx(1.75 * getattr(two, field), rel=1e-12)
    slower = cost.fleet_cost(p, 2.0, bandwidth=7.75e12)
    assert slower.step.step > two.step.step and slower.usd_per_million_tokens > two.usd_per_million_tokens


@pytest.mark.parametrize("price", [0, 0.0, -1.0])
def test_a_free_or_negative_gpu_hour_is_refused_by_name(price):
    with pytest.raises(ParameterError, match="usd_per_gpu_hour"):
        cost.fleet_cost(fleet.plan(K3, "h200", A, W), price)


def test_a_model_without_a_plan_is_a_reason_not_an_error():
    assert isinstance(fleet.plan_or_reason(K3, "h200", A, W), fleet.Plan)
    long = fleet.workload(context=100_000_000, rho=0.25)      # past what DCP8 stripes onto a GPU
    reason = fleet.plan_or_reason(K3, "h100", A, long)
    with pytest.raises(fleet.NoValidPlan) as info:
        fleet.plan(K3, "h100", A, long)
    assert reason == f"no valid plan; smallest change that makes one valid: {info.value.fix}"
    assert fleet.plan_or_reason("qwen-2.5-72b", "h200", A, W) == fleet.plan("qwen-2.5-72b", "h200", A, W)


def test_node_gain_is_the_fleets_gain_or_the_reason():
    assert cost.node_gain(K3, "h200", "b300", A, W) == fleet.gain(K3, "h200", "b300", A, W)
    long = fleet.workload(context=100_000_000, rho=0.25)      # past what DCP8 stripes onto a GPU
    assert cost.node_gain(K3, "h100", "h200", A, long).startswith("no valid plan")
    assert cost.node_gain(K3, "h200", "h100", A, long).startswith("no valid plan")


def test_plan_ttft_uses_the_plans_own_prefill_unit():
    for m in (K3, V4):
        for g in ("h200", "b300"):
            p = fleet.plan(m, g, A, W)
            t = prefill.plan_ttft(p, 500_000)
            assert t == prefill.ttft_bound(m, g, 500_000, p.prefill.unit.gpus, basis="public")
            # the public config's activated parameters are the article's: the same bound
            assert t == prefill.ttft_bound(m, g, 500_000, p.prefill.unit.gpus)
    # units differ: K3's on a B300 is smaller than on an H200, so its bound is longer there
    h, b = (fleet.plan(K3, g, A, W) for g in ("h200", "b300"))
    assert b.prefill.unit.gpus < h.prefill.unit.gpus
    assert prefill.plan_ttft(b, 500_000) * b.prefill.unit.gpus < prefill.plan_ttft(h, 500_000) * h.prefill.unit.gpus


def test_batch_grid_keeps_every_small_batch_and_thins_large_ones():
    assert list(decode.batch_grid(5)) == [1, 2, 3, 4, 5]
    g = decode.batch_grid(50_000, points=200)
    assert g[0] == 1 and g[-1] == 50_000 and len(g) <= 200 and np.all(np.diff(g) > 0)
    assert list(g[:10]) == list(range(1, 11))
    with pytest.raises(ParameterError, match="most"):
        decode.batch_grid(0)


def test_plan_steps_are_the_plans_steps_and_nan_past_a_full_gpu():
    p = fleet.plan(V4, "h200", A, W)
    n = p.decode.requests
    steps = decode.plan_steps(p, [1, n, n + 1], bandwidth=4e12)
    assert steps[0] == decode.plan_step(p, 1, 4e12).step and steps[1] == decode.plan_step(p, n, 4e12).step
    assert math.isnan(steps[2])


def test_shared_steps_put_every_plan_on_one_grid_that_holds_each_full_batch():
    small, large = fleet.plan(K3, "h200", A, W), fleet.plan(V4, "b300", A, W)
    x, steps = decode.shared_steps({"k": small, "v": large, "none": "no plan"},
                                   {"k": None, "v": 7e12, "none": None})
    assert {small.decode.requests, large.decode.requests} <= set(x) and x[0] == 1
    for key, p, bw in (("k", small, None), ("v", large, 7e12)):     # each curve ends at its full GPU
        n = list(x).index(p.decode.requests)
        assert steps[key][n] == decode.plan_step(p, bandwidth=bw).step and np.isnan(steps[key][n + 1:]).all()
        assert not np.isnan(steps[key][:n + 1]).any()
    assert np.isnan(steps["none"]).all() and len(steps["none"]) == len(x)

"""calc.offload for any model a reader names: a plan or why there is none, the peak share, a full
GPU's decode speed and the swap traffic of a plan (chapter 12's scenario tables)."""

import math

import pytest

from twopaths.views import plans
from twopaths.calc import decode, fleet, offload
from twopaths.calc.placement import request_share
from twopaths.errors import ParameterError

A = plans.serving_assumptions()
WORK = fleet.Workload(10_000, 500_000, 0.25)


@pytest.mark.parametrize("q", [0.5, 0.9, 0.999])
def test_a_quantile_in_its_range_passes(q):
    assert offload.check_quantile(q) == q


@pytest.mark.parametrize("q", [0, -0.1, 0.3, 1, 1.0, 1.5, math.nan, math.inf, True, "0.9"])
def test_a_quantile_outside_half_to_one_is_refused_by_name(q):
    with pytest.raises(ParameterError) as e:
        offload.check_quantile(q)
    assert e.value.name == "quantile" and "[0.5, 1)" in e.value.allowed


def test_plan_or_reason_is_the_fleet_plan_where_one_exists():
    assert fleet.plan_or_reason("kimi-k3", "h200", A, WORK) == fleet.plan("kimi-k3", "h200", A, WORK)


def test_a_dense_model_is_planned_like_any_other():
    assert fleet.plan_or_reason("qwen-2.5-72b", "h200", A, WORK) == fleet.plan("qwen-2.5-72b", "h200", A, WORK)


def test_no_valid_plan_names_the_smallest_change():
    work = fleet.Workload(10_000, 500_000_000, 0.25)    # no GPU holds one such request, even in 8 stages
    why = fleet.plan_or_reason("kimi-k3", "h200", A, work)
    with pytest.raises(fleet.NoValidPlan) as e:
        fleet.plan("kimi-k3", "h200", A, work)
    assert why.startswith("no valid plan") and e.value.fix in why


def test_nodes_and_ratios_are_none_where_a_row_says_why():
    p, q = (fleet.plan(m, "h200", A, WORK) for m in ("kimi-k3", "deepseek-v4-pro"))
    assert offload.plan_nodes(p) == p.nodes and offload.plan_nodes("why") is None
    assert offload.node_ratio(q, p) == q.nodes / p.nodes
    assert offload.node_ratio("why", p) is None and offload.node_ratio(q, "why") is None


def test_peak_rho_holds_the_peak_resident_sessions():
    r = offload.peak_rho(10_000, 0.25, 0.999)
    assert fleet.Workload(10_000, 500_000, r).resident == offload.peak_resident(10_000, 0.25, 0.999)
    assert r > 0.25


def test_full_gpu_speed_is_one_token_per_step_of_the_plan_for_every_session():
    p = fleet.plan("deepseek-v4-pro", "b300", A, fleet.Workload(10_000, 500_000, 1.0))
    speed = fleet.full_gpu_speed("deepseek-v4-pro", "b300", A, 10_000, 500_000)
    assert speed == pytest.approx(1 / decode.plan_step(p).step, rel=1e-12)


@pytest.mark.parametrize("model", ["kimi-k3", "deepseek-v4-pro"])
def test_swap_counts_every_turn_once_and_keeps_every_waiting_cache(model):
    p = fleet.plan(model, "h200", A, WORK)
    s = offload.swap(p, 5.0, 64e9)
    full = request_share(model, WORK.context, 1, A)
    # a turn every 5 s for each resident session, each landing its shares on every rank of a group
    turns = WORK.concurrency * WORK.rho / 5.0
    assert s.rate == pytest.approx(turns * p.decode.request_bytes * p.placement.attention_tp, rel=1e-12)
    assert s.per_gpu * p.d_nodes * A.gpus_per_node == pytest.approx(s.rate, rel=1e-12)
    assert s.wait == pytest.approx(p.decode.request_bytes / 64e9, rel=1e-12)
    # the caches off the GPUs and the resident ones add up to every session's
    assert s.held + WORK.concurrency * WORK.rho * full == pytest.approx(WORK.concurrency * full, rel=1e-12)
    assert s.held_per_node * p.d_nodes == pytest.approx(s.held, rel=1e-12)


@pytest.mark.parametrize("host", [0, -1.0, math.nan])
def test_swap_refuses_a_host_link_without_bandwidth(host):
    with pytest.raises(ParameterError) as e:
        offload.swap(fleet.plan("kimi-k3", "h200", A, WORK), 5.0, host)
    assert e.value.name == "host_bytes_per_s"

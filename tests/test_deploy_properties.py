"""Deployment calculators: layout invariants (hypothesis), bandwidth, and published anchors
(anchors.yaml) the calculators must respect. Plans and the sweep: test_fleet.py."""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from twopaths.calc import decode, ep, kv, moe, weights
from twopaths.specs import model as model_spec
from twopaths.specs.deployment import anchors

K3, V4 = "kimi-k3", "deepseek-v4-pro"
FAST = settings(max_examples=25)


# --- experts and weights per GPU add up to the totals ----------------------------------------------

def _divisor_cases(method):
    cases = []
    for m in (K3, V4):
        for r in (0, 32):
            slots = moe.routed_experts(m, method) + r
            cases += [(m, r, n) for n in range(1, slots + 1) if slots % n == 0 and n <= 256]
    return cases


@FAST
@given(case=st.sampled_from(_divisor_cases("article")))
def test_article_layout_sums_to_the_totals(case):
    model, redundant, n = case
    row = ep.ep_row(model, "h200", n, redundant_experts=redundant)
    slots = moe.routed_experts(model) + redundant
    assert row.experts_per_gpu * n == slots
    assert row.weights_per_gpu * n == pytest.approx(slots * ep.article_expert_bytes(model), rel=1e-12)


@FAST
@given(case=st.sampled_from(_divisor_cases("public")))
def test_public_layout_sums_to_the_totals(case):
    model, redundant, n = case
    w = weights.weights_per_gpu(model, n, redundant_experts=redundant)
    experts = moe.routed_experts(model, "public")
    routed = weights.weight_bytes(model)["routed_experts"]
    assert w.experts_per_gpu * n == experts + redundant
    assert w.expert_bytes * n == pytest.approx(routed * (experts + redundant) / experts, rel=1e-12)


# --- bandwidth ------------------------------------------------------------------------------------

@FAST
@given(w=st.floats(0, 1e12), c=st.floats(0, 1e12), bw=st.floats(1e9, 1e14))
def test_halving_bandwidth_never_shortens_a_step(w, c, bw):
    assert decode.step_time(w, c, bw / 2) >= decode.step_time(w, c, bw)


@pytest.mark.parametrize("model, g, n, redundant", [(K3, "b300", 64, 0), (V4, "h200", 16, 0), ("deepseek-v3", "h100", 144, 32)])
def test_halving_bandwidth_lengthens_a_deployment_step(model, g, n, redundant):
    bound = decode.deployment_bound(model, g, n, 8_000, redundant_experts=redundant)
    times = decode.bandwidth_sweep(bound, [2.0, 1.0, 0.5, 0.25])
    assert (np.diff(times) > 0).all() and times[2] == pytest.approx(2 * bound.step)


def test_experts_touched():
    assert decode.experts_touched(0, 8, 256) == 0
    assert decode.experts_touched(1, 8, 256) == pytest.approx(8 / 256)
    assert decode.experts_touched(10_000, 8, 256) == pytest.approx(1.0)


# --- published anchors -------------------------------------------------------------------------------

@pytest.mark.parametrize("name, a", sorted(anchors("decode_throughput").items()))
def test_decode_bound_is_never_below_a_measured_throughput(name, a):
    bound = decode.deployment_bound(a["model"], a["gpu"], a["ep"], a["context"], kv_dtype=a["kv_dtype"],
                                    redundant_experts=a["redundant_experts"], tokens_per_step=a["tokens_per_step"])
    assert bound.per_gpu * a["gpus_per_node"] >= a["per_node"], (name, bound)


@pytest.mark.parametrize("name, a", sorted(anchors("kv_per_token").items()))
def test_published_kv_per_token_reproduced_exactly(name, a):
    spec = model_spec(a["model"])
    assert kv.kv_bytes_per_token(spec, a["kv_dtype"]) == a["bytes"]
    if "per_layer_entry" in a:
        mla = next(g for g in spec.attention if g.kind == "mla")
        assert kv.layer_bytes(spec, "mla", 1, a["kv_dtype"]) == a["per_layer_entry"]
        assert mla["kv_lora_rank"] + mla["rope_dim"] == 576


# --- dispatch fan-out and a plan's decode step ---------------------------------------------------

def test_dispatch_fanout_against_enumeration():
    from itertools import combinations
    experts, k, per = 8, 3, 2
    share = [len({e // per for e in c}) / (experts // per) for c in combinations(range(experts), k)]
    assert ep.dispatch_fanout(experts, k, per) == pytest.approx(np.mean(share))
    assert ep.dispatch_fanout(896, 1, 28) == pytest.approx(28 / 896)
    assert ep.dispatch_fanout(896, 16, 896) == 1.0

"""Decode units of any model (calc.placement.unit_rows, no_unit_reason, non_expert_bytes) and one
token's dispatch (calc.ep.fanout), as chapter 09's re-run tables show them."""

import json

import pytest

import need

from twopaths.views import plans
from twopaths import specs
from twopaths.calc import ep, placement, weights
from twopaths.calc.placement import Placement
from twopaths.errors import ParameterError
from twopaths.specs.lookup import corpus_path

A = plans.serving_assumptions({})
K3, V4, DENSE = "kimi-k3", "deepseek-v4-pro", "qwen-2.5-72b"


@pytest.fixture(scope="module")
def sixty():
    """Qwen3-235B-A22B's corpus config with 60 routed experts instead of 128 (made up: no
    whole-node EP size divides 60)."""
    path = corpus_path("Qwen--Qwen3-235B-A22B")
    if path is None:
        need.missing("AIConfigurator's corpus", "pip install -r requirements.txt")
    c = json.loads(path.read_text())
    return specs.add_model({**c, "num_experts": 60}, "qwen3-sixty-experts")


def test_a_moe_model_whose_experts_split_has_units():
    assert placement.no_unit_reason(K3, A) is None and placement.no_unit_reason(V4, A) is None


def test_a_dense_model_says_so():
    assert "dense" in placement.no_unit_reason(DENSE, A)
    assert placement.unit_rows(DENSE, "h200", 500_000, A) == ()
    assert placement.non_expert_bytes(DENSE, 1, A) is None


def test_experts_that_split_over_no_whole_node_ep_say_so(sixty):
    # vLLM splits 60 experts over a node unevenly (8 on the first four GPUs, 7 on the rest) where
    # nothing is dispatched: one TP8 group, the node's only whole-node unit
    rows = placement.unit_rows(sixty, "h200", 500_000, A)
    assert placement.no_unit_reason(sixty, A) is None
    assert [r.memory.placement for r in rows] == [Placement(8, 8)] and rows[0].experts_per_gpu == 8
    every = weights.weights_per_gpu(sixty, 1, tp=8, formats=A.formats()).expert_bytes    # all 60 experts
    assert rows[0].memory.expert_bytes == pytest.approx(every * 8 / 60)                 # the busiest GPU's
    assert placement.engine_for(sixty, Placement(8, 8), A).id == "vllm"
    assert not placement.can_launch(specs.engines.engine("sglang"), sixty, Placement(8, 8), A)
    assert Placement(8, 4) not in placement.placements(sixty, A)     # two groups would dispatch
    # with EPLB's redundant experts nothing splits unevenly: only the even sizes are left
    why = placement.no_unit_reason(sixty, A.but(redundant_experts=2))
    assert "62 expert slots" in why and "8-GPU nodes" in why
    assert placement.unit_rows(sixty, "h200", 500_000, A.but(redundant_experts=2)) == ()
    # four replicas make 64 slots, which split over one node
    assert placement.no_unit_reason(sixty, A.but(redundant_experts=4)) is None
    # nodes of 6 GPUs: 896 = 2^7 x 7 has no multiple of 6 among its divisors
    assert "6-GPU nodes" in placement.no_unit_reason(K3, A.but(gpus_per_node=6, max_attention_tp=2, max_dcp=2))


def test_unit_rows_are_one_gpu_of_each_unit_with_dp_and_the_widest_tp():
    rows = placement.unit_rows(V4, "h200", 500_000, A)
    assert {r.memory.placement.attention_tp for r in rows} == {1, 8}
    assert [r.memory.placement.ep for r in rows] == sorted(r.memory.placement.ep for r in rows)
    assert max(r.memory.placement.ep for r in rows) == 128
    for r in rows:
        p = r.memory.placement
        assert r.memory == placement.memory(V4, "h200", p, 500_000, A)
        assert r.experts_per_gpu * p.ep == 384
        assert r.nodes == p.ep / 8
        assert r.requests_per_unit == r.memory.requests * p.attention_groups
    assert placement.unit_rows(V4, "h200", 500_000, A, maximum=16)[-1].memory.placement.ep == 16


@pytest.mark.parametrize("tp", [1, 2, 4, 8])
def test_non_expert_bytes_are_what_a_unit_holds_outside_its_experts(tp):
    for m in (K3, V4):
        unit = placement.memory(m, "h200", Placement(16, tp), 500_000, A)      # beside DP attention
        assert placement.non_expert_bytes(m, tp, A) == unit.other_bytes
    # K3 ships its attention in BF16: FP8 non-expert weights halve what every GPU repeats
    fp8 = placement.non_expert_bytes(K3, tp, A.but(weights="fp8-non-expert"))
    assert fp8 < placement.non_expert_bytes(K3, tp, A)


def test_non_expert_bytes_of_a_tp_the_heads_refuse_is_none():
    assert placement.non_expert_bytes(K3, 3, A) is not None     # 96 heads
    assert placement.non_expert_bytes(K3, 5, A) is None


def test_fanout_counts_gpus_and_whole_nodes():
    f = ep.fanout(K3, 32)
    assert (f.experts, f.top_k, f.experts_per_gpu) == (896, 16, 28)
    assert f.gpus == ep.dispatch_fanout(896, 16, 28)
    assert f.nodes == ep.dispatch_fanout(896, 16, 224)
    assert f.gpus < 0.5 < f.nodes          # not the article's 16/32 either way
    v = ep.fanout(V4, 16)                  # the public config's 384 experts, not the article's 256
    assert (v.experts, v.experts_per_gpu) == (384, 24)
    assert ep.fanout(V4, 8, gpus_per_node=4).nodes == ep.dispatch_fanout(384, 6, 192)
    with pytest.raises(ParameterError, match="ep"):
        ep.fanout(K3, 1000)


def test_an_uneven_split_counts_the_busiest_gpu():
    assert weights.experts_per_gpu(60, 8, uneven=True) == 8 and weights.experts_per_gpu(64, 8, uneven=True) == 8
    assert weights.experts_per_gpu(61, 4, 3, uneven=True) == 16        # 64 slots: even after all
    with pytest.raises(ParameterError, match="divisor"):
        weights.experts_per_gpu(60, 8)

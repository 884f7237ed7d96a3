"""A dense model is planned like an MoE one, in units of one node of tensor-parallel groups: each GPU
holds its TP share of every weight and its share of whole requests; the node counts follow.

Recomputed here by hand from the model's config (Qwen2.5-72B: 80 layers, 8 K/V heads of 128) and
``weights_per_gpu``, so a planner that shards the cache the wrong way, pools memory across a
group or counts units in GPUs instead of nodes fails."""

import math

import pytest

from twopaths.calc import fleet, placement, weights
from twopaths.calc.placement import Placement
from twopaths.specs.serving import assumptions

A = assumptions("book")
QWEN72, LLAMA = "qwen-2.5-72b", "llama-3.1-405b"
WORK = fleet.Workload(10_000, 500_000, 0.25)


def test_a_dense_unit_is_one_tp_group():
    """A dense unit is one TP group (several share a node), or PP stages of a node's TP8 group."""
    got = placement.placements(QWEN72, A)
    assert got[:4] == tuple(Placement(t, t, routed=False) for t in (1, 2, 4, 8))
    assert [p.name for p in got[:4]] == ["dense, one GPU", "dense, TP2", "dense, TP4", "dense, TP8"]
    assert got[4:] == tuple(Placement(8, 8, routed=False, pp=s) for s in placement.PP_STAGES)
    assert all(p.routed for p in placement.placements("kimi-k3", A))


@pytest.mark.parametrize("tp", [1, 2, 4, 8])
def test_each_gpu_holds_its_tp_share_of_weights_and_whole_requests(tp):
    m = placement.memory(QWEN72, "h200", Placement(8, tp, routed=False), 500_000, A)
    per_token = 80 * 8 * 128 * 2 * 2                      # layers x K/V heads x dim x (K, V) x BF16
    assert m.request_bytes == 500_000 * per_token * max(8 // tp, 1) / 8   # 8 K/V heads split tp ways
    w = weights.weights_per_gpu(QWEN72, 8, tp=tp, formats=A.formats())
    assert (m.expert_bytes, m.other_bytes) == (0.0, w.other_bytes)
    # a dense unit uses no DeepEP: its reserve is SGLang's 10 GiB floor on an H200
    assert m.reserve.total == 10 * 2**30 and m.request_cap is None
    room = A.usable_fraction * A.capacity_bytes("h200") - 10 * 2**30 - w.other_bytes - A.overhead_bytes
    assert m.requests == max(int(room // m.request_bytes), 0)


def test_the_plan_has_the_fewest_nodes_and_every_gpu_fits():
    p = fleet.plan(QWEN72, "h200", A, WORK)
    per_gpus = {}      # units are counted in GPUs now that several share a node
    for pl in fleet.staged(QWEN72, "h200", WORK.context, A, placement.placements(QWEN72, A)):
        m = placement.memory(QWEN72, "h200", pl, WORK.context, A)
        if m.valid:
            per_gpus[pl] = math.ceil(WORK.resident / (m.requests * pl.attention_groups)) * pl.gpus
    assert p.d_gpus == min(per_gpus.values()) == per_gpus[p.placement]
    assert p.d_nodes == math.ceil(p.d_gpus / A.gpus_per_node)
    assert p.decode.used <= p.decode.usable
    assert p.nodes == p.d_nodes + p.p_nodes


def test_a_dense_model_that_only_just_fits_a_node_and_one_that_does_not():
    # Llama-3.1-405B in BF16: 101.5 GB of weights a GPU at TP8 (its embedding split too) and a
    # 10.7 GB reserve beside a 500K request's 32.3 GB share leave about 6 GB of 150.8 GB: one
    # request a TP8 group, short of a second
    p = fleet.plan(LLAMA, "h200", A, WORK)
    assert p.placement == Placement(8, 8, routed=False) and p.decode.requests == 1
    assert 0 < p.decode.spare < p.decode.request_bytes and p.d_nodes == WORK.resident
    long = fleet.Workload(10_000, 1_000_000, 0.25)             # twice the cache: no node holds it,
    staged = fleet.plan(LLAMA, "h200", A, long)                 # so it is pipelined over two nodes
    assert staged.placement == Placement(8, 8, routed=False, pp=2) and staged.decode.used <= staged.decode.usable
    assert fleet.plan(LLAMA, "h200", A.but(weights="fp8-non-expert"), long).placement.pp == 1


def test_a_dense_decode_step_reads_its_whole_tp_share_and_each_requests_cache():
    from twopaths.calc import decode
    p = fleet.plan(QWEN72, "h200", A, WORK)
    s = decode.plan_step(p, 2)
    assert s.weight_bytes == p.decode.other_bytes                     # no experts to skip
    assert s.kv_bytes == 2 * p.decode.request_bytes                   # a GQA cache is read whole


# Qwen2.5-72B at 500K BF16 tokens: 80 layers x (K, V) x 8 heads x 128 x 2 B = 327,680 B a token
# (320 KB, DeepSeek ISCA'25 Table 1), so 163.84 GB a request; a rank keeps its heads' part, and
# past 8 ranks one head each (16 ranks: every head on two).
@pytest.mark.parametrize("tp, rank_bytes", [(1, 163_840_000_000), (2, 81_920_000_000), (8, 20_480_000_000),
                                            (16, 20_480_000_000)])
def test_a_rank_reads_and_holds_only_its_own_kv_heads(tp, rank_bytes):
    """A GQA cache is read whole but split by heads, as it is held: both written from the config."""
    assert placement.read_share(QWEN72, 500_000, tp, A) == rank_bytes
    assert placement.request_share(QWEN72, 500_000, tp, A) == rank_bytes

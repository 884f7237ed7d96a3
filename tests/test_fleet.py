"""Serving plans that physically fit (calc.placement, calc.fleet, calc.sweep).

Hand-computed examples for each placement kind, the cache that attention TP does and does not
shard, property tests that no chosen plan overfills a GPU, the smallest change when nothing fits,
and the sweep against the plan."""

import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from twopaths.calc import fleet, kv, placement, sweep, weights
from twopaths.calc.placement import Placement, memory, placements, request_share
from twopaths.specs import BOOK_MODELS, gpu as gpu_spec
from twopaths.specs.serving import assumptions, weight_scenarios

K3, V4 = "kimi-k3", "deepseek-v4-pro"
BOOK = assumptions()
H200_DEVICE = 143_771 * 2**20            # nvidia-smi memory.total, bytes
FAST = settings(max_examples=40, deadline=None)


# --- hand-computed examples, one per placement kind -----------------------------------------------

def test_k3_attention_tp2_by_hand():
    """K3 on H200, EP224 with attention TP2, a 500K-token BF16 request, every session resident."""
    by_group = weights.weight_bytes(K3)
    experts = by_group["routed_experts"] * 4 / 896              # 896 experts over 224 GPUs
    # Whole on both ranks (BF16): MLA's q_a and kv_a, KDA's forget-gate down, router, latent
    # projections, shared experts (replicated under vLLM's sequence-parallel MoE), AttnRes, norms;
    # the rest splits in two, the embedding too (vLLM, which launches it, makes it vocabulary-parallel).
    assert placement.engine_for(K3, Placement(224, 2), BOOK).id == "vllm"
    whole = 2 * (24 * 7168 * (1536 + 576) + 69 * 7168 * 128) + sum(
        by_group[g] for g in ("router", "latent_proj", "shared_experts", "residual", "norms"))
    other = whole + (sum(by_group.values()) - by_group["routed_experts"] - whole) / 2
    mla = 24 * (512 + 64) * 2 * 500_000                          # the latent: every rank holds it
    kda = 69 * kv.layer_bytes(K3, "kda") / 2                      # the KDA state: split by heads
    room = 0.9 * H200_DEVICE - experts - other
    requests = math.floor(room / (mla + kda))
    assert requests == 3
    m = memory(K3, "h200", Placement(224, 2), 500_000, BOOK)
    assert (m.requests, m.request_bytes) == (requests, pytest.approx(mla + kda, rel=1e-12))
    assert m.weights == pytest.approx(experts + other, rel=1e-12)
    p = fleet.plan(K3, "h200", BOOK, placement=Placement(224, 2))
    per_unit = 112 * requests                                      # 112 attention groups
    units = math.ceil(10_000 / per_unit)
    assert (p.requests_per_unit, p.units, p.d_nodes) == (per_unit, units, units * 224 // 8)


def test_v4_attention_dp_by_hand():
    """V4-Pro on H200, EP64 with attention DP: whole requests per GPU, never the unit's pooled room."""
    w = weights.weights_per_gpu(V4, 64)
    request = kv.request_kv_bytes(V4, 500_000, "bf16")
    room = 0.9 * H200_DEVICE - w.total
    assert math.floor(room / request) == 21
    p = fleet.plan(V4, "h200", BOOK, fleet.workload(rho=0.25), placement=Placement(64))
    assert p.requests_per_unit == 64 * 21 < math.floor(64 * room / request)   # pooling would claim more
    assert (p.units, p.d_nodes) == (2, 16)                                   # 2,500 resident sessions


def test_article_inputs_plan_fits_the_articles_own_gpu():
    """Under the article's figures a K3 GPU at the article's EP32 holds 28 experts of 2.43 GB and its
    5 GB allowance; 141 GB less that leaves room for two 30.9 GB requests, not the 2.2 it pools."""
    a = assumptions("article")
    m = memory(K3, "h200", Placement(32), 500_000, a)
    assert m.capacity == 141e9 and m.requests == 2 and m.used <= 141e9
    assert fleet.plan(K3, "h200", a, placement=Placement(32)).requests_per_unit == 64   # the article: 69


# --- what attention TP shards ---------------------------------------------------------------------

def test_tp_shards_per_head_caches_only():
    t = 500_000
    v4 = [request_share(V4, t, n, BOOK) for n in (1, 2, 4, 8)]
    assert len(set(v4)) == 1                               # V4's shared K=V entries: every rank holds all
    k3_mla = 24 * 576 * 2 * t
    for n in (1, 2, 4, 8):
        assert request_share(K3, t, n, BOOK) == pytest.approx(k3_mla + 69 * kv.layer_bytes(K3, "kda") / n)


def test_tp_never_helps_a_latent_cache_per_gpu():
    """Requests per GPU under TP n are a group's requests over n: for V4-Pro, DP always holds more."""
    for e in (16, 64, 384):
        dp = memory(V4, "h200", Placement(e), 500_000, BOOK).requests
        for n in (2, 4, 8):
            assert memory(V4, "h200", Placement(e, n), 500_000, BOOK).requests / n < dp


def test_placements_divide_a_node_or_are_whole_nodes_and_spread_the_experts():
    # units smaller than a node (EP 1, 2, 4) are planned too, several sharing a node (issue 24)
    for m in BOOK_MODELS:
        for p in placements(m, BOOK):
            assert (p.ep % 8 == 0 or 8 % p.ep == 0) and p.ep % p.attention_tp == 0 and 8 % p.attention_tp == 0
    assert {p.attention_tp for p in placements(K3, assumptions("article"))} == {1}


# --- no chosen plan overfills a GPU ----------------------------------------------------------------

@FAST
@given(model=st.sampled_from(BOOK_MODELS), gpu=st.sampled_from(["h100", "h200", "b200", "b300"]),
       context=st.integers(1_000, 2_000_000), concurrency=st.integers(1, 100_000), rho=st.floats(0.01, 1.0),
       fmt=st.sampled_from(list(weight_scenarios())), kv_dtype=st.sampled_from(["bf16", "fp8"]),
       capacity=st.sampled_from(["device", "nominal"]), usable=st.floats(0.5, 1.0))
def test_no_plan_exceeds_any_gpu(model, gpu, context, concurrency, rho, fmt, kv_dtype, capacity, usable):
    a = BOOK.but(weights=fmt, kv_dtype=kv_dtype, capacity=capacity, usable_fraction=usable)
    work = fleet.Workload(concurrency, context, rho)
    try:
        p = fleet.plan(model, gpu, a, work)
    except fleet.NoValidPlan as e:     # no decode unit is valid beside a prefill unit of its DCP size
        assert not any(memory(model, gpu, q, context, a).valid and fleet.prefill_unit(model, gpu, context, a, q.dcp)
                       for q in placements(model, a)), e
        return
    tp = p.placement.attention_tp
    # recomputed apart (a stage's weights are the plan's own: calc.placement.stage_bytes)
    w = weights.weights_per_gpu(model, p.ep, tp=tp, formats=a.formats(),
                                whole=placement.whole_groups(model, p.placement, a),
                                uneven=placement.uneven(model, p.placement, a)).total
    w = w if p.placement.pp == 1 else p.decode.weights
    g = gpu_spec(gpu)
    share = request_share(model, context, tp, a, p.placement.dcp) * p.decode.layer_share
    held = w + p.decode.reserve.total + p.decode.requests * share
    assert p.decode.requests >= 1 and held <= usable * (g.device_bytes if capacity == "device" else g.hbm_bytes)
    assert p.requests_per_unit == p.placement.attention_groups * p.decode.requests      # never pooled
    assert p.units * p.requests_per_unit >= work.resident > (p.units - 1) * p.requests_per_unit
    assert p.d_nodes * 8 >= p.units * p.ep
    unit = p.prefill.unit
    if p.aggregated:     # no prefill unit: a fleet of at most aggregate_max_gpus GPUs prefills itself
        assert p.p_nodes == 0 and p.d_gpus <= a.aggregate_max_gpus and unit == p.placement
        return
    assert p.p_nodes * a.pd_ratio >= p.d_nodes    # whole prefill units; a sub-node unit fills its node
    assert memory(model, gpu, unit, context, a, "prefill").valid and p.p_nodes % max(unit.gpus // 8, 1) == 0
    assert unit.dcp == p.placement.dcp


@FAST
@given(model=st.sampled_from([K3, V4]), gpu=st.sampled_from(["h200", "b300"]),
       concurrency=st.lists(st.integers(1, 100_000), min_size=2, max_size=6, unique=True),
       rho=st.lists(st.floats(0.01, 1.0), min_size=2, max_size=5, unique=True))
def test_nodes_never_fall_as_demand_grows(model, gpu, concurrency, rho):
    s = sweep.sweep(model, gpu, BOOK, concurrency=sorted(concurrency), context=500_000, rho=sorted(rho))
    assert (np.diff(s.nodes, axis=2) >= 0).all() and (np.diff(s.nodes, axis=4) >= 0).all()


@FAST
@given(model=st.sampled_from([K3, V4]), gpu=st.sampled_from(["h200", "b300"]), preset=st.sampled_from(["book", "article"]),
       concurrency=st.integers(1, 50_000), context=st.integers(10_000, 1_500_000), rho=st.floats(0.05, 1.0),
       pd=st.floats(0.5, 5.0))
def test_sweep_matches_plan(model, gpu, preset, concurrency, context, rho, pd):
    a = assumptions(preset, pd_ratio=pd)
    s = sweep.sweep(model, gpu, a, concurrency=concurrency, context=context, rho=rho)
    try:
        p = fleet.plan(model, gpu, a, fleet.Workload(concurrency, context, rho))
    except fleet.NoValidPlan:
        assert np.isinf(s.nodes).all()
        return
    assert (s.d_nodes.item(), s.p_nodes.item(), s.requests_per_unit.item()) == (p.d_nodes, p.p_nodes, p.requests_per_unit)


# --- when nothing fits ----------------------------------------------------------------------------

def test_k3_as_shipped_under_dp_needs_a_change():
    """K3's 113 GB of BF16 non-expert weights on every GPU leave no 500K-token request room on a
    nominal H200 under attention DP; FP8 non-expert weights make a plan valid."""
    a = BOOK.but(capacity="nominal", max_attention_tp=1)
    with pytest.raises(fleet.NoValidPlan) as info:
        fleet.plan(K3, "h200", a)
    assert "weights='fp8-non-expert'" in info.value.fix
    assert fleet.plan(K3, "h200", a.but(weights="fp8-non-expert")).decode.valid


def test_a_context_no_gpu_holds_asks_for_more_hbm():
    with pytest.raises(fleet.NoValidPlan) as info:
        fleet.plan(K3, "h200", BOOK, fleet.workload(context=500_000_000))  # past DCP8 x PP8
    need = float(info.value.fix.split("at least ")[1].split(" GB")[0]) * 1e9
    assert need > H200_DEVICE and "GB of HBM" in info.value.fix


def test_device_capacity_is_the_drivers():
    assert BOOK.capacity_bytes("h200") == H200_DEVICE and assumptions("article").capacity_bytes("h200") == 141e9

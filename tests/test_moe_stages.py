"""Pipeline stages for a MoE model (issue 24 item 1): each stage one node-wide TP group holding its
layers' experts, other weights and share of every request's cache, launched by vLLM, and chosen
only where memory demands it or a speed target prices it.

The hand computation rebuilds one stage's GPU from ``weights_per_gpu`` totals and the cache groups,
so a planner that splits the weights but not the caches, forgets the embedding or head on the end
stages, keeps a DeepEP buffer where nothing is dispatched, or picks the wrong stage as the bound
fails here."""

import math

import pytest

from twopaths.calc import all_to_all, decode, fleet, placement
from twopaths.calc.placement import Placement, memory, stage_layers
from twopaths.calc.weights import weight_bytes, weights_per_gpu
from twopaths.specs.params import PLAIN_TP_REPLICATED
from twopaths.specs import engines
from twopaths.specs.serving import assumptions
from twopaths.views import launch
from test_engines import check_command

K3, V4 = "kimi-k3", "deepseek-v4-pro"
BOOK = assumptions("book")
ONE_NODE = BOOK.but(max_ep=8)            # no EP group past a node: K3's weights need stages
WORK = fleet.Workload(10_000, 500_000, 0.25)


@pytest.mark.parametrize("layers, pp, want", [
    (93, 2, (47, 46)),                              # the remainder on every stage but the last
    (61, 4, (15, 15, 16, 15)),                      # one extra: the second-to-last stage takes it
    (93, 4, (23, 23, 24, 23)),
    (94, 8, (11, 12, 12, 12, 12, 12, 12, 11)),      # six extra: every middle stage, none at the ends
    (61, 3, (20, 21, 20)),
    (62, 3, (21, 21, 20)),                          # two extra: every stage but the last
    (8, 8, (1,) * 8),
])
def test_layers_split_as_vllm_splits_them(layers, pp, want):
    assert stage_layers(layers, pp) == want and sum(want) == layers


def test_every_split_covers_the_layers_evenly():
    for layers in range(1, 130):
        for pp in range(1, 9):
            s = stage_layers(layers, pp)
            assert len(s) == pp and sum(s) == layers and max(s) - min(s) <= 1


def test_a_k3_stage_by_hand():
    p = Placement(8, 8, dcp=8, pp=2)
    m = memory(K3, "h200", p, 500_000, ONE_NODE)
    # one plain TP group: the embedding is vocabulary-parallel and the shared experts split like any
    # MLP (vLLM's K3 replicates them only under sequence-parallel MoE, which needs DP)
    w = weights_per_gpu(K3, 8, tp=8, formats=ONE_NODE.formats(), whole=PLAIN_TP_REPLICATED).by_group
    total = weight_bytes(K3, ONE_NODE.formats())
    assert w["embedding"] == pytest.approx(total["embedding"] / 8)
    assert w["shared_experts"] == pytest.approx(total["shared_experts"] / 8)
    layers = (47, 46)                               # 93 decoder layers over two stages
    emb, head, experts = w["embedding"], w["head"], w["routed_experts"]
    rest = sum(w.values()) - emb - head - experts
    whole = placement.request_share(K3, 500_000, 8, ONE_NODE, 8)     # a rank's stripe, every layer
    held = m.reserve.total
    assert m.reserve.all_to_all == 0 and m.request_cap is None      # one TP group dispatches nothing
    assert held == 10 * 2**30                       # SGLang's floor alone
    usable = ONE_NODE.usable_fraction * ONE_NODE.capacity_bytes("h200")
    stages = [(experts * n / 93, rest * n / 93 + (emb if s == 0 else head), n / 93) for s, n in enumerate(layers)]
    fits = [int((usable - e - o - held) // (whole * part)) for e, o, part in stages]
    bound = min(range(2), key=lambda s: fits[s])
    assert m.requests == min(fits) and m.layer_share == stages[bound][2]
    assert (m.expert_bytes, m.other_bytes) == pytest.approx(stages[bound][:2])
    assert m.request_bytes == pytest.approx(whole * stages[bound][2])
    assert m.used <= m.usable


def test_k3_on_one_node_groups_is_pipelined_and_launched_by_vllm():
    assert not any(memory(K3, "h200", q, 500_000, ONE_NODE).valid
                   for q in placement.placements(K3, ONE_NODE) if q.pp == 1)
    p = fleet.plan(K3, "h200", ONE_NODE, WORK)
    assert p.placement.pp > 1 and p.placement.attention_groups == 1 and p.engine.id == "vllm"
    fewer = Placement(8, 8, dcp=p.placement.dcp, pp=p.placement.pp - 1)
    assert not memory(K3, "h200", fewer, 500_000, ONE_NODE).valid       # the fewest stages that fit
    assert p.units == math.ceil(WORK.resident / p.decode.requests) and p.d_gpus == p.units * 8 * p.placement.pp
    sglang = engines.engine("sglang")
    assert not placement.can_launch(sglang, K3, p.placement, ONE_NODE)   # SGLang plans no MoE stages
    cmd = launch.commands(p)["vllm"].decode
    check_command("vllm", cmd)
    assert f"--pipeline-parallel-size {p.placement.pp}" in cmd and "--enable-expert-parallel" in cmd
    assert "--all2all-backend" not in cmd and "--data-parallel-size" not in cmd


def test_a_stage_reads_and_steps_for_its_layers():
    p = fleet.plan(K3, "h200", ONE_NODE, WORK)
    step = decode.plan_step(p)
    m = p.decode
    read = placement.read_share(K3, 500_000, 8, ONE_NODE, p.placement.dcp)
    assert step.kv_bytes == pytest.approx(m.requests * read * m.layer_share)
    assert step.stages == p.placement.pp and step.all_to_all == 0
    # between a request's tokens a GPU reads its weights once a micro-batch (one a stage) and its
    # share of every cache once, not once a stage (vLLM keeps PP-size batches in flight)
    pp = p.placement.pp
    micro = math.ceil(m.requests / pp)                 # one attention group: its requests a micro-batch
    touched = decode.experts_touched(micro, 16, 896)   # K3 routes a token to 16 of 896 experts
    assert step.weight_bytes == pytest.approx(m.other_bytes + m.expert_bytes * touched)
    assert step.step == pytest.approx((pp * step.weight_bytes + step.kv_bytes) / step.bandwidth
                                      + step.link_bytes / step.link_bandwidth)


def test_stages_wait_for_memory_or_a_speed_target():
    cands = placement.placements(K3, BOOK)
    staged = [q for q in cands if q.pp > 1]
    assert staged and fleet.staged(K3, "h200", 500_000, BOOK, cands) == tuple(q for q in cands if q.pp == 1)
    assert fleet.staged(K3, "h200", 500_000, BOOK, cands, speed=20.0) == cands
    # what the rule keeps out: filling every GPU, more stages hold more requests each decoding slower
    best = fleet.plan(K3, "h200", BOOK, WORK)
    deep = fleet.fewest_with_stages(K3, "h200", BOOK, WORK)
    assert deep.placement.pp > 1 and deep.nodes < best.nodes and deep.decode.requests > best.decode.requests
    assert deep.session_speed < best.session_speed
    two = fleet.plan(K3, "h200", BOOK, WORK, placement=Placement(8, 8, dcp=8, pp=2))
    assert two.session_speed > deep.session_speed and two.decode.requests < deep.decode.requests


def test_one_attention_group_dispatches_nothing():
    assert not all_to_all.dispatches(Placement(8, 8)) and all_to_all.dispatches(Placement(8, 4))
    assert not all_to_all.dispatches(Placement(8, 8, routed=False)) and not all_to_all.dispatches(Placement(1))
    assert all_to_all.step_seconds(K3, "h200", Placement(8, 8), 64, 8) == 0.0
    assert memory(V4, "h200", Placement(8, 8), 100_000, BOOK).reserve.all_to_all == 0
    assert memory(V4, "h200", Placement(8, 1), 100_000, BOOK).reserve.all_to_all > 0


def test_a_dense_stage_may_not_hold_several_groups():
    with pytest.raises(Exception, match="pp"):
        Placement(16, 8, pp=2)

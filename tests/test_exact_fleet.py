"""Exact values of the fleet arithmetic (``calc.fleet``) that the hand-written mutants of
tools/hand-mutants/calc/fleet.yaml must change: resident sessions rounded up, a workload's own
output tokens a turn, prefill nodes in whole prefill units (at the P:D ratio and by work), and an
aggregated fleet whose units prefill together. Qwen2.5-72B keeps the FLOP short: 72.7B activated
parameters, 80 GQA layers of 64 heads of 128 dims (80 x 2 x 64 x T x 256 FLOP a prompt token at
context T); an H200 peaks at 989 TFLOP/s in BF16, the book's prefill at 40% of it."""

from types import SimpleNamespace

import pytest

from twopaths.calc import fleet
from twopaths.calc.placement import Placement, memory
from twopaths.specs.serving import assumptions

BOOK = assumptions("book")
QWEN, K3 = "qwen-2.5-72b", "kimi-k3"


def rate(context: int) -> float:
    """Prompt tokens/s one H200 prefills for Qwen2.5-72B, by hand."""
    return 0.4 * 989e12 / (2 * 72.7e9 + 80 * 2 * 64 * context * 256)


def test_resident_sessions_round_up():
    # a quarter of 10 sessions decoding at once is 2.5: three caches on GPUs
    assert fleet.Workload(10, 1000, rho=0.25).resident == 3
    assert fleet.Workload(10, 1000, rho=0.2).resident == 2


def test_turns_a_second_follow_the_workloads_own_turn():
    # 100 sessions, each turn 500 tokens at the article's 200 tokens/s: 2.5 s a turn, 40 turns/s;
    # at 400 tokens/s, 1.25 s, 80 turns/s
    assert fleet.Workload(100, 1000, output_tokens=500).turns_per_s == pytest.approx(40)
    faster = fleet.Workload(100, 1000, output_tokens=500, decode_tokens_per_s=400)
    assert faster.turns_per_s == pytest.approx(80)


def test_prefill_nodes_come_in_whole_prefill_units():
    # a prefill unit of 16 GPUs is 2 nodes. At P:D 1:2.5, 6 decode nodes ask 2.4, so 3 nodes, so
    # 2 units: 4 nodes. By work: 1,000 sessions of 32K tokens take 1,000 / 5 s x 2,000 = 400,000
    # prompt tokens/s; an H200 prefills rate(32K) = 1,725.4 of them, so 232 GPUs, 29 nodes, 15 units
    unit = SimpleNamespace(placement=Placement(16, 8, routed=False))
    pre = fleet._prefill(QWEN, "h200", fleet.Workload(1000, 32_000), 6, BOOK, unit)
    assert (pre.unit_nodes, pre.by_ratio) == (2, 4)
    assert pre.tokens_per_s == pytest.approx(400_000)
    assert pre.tokens_per_s_per_gpu == pytest.approx(rate(32_000)) == pytest.approx(1725.36, abs=0.01)
    assert 231 < 400_000 / rate(32_000) <= 232
    assert pre.by_work == 30


def test_an_aggregated_fleet_prefills_on_every_units_gpus():
    # Qwen2.5-72B on TP2 units, 12 sessions of 64K tokens: a unit holds 6 (each GPU half of each),
    # so 2 units, 4 GPUs. The prompt tokens, 12 / 5 s x 2,000 = 4,800 a second, pass one unit's
    # 2 x rate(64K) = 2,526 but not the 4 GPUs' 5,053: the fleet is served aggregated, no prefill node
    p = fleet.plan(QWEN, "h200", BOOK, fleet.Workload(12, 64_000), placement=Placement(2, 2, routed=False))
    assert p.decode.requests == 6
    assert 2 * rate(64_000) < 4800 <= 4 * rate(64_000)
    assert (p.units, p.gpus, p.aggregated, p.p_nodes) == (2, 4, True, 0)
    assert p.prefill.tokens_per_s == pytest.approx(4800)


def test_the_prefill_unit_is_the_fewest_gpus_before_the_narrowest_tp():
    # K3 at 128K tokens on H200s: no unit of 8 holds its weights; of 16, only TP8 shards enough of the
    # non-expert weights to leave room for a request. Attention DP first holds one at EP64, 4x the GPUs
    valid = {t: memory(K3, "h200", Placement(16, t), 128_000, BOOK, "prefill").valid for t in (1, 2, 4, 8)}
    assert valid == {1: False, 2: False, 4: False, 8: True}
    assert not memory(K3, "h200", Placement(8, 8), 128_000, BOOK, "prefill").valid
    assert fleet.prefill_unit(K3, "h200", 128_000, BOOK).placement == Placement(16, 8)

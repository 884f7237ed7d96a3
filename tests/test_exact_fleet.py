"""Exact values of the fleet arithmetic (``calc.fleet``) that the hand-written mutants of
tools/hand-mutants/calc/fleet.yaml must change: resident sessions rounded up, a workload's own
output tokens a turn, prefill nodes in whole prefill units (at the P:D ratio and by work), and an
aggregated fleet whose units prefill together. Qwen2.5-72B keeps the FLOP short: 72.7B activated
parameters, 80 GQA layers of 64 heads of 128 dims (80 x 2 x 64 x T x 256 FLOP a prompt token at
context T); an H200 peaks at 989 TFLOP/s in BF16, the book's prefill at 40% of it."""

from types import SimpleNamespace

import pytest

from twopaths.calc import fleet
from twopaths.calc.decode import plan_step
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


def test_turns_a_second_follow_the_speed_the_sessions_decode_at():
    # 100 sessions, a quarter resident (25), turns of 500 tokens: at 200 tokens/s a turn takes
    # 2.5 s, so 10 turns/s; at 20 tokens/s, 25 s, so 1 turn/s. Resident sessions, not all of them:
    # at rho 0.25 and 20 tokens/s the concurrency alone would give 4
    w = fleet.Workload(100, 1000, rho=0.25, output_tokens=500)
    assert w.turns_per_s(200) == pytest.approx(10) and w.turns_per_s(20) == pytest.approx(1)
    assert fleet.Workload(100, 1000).turn_tokens == 1000      # the article's turn


def test_prompt_tokens_come_at_the_plans_own_speed():
    """The prompt tokens prefill takes in are the turns the decode fleet finishes: resident x its
    session speed / 1,000 output tokens x 2,000 prompt tokens, the speed at which calc.cost counts
    its output tokens. K3's H200 plan decodes about 31 tokens/s a session, far below the article's
    200: at 200 its prefill by work would be sized for 6.5 times the turns it decodes."""
    from twopaths.calc.cost import fleet_cost
    p = fleet.plan(K3, "h200", BOOK)
    speed = p.session_speed
    assert 20 < speed < 40
    assert p.prefill.tokens_per_s == pytest.approx(10_000 * speed / 1000 * 2000)
    assert p.prefill.tokens_per_s == pytest.approx(fleet_cost(p, 1.0).tokens_per_s * 2)


def test_prefill_nodes_come_in_whole_prefill_units():
    # a prefill unit of 16 GPUs is 2 nodes. At P:D 1:2.5, 6 decode nodes ask 2.4, so 3 nodes, so
    # 2 units: 4 nodes. By work: 1,000 sessions of 32K tokens decoding at 200 tokens/s take
    # 1,000 / 5 s x 2,000 = 400,000 prompt tokens/s; an H200 prefills rate(32K) = 1,725.4 of them,
    # so 232 GPUs, 29 nodes, 15 units
    unit = SimpleNamespace(placement=Placement(16, 8, routed=False))
    pre = fleet._prefill(QWEN, "h200", fleet.Workload(1000, 32_000), 6, BOOK, unit, 200.0)
    assert (pre.unit_nodes, pre.by_ratio) == (2, 4)
    assert pre.tokens_per_s == pytest.approx(400_000)
    assert pre.tokens_per_s_per_gpu == pytest.approx(rate(32_000)) == pytest.approx(1725.36, abs=0.01)
    assert 231 < 400_000 / rate(32_000) <= 232
    assert pre.by_work == 30


def test_an_aggregated_fleet_prefills_on_every_units_gpus():
    """Qwen2.5-72B on TP2 units, 12 sessions of 64K tokens: a unit holds 6 (each GPU half of each),
    so 2 units, 4 GPUs, each session decoding at 1 / step (35.4 tokens/s). At 8,000 prompt tokens a
    turn they bring 12 x 35.4 / 1,000 x 8,000 = 3,398 a second, past one unit's 2 x rate(64K) =
    2,526 but within the 4 GPUs' 5,053: served aggregated, no prefill node. At 14,000 a turn,
    5,946: past the 4 GPUs, so a prefill node."""
    tp2 = Placement(2, 2, routed=False)
    a8, a14 = BOOK.but(prompt_tokens_per_turn=8000), BOOK.but(prompt_tokens_per_turn=14_000)
    p = fleet.plan(QWEN, "h200", a8, fleet.Workload(12, 64_000), placement=tp2)
    speed = 1 / plan_step(p).step
    assert p.decode.requests == 6 and 35 < speed < 36
    assert p.prefill.tokens_per_s == pytest.approx(12 * speed / 1000 * 8000)
    assert 2 * rate(64_000) < p.prefill.tokens_per_s <= 4 * rate(64_000)
    assert (p.units, p.gpus, p.aggregated, p.p_nodes) == (2, 4, True, 0)
    q = fleet.plan(QWEN, "h200", a14, fleet.Workload(12, 64_000), placement=tp2)
    assert q.prefill.tokens_per_s == pytest.approx(12 * speed / 1000 * 14_000)
    assert q.prefill.tokens_per_s > 4 * rate(64_000)
    assert (q.aggregated, q.p_nodes, q.prefill.by_work) == (False, 1, 1)


def test_the_prefill_unit_is_the_fewest_gpus_before_the_narrowest_tp():
    # K3 at 128K tokens on H200s: no unit of 8 holds its weights; of 16, only TP8 shards enough of the
    # non-expert weights to leave room for a request. Attention DP first holds one at EP64, 4x the GPUs
    valid = {t: memory(K3, "h200", Placement(16, t), 128_000, BOOK, "prefill").valid for t in (1, 2, 4, 8)}
    assert valid == {1: False, 2: False, 4: False, 8: True}
    assert not memory(K3, "h200", Placement(8, 8), 128_000, BOOK, "prefill").valid
    assert fleet.prefill_unit(K3, "h200", 128_000, BOOK).placement == Placement(16, 8)

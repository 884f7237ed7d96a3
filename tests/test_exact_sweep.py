"""Exact values of the sweep's counting (``calc.sweep``) that the hand-written mutants of
tools/hand-mutants/calc/sweep.yaml must change: decode GPUs of units smaller than a node rounded up
to a node, the fleet's GPUs as the decode units' GPUs plus whole prefill nodes, a prefill unit
smaller than a node counted as one node, the aggregated rule's GPU cap, and a context nothing
serves plotted as a gap. Qwen2.5-72B on H200s: a turn brings 12,000 prompt tokens (``BOOK`` here)
and decodes 1,000 output tokens at the GPU's speed v (one token a step, about 35 tokens/s here), so
a session brings 12 v prompt tokens/s, and a GPU prefills 0.4 x 989 TFLOP/s over 2 x 72.7B +
80 x 2 x 64 x T x 256 FLOP a token at context T. The requests a unit holds and v are the
placement and decode models' (``calc.placement``, ``calc.fleet.session_speed``), taken as given."""

import numpy as np

from twopaths.calc import fleet, sweep
from twopaths.calc.placement import Placement, memory
from twopaths.specs.serving import assumptions

BOOK = assumptions("book").but(prompt_tokens_per_turn=12_000)
QWEN = "qwen-2.5-72b"


def demand(sessions: int, t: int, context: int, role: str = "aggregated") -> float:
    """Prompt tokens/s of ``sessions`` decoding on a full TP``t`` GPU in ``role``: 12 v each."""
    m = memory(QWEN, "h200", tp(t), context, BOOK, role)
    return sessions * 12 * fleet.session_speed(QWEN, "h200", BOOK, context, m)


def rate(context: int) -> float:
    return 0.4 * 989e12 / (2 * 72.7e9 + 80 * 2 * 64 * context * 256)


def tp(n: int) -> Placement:
    return Placement(n, n, routed=False)


def at(s, **where):
    i = s.index(**where)
    return (s.requests_per_unit[i].item(), s.d_gpus[i].item(), s.d_nodes[i].item(), s.p_nodes[i].item(),
            s.gpus[i].item())


def test_small_decode_units_and_a_small_prefill_unit_take_whole_nodes():
    # 60 sessions of 8K: about 25,500 prompt tokens/s, more than any aggregated unit's GPUs
    # prefill (a node's 8 x 2,378 = 19,022 at most), so prefill is apart. A TP2 unit holds 51: 2
    # units, 4 GPUs, one node (rounded up, not down to none); the prefill unit (TP2) is one node,
    # ceil(1 / 2.5) = 1 of them: 4 + 8 = 12 GPUs, not 2 whole nodes' 16
    assert memory(QWEN, "h200", tp(2), 8000, BOOK).requests == 51
    assert min(demand(60, t, 8000) for t in (2, 4, 8)) > 8 * rate(8000)
    s = sweep.sweep(QWEN, "h200", BOOK, concurrency=[60], context=[8000])
    assert at(s) == (51, 4, 1, 1, 12)


def test_a_small_fleet_prefills_where_its_gpus_can():
    # 12 sessions of 8K: about 5,100 prompt tokens/s. One TP2 unit would hold them all (48
    # aggregated) but its 2 GPUs prefill 4,756; apart, it costs 2 + a prefill node's 8 = 10 GPUs.
    # One TP4 unit (151 aggregated) prefills 9,511 on its 4 GPUs: 4 GPUs, no prefill node
    assert 2 * rate(8000) < demand(12, 2, 8000) and demand(12, 4, 8000) <= 4 * rate(8000)
    assert memory(QWEN, "h200", tp(4), 8000, BOOK, "aggregated").requests == 151
    s = sweep.sweep(QWEN, "h200", BOOK, concurrency=[12], context=[8000])
    assert at(s) == (151, 4, 1, 0, 4)


def test_an_aggregated_fleet_stays_within_its_gpu_cap():
    # 20 sessions of 128K: about 8,800 prompt tokens/s. Three TP4 units (9 aggregated each) would
    # prefill them on 12 GPUs (9,871), past the 8 GPUs an aggregated fleet may have; on 8 GPUs
    # only 6,580. So a TP8 decode unit holding 23 (8 GPUs, a node) and a prefill node: 16 GPUs
    assert 8 * rate(128_000) < demand(20, 4, 128_000) <= 12 * rate(128_000)
    assert demand(20, 8, 128_000) > 8 * rate(128_000)
    assert memory(QWEN, "h200", tp(4), 128_000, BOOK, "aggregated").requests == 9
    assert memory(QWEN, "h200", tp(8), 128_000, BOOK).requests == 23
    s = sweep.sweep(QWEN, "h200", BOOK, concurrency=[20], context=[128_000])
    assert at(s) == (23, 8, 1, 1, 16)


def test_a_context_nothing_serves_is_a_gap_in_the_line():
    # 100M tokens of Qwen's cache is 32.8 TB a request (327,680 B a token): no placement holds one
    s = sweep.sweep(QWEN, "h200", BOOK, concurrency=[12], context=[8000, 100_000_000])
    assert np.isinf(s.nodes[s.index(context=100_000_000)]).all()
    line = sweep.by_context(s, "h200")[QWEN, 12]
    assert line[0] == 1 and np.isnan(line[1])

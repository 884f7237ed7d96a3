"""Exact values of the runtime reserve (``calc.reserve``) that the hand-written mutants of
tools/hand-mutants/calc/reserve.yaml must change: DeepEP's signal arrays rounded up to 128 B, the
buffer sized for the redundant expert slots too, and an aggregated unit's reserve built term by
term from its decode and prefill reserves. Every expected value is SGLang 0.5.23's rule and
DeepEP's size formula evaluated by hand."""

from twopaths.calc import reserve
from twopaths.calc.placement import Placement
from twopaths.specs.serving import assumptions

MIB = 2**20
BOOK = assumptions("book")
V4 = "deepseek-v4-pro"
COMBINE = 56 * 4 + 2 * 7168      # a combine message at hidden 7,168: 56 FP32 scales + BF16 token, 14,560 B


def test_deepeps_signal_arrays_round_up_to_a_whole_128_bytes():
    # 100 experts: 400 B of signals, rounded up to 512 B (4 lines), not down to 384 B; the send and
    # receive buffers hold 100 x 128 combine messages (larger than a dispatch one), each twice
    signals = 512
    total = 4 * 100 * 128 * COMBINE + 2 * signals
    assert total % 128 == 0
    assert reserve.deepep_buffer_bytes(100, 128, 7168) == total + 128 == 745_473_152


def test_deepeps_buffer_counts_the_redundant_expert_slots():
    # V4-Pro's 384 routed experts plus 64 replicas: 448 slots a layer, each receiving 128 tokens;
    # signals 4 x 448 = 1,792 B, already whole lines
    a = BOOK.but(redundant_experts=64)
    r = reserve.reserve(V4, "h200", Placement(64, 1), "decode", a)
    assert r.all_to_all == 4 * 448 * 128 * COMBINE + 2 * 1792 + 128 == 3_339_718_272


def test_an_aggregated_unit_keeps_the_larger_term_and_the_decode_units_buffer():
    # V4-Pro on EP8 with attention DP on an H200 (143,771 MiB: 8,192-token chunks, max_bs 256 at TP1).
    # decode: 1.5 x max(256, 2,048) = 3,072 MiB activations, 2 x 256 = 512 MiB graphs,
    #         512 + 1,024 / 8 = 640 MiB runtime: 4,224 MiB, topped up to the 10,240 MiB floor
    # prefill: 8,192 / 8 ranks = 1,024 tokens a rank, 3,072 MiB activations; not MLA, so 8 MiB for
    #          each capture size up to 1,024 (8 + 14 + 8 + 8 = 38): 304 MiB; 640 MiB runtime
    r = reserve.reserve(V4, "h200", Placement(8, 1), "aggregated", BOOK)
    assert (r.activations, r.cuda_graphs, r.runtime) == (3072 * MIB, 512 * MIB, 640 * MIB)
    # the floor is 10,240 MiB beside the buffer, which stays above it: DeepEP's 384 x 128 combine
    # messages four times, 1,536 B of signals twice, 128 B
    assert r.floor_top_up == (10240 - 4224) * MIB
    assert r.all_to_all == 4 * 384 * 128 * COMBINE + 2 * 1536 + 128 == 2_862_615_680
    assert r.chunk_tokens == 1024
    assert r.total == 10240 * MIB + 2_862_615_680

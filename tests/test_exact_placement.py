"""Exact values of the placement memory model (``calc.placement``) that the hand-written mutants of
tools/hand-mutants/calc/placement.yaml must change: how vLLM splits layers over pipeline stages, a
stage's share of a request's cache, the runtime overhead and redundant experts the assumptions
add, the attention TP sizes tried, and DeepEP's cap on the requests a decode GPU takes. The
article's figures (141 GB a GPU, one byte a parameter, no reserve) keep the arithmetic short."""

import math

from twopaths.calc import placement
from twopaths.calc.placement import Placement, memory
from twopaths.specs.serving import assumptions

BOOK, ARTICLE = assumptions("book"), assumptions("article")
QWEN = "qwen-2.5-72b"


def test_the_remainder_layers_sit_before_the_last_stage():
    # vLLM's get_pp_indices: 61 // 4 = 15 a stage, the 1 left over on the second-to-last stage;
    # 62 layers leave 2, on the two stages before the last (which holds the output head)
    assert placement.stage_layers(61, 4) == (15, 15, 16, 15)
    assert placement.stage_layers(62, 4) == (15, 16, 16, 15)


def test_a_stage_holds_its_layers_share_of_a_request():
    # Qwen2.5-72B, one TP8 group in 2 stages of 40 of its 80 layers: a BF16 K/V entry is 2 x 8 heads
    # x 128 x 2 B = 4,096 B a layer a token, one K/V head a rank under TP8 (1/8), 40 layers a stage
    m = memory(QWEN, "h200", Placement(8, 8, routed=False, pp=2), 32_000, BOOK)
    assert m.layer_share == 0.5
    assert m.request_bytes == 4096 / 8 * 40 * 32_000 == 655_360_000


def test_the_runtime_overhead_comes_out_of_the_cache_room():
    # K3 on EP32 under the article's figures: 28 experts of (2.78T - 0.5T - 0.1T) / 898 bytes and its
    # 5 GB allowance; a 500K request is 61.4 kB x 500K + 207 MB = 30.907 GB. 141 GB leaves room for 2,
    # and with 10 GB more of overhead for 1
    expert = (2.78e12 - 0.5e12 - 0.1e12) / 898
    request = 61.4e3 * 500_000 + 207e6
    room = 141e9 - 28 * expert - 5e9
    assert math.floor(room / request) == 2 and math.floor((room - 10e9) / request) == 1
    assert memory("kimi-k3", "h200", Placement(32), 500_000, ARTICLE.but(overhead_bytes=10e9)).requests == 1


def test_redundant_experts_enter_the_articles_expert_split():
    # V4-Pro on EP16 under the article's figures with its 32 EPLB replicas: 288 slots, 18 a GPU, of
    # (1.6T - 0.3T) / 256 bytes each; 3 GB allowance, 12.2 kB x 500K = 6.1 GB a request
    expert = (1.6e12 - 0.3e12) / 256
    m = memory("deepseek-v4-pro", "h200", Placement(16), 500_000, ARTICLE.but(redundant_experts=32))
    assert m.expert_bytes == 18 * expert == 91.40625e9
    assert m.requests == math.floor((141e9 - 18 * expert - 3e9) / 6.1e9) == 7    # 16 experts: 9


def test_a_dense_model_tries_every_tp_size_up_to_a_node_and_stages_its_node():
    # Qwen2.5-72B's 64 query and 8 K/V heads divide TP 1, 2, 4 and 8; a dense unit is one TP group,
    # and its node-wide TP8 group also comes in 2 to 8 pipeline stages (no DCP for GQA)
    got = sorted((p.ep, p.attention_tp, p.pp) for p in placement.placements(QWEN, BOOK))
    assert got == [(1, 1, 1), (2, 2, 1), (4, 4, 1)] + [(8, 8, pp) for pp in range(1, 9)]


def test_a_decode_gpu_takes_no_more_requests_than_deepep_dispatches():
    # V4-Pro, EP64 with attention DP, 8K-token requests: room for over a thousand on a GPU, but a rank
    # dispatches at most 128 tokens a step (SGLang's default), one a request
    m = memory("deepseek-v4-pro", "h200", Placement(64, 1), 8000, BOOK)
    assert m.kv_room > 1000 * m.request_bytes
    assert (m.request_cap, m.requests) == (128, 128)

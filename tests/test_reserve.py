"""The runtime reserve: SGLang 0.5.23's memory rule term by term (``calc.reserve``), recomputed here
from the rule's constants as its source writes them, for a decode and a prefill unit of each
headline model, with DeepEP's buffer from its own size formula.

Bugs these catch: the floor applied after the all-to-all buffer (V4-Pro's decode reserve would be
10 GiB, not 12.67 GiB), the chunked-prefill size not divided among a prefill unit's attention-DP
ranks, the buffer sized by ranks instead of experts, a reserve charged under the article's figures,
and a plan whose GPUs do not leave the reserve free."""

import pytest

from twopaths.calc import fleet, placement, reserve
from twopaths.calc.placement import Placement
from twopaths.specs.serving import assumptions

MIB, GIB = 2**20, 2**30
BOOK = assumptions("book")
K3, V4 = "kimi-k3", "deepseek-v4-pro"


def deepep(experts: int, tokens: int = 128, hidden: int = 7168) -> int:
    # hidden 7,168: a dispatch message is 16 B + 2 x 7,168 (BF16 beats FP8 + 56 scales), a combine
    # one 56 x 4 B of scales + 2 x 7,168; four buffers of experts x tokens combine messages, two
    # signal arrays of 4 B an expert rounded to 128 B, and the total rounded up past 128 B
    assert 16 + 2 * 7168 == 14_352 and 56 * 4 + 2 * 7168 == 14_560
    combine = hidden // 128 * 4 + 2 * hidden
    return 4 * experts * tokens * combine + 2 * (-(-4 * experts // 128) * 128) + 128


@pytest.mark.parametrize("experts, expected", [(256, 1_908_410_496), (288, 2_146_961_792),
                                               (384, 2_862_615_680)])
def test_deepeps_buffer_follows_its_size_formula(experts, expected):
    assert reserve.deepep_buffer_bytes(experts, 128, 7168) == deepep(experts) == expected
    # twice the tokens a rank dispatches, about twice the buffer; the ranks do not enter
    assert reserve.deepep_buffer_bytes(experts, 256, 7168) == pytest.approx(2 * expected, rel=1e-6)


def test_a_decode_unit_keeps_the_floor_and_deepeps_buffer_above_it():
    for model, experts, width in ((K3, 896, 4096), (V4, 384, 7168)):   # K3's latent, padded
        m = placement.memory(model, "h200", Placement(64, 1), 500_000, BOOK)
        r = m.reserve
        # 1.5 MiB x 2,048 tokens (512 decode graphs, one token each), 2 MiB x 256 graphs (TP < 4),
        # 512 MiB + 1 GiB x 1/8: 4,224 MiB under the 10 GiB floor
        assert (r.activations, r.cuda_graphs, r.runtime) == (3072 * MIB, 512 * MIB, 640 * MIB)
        assert r.floor_top_up == (10240 - 4224) * MIB
        assert r.all_to_all == deepep(experts, hidden=width) and r.total == 10 * GIB + deepep(experts, hidden=width)
        assert m.request_cap == 128 and m.requests <= 128


def test_a_prefill_unit_divides_its_chunk_among_its_attention_ranks():
    # K3's prefill unit on H200: EP16 of two TP8 groups, so 8,192 / 2 tokens a rank: 6,144 MiB of
    # activations, MLA's flat 1,536 MiB of prefill graphs and 1,536 MiB of runtime: 9,216 MiB, under
    # the floor; no decode graphs and no DeepEP low-latency buffer
    m = placement.memory(K3, "h200", Placement(16, 8, dcp=8), 500_000, BOOK, "prefill")
    r = m.reserve
    assert r.chunk_tokens == 4096 and m.request_cap is None
    assert (r.activations, r.cuda_graphs, r.runtime, r.all_to_all) == (6144 * MIB, 1536 * MIB, 1536 * MIB, 0)
    assert r.total == 10 * GIB
    # a B300 (275,040 MiB) chunks 16,384 tokens: over one attention-DP group of 8 ranks, 2,048 each
    b = placement.memory(V4, "b300", Placement(8, 1), 500_000, BOOK, "prefill").reserve
    assert b.chunk_tokens == 2048 and b.activations == 3072 * MIB


def test_a_non_mla_prefill_unit_pays_per_captured_graph():
    # Qwen2.5-72B (GQA) on H200, one dense node: 8,192 tokens (no expert DP to divide it), and 8 MiB
    # for each of SGLang's prefill capture sizes up to 8,192: 8 + 14 + 8 + 8 + 12 + 8 = 58 sizes
    r = placement.memory("qwen-2.5-72b", "h200", Placement(8, 8, routed=False), 32_000, BOOK, "prefill").reserve
    assert r.activations == 1.5 * 8192 * MIB and r.cuda_graphs == 58 * 8 * MIB
    assert r.total == (512 + 1024 + 1.5 * 8192 + 58 * 8) * MIB       # above the floor: no top-up


def test_the_articles_figures_reserve_nothing_and_a_bad_role_is_refused(raises_param):
    article = assumptions("article")
    m = placement.memory(K3, "h200", Placement(64, 1), 500_000, article)
    assert m.reserve.total == 0 and m.request_cap is None
    raises_param("role", reserve.reserve, K3, "h200", Placement(64, 1), "train", BOOK)
    raises_param("reserve", BOOK.but, reserve="vllm")


@pytest.mark.parametrize("model, gpu", [(K3, "h200"), (K3, "b300"), (V4, "h200"), (V4, "b300")])
def test_every_headline_gpu_leaves_its_reserve_free(model, gpu):
    p = fleet.plan(model, gpu, BOOK, fleet.workload(rho=0.25))
    for m in (p.decode, placement.memory(model, gpu, p.prefill.unit, p.work.context, BOOK, "prefill")):
        assert m.weights + m.reserve.total + m.requests * m.request_bytes <= m.capacity
        assert m.reserve.total >= 10 * GIB


def test_the_peers_estimates_by_hand():
    """SGLang's rule read literally equals the book's on a one-node unit of one attention group but
    for DeepEP's flat 2 GiB, and passes a whole H200 on K3's 224-GPU unit (its parallel slack and
    DP padding grow with the unit); AIConfigurator's estimate of V4-Pro's decode GPU, by hand."""
    from twopaths.calc import reserve_peers
    one = Placement(8, 8)
    lit = reserve_peers.sglang_literal(V4, "h200", one, "decode", BOOK)
    book = placement.memory(V4, "h200", one, 500_000, BOOK).reserve
    assert lit == pytest.approx(book.total - book.all_to_all + 2 * GIB, abs=1)
    big = reserve_peers.sglang_literal(K3, "h200", Placement(224, 8, dcp=8), "decode", BOOK)
    # 512 + 3,072 + 224/8 x 1,024 + 1,024 + 512 x 28 x 4.5 MiB, then 2 GiB
    assert big == (512 + 3072 + 28 * 1024 + 1024 + 512 * 28 * 4.5 + 2048) * MIB > 143_771 * MIB / 2
    assert reserve_peers.vllm_outside("h200", BOOK) == pytest.approx(0.08 * 143_771 * MIB)
    # V4-Pro, EP64 attention DP, 21 tokens a forward: others 3.5 GiB, no NCCL at TP1, activations
    # 2 x 21 x 7,168 x 22 (TP1, the DeepSeek table) plus the MoE workspace 21 x 7,168 x 64 x 384
    # x 6 / 64 / 128 x 4, under the 70 MiB least
    act = 2 * 21 * 7168 * 22 + 21 * 7168 * 64 * 384 * 6 / 64 / 128 * 4
    assert act < 70 * MIB
    assert reserve_peers.aiconfigurator(V4, Placement(64, 1), 21) == 3.5 * GIB + 70 * MIB

"""Exact values of the peers' reserves (``calc.reserve_peers``) that the hand-written mutants of
tools/hand-mutants/calc/reserve_peers.yaml must change: SGLang's literal prefill activations on
one attention-DP rank's share of the chunk, vLLM's 8% of the whole device whatever share the book
calls usable, and AIConfigurator's MoE workspace for the DeepSeek families only. The expected
values are the peers' rules evaluated by hand."""

import pytest

from twopaths.calc import reserve_peers
from twopaths.calc.placement import Placement
from twopaths.specs.serving import assumptions

MIB, GIB = 2**20, 2**30
BOOK = assumptions("book")
H200_MIB = 143_771          # nvidia-smi memory.total, the book's capacity


def test_sglangs_literal_prefill_activations_are_one_dp_ranks_share_of_the_chunk():
    # V4-Pro, EP64 with attention DP, prefilling on an H200: --tp-size 64 gives max_bs 512 and an
    # 8,192-token chunk over 64 DP ranks, 128 tokens a rank, under the 2,048 least:
    # 512 + 1.5 x 2,048 + 1,024 x 64 / 8 = 11,776 MiB (V4 is not MLA: no flat prefill graphs),
    # above the 10,240 MiB floor, and no DeepEP term outside decode
    got = reserve_peers.sglang_literal("deepseek-v4-pro", "h200", Placement(64, 1), "prefill", BOOK)
    assert got == (512 + 1.5 * 2048 + 1024 * 64 / 8) * MIB == 11_776 * MIB


def test_vllms_outside_share_is_of_the_whole_device():
    # 8% of 143,771 MiB, the same when the book keeps a tenth of the device back
    expected = 0.08 * H200_MIB * MIB
    for usable in (1.0, 0.9):
        assert reserve_peers.vllm_outside("h200", BOOK.but(usable_fraction=usable)) == pytest.approx(expected)


def test_aiconfigurator_adds_no_moe_workspace_outside_the_deepseek_families():
    # K3 (family kimi_linear) on EP64 with attention DP, 4,096 tokens a forward: others 3.5 GiB, no
    # NCCL at TP1, activations 2 x 4,096 x 7,168 x 10 (the default table at TP1) = 560 MiB, above
    # the 70 MiB least, and no workspace term although the unit is routed
    activations = 2 * 4096 * 7168 * 10
    assert activations == 560 * MIB
    assert reserve_peers.aiconfigurator("kimi-k3", Placement(64, 1), 4096) == 3.5 * GIB + 560 * MIB

"""calc.drafting's costs against figures worked by hand: DeepSeek-V3's MTP layer from its config,
and the roofline of a step on a GPU of round numbers."""

from dataclasses import replace

import pytest

from twopaths import specs
from twopaths.calc import drafting

# DeepSeek-V3's config: hidden 7,168, vocabulary 129,280, 61 layers, 256 routed experts of
# intermediate 2,048 (top-8) and one shared, MLA with q rank 1,536, kv rank 512, 128 heads of
# 128 + 64 (rope) query/key and 128 value channels
H, V, E, K, I = 7168, 129_280, 256, 8, 2048
EXPERT = 3 * H * I                                    # gate, up and down: 44,040,192


def test_v3s_mtp_step_reads_one_layers_cache_and_computes_through_the_head():
    d = drafting.draft_costs("deepseek-v3", 4096, "fp8")
    # vLLM's FP8 MLA entry: 512 FP8 latent + 16 B of FP32 scales + 64 BF16 rope = 656 B a token, a layer
    assert d.mtp_kv == 4096 * 656 and d.kv == 61 * 4096 * 656
    attention = (H * 1536 + 1536 + 1536 * 128 * 192 + H * (512 + 64) + 512 + 512 * 128 * (128 + 128)
                 + 128 * 128 * H)                     # 187,107,328
    layer = attention + 2 * H + (E * H + E) + E * EXPERT + EXPERT          # norms, router, experts
    mtp = layer + 2 * H + 2 * H * H + H               # enorm, hnorm, eh_proj, shared head's norm
    assert mtp == 11_610_068_224
    # a token activates all but E - k of the layer's routed experts, and the shared output head
    assert d.mtp_weight_flops == 2 * (mtp - (E - K) * EXPERT + H * V)       # 3,229,559,296


def test_a_step_on_a_slow_gpu_takes_its_fp8_and_bf16_flops_at_their_own_peaks():
    d = drafting.DraftCosts(model="x", fixed=1e9, routed=8e9, mtp_fixed=0.5e9, mtp_routed=1e9, experts=8,
                            top_k=2, kv=1e6, mtp_kv=1e5, weight_flops=2e10, attn_flops=1e9,
                            mtp_weight_flops=1e9, mtp_attn_flops=1e8)
    gpu = replace(specs.gpu("h200"), hbm_bandwidth=1e12, fp8_flops=1e13, bf16_flops=5e12)
    # batch 4: 1 - (1 - 2/8)^4 = 0.68359375 of the experts; 1e9 + 8e9 x 0.68359375 + 4 x 1e6 bytes
    nbytes = 1e9 + 8e9 * 0.68359375 + 4e6                  # 6.47275e9 B: 6.47 ms at 1 TB/s
    assert d.target_step(4) == pytest.approx(nbytes, rel=1e-12)
    # 4 x 2e10 weight FLOPs at the FP8 peak (8 ms) plus 4 x 1e9 attention FLOPs at BF16 (0.8 ms)
    assert d.target_seconds(gpu, 4) == pytest.approx(8e-3 + 0.8e-3, rel=1e-12)
    # a verification pass of gamma = 3 reads 16 tokens' experts: 1 - 0.75^16 of them
    assert d.target_step(4, 4) == pytest.approx(1e9 + 8e9 * (1 - 0.75 ** 16) + 4e6, rel=1e-12)

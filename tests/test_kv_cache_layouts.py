"""The toy caches of chapter 01 against the calculator for the layouts corpus models bring: per-tensor
FP8 K/V (GQA, as vLLM and SGLang store it) and Gated DeltaNet's state, which has more value heads
than key heads. The registry's own models are checked in test_kv.py."""

import pytest
import torch
from hypothesis import given, settings, strategies as st

from twopaths.views import scenario
from twopaths import specs
from twopaths.calc import kv
from twopaths.layers import kv_cache


def _toy(kind, dims, layers, raw=None):
    return specs.ModelSpec(id="toy", name="toy", assumptions="public", layers=layers,
                           attention=(specs.CacheGroup(kind, layers, dims),), params_total=1,
                           params_active=1, source="test", raw=raw or {})


@settings(max_examples=30, deadline=None)
@given(tokens=st.integers(0, 200), kv_heads=st.integers(1, 4), head_dim=st.integers(1, 40),
       layers=st.integers(1, 4))
def test_per_tensor_fp8_kv_heads_equal_the_calculator(tokens, kv_heads, head_dim, layers):
    spec = _toy("mha", {"kv_heads": kv_heads, "head_dim_k": head_dim, "head_dim_v": head_dim}, layers,
                {"fp8_layout": "fp8-per-tensor"})
    measured = kv_cache.build(spec, tokens, "fp8")
    assert measured == kv.kv_breakdown(spec, tokens, "fp8")
    assert measured["K/V heads"] == layers * tokens * kv_heads * 2 * head_dim   # one byte an element


def test_per_tensor_fp8_stores_e4m3_with_no_per_vector_scale():
    x = torch.randn(6, 256)
    (q,) = kv_cache.store(x, 0, kv.FORMATS["fp8-per-tensor"])
    assert q.dtype == torch.float8_e4m3fn and q.shape == x.shape
    scale = x.abs().amax() / torch.finfo(torch.float8_e4m3fn).max
    assert torch.allclose(q.float() * scale, x, rtol=0.07, atol=1e-3 * float(x.abs().max()))


@settings(max_examples=30, deadline=None)
@given(heads=st.integers(1, 3), group=st.integers(1, 4), dk=st.integers(1, 24), dv=st.integers(1, 24),
       conv=st.integers(0, 4), state=st.sampled_from(kv.STATE_DTYPES))
def test_grouped_value_heads_state_equals_the_calculator(heads, group, dk, dv, conv, state):
    dims = {"heads": heads, "head_dim_k": dk, "head_dim_v": dv, "conv_kernel": conv,
            "value_heads": heads * group}
    spec = _toy("kda", dims, 3)
    assert kv_cache.build(spec, 9, "bf16", state) == kv.kv_breakdown(spec, 9, "bf16", state)


@pytest.mark.parametrize("config", ["Qwen--Qwen3.5-397B-A17B", "Qwen--Qwen3-235B-A22B"])
@pytest.mark.parametrize("dtype", ["bf16", "fp8"])
def test_corpus_models_at_full_dims_equal_the_calculator(config, dtype):
    (model,) = scenario.models([], [config])
    spec = specs.model(model)
    measured = kv_cache.build(spec, 123, dtype, "fp32")
    assert measured == kv.kv_breakdown(spec, 123, dtype, "fp32")
    states = [g for g in spec.attention if g.kind == "kda"]
    if states:   # Qwen3.5: 64 value heads (16 key heads) of 128 x 128 FP32 states in 45 layers, plus the
        # BF16 conv tail of kernel - 1 = 3 tokens of q, k (16 * 128 each) and v (64 * 128)
        conv = 3 * (2 * 16 * 128 + 64 * 128) * 2
        assert measured[kv.group_label(states[0])] == 45 * (64 * 128 * 128 * 4 + conv)


@pytest.mark.parametrize("dtype, entry", [("bf16", 2 * 512), ("fp8", 584)])
def test_v4_pro_toy_cache_against_bytes_written_from_the_config(dtype, entry):
    # Written from V4-Pro's config, not from calc.kv (whose formats the toy caches share): 61 layers
    # keep a 128-token window of 512-dim entries, 30 CSA layers an entry per 4 tokens and 31 HCA
    # layers one per 128; CSA's indexer keys are 128 FP8 values with a 4-byte scale (132 B) whatever
    # the entries' dtype. FP8 entries: 448 FP8 values, 64 rope values in BF16 and 8 B of scales (584 B).
    T = 517
    measured = kv_cache.build(specs.model("deepseek-v4-pro"), T, dtype)
    entries = 61 * min(T, 128) + 30 * (T // 4) + 31 * (T // 128)
    assert sum(measured.values()) == entry * entries + 30 * (T // 4) * 132


@pytest.mark.parametrize("state, value", [("bf16", 2), ("fp32", 4)])
def test_k3_toy_cache_against_bytes_written_from_the_config(state, value):
    # K3's config: 24 MLA layers cache a 512-dim latent and a 64-dim rope key a token (BF16); 69 KDA
    # layers keep 96 heads of 128 x 128 states and a short-convolution tail of 3 tokens of q, k and v.
    T = 300
    measured = kv_cache.build(specs.model("kimi-k3"), T, "bf16", state)
    conv = 3 * 96 * (3 * 128) * 2
    assert sum(measured.values()) == 24 * T * (512 + 64) * 2 + 69 * (96 * 128 * 128 * value + conv)


def test_block_scales_round_a_partial_group_up():
    # 200 non-rope values in groups of 128 need ceil(200 / 128) = 2 fp32 scales a vector, not 1:
    # per vector 200 FP8 bytes + 2 * 4 scale bytes = 208 B, so 3 vectors take 624 B.
    fmt = specs.cache_formats.KVFormat("fp8-toy", 1, 2, scale_group=128, scale_bytes=4)
    q, scales = kv_cache.store(torch.randn(3, 200), 0, fmt)
    assert q.dtype == torch.float8_e4m3fn and tuple(q.shape) == (3, 200)
    assert scales.dtype == torch.float32 and tuple(scales.shape) == (3, 2)
    assert q.nbytes + scales.nbytes == 624


def test_mla_with_two_latents_stores_both():
    # An MLA group caching 2 latents of rank 8 plus a 4-dim rope key: (2 * 8 + 4) BF16 values a token,
    # 40 B; 3 layers and 11 tokens hold 3 * 11 * 40 = 1320 B.
    spec = _toy("mla", {"latents": 2, "kv_lora_rank": 8, "rope_dim": 4}, 3)
    assert sum(kv_cache.build(spec, 11, "bf16").values()) == 1320

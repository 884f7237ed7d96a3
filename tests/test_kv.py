"""KV calculators: published anchors, the article's arithmetic, invariants, toy tensors, bad input."""

import math

import pytest
from hypothesis import given, settings, strategies as st

from twopaths import specs
from twopaths.calc import kv
from twopaths.layers import kv_cache

# --- published anchors ---------------------------------------------------------------------------

def test_deepseek_isca_table1_bf16_bytes_per_token():
    # DeepSeek ISCA'25 (arXiv 2505.09343) Table 1, BF16 KV per token.
    assert kv.kv_bytes_per_token("deepseek-v3", "bf16") == 70_272
    assert kv.kv_bytes_per_token("qwen-2.5-72b", "bf16") == 327_680
    assert kv.kv_bytes_per_token("llama-3.1-405b", "bf16") == 516_096


def test_flashmla_fp8_layouts():
    assert kv.entry_bytes(576, 64, kv.FORMATS["fp8-flashmla-v32"]) == 656       # FlashMLA README
    assert kv.entry_bytes(512, 64, kv.FORMATS["fp8-flashmla-v4"]) == 584        # FlashMLA tests/quant.py
    assert kv.entry_bytes(128, 0, kv.FORMATS["fp8-indexer"]) == 132             # V3.2 indexer key
    assert kv.kv_bytes_per_token("deepseek-v3.2", "fp8") == 48_068             # 61 x (656 + 132)


# --- the article's arithmetic under its own assumptions --------------------------------------------

def test_layer_bytes():
    assert kv.layer_bytes("kimi-k3", "mla", 1, "bf16") == 1_152
    assert kv.layer_bytes("kimi-k3", "kda", 0, state_dtype="fp32") == 96 * 128 * 128 * 4 + 3 * 96 * 384 * 2
    assert kv.layer_bytes("deepseek-v4-pro", "window", 10**6, "fp8") == 128 * 584


def test_article_k3_figures():
    k3 = specs.model("kimi-k3", "article")
    assert kv.mla_bytes_per_token(640, 0, kv.FORMATS["bf16"], latents=2) == 2_560
    assert kv.kda_state_bytes(96, 128, 128, "bf16") == 3_145_728
    parts = kv.kv_breakdown(k3, 1_000_000)
    assert parts["KDA state"] == 69 * 3_145_728 == 207 * 2**20     # "207 MB" is MiB
    assert parts["MLA latent"] == 61_440 * 1_000_000


def test_article_v32_and_v4():
    v32, v4 = specs.model("deepseek-v3.2", "article"), specs.model("deepseek-v4-pro", "article")
    assert kv.kv_bytes_per_token(v32) == 61 * 2_048
    assert kv.request_kv_bytes(v4, 10**6) == pytest.approx(0.1 * 61 * 2_048 * 10**6, rel=1e-12)
    assert kv.kv_bytes_per_token(v4) == pytest.approx(12_492.8, rel=1e-12)


# --- public configs ----------------------------------------------------------------------------------

def test_k3_public_cache():
    k3 = specs.model("kimi-k3")
    assert kv.kv_bytes_per_token(k3, "bf16") == 24 * (512 + 64) * 2
    conv = 3 * 96 * (3 * 128) * 2
    assert kv.request_kv_bytes(k3, 0, "bf16", "bf16") == 69 * (96 * 128 * 128 * 2 + conv)
    assert kv.request_kv_bytes(k3, 0, "bf16", "fp32") == 69 * (96 * 128 * 128 * 4 + conv)


def test_v4_pro_public_cache_counts_window_entries_and_indexer():
    v4 = specs.model("deepseek-v4-pro")
    T = 1_000_003
    # BF16 entries; indexer keys stay FP8 with an fp32 scale (132 B) whatever the entry dtype.
    expected = 2 * (61 * 128 * 512 + 30 * (T // 4) * 512 + 31 * (T // 128) * 512) + 30 * (T // 4) * 132
    assert kv.request_kv_bytes(v4, T, "bf16") == expected
    v4_fp8 = 584 * (61 * 128 + 30 * (T // 4) + 31 * (T // 128)) + 30 * (T // 4) * 132
    assert kv.request_kv_bytes(v4, T, "fp8") == v4_fp8


def test_window_only_cache_stops_growing():
    spec = specs.ModelSpec(id="swa", name="swa", assumptions="public", layers=2, params_total=1, params_active=1,
                           source="test", attention=(specs.CacheGroup("window", 2, {"window": 4096, "entry_dim": 64,
                                                                                   "rope_dim": 0}),))
    assert kv.kv_bytes_per_token(spec, "bf16") == 0
    assert kv.max_context(spec, 1e12, "bf16") == kv.MAX_TOKENS


# --- invariants ------------------------------------------------------------------------------------

MODELS = specs.model_ids("public", include_reference=True)


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(MODELS), st.sampled_from(kv.KV_DTYPES), st.integers(0, 10**8), st.integers(1, 10**6))
def test_cache_never_shrinks_as_context_grows(model_id, dtype, t, dt):
    assert kv.request_kv_bytes(model_id, t + dt, dtype) >= kv.request_kv_bytes(model_id, t, dtype)


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(MODELS), st.sampled_from(kv.KV_DTYPES), st.floats(1e8, 1e12))
def test_max_context_is_the_boundary(model_id, dtype, capacity):
    t = kv.max_context(model_id, capacity, dtype)
    if t is None:
        assert kv.request_kv_bytes(model_id, 0, dtype) > capacity
    else:
        assert kv.request_kv_bytes(model_id, t, dtype) <= capacity < kv.request_kv_bytes(model_id, t + 1, dtype)


@pytest.mark.parametrize("model_id", MODELS)
def test_per_token_slope_predicts_long_contexts(model_id):
    per_token = kv.kv_bytes_per_token(model_id, "bf16")
    grown = kv.request_kv_bytes(model_id, 2 * 2**20, "bf16") - kv.request_kv_bytes(model_id, 2**20, "bf16")
    assert math.isclose(grown, per_token * 2**20, rel_tol=1e-9)


def test_fp8_is_smaller_than_bf16_but_not_half_for_rope_layouts():
    for m in specs.BOOK_MODELS:
        ratio = kv.request_kv_bytes(m, 10**6, "fp8") / kv.request_kv_bytes(m, 10**6, "bf16")
        assert 0.5 < ratio < 0.75, (m, ratio)


# --- the toy caches' tensors against the formulas ---------------------------------------------------

@settings(max_examples=40, deadline=None)
@given(kind=st.sampled_from(["mha", "mla", "kda", "window", "compressed", "indexer"]),
       tokens=st.integers(0, 300), dtype=st.sampled_from(kv.KV_DTYPES), state=st.sampled_from(kv.STATE_DTYPES),
       a=st.integers(1, 48), b=st.integers(1, 40), ratio=st.sampled_from([1, 2, 3, 4, 16, 128]),
       layers=st.integers(1, 5))
def test_toy_cache_bytes_equal_the_calculator_at_small_dims(kind, tokens, dtype, state, a, b, ratio, layers):
    dims = {"mha": {"kv_heads": 1 + a % 4, "head_dim_k": b, "head_dim_v": a},
            "mla": {"kv_lora_rank": a, "rope_dim": b % 9},
            "kda": {"heads": 1 + a % 3, "head_dim_k": b, "head_dim_v": a, "conv_kernel": ratio % 5},
            "window": {"window": a, "entry_dim": b + 8, "rope_dim": b % 9},
            "compressed": {"ratio": ratio, "entry_dim": b + 8, "rope_dim": b % 9},
            "indexer": {"ratio": ratio, "index_dim": a}}[kind]
    spec = specs.ModelSpec(id="toy", name="toy", assumptions="public", layers=layers,
                           attention=(specs.CacheGroup(kind, layers, dims),), params_total=1, params_active=1,
                           source="test")
    assert kv_cache.build(spec, tokens, dtype, state) == kv.kv_breakdown(spec, tokens, dtype, state)


@pytest.mark.parametrize("model_id", specs.BOOK_MODELS)
@pytest.mark.parametrize("dtype", ["bf16", "fp8"])
def test_toy_cache_bytes_equal_the_calculator_at_full_dims(model_id, dtype):
    spec = specs.model(model_id)
    assert kv_cache.build(spec, 517, dtype) == kv.kv_breakdown(spec, 517, dtype)


def test_block_scaled_fp8_round_trips():
    import torch

    x = torch.randn(5, 576)
    q, scales, rope = kv_cache.store(x, 64, kv.FORMATS["fp8-flashmla-v32"])
    back = q.float().view(5, 4, 128) * scales[..., None]
    assert torch.allclose(back.view(5, 512), x[:, :512], rtol=0.07, atol=1e-2)
    assert torch.equal(rope, x[:, 512:].bfloat16())


# --- bad input -------------------------------------------------------------------------------------

def test_bad_input_names_the_parameter(raises_param):
    raises_param("tokens", kv.request_kv_bytes, "kimi-k3", -1)
    raises_param("tokens", kv.request_kv_bytes, "kimi-k3", 1.5)
    raises_param("tokens", kv.request_kv_bytes, "kimi-k3", kv.MAX_TOKENS + 1)
    raises_param("kv_dtype", kv.request_kv_bytes, "kimi-k3", 10, "int3")
    raises_param("state_dtype", kv.request_kv_bytes, "kimi-k3", 10, "bf16", "fp64")
    raises_param("model", kv.request_kv_bytes, "kimi-k9", 10)
    raises_param("capacity_bytes", kv.max_context, "kimi-k3", -1.0)
    raises_param("capacity_bytes", kv.max_context, "kimi-k3", float("nan"))
    raises_param("rope_dim", kv.entry_bytes, 64, 65, kv.FORMATS["bf16"])
    raises_param("kv_heads", kv.mha_bytes_per_token, 0, 128, 128, kv.FORMATS["bf16"])
    raises_param("latents", kv.mla_bytes_per_token, 512, 64, kv.FORMATS["bf16"], 3)
    raises_param("heads", kv.kda_state_bytes, 0, 128, 128)
    raises_param("kind", kv.layer_bytes, "deepseek-v3", "kda")

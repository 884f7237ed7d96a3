"""Quantised checkpoints: ModelOpt NVFP4 and FP8, compressed-tensors INT4, read from the config and
the ``hf_quant_config.json`` beside it. Expected bytes are written by hand from the format (bits and
scales) and the configs' numbers; expected groups from the checkpoints' exclusion lists as printed."""

import json
import shutil
from pathlib import Path

import pytest

import need

from twopaths import specs
from twopaths.calc import kv, weights
from twopaths.errors import ParameterError


def corpus() -> Path:
    need.module("aiconfigurator_core")
    import aiconfigurator_core
    return Path(aiconfigurator_core.__file__).parent / "model_configs"


def read(name):
    return specs.from_config(corpus() / f"{name}_config.json")


# ---- one tensor of 4096 x 7168 = 29,360,128 values -------------------------------------------------

@pytest.mark.parametrize("fmt,want", [
    ("fp4", 14_680_064 + 1_835_008),         # 4 bits each + a 1-byte e4m3 scale per 16 values
    ("int4-g32", 14_680_064 + 1_835_008),    # 4 bits each + a 2-byte bf16 scale per 32 values
    ("int4-g128", 14_680_064 + 458_752),     # 4 bits each + a 2-byte bf16 scale per 128 values
    ("fp8-tensor", 29_360_128),              # 1 byte each; the per-tensor fp32 scales not counted
])
def test_one_tensor_in_each_format(fmt, want):
    assert weights.WEIGHT_FORMATS[fmt].bytes(4096 * 7168) == want


def test_kimi_k25_int4_experts_by_hand():
    """K2.5: 60 MoE layers (61, the first dense) x 384 experts x 3 matrices of 7168 x 2048, INT4 with a
    bf16 scale per 32 (4.5 bits a weight); self_attn, shared experts, the dense MLP and lm_head ignored."""
    spec = read("moonshotai--Kimi-K2.5")
    assert spec.raw["weight_formats"] == {"routed_experts": "int4-g32"} and spec.raw["weights_unknown"] is None
    b = weights.weight_bytes(spec)
    assert b["routed_experts"] == 60 * 384 * 3 * 7168 * 2048 * 9 // 16 == 570_760_888_320
    assert b["dense_ffn"] == 3 * 7168 * 18432 * 2 == 792_723_456            # the one dense layer, BF16


def test_kimi_k26_nvfp4_experts_by_hand():
    """K2.6-NVFP4 has K2.5's shapes; NVFP4 is 4 bits + 1 byte per 16, also 4.5 bits a weight."""
    spec = read("nvidia--Kimi-K2.6-NVFP4")
    assert spec.raw["weight_formats"] == {"routed_experts": "fp4"}    # layer 0, self_attn*, shared_experts* excluded
    assert weights.weight_bytes(spec)["routed_experts"] == 570_760_888_320


# ---- the groups, from the exclusion lists -----------------------------------------------------------

@pytest.mark.parametrize("name,want", [
    # self_attn*, shared_experts*, layers 0-2 (the dense ones) and 78 (MTP) whole, lm_head
    ("nvidia--GLM-5.1-NVFP4", {"routed_experts": "fp4"}),
    # every attention projection and the indexer, layer 78, lm_head: the dense FFN and shared experts NVFP4
    ("nvidia--GLM-5-NVFP4", {"dense_ffn": "fp4", "routed_experts": "fp4", "shared_experts": "fp4"}),
    ("nvidia--Kimi-K2.5-NVFP4", {"dense_ffn": "fp4", "routed_experts": "fp4", "shared_experts": "fp4"}),
    ("nvidia--MiniMax-M2.5-NVFP4", {"routed_experts": "fp4"}),        # self_attn*, the gate, lm_head
    ("nvidia--Gemma-4-26B-A4B-NVFP4", {"routed_experts": "fp4"}),     # self_attn*, mlp*, router*
    ("nvidia--Gemma-4-31B-IT-NVFP4", {"dense_ffn": "fp4"}),           # self_attn*
    ("nvidia--Qwen3.5-397B-A17B-NVFP4", {"routed_experts": "fp4"}),   # linear_attn*, self_attn*, shared_expert*
    ("nvidia--Qwen3-235B-A22B-NVFP4", {"attention": "fp4", "routed_experts": "fp4"}),   # the gate, lm_head
    ("nvidia--Llama-3.1-70B-Instruct-FP8", {"attention": "fp8-tensor", "dense_ffn": "fp8-tensor"}),
    # no quant_method: ModelOpt's producer and quant_algo FP8 say what it is
    ("Qwen--Qwen3-32B-FP8-Static-PerTensor", {"attention": "fp8-tensor", "dense_ffn": "fp8-tensor"}),
])
def test_priced_groups_follow_the_exclusions(name, want):
    spec = read(name)
    assert spec.raw["weight_formats"] == want and spec.raw["weights_unknown"] is None


@pytest.mark.parametrize("name,unknown", [
    # q_a, q_b, kv_a, kv_b excluded but o_proj NVFP4: one attention group, two formats
    ("nvidia--DeepSeek-V3.1-NVFP4", ["attention"]),
    ("nvidia--DeepSeek-V3.2-NVFP4", ["attention"]),
    # MIXED_PRECISION: FP8 projections beside unlisted (BF16) in_proj_a/in_proj_b; the shared
    # expert's NVFP4 matrices beside its unlisted BF16 gate
    ("nvidia--Qwen3.6-35B-A3B-NVFP4", ["attention", "shared_experts"]),
    ("nvidia--Qwen3.6-27B-NVFP4", ["attention"]),
])
def test_a_group_in_two_formats_is_unknown_and_says_so(name, unknown):
    spec = read(name)
    assert sorted(g for g, f in spec.raw["weight_formats"].items() if f == "unknown") == unknown
    assert all(g in spec.raw["weights_unknown"] for g in unknown)
    err = pytest.raises(ParameterError, weights.weight_bytes, spec).value
    assert err.name == "quantization_config" and err.got == spec.raw["weights_unknown"]
    assert kv.kv_bytes_per_token(spec, "bf16") > 0                          # the cache is still priced
    weights.weight_bytes(spec, dict.fromkeys(unknown, "bf16"))              # and named formats price them


def test_the_side_file_is_read_beside_a_checkpoints_config(tmp_path):
    name = "nvidia--DeepSeek-V3.1-NVFP4"        # its formats are only in hf_quant_config.json
    shutil.copy(corpus() / f"{name}_config.json", tmp_path / "config.json")
    shutil.copy(corpus() / f"{name}_hf_quant_config.json", tmp_path / "hf_quant_config.json")
    want = read(name).raw["weight_formats"]
    assert want["routed_experts"] == "fp4" and specs.from_config(tmp_path / "config.json").raw["weight_formats"] == want
    config = json.loads((tmp_path / "config.json").read_text())       # a dict carries it as AIConfigurator does
    side = json.loads((tmp_path / "hf_quant_config.json").read_text())
    assert specs.from_config({**config, "hf_quant_config": side}).raw["weight_formats"] == want
    assert specs.from_config(config).raw["weight_formats"] == {}      # a bare dict says nothing: BF16
    spec = specs.model(specs.add_model(tmp_path / "config.json", "v31-nvfp4-test"))   # a registry entry keeps it
    assert spec.raw["weight_formats"] == want
    specs._model_files().pop("v31-nvfp4-test")
    (tmp_path / "hf_quant_config.json").write_text("{not json")
    assert pytest.raises(ParameterError, specs.from_config, tmp_path / "config.json").value.name == "hf_quant_config"


def kimi_k25(**weights_changes):
    c = json.loads((corpus() / "moonshotai--Kimi-K2.5_config.json").read_text())
    q = c["text_config"]["quantization_config"]
    q["config_groups"]["group_0"]["weights"].update(weights_changes)
    return c, q


def test_int4_group_128_and_unpriced_int4_layouts():
    c, _ = kimi_k25(group_size=128)
    assert specs.from_config(c).raw["weight_formats"] == {"routed_experts": "int4-g128"}
    for change in ({"symmetric": False}, {"group_size": 64}, {"scale_dtype": "torch.float32"}):
        c, _ = kimi_k25(**change)
        spec = specs.from_config(c)
        assert spec.raw["weights_unknown"] and set(spec.raw["weight_formats"].values()) == {"unknown"}


def test_an_exclusion_the_book_cannot_map_leaves_the_weights_unknown():
    c, q = kimi_k25()
    q["ignore"].append("re:.*block_sparse_moe.*")                   # no module of a Kimi model
    spec = specs.from_config(c)
    assert "block_sparse_moe" in spec.raw["weights_unknown"]
    assert pytest.raises(ParameterError, weights.weight_bytes, spec).value.name == "quantization_config"

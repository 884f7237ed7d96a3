"""specs.from_config: a config.json becomes a spec whose numbers are the registry's own, byte for
byte; each family's parameter counter agrees with transformers' modules; bad input names the key."""

import json
import re
from collections import Counter
from pathlib import Path

import pytest

import need
import torch

from twopaths import specs
from twopaths.calc import kv, weights
from twopaths.specs import params
from twopaths.errors import ParameterError
from twopaths.specs.from_config import FAMILIES

HERE = Path(__file__).parent
# Every registry number as it was when the cache groups were still typed by hand (written by the
# commit that moved the derivation into from_config, before it changed anything).
BEFORE = json.loads((HERE / "data" / "registry_before_from_config.json").read_text())
TOKENS = (0, 1, 127, 4096, 131072, 1048576)
PER_TENSOR_FP8 = ("llama-3.1-405b", "qwen-2.5-72b")   # GQA: FP8 with per-tensor scales


def corpus():
    """AIConfigurator's bundled configs (its package is a test dependency, as in test_peer_aiconfigurator)."""
    need.module("aiconfigurator_core")
    import aiconfigurator_core
    return Path(aiconfigurator_core.__file__).parent / "model_configs"


@pytest.mark.parametrize("key", sorted(BEFORE))
def test_registry_numbers_equal_the_hand_typed_ones(key):
    assumptions, model_id = key.split("/")
    spec, want = specs.model(model_id, assumptions), BEFORE[key]
    assert [[g.kind, g.layers, g.dims] for g in spec.attention] == want["groups"]
    assert (spec.layers, spec.params_total, spec.params_active) == (want["layers"], want["params_total"],
                                                                   want["params_active"])
    for dt in kv.KV_DTYPES:
        if dt == "fp8" and model_id in PER_TENSOR_FP8:
            # The one deliberate change since the snapshot: GQA caches in FP8 were priced in FlashMLA's
            # MLA layout (4 scale bytes per 128 values); they are per-tensor FP8, exactly half of BF16.
            assert kv.kv_bytes_per_token(spec, dt) * 2 == want["per_token_bf16"]
            assert kv.kv_bytes_per_token(spec, dt) < want["per_token_fp8"]
            continue
        assert kv.kv_bytes_per_token(spec, dt) == want[f"per_token_{dt}"]
        for sd in ("bf16", "fp32"):
            assert [kv.request_kv_bytes(spec, t, dt, sd) for t in TOKENS] == want[f"request_{dt}_{sd}"]
    assert [kv.request_kv_bytes(spec, t) for t in (0, 1, 4096, 1048576)] == want["request_default"]
    if "components" in want:
        counts = params.param_counts(spec)
        assert [[c.name, c.group, c.params, c.activated, c.layers, c.in_total] for c in counts.components] \
            == want["components"]
        assert (counts.total, counts.activated()) == (want["total"], want["activated"])
        assert weights.shipped_formats(spec) == want["formats"]
        assert weights.weight_bytes(spec) == want["weight_bytes"]
        assert params.tp_replicated(spec) == want["tp_replicated"]


def test_the_reference_models_are_now_counted_too():
    """Llama-3.1-405B and Qwen2.5-72B, once their excerpts hold the keys the counter needs, come to
    their model cards' sizes (405B; 72.7B)."""
    assert round(params.param_counts("llama-3.1-405b").total / 1e9) == 406       # 405.85B
    assert round(params.param_counts("qwen-2.5-72b").total / 1e8) == 727


CORPUS_TWINS = {"kimi-k3": "moonshotai--Kimi-K3", "deepseek-v4-pro": "deepseek-ai--DeepSeek-V4-Pro",
                "deepseek-v4-flash": "deepseek-ai--DeepSeek-V4-Flash", "deepseek-v3.2": "deepseek-ai--DeepSeek-V3.2",
                "deepseek-v3": "deepseek-ai--DeepSeek-V3", "llama-3.1-405b": "meta-llama--Meta-Llama-3.1-405B"}


@pytest.mark.parametrize("model_id", list(CORPUS_TWINS))
def test_a_whole_config_json_gives_what_its_excerpt_gives(model_id):
    """The registry keeps excerpts; the full file (K3's nested in text_config) reads the same."""
    path = corpus() / f"{CORPUS_TWINS[model_id]}_config.json"
    whole, excerpt = specs.from_config(path), specs.model(model_id)
    assert whole.attention == excerpt.attention and whole.layers == excerpt.layers
    assert params.param_counts(whole).components == params.param_counts(excerpt).components
    assert weights.shipped_formats(whole) == weights.shipped_formats(excerpt)
    assert {k: whole.raw.get(k) for k in ("fp8_layout", "indexer_format")} == \
        {k: excerpt.raw.get(k) for k in ("fp8_layout", "indexer_format")}


def test_counted_totals_when_no_card_is_given():
    spec = specs.from_config(corpus() / "Qwen--Qwen3-235B-A22B_config.json")
    counts = params.param_counts(spec)
    assert (spec.params_total, spec.params_active) == (counts.total, counts.activated())
    assert round(spec.params_total / 1e9) == 235 and round(spec.params_active / 1e9) == 22


# ---- each family's cache groups, from configs of the corpus -------------------------------------

def _groups(name):
    return [(g.kind, g.layers, g.dims) for g in specs.from_config(corpus() / f"{name}_config.json").attention]


def test_family_groups():
    assert _groups("mistralai--Mixtral-8x7B-v0.1") == [
        ("mha", 32, {"kv_heads": 8, "head_dim_k": 128, "head_dim_v": 128})]
    # 8 KV heads x (K 64 + V 64); the heads are kept so attention TP splits the window
    sliding = {"window": 128, "entry_dim": 8 * 128, "rope_dim": 0, "kv_heads": 8}
    assert _groups("openai--gpt-oss-20b") == [("mha", 12, {"kv_heads": 8, "head_dim_k": 64, "head_dim_v": 64}),
                                             ("window", 12, sliding)]
    assert _groups("google--gemma-4-26B-A4B") == [
        ("window", 25, {"window": 1024, "entry_dim": 8 * 512, "rope_dim": 0, "kv_heads": 8}),
        ("mha", 5, {"kv_heads": 2, "head_dim_k": 512, "head_dim_v": 512})]
    assert _groups("XiaomiMiMo--MiMo-V2-Flash") == [
        ("mha", 9, {"kv_heads": 4, "head_dim_k": 192, "head_dim_v": 128}),
        ("window", 39, {"window": 128, "entry_dim": 8 * 320, "rope_dim": 0, "kv_heads": 8})]
    assert _groups("zai-org--GLM-5") == [("mla", 78, {"kv_lora_rank": 512, "rope_dim": 64}),
                                         ("indexer", 78, {"ratio": 1, "index_dim": 128})]
    assert _groups("meta-llama--Llama-4-Scout-17B-16E-Instruct") == [          # 3 of 4 layers chunked
        ("window", 36, {"window": 8192, "entry_dim": 8 * 256, "rope_dim": 0, "kv_heads": 8, "label": "attention chunk"}),
        ("mha", 12, {"kv_heads": 8, "head_dim_k": 128, "head_dim_v": 128})]
    assert _groups("Qwen--Qwen3.5-35B-A3B") == [
        ("kda", 30, {"heads": 16, "head_dim_k": 128, "head_dim_v": 128, "conv_kernel": 4, "value_heads": 32,
                     "label": "Gated DeltaNet state"}),
        ("mha", 10, {"kv_heads": 2, "head_dim_k": 256, "head_dim_v": 256})]


@pytest.mark.parametrize("name", ["zai-org--GLM-5.2", "zai-org--GLM-5.2-FP8", "zai-org--GLM-5.3",
                                  "zai-org--GLM-5.3-FP8"])
def test_index_share_keeps_indexer_keys_only_where_a_layer_indexes(name):
    """GLM-5.2 and 5.3 (IndexShare): of 78 layers, 0-2 and every 4th from 6 run their own indexer
    ("full" in indexer_types, and index_topk_freq 4 from offset 3 by vLLM's rule); the other 57
    reuse a top k and keep no keys. By hand, a token costs 78 MLA entries of (512 + 64) BF16 values
    and 21 indexer keys of 128 FP8 values and a 4-byte scale: 89,856 + 2,772 = 92,628 B."""
    spec = specs.from_config(corpus() / f"{name}_config.json")
    full = [0, 1, 2] + list(range(6, 78, 4))
    assert [i for i, t in enumerate(spec.config["indexer_types"]) if t == "full"] == full and len(full) == 21
    assert [(g.kind, g.layers) for g in spec.attention] == [("mla", 78), ("indexer", 21)]
    assert kv.kv_bytes_per_token(spec, "bf16") == 78 * 576 * 2 + 21 * 132 == 92_628
    # in attention, the reusing layers score nothing: 21 layers read every indexer key, 57 none
    from twopaths.calc import attention_flops as af
    layers = af.attention_layers(spec)
    assert [(g.layers, g.index_heads, g.topk) for g in layers] == [(21, 32, 2048), (57, 0, 2048)]
    assert af.layer_bytes_read(spec, layers[1], 10_000, "bf16") == 2048 * 576 * 2


def glm(**change):
    c = json.loads((corpus() / "zai-org--GLM-5.2_config.json").read_text())
    return {k: v for k, v in {**c, **change}.items() if v is not None}


def test_the_index_schedule_is_read_from_any_of_its_keys():
    types = glm()["indexer_types"]
    by_freq = specs.from_config(glm(indexer_types=None)).attention[1].layers           # vLLM's rule alone
    pattern = ["F" if t == "full" else "S" for t in types]
    by_pattern = specs.from_config(glm(indexer_types=None, index_topk_freq=None, index_topk_pattern=pattern))
    assert by_freq == by_pattern.attention[1].layers == 21
    # every 2nd from offset 2 (vLLM's default offset): layers 0, 1, 3, 5, ... 77 index
    half = specs.from_config(glm(indexer_types=None, index_topk_freq=2, index_skip_topk_offset=None))
    assert half.attention[1].layers == 2 + 38


def test_an_index_schedule_that_contradicts_itself_or_its_family_is_refused(raises_param):
    types = glm()["indexer_types"]
    raises_param("indexer_types", specs.from_config, glm(indexer_types=["full"] * 78))   # freq 4 says 21
    raises_param("indexer_types", specs.from_config, glm(indexer_types=["full", "skip"] * 39))
    raises_param("layer_types", specs.from_config, glm(layer_types=["full_attention"] * 78))
    # a schedule key a family does not read: pricing every layer alike would be silent and wrong
    v3 = json.loads((corpus() / "deepseek-ai--DeepSeek-V3_config.json").read_text())
    e = raises_param("indexer_types", specs.from_config, {**v3, "indexer_types": types})
    assert "deepseek_v3 as the mla family, with no per-layer schedule" in str(e)
    assert specs.from_config(glm(indexer_types=["full"] * 78, index_topk_freq=None)).attention[1].layers == 78


def test_qwen_slides_from_max_window_layers_on():
    c = json.loads((corpus() / "Qwen--Qwen3-8B_config.json").read_text())
    c.update(use_sliding_window=True, sliding_window=4096, max_window_layers=28)
    kinds = [(g.kind, g.layers) for g in specs.from_config(c).attention]
    assert kinds == [("mha", 28), ("window", c["num_hidden_layers"] - 28)]


def test_gated_deltanet_state_counts_every_value_head():
    """Qwen3.5-35B-A3B: 32 value heads x 128 x 128 fp32 state, plus a 3-token conv tail over
    q, k (16 heads x 128 each) and v (32 x 128) in BF16, per linear layer."""
    spec = specs.from_config(corpus() / "Qwen--Qwen3.5-35B-A3B_config.json")
    per_layer = 32 * 128 * 128 * 4 + 3 * (2 * 16 * 128 + 32 * 128) * 2
    assert kv.kv_breakdown(spec, 0, "bf16", "fp32")["Gated DeltaNet state"] == 30 * per_layer


def test_nemotron_3_nano_cache_by_hand():
    """Nemotron-3-Nano-30B-A3B-BF16: the pattern MEMEM*EMEMEM*... holds 23 M (Mamba-2) and 6 * (attention)
    layers. A token adds K and V for 2 KV heads x 128 in 6 layers, 6 x 2 x 2 x 128 x 2 B = 6,144 B (BF16).
    A Mamba-2 layer keeps the SSM state 64 heads x 64 x 128 (ssm_state_size) = 524,288 values in fp32
    (mamba_ssm_cache_dtype), 2,097,152 B, and the conv tail of 3 (conv_kernel 4 - 1) inputs over
    64 x 64 + 2 x 8 (n_groups) x 128 = 6,144 channels in BF16, 36,864 B: 2,134,016 B, x 23 = 49,082,368 B."""
    spec = specs.from_config(corpus() / "nvidia--NVIDIA-Nemotron-3-Nano-30B-A3B-BF16_config.json")
    assert spec.layers == 52 and spec.raw["shipped_state_dtype"] == "fp32"
    assert kv.kv_bytes_per_token(spec, "bf16") == 6_144
    assert kv.fixed_bytes(spec, 4096, "bf16", "fp32") == 49_082_368
    assert kv.fixed_bytes(spec, 4096, "bf16", "bf16") == 23 * (524_288 * 2 + 36_864)
    assert kv.request_kv_bytes(spec, 131_072, "bf16", "fp32") == 49_082_368 + 131_072 * 6_144


def test_nemotron_h_state_shapes_are_what_transformers_allocates():
    """A tiny NemotronH (M * - M E: Mamba-2, attention, MLP, Mamba-2, MoE) run on 5 tokens in
    transformers: per Mamba-2 layer its cache holds a recurrent state (batch, heads, head_dim,
    ssm_state_size) and a conv state (batch, conv_dim, conv_kernel); per attention layer K and V of
    (batch, kv_heads, tokens, head_dim). The book's per-layer bytes (fp32 state, BF16 conv and K/V)
    hold the same element counts, but for one conv column: transformers keeps the current input
    beside the conv_kernel - 1 past ones it carries, which is all the state a step needs (vLLM's
    conv state holds conv_kernel - 1 columns)."""
    import transformers
    cfg = transformers.NemotronHConfig(
        vocab_size=64, hidden_size=64, num_attention_heads=4, num_key_value_heads=2, head_dim=16,
        intermediate_size=32, mamba_num_heads=6, mamba_head_dim=8, ssm_state_size=12, n_groups=2, conv_kernel=4,
        n_routed_experts=4, num_experts_per_tok=2, moe_intermediate_size=16, moe_shared_expert_intermediate_size=24,
        hybrid_override_pattern="M*-ME", chunk_size=4)
    model = transformers.AutoModelForCausalLM.from_config(cfg).eval()
    with torch.no_grad():
        cache = model(torch.arange(5)[None], use_cache=True).past_key_values
    spec = specs.from_config(cfg.to_dict())
    assert [(g.kind, g.layers) for g in spec.attention] == [("kda", 2), ("mha", 1)]
    fp32, bf16 = (kv.layer_bytes(spec, "kda", 0, "bf16", d) for d in ("fp32", "bf16"))
    state, conv = (fp32 - bf16) / 2, (2 * bf16 - fp32) / 2          # 4s + 2c and 2s + 2c bytes
    for i in (0, 3):                                                  # the M layers
        recurrent, conv_state = cache.layers[i].recurrent_states[0], cache.layers[i].conv_states[0]
        assert recurrent.shape == (1, 6, 8, 12) and recurrent.numel() == state
        assert conv_state.shape == (1, 6 * 8 + 2 * 2 * 12, 4)
        assert conv_state.shape[1] * (conv_state.shape[2] - 1) == conv
    keys = cache.layers[1].keys
    assert keys.shape == (1, 2, 5, 16)
    assert kv.layer_bytes(spec, "mha", 1, "bf16") == 2 * keys[0, :, 0].numel() * 2


def test_nemotron_h_schedule_errors_name_the_key():
    c = json.loads((corpus() / "nvidia--NVIDIA-Nemotron-3-Nano-30B-A3B-BF16_config.json").read_text())
    err = pytest.raises(ParameterError, specs.from_config, {**c, "num_hidden_layers": 50}).value
    assert err.name == "num_hidden_layers" and "52" in err.allowed
    assert pytest.raises(ParameterError, specs.from_config,
                         {**c, "hybrid_override_pattern": "MX*"}).value.name == "hybrid_override_pattern"
    assert pytest.raises(ParameterError, specs.from_config,
                         {**c, "layers_block_type": ["mamba", "rnn"]}).value.name == "layers_block_type"
    qwen = json.loads((corpus() / "Qwen--Qwen3-8B_config.json").read_text())    # another family's schedule
    assert pytest.raises(ParameterError, specs.from_config,
                         {**qwen, "layers_block_type": ["mamba"] * 36}).value.name == "layers_block_type"


STEP = "stepfun-ai--Step-3.7-Flash"


def test_step3p7_cache_by_hand():
    """Step-3.7-Flash: layer_types gives 12 full and 33 sliding-window layers (window 512), each with
    8 KV heads of 128. A token adds K and V in the 12 full layers, 12 x 2 x 8 x 128 x 2 B = 49,152 B
    (BF16); a sliding layer holds at most 512 entries of 8 x 2 x 128 values, 33 x 512 x 4,096 B =
    69,206,016 B once 512 tokens are in, no fixed state beyond that."""
    spec = specs.from_config(corpus() / f"{STEP}_config.json")
    assert [(g.kind, g.layers) for g in spec.attention] == [("mha", 12), ("window", 33)]
    assert kv.kv_bytes_per_token(spec, "bf16") == 49_152 and kv.kv_bytes_per_token(spec, "fp8") == 24_576
    assert kv.fixed_bytes(spec, 4096, "bf16") == 69_206_016 and kv.fixed_bytes(spec, 100, "bf16") == 0
    assert kv.request_kv_bytes(spec, 100, "bf16") == 100 * (49_152 + 33 * 4_096)
    assert kv.request_kv_bytes(spec, 131_072, "bf16") == 69_206_016 + 131_072 * 49_152


def _tiny_step3p7(**kw):
    import transformers
    return transformers.Step3p7TextConfig(**{
        "vocab_size": 64, "hidden_size": 64, "num_hidden_layers": 5, "num_attention_heads": 4,
        "num_sliding_attention_heads": 6, "num_key_value_heads": 2, "head_dim": 16, "intermediate_size": 32,
        "moe_intermediate_size": 16, "share_expert_dim": 24, "n_routed_experts": 4, "num_experts_per_tok": 2,
        "sliding_window": 4, "mlp_layer_types": ["dense", "dense", "sparse", "sparse", "sparse"],
        "layer_types": ["full_attention", "sliding_attention", "sliding_attention", "full_attention",
                        "sliding_attention"], **kw})


def test_step3p7_cache_and_counts_are_what_transformers_builds():
    """A tiny Step3p7 text model (full, sliding, sliding, full, sliding; 6 query heads on the sliding
    layers, 4 on the full ones) run on 7 tokens past a window of 4: its full layers cache K and V of
    (batch, kv_heads, 7, head_dim), its sliding ones the last window - 1 = 3 tokens, to which the next
    token's own entry is added, so it attends to 4: the book's window of 4 entries. Its parameters are
    the book's count but for the routers' selection bias (a buffer there: 3 MoE layers x 4 experts)
    and the output head (not in Step3p7TextModel; vocab x d, untied)."""
    import transformers
    cfg = _tiny_step3p7()
    model = transformers.Step3p7TextModel(cfg).eval()
    with torch.no_grad():
        cache = model(torch.arange(7)[None], use_cache=True).past_key_values
    spec = specs.from_config(cfg.to_dict())
    assert [(g.kind, g.layers) for g in spec.attention] == [("mha", 2), ("window", 3)]
    for i, t in enumerate(cfg.layer_types):
        keys = cache.layers[i].keys
        assert keys.shape == (1, 2, 7 if t == "full_attention" else 3, 16)
    entry = 2 * cache.layers[0].keys[0, :, 0].numel() * 2                 # K and V of one token, BF16
    assert kv.layer_bytes(spec, "mha", 1, "bf16") == entry
    assert kv.layer_bytes(spec, "window", 7, "bf16") == (cache.layers[1].keys.shape[2] + 1) * entry
    hf = sum(p.numel() for p in model.parameters()) + 64 * 64
    assert params.param_counts(spec).total - hf == 3 * 4


def test_step3p7_counter_equals_transformers_modules():
    """Step-3.7-Flash whole, as transformers' Step3p7TextModel builds it on the meta device (plus the
    untied head): 195,844,508,736 parameters, of which the book counts 42 MoE layers x 288 selection
    biases transformers keeps as buffers; about 10.35B active (8 of 288 experts and the shared one)."""
    import transformers
    c = json.loads((corpus() / f"{STEP}_config.json").read_text())
    spec = specs.from_config(c)
    text = {k: v for k, v in c.items() if k not in ("model_type", "architectures", "quantization_config")}
    with torch.device("meta"):
        model = transformers.Step3p7TextModel(transformers.Step3p7TextConfig(**text))
    hf = sum(p.numel() for p in model.parameters()) + c["vocab_size"] * c["hidden_size"]
    counts = params.param_counts(spec)
    assert counts.total - hf == 42 * 288 and counts.total == 195_844_508_736
    assert counts.activated() == 10_347_744_320


STEP3P7_BAD = [  # (a change to the corpus config, the key the error names)
    ({"first_k_dense_replace": 4}, "first_k_dense_replace"),        # transformers' schedule gives 3
    ({"moe_layers_enum": ",".join(map(str, range(5, 45)))}, "first_k_dense_replace"),
    ({"mlp_layer_types": ["dense"] * 3 + ["moe"] * 42}, "mlp_layer_types"),
    ({"attention_other_setting": {"num_attention_heads": 96, "head_dim": 64}}, "attention_other_setting.head_dim"),
    ({"attention_other_setting": {"num_attention_heads": 96, "rope_theta": 1e4}},
     "attention_other_setting.rope_theta"),
    ({"moe_num_experts": 256}, "moe_num_experts"),                 # an alias that disagrees with num_experts
    ({"attention_bias": True}, "attention_bias"),
    ({"gating": False}, "gating"),
    ({"use_head_wise_attn_gate": False}, "use_head_wise_attn_gate"),
    ({"per_layer_config": {"1": {"num_attention_heads": 96}}}, "per_layer_config.1.num_attention_heads"),
    ({"per_layer_config": {"1": {"head_dim": 64}}}, "per_layer_config.1.head_dim"),
]


@pytest.mark.parametrize("change,key", STEP3P7_BAD, ids=[k for _, k in STEP3P7_BAD])
def test_step3p7_keys_it_cannot_price_are_refused(change, key):
    c = json.loads((corpus() / f"{STEP}_config.json").read_text())
    assert pytest.raises(ParameterError, specs.from_config, {**c, **change}).value.name == key


def test_step3p7_sliding_heads_and_hub_names():
    """The hub config's names (moe_num_experts, moe_top_k, num_attention_groups, and the sliding
    layers' 96 query heads in attention_other_setting) read as Step3p7TextConfig reads them."""
    c = json.loads((corpus() / f"{STEP}_config.json").read_text())
    plain = specs.from_config(c)
    del c["num_experts"], c["num_experts_per_tok"], c["num_key_value_heads"]
    hub = {**c, "moe_num_experts": 288, "moe_top_k": 8, "num_attention_groups": 8,
           "attention_other_setting": {"attention_type": "sliding_attention", "num_attention_heads": 96,
                                       "num_attention_groups": 8, "head_dim": 128, "true_head_dim": 128}}
    spec = specs.from_config(hub)
    assert spec.attention == plain.attention
    # 33 sliding layers x 32 more query heads: q and o (2 x 4096 x 128 each) and the gate (4096 each)
    assert spec.params_total - plain.params_total == 33 * 32 * (2 * 4096 * 128 + 4096)


NAS = "nvidia--Llama-3_3-Nemotron-Super-49B-v1"
# DeciLM's SwiGLU width per ffn_mult of d = 8192: int(2 x mult x 8192 / 3) rounded up to a multiple of 256
# (the rule vLLM's nemotron_nas.py and the checkpoint's modeling_decilm.py apply), worked by hand
NAS_WIDTHS = {5.25: 28_672,          # 28,672 exactly (Llama 3 70B's width)
              3.28125: 17_920,       # 17,920 = 70 x 256
              2.625: 14_336,         # 14,336 = 56 x 256
              1.3125: 7_168,         # 7,168 = 28 x 256
              1.0: 5_632,            # int(5,461.3) = 5,461, up to 22 x 256
              0.5: 2_816}            # int(2,730.7) = 2,730, up to 11 x 256


def test_nemotron_nas_cache_and_counts_by_hand():
    """Llama-3.3-Nemotron-Super-49B, layer by layer from block_configs: 31 of its 80 layers have no
    attention (no_op) and cache nothing; the other 49 keep 64 / n_heads_in_group 8 = 8 KV heads of
    8192 / 64 = 128, so a token adds 49 x 2 x 8 x 128 x 2 B = 200,704 B (BF16). Parameters: the
    embedding and the untied head (128,256 x 8192 each); per attention layer q and o (8192 x 64 x 128
    each) and k, v (8192 x 8 x 128 each); per FFN 3 x 8192 x its width; an RMSNorm of 8192 before each
    attention and each FFN, and the final one: 49,867,145,216 (its card: 49.9B), all active."""
    c = json.loads((corpus() / f"{NAS}_config.json").read_text())
    d, blocks = 8192, c["block_configs"]
    attention = [b for b in blocks if not b["attention"]["no_op"]]
    assert len(attention) == 49 and {b["attention"]["n_heads_in_group"] for b in attention} == {8}
    assert not any(b["ffn"]["no_op"] or b["ffn"]["replace_with_linear"]
                   or b["attention"]["replace_with_linear"] for b in blocks)
    spec = specs.from_config(c)
    assert kv.kv_bytes_per_token(spec, "bf16") == 200_704 and kv.fixed_bytes(spec, 4096, "bf16") == 0
    assert kv.request_kv_bytes(spec, 131_072, "fp8") == 131_072 * 200_704 // 2
    ffn = sum(3 * d * NAS_WIDTHS[b["ffn"]["ffn_mult"]] for b in blocks)
    total = 2 * 128_256 * d + 49 * (2 * d * 64 * 128 + 2 * d * 8 * 128) + ffn + (49 + 80 + 1) * d
    assert total == 49_867_145_216
    assert (spec.params_total, spec.params_active) == (total, total - 128_256 * d)


def _nas(blocks, **kw):
    return {"model_type": "nemotron-nas", "num_hidden_layers": len(blocks), "hidden_size": 256,
            "num_attention_heads": 8, "num_key_value_heads": None, "intermediate_size": None,
            "vocab_size": 1000, "tie_word_embeddings": False, "block_configs": blocks, **kw}


def _block(attention=None, ffn=None):
    return {"attention": {"n_heads_in_group": 4, "no_op": False, "replace_with_linear": False,
                          **(attention or {})},
            "ffn": {"ffn_mult": 1.5, "no_op": False, "replace_with_linear": False, **(ffn or {})}}


def test_nemotron_nas_linear_replacements_and_no_ops_by_hand():
    """Four layers of d = 256, 8 heads of 32: GQA with 8 / 4 = 2 KV heads and 8 / 1 = 8; attention
    replaced by one 256 x 256 Linear (no cache); no attention. FFNs: ffn_mult 1.5 gives int(256) = 256
    wide, 3 gives 512, a linear one 256 x 256, and a no-op. Per token: (2 + 8) heads x 2 x 32 x 2 B =
    1,280 B (BF16)."""
    blocks = [_block(), _block({"n_heads_in_group": 1}, {"ffn_mult": 3.0}),
              _block({"replace_with_linear": True}, {"replace_with_linear": True}),
              _block({"no_op": True}, {"no_op": True})]
    spec = specs.from_config(_nas(blocks))
    assert [(g.kind, g.layers, g["kv_heads"]) for g in spec.attention] == [("mha", 1, 8), ("mha", 1, 2)]
    assert kv.kv_bytes_per_token(spec, "bf16") == 1_280
    q_o = 2 * 256 * 8 * 32
    attn = (q_o + 2 * 256 * 2 * 32) + (q_o + 2 * 256 * 8 * 32) + 256 * 256
    ffn = 3 * 256 * 256 + 3 * 256 * 512 + 256 * 256
    norms = 256 * (3 + 3 + 1)                 # three attention norms, three FFN norms, the final one
    assert spec.params_total == 2 * 1000 * 256 + attn + ffn + norms


NAS_BAD = [  # (blocks or config keys, the key the error names)
    ({"block_configs": [_block({"window_length": 4096})] * 2}, "block_configs[0].attention.window_length"),
    ({"block_configs": [_block({"num_sink_tokens": 4})] * 2}, "block_configs[0].attention.num_sink_tokens"),
    ({"block_configs": [_block(ffn={"sparsify": ["x"]})] * 2}, "block_configs[0].ffn.sparsify"),
    ({"block_configs": [_block(ffn={"intermediate_size": 512})] * 2},
     "block_configs[0].ffn.intermediate_size"),
    ({"block_configs": [_block({"n_heads_in_group": 3})] * 2}, "block_configs[0].attention.n_heads_in_group"),
    ({"block_configs": [_block({"n_heads_in_group": None})] * 2},
     "block_configs[0].attention.n_heads_in_group"),
    ({"block_configs": [_block(ffn={"ffn_mult": None})] * 2}, "block_configs[0].ffn.ffn_mult"),
    ({"block_configs": [{**_block(), "parallel_blocks": []}] * 2}, "block_configs[0]"),
    ({"block_configs": [_block()]}, "block_configs"),                           # fewer than the layers
    ({"attention_bias": True}, "attention_bias"),
]


@pytest.mark.parametrize("change,key", NAS_BAD, ids=[k for _, k in NAS_BAD])
def test_nemotron_nas_blocks_it_cannot_price_are_refused(change, key):
    c = {**_nas([_block()] * 2), **change}
    assert pytest.raises(ParameterError, specs.from_config, c).value.name == key


M3 = "MiniMaxAI--MiniMax-M3"


def test_minimax_m3_cache_by_hand():
    """MiniMax-M3: every one of its 60 layers is GQA attention keeping K and V of 4 KV heads of 128
    for every token (its sparse attention selects blocks, it evicts none): 60 x 2 x 4 x 128 x 2 B =
    122,880 B a token (BF16). The 57 layers sparse_attention_freq marks also keep their indexer's
    key, one 128-value vector a token, in the cache's dtype: 57 x 128 x 2 B = 14,592 B. 137,472 B in
    all, half in FP8 (per-tensor scales); no fixed state. The FP8-wrapped NVFP4 checkpoint
    (minimax_m3_vl, its text_config) reads alike."""
    spec = specs.from_config(corpus() / f"{M3}_config.json")
    assert [(g.kind, g.layers) for g in spec.attention] == [("mha", 60), ("indexer", 57)]
    assert kv.kv_breakdown(spec, 1, "bf16") == {"K/V heads": 122_880, "indexer keys": 14_592}
    assert kv.kv_bytes_per_token(spec, "bf16") == 137_472 and kv.kv_bytes_per_token(spec, "fp8") == 68_736
    assert kv.fixed_bytes(spec, 4096, "bf16") == 0
    wrapped = specs.from_config(corpus() / "nvidia--MiniMax-M3-NVFP4_config.json")
    assert wrapped.attention == spec.attention and wrapped.params_total == spec.params_total
    assert "module names" in wrapped.raw["weights_unknown"]


def _tiny_minimax_m3():
    import transformers
    return transformers.MiniMaxM3VLTextConfig(
        vocab_size=64, hidden_size=64, num_hidden_layers=4, num_attention_heads=4, num_key_value_heads=2,
        head_dim=16, intermediate_size=16, dense_intermediate_size=32, shared_intermediate_size=24,
        num_local_experts=4, num_experts_per_tok=2, rotary_dim=8, moe_layer_freq=[0, 1, 1, 1], eos_token_id=2,
        sparse_attention_config={"sparse_attention_freq": [0, 1, 0, 1], "sparse_index_dim": 8,
                                 "sparse_num_index_heads": 2, "sparse_block_size": 2, "sparse_topk_blocks": 2,
                                 "sparse_local_block": 1, "sparse_disable_index_value": [0, 1, 0, 1]})


def test_minimax_m3_cache_and_counts_are_what_transformers_builds():
    """A tiny MiniMax-M3 (full, sparse, full, sparse attention; dense, then three MoE MLPs) run on 5
    tokens: every layer's cache holds K and V of (batch, kv_heads, 5, head_dim), each sparse layer's
    also the indexer keys, (batch, 1, 5, index_head_dim): the book's groups, byte for byte in BF16.
    Its parameters are the book's count but for the routers' selection bias (a buffer there)."""
    import transformers
    cfg = _tiny_minimax_m3()
    model = transformers.MiniMaxM3VLForCausalLM(cfg).eval()
    with torch.no_grad():
        cache = model(torch.arange(5)[None], use_cache=True).past_key_values
    spec = specs.from_config(cfg.to_dict())       # layer_types and index_* as transformers saves them
    assert [(g.kind, g.layers) for g in spec.attention] == [("mha", 4), ("indexer", 2)]
    for i, t in enumerate(cfg.layer_types):
        assert cache.layers[i].keys.shape == cache.layers[i].values.shape == (1, 2, 5, 16)
        assert (getattr(cache.layers[i], "idx_keys", None) is not None) == (t == "minimax_m3_sparse")
    per_token = {"K/V heads": sum(2 * layer.keys[0, :, 0].numel() for layer in cache.layers) * 2,
                 "indexer keys": sum(layer.idx_keys[0, :, 0].numel() for layer in cache.layers[1::2]) * 2}
    assert kv.kv_breakdown(spec, 1, "bf16") == per_token
    assert params.param_counts(spec).total - sum(p.numel() for p in model.parameters()) == 3 * 4
    corpus_style = {**cfg.to_dict(), "layer_types": None, "mlp_layer_types": None,      # as the hub's config
                    "moe_layer_freq": [0, 1, 1, 1],
                    "sparse_attention_config": {"sparse_attention_freq": [0, 1, 0, 1], "sparse_index_dim": 8}}
    assert specs.from_config(corpus_style).attention == spec.attention


def test_minimax_m3_counter_equals_transformers_modules():
    """MiniMax-M3 whole, as transformers' MiniMaxM3VLForCausalLM builds it on the meta device: the book
    counts 426,174,572,928 parameters, 57 MoE layers x 128 selection biases more (buffers there);
    24,733,280,640 active (4 of 128 experts and the shared one)."""
    import transformers
    c = json.loads((corpus() / f"{M3}_config.json").read_text())
    text = {k: v for k, v in c.items() if k not in ("model_type", "architectures", "torch_dtype")}
    with torch.device("meta"):
        model = transformers.MiniMaxM3VLForCausalLM(transformers.MiniMaxM3VLTextConfig(**text))
    spec = specs.from_config(c)
    counts = params.param_counts(spec)
    assert counts.total - sum(p.numel() for p in model.parameters()) == 57 * 128
    assert (counts.total, counts.activated()) == (426_174_572_928, 24_733_280_640)
    # under attention TP each rank keeps each sparse layer's indexer key projection whole (d x 128)
    assert params.tp_replicated(spec)["attention"] == 57 * 6144 * 128


M3_BAD = [  # (a change to the corpus config, the key the error names)
    ({"attention_output_gate": True}, "attention_output_gate"),
    ({"n_shared_experts": 2}, "n_shared_experts"),
    ({"moe_intermediate_size": 2048}, "moe_intermediate_size"),     # transformers: intermediate_size
    ({"first_k_dense_replace": 4}, "first_k_dense_replace"),
    ({"index_head_dim": 64}, "sparse_attention_config.sparse_index_dim"),
    ({"sparse_attention_config": {"sparse_attention_freq": [1] * 60, "sparse_index_ratio": 4}},
     "sparse_attention_config.sparse_index_ratio"),
    ({"sparse_attention_config": {"sparse_attention_freq": [1] * 60, "sparse_disable_index_value": [0] * 60}},
     "sparse_attention_config.sparse_disable_index_value"),
    ({"sparse_attention_config": {"sparse_attention_freq": [1] * 60, "use_sparse_attention": False}},
     "sparse_attention_config.use_sparse_attention"),
    ({"layer_types": ["full_attention"] * 60}, "layer_types"),           # unlike sparse_attention_freq
    ({"moe_layer_freq": [0, 0, 0, 2] + [1] * 56}, "moe_layer_freq"),
]


@pytest.mark.parametrize("change,key", M3_BAD, ids=[k for _, k in M3_BAD])
def test_minimax_m3_keys_it_cannot_price_are_refused(change, key):
    c = json.loads((corpus() / f"{M3}_config.json").read_text())
    assert pytest.raises(ParameterError, specs.from_config, {**c, **change}).value.name == key


# What kv_breakdown (and so every table and the plan command) calls each family's cache groups: a
# fixed state by its mechanism, Llama 4's chunks apart from sliding windows (one corpus config each).
LABELS = {
    "Qwen--Qwen3-235B-A22B": ["K/V heads"],
    "openai--gpt-oss-20b": ["K/V heads", "sliding window"],
    "google--gemma-4-26B-A4B": ["sliding window", "K/V heads"],
    "XiaomiMiMo--MiMo-V2-Flash": ["K/V heads", "sliding window"],
    "meta-llama--Llama-4-Scout-17B-16E-Instruct": ["attention chunk", "K/V heads"],
    "deepseek-ai--DeepSeek-V3": ["MLA latent"],
    "zai-org--GLM-5": ["MLA latent", "indexer keys"],
    "deepseek-ai--DeepSeek-V4-Pro": ["sliding window", "compressed entries 4:1", "indexer keys",
                                     "compressed entries 128:1"],
    "moonshotai--Kimi-K3": ["KDA state", "MLA latent"],
    "Qwen--Qwen3.5-397B-A17B": ["Gated DeltaNet state", "K/V heads"],
    "nvidia--NVIDIA-Nemotron-3-Nano-30B-A3B-BF16": ["Mamba-2 state", "K/V heads"],
    "stepfun-ai--Step-3.7-Flash": ["K/V heads", "sliding window"],
    "nvidia--Llama-3_3-Nemotron-Super-49B-v1": ["K/V heads"],
    "MiniMaxAI--MiniMax-M3": ["K/V heads", "indexer keys"],
}


def test_every_family_gets_its_own_labels():
    assert {specs.from_config(corpus() / f"{n}_config.json").raw["family"] for n in LABELS} == \
        {f.name for f in FAMILIES}                                             # one config per family
    for name, want in LABELS.items():
        spec = specs.from_config(corpus() / f"{name}_config.json")
        assert [kv.group_label(g) for g in spec.attention] == want, name
        assert list(kv.kv_breakdown(spec, 10**6)) == want, name


@pytest.mark.parametrize("path, config, name", [
    ("Qwen--Qwen3-235B-A22B_config.json", {}, "Qwen3-235B-A22B (Qwen)"),            # a corpus file's name
    ("my-qwen/config.json", {"_name_or_path": "Qwen/Qwen3-8B"}, "Qwen3-8B (Qwen)"),   # a Hub id in the config
    ("my-qwen/config.json", {"_name_or_path": "/ckpt/Qwen3-8B-Instruct/"}, "Qwen3-8B-Instruct"),   # a path
    ("my-qwen/config.json", {"_name_or_path": ""}, "my-qwen"),                      # else the folder
    ("Org--Model/config.json", {"_name_or_path": "other/name"}, "Model (Org)"),      # the file's name first
])
def test_a_config_gets_a_readable_name_and_keeps_its_id(tmp_path, path, config, name):
    c = {**json.loads((corpus() / "Qwen--Qwen3-8B_config.json").read_text()), **config}
    file = tmp_path / path
    file.parent.mkdir(exist_ok=True)
    file.write_text(json.dumps(c))
    spec = specs.from_config(file)
    assert spec.name == name
    assert spec.id == (file.parent.name if file.stem == "config" else file.stem.removesuffix("_config"))


def test_a_registry_model_keeps_its_name():
    assert specs.model("kimi-k3").name == "Kimi K3"
    assert specs.from_config({**KIMI_LINEAR, "_name_or_path": "moonshotai/Kimi-Linear-48B-A3B-Instruct"},
                             id="kimi-linear").name == "Kimi-Linear-48B-A3B-Instruct (moonshotai)"
    assert specs.from_config(KIMI_LINEAR, id="kimi-linear").name == "kimi-linear"


def test_the_shipped_state_dtype_is_recorded():
    """Qwen3.5 keeps its Gated DeltaNet state in FP32 (text_config.mamba_ssm_dtype): recorded beside
    the book's BF16 assumption, which the calculators still price unless asked; no other config of
    the corpus names a state dtype."""
    spec = specs.from_config(corpus() / "Qwen--Qwen3.5-397B-A17B_config.json")
    assert spec.raw["shipped_state_dtype"] == "fp32" and spec.state_dtype is None
    state = {d: kv.kv_breakdown(spec, 0, "bf16", d)["Gated DeltaNet state"] for d in ("bf16", "fp32")}
    conv = 45 * 3 * (2 * 16 * 128 + 64 * 128) * 2                 # the conv tail stays BF16
    assert state == {"bf16": 45 * 64 * 128 * 128 * 2 + conv, "fp32": 45 * 64 * 128 * 128 * 4 + conv}
    assert (round(state["bf16"] / 1e6, 1), round(state["fp32"] / 1e6, 1)) == (97.7, 192.1)
    assert kv.request_kv_bytes(spec, 0) == state["bf16"]
    for name in ("moonshotai--Kimi-K3", "Qwen--Qwen3-235B-A22B"):
        assert specs.from_config(corpus() / f"{name}_config.json").raw["shipped_state_dtype"] is None
    c = json.loads((corpus() / "Qwen--Qwen3.5-27B_config.json").read_text())
    c["text_config"]["mamba_ssm_dtype"] = "bfloat16"
    assert specs.from_config(c).raw["shipped_state_dtype"] == "bf16"
    c["text_config"]["mamba_ssm_dtype"] = "int8"
    err = pytest.raises(ParameterError, specs.from_config, c).value
    assert err.name == "mamba_ssm_dtype" and "float32" in err.allowed


# ---- the counters against transformers' own modules ---------------------------------------------

def _small(name, layers):
    """A corpus config cut to its first ``layers`` layers (per-layer lists cut to match)."""
    c = json.loads((corpus() / f"{name}_config.json").read_text())
    text = c.get("text_config", c)
    text.pop("quantization_config", None)        # counts do not depend on the storage format
    c.pop("quantization_config", None)
    text["num_hidden_layers"] = layers
    for key in ("layer_types", "hybrid_layer_pattern", "moe_layer_freq", "no_rope_layers"):
        if key in text:
            text[key] = text[key][:layers]
    return c


def _hf_count(cfg):
    import transformers
    text = cfg.get("text_config", cfg)
    flat = dict(text)
    flat.setdefault("tie_word_embeddings", cfg.get("tie_word_embeddings", False))
    config = transformers.CONFIG_MAPPING[flat.pop("model_type")](**flat)
    with torch.device("meta"):
        model = transformers.AutoModelForCausalLM.from_config(config)
    return Counter({n: p.numel() for n, p in model.named_parameters()})


# (corpus config, layers kept, parameters transformers holds that the book's counter does not, why)
ORACLE = [
    ("meta-llama--Meta-Llama-3.1-8B", 2, 0, ""),
    ("Qwen--Qwen3-8B", 2, 0, ""),
    ("Qwen--Qwen3-30B-A3B", 2, 0, ""),
    ("mistralai--Mixtral-8x7B-v0.1", 2, 0, ""),
    ("MiniMaxAI--MiniMax-M2.5", 2, -2 * 256, "the routers' selection bias: a buffer in transformers"),
    ("openai--gpt-oss-20b", 2, 0, ""),
    ("Qwen--Qwen3.5-35B-A3B", 4, 0, ""),
    ("Qwen--Qwen3.5-27B", 4, 0, ""),
    ("google--gemma-4-26B-A4B", 6, 0, ""),
    ("nvidia--Gemma-4-31B-IT-NVFP4", 6, 0, ""),
    ("meta-llama--Llama-4-Scout-17B-16E-Instruct", 4, 0, ""),
    ("meta-llama--Llama-4-Maverick-17B-128E-Instruct", 4, 0, ""),
    ("XiaomiMiMo--MiMo-V2-Flash", 2, -256, "the MoE layer's selection bias: a buffer in transformers"),
]


@pytest.mark.parametrize("name,layers,extra,why", ORACLE, ids=[o[0] for o in ORACLE])
def test_counter_equals_transformers_modules(name, layers, extra, why):
    cfg = _small(name, layers)
    ours = params.param_counts(specs.from_config(cfg))
    hf = _hf_count(cfg)
    hf_total = sum(n for k, n in hf.items() if not re.search(r"\bmtp\b|vision|visual", k))
    assert hf_total - ours.total == extra, why


# The BF16 NemotronH configs, whole, against transformers' modules (built on the meta device): the
# book counts each MoE layer's router selection bias (a buffer in transformers, stored in the checkpoint).
NEMOTRON_H = [("nvidia--NVIDIA-Nemotron-3-Nano-30B-A3B-BF16", 23 * 128),      # 23 E layers x 128 experts
              ("nvidia--NVIDIA-Nemotron-3-Ultra-550B-A55B-BF16", 48 * 512),    # 48 E layers x 512
              ("nvidia--Nemotron-H-56B-Base-8K", 0)]                           # no MoE


@pytest.mark.parametrize("name,bias", NEMOTRON_H, ids=[n for n, _ in NEMOTRON_H])
def test_nemotron_h_counter_equals_transformers_modules(name, bias):
    cfg = json.loads((corpus() / f"{name}_config.json").read_text())
    assert params.param_counts(specs.from_config(cfg)).total - sum(_hf_count(cfg).values()) == bias


def test_qwen3_next_from_transformers_defaults():
    """No corpus file holds Qwen3-Next: transformers' own default config (cut to 4 layers, a dict
    with int keys in id2label) reads as three Gated DeltaNet layers and one gated attention layer,
    and counts what its modules hold."""
    import transformers
    cfg = transformers.Qwen3NextConfig(num_hidden_layers=4, vocab_size=1000)
    spec = specs.from_config(cfg.to_dict())
    assert [(g.kind, g.layers) for g in spec.attention] == [("kda", 3), ("mha", 1)]
    with torch.device("meta"):
        hf = sum(p.numel() for p in transformers.AutoModelForCausalLM.from_config(cfg).parameters())
    assert params.param_counts(spec).total == hf


KIMI_LINEAR = {   # Kimi Linear's shape (q_lora_rank null, no LatentMoE, no AttnRes, low-rank KDA gate), small
    "model_type": "kimi_linear", "num_hidden_layers": 4, "hidden_size": 256, "vocab_size": 1000,
    "num_attention_heads": 4, "num_key_value_heads": 4, "kv_lora_rank": 64, "q_lora_rank": None,
    "qk_rope_head_dim": 16, "qk_nope_head_dim": 32, "v_head_dim": 32, "mla_use_nope": True,
    "intermediate_size": 512, "moe_intermediate_size": 64, "num_experts": 8, "num_experts_per_token": 2,
    "num_shared_experts": 1, "first_k_dense_replace": 1, "tie_word_embeddings": False,
    "pad_token_id": 0, "bos_token_id": 1, "eos_token_id": 2,
    "linear_attn_config": {"num_heads": 4, "head_dim": 32, "short_conv_kernel_size": 4,
                           "kda_layers": [1, 2, 4], "full_attn_layers": [3]}}


def test_kimi_linear_as_transformers_builds_it():
    """No corpus file holds Kimi Linear: a config of its shape reads as three KDA layers and one MLA
    layer and counts what transformers' KimiLinear modules hold, but for the routers' selection bias
    (a buffer there)."""
    import transformers
    spec = specs.from_config(KIMI_LINEAR)
    assert [(g.kind, g.layers) for g in spec.attention] == [("kda", 3), ("mla", 1)]
    kwargs = {k: v for k, v in KIMI_LINEAR.items() if k != "model_type"}
    with torch.device("meta"):
        model = transformers.AutoModelForCausalLM.from_config(transformers.KimiLinearConfig(**kwargs))
    hf = sum(p.numel() for p in model.parameters())
    assert params.param_counts(spec).total - hf == 3 * 8                 # 3 MoE layers x 8 experts


# ---- bad input ---------------------------------------------------------------------------------

def test_unknown_model_type_names_the_key():
    err = pytest.raises(ParameterError, specs.from_config, {"model_type": "rwkv7", "num_hidden_layers": 2}).value
    assert err.name == "model_type" and err.got == "rwkv7"
    # one short line that points to the list, which --help prints family by family
    assert len(str(err)) < 160 and "python -m twopaths.plan --help" in err.allowed
    from twopaths import plan
    assert "  mla+dsa: deepseek_v32, glm_moe_dsa" in plan.families().splitlines()


MISSING = [("deepseek-ai--DeepSeek-V3", "kv_lora_rank", "mla"),                 # a cache dimension
           ("Qwen--Qwen3.5-35B-A3B", "linear_num_value_heads", "gated_deltanet"),   # nested in text_config
           ("meta-llama--Meta-Llama-3.1-8B", "intermediate_size", "gqa")]           # only the counter reads it


@pytest.mark.parametrize("name,key,family", MISSING)
def test_a_missing_key_names_the_key_and_the_family(name, key, family):
    c = json.loads((corpus() / f"{name}_config.json").read_text())
    del c.get("text_config", c)[key]
    err = pytest.raises(ParameterError, specs.from_config, c).value
    assert err.name == key and f"{family} family" in err.allowed


@pytest.mark.parametrize("key,value", [("num_key_value_heads", 0), ("head_dim", -128), ("num_hidden_layers", 0),
                                       ("hidden_size", 4096.5), ("intermediate_size", 0), ("vocab_size", -1)])
def test_bad_dimensions_name_the_field(key, value):
    c = json.loads((corpus() / "meta-llama--Meta-Llama-3.1-8B_config.json").read_text())
    c[key] = value
    err = pytest.raises(ParameterError, specs.from_config, c).value
    assert err.name == key and err.got == value


def test_files_that_are_not_configs(tmp_path):
    err = pytest.raises(ParameterError, specs.from_config, tmp_path / "nope.json").value
    assert err.name == "config" and "readable" in err.allowed
    (tmp_path / "bad.json").write_text("{not json")
    assert "JSON" in pytest.raises(ParameterError, specs.from_config, tmp_path / "bad.json").value.allowed
    (tmp_path / "list.json").write_text("[1, 2]")
    assert "object" in pytest.raises(ParameterError, specs.from_config, tmp_path / "list.json").value.allowed
    (tmp_path / "tok.json").write_text('{"bos_token": "<s>"}')
    assert pytest.raises(ParameterError, specs.from_config, tmp_path / "tok.json").value.name == "model_type"
    assert pytest.raises(ParameterError, specs.from_config, 42).value.name == "config"


def test_layer_lists_must_cover_every_layer():
    c = json.loads((corpus() / "openai--gpt-oss-20b_config.json").read_text())
    c["layer_types"] = c["layer_types"][:5]
    assert pytest.raises(ParameterError, specs.from_config, c).value.name == "layer_types"


def test_unpriced_quantisation_keeps_the_cache_and_leaves_the_weights_unknown():
    c = json.loads((corpus() / "moonshotai--Kimi-K2.5_config.json").read_text())
    text = c["text_config"]                         # the checkpoint's quantisation sits in text_config
    plain = specs.from_config({**c, "text_config": {k: v for k, v in text.items() if k != "quantization_config"}})
    awq = {"quant_method": "awq", "bits": 4, "group_size": 128}     # a method the book does not read
    spec = specs.from_config({**c, "text_config": {**text, "quantization_config": awq}})
    assert spec.attention == plain.attention and (spec.params_total, spec.params_active) == (
        plain.params_total, plain.params_active)
    assert kv.kv_bytes_per_token(spec, "bf16") == kv.kv_bytes_per_token(plain, "bf16")
    assert "'awq'" in spec.raw["weights_unknown"] and weights.weights_unknown(spec) == spec.raw["weights_unknown"]
    err = pytest.raises(ParameterError, weights.weight_bytes, spec).value
    assert err.name == "quantization_config" and "'awq'" in err.got and "unknown" in err.allowed
    every = {g: "bf16" for g, f in weights.shipped_formats(spec).items() if f == "unknown"}
    assert weights.weight_bytes(spec, every) == weights.weight_bytes(plain)    # the caller names the formats


@pytest.fixture
def added():
    """Ids add_model registers in a test, taken out again after it (the table is per process)."""
    ids = []
    yield ids
    for i in ids:
        specs._model_files().pop(i, None)


def test_add_model_makes_a_config_a_registry_model(added):
    path = corpus() / "Qwen--Qwen3-235B-A22B_config.json"
    added.append(specs.add_model(path))
    assert added == ["Qwen--Qwen3-235B-A22B"] and added[0] not in specs.model_ids()
    assert specs.model(added[0]).attention == specs.from_config(path).attention
    assert kv.kv_bytes_per_token(added[0], "bf16") == 94 * 4 * 128 * 2 * 2          # by id, as any model
    assert specs.add_model(path) == added[0]                                       # the same file again
    other = json.loads((corpus() / "Qwen--Qwen3-30B-A3B_config.json").read_text())
    assert pytest.raises(ParameterError, specs.add_model, other, added[0]).value.name == "model"
    assert pytest.raises(ParameterError, specs.add_model, other, "kimi-k3").value.name == "model"

"""specs.excerpts: every excerpt key is the value AIConfigurator's bundled copy of the config holds;
the structural figures the audit needs come out as hand-checked; the MLA + MoE parameter formula
agrees with transformers' modules and with DeepSeek's published V3 totals."""

import json
import re
from collections import Counter
from fractions import Fraction
from pathlib import Path

import pytest

import need

from twopaths.specs import excerpts as x


def corpus() -> Path:
    """AIConfigurator's bundled Hugging Face configs (a test dependency: need fails under CI)."""
    aic = need.module("aiconfigurator_core")
    return Path(aic.__file__).parent / "model_configs"


def corpus_config(model_id: str) -> dict:
    return json.loads((corpus() / f"{x.repo(model_id).replace('/', '--')}_config.json").read_text())


def _same(excerpt: dict, config: dict, where: str = ""):
    for key, value in excerpt.items():
        assert key in config, f"{where}{key} is not in the corpus config"
        if isinstance(value, dict):
            _same(value, config[key], f"{where}{key}.")
        else:   # type too: YAML's true must stay a bool, 1 an int
            assert (type(value), value) == (type(config[key]), config[key]), f"{where}{key}"


@pytest.mark.parametrize("model_id", x.ids())
def test_every_excerpt_key_is_the_corpus_value(model_id):
    _same(x.excerpt(model_id), corpus_config(model_id))


@pytest.mark.parametrize("model_id", x.ids())
def test_source_names_repo_file_and_date(model_id):
    s = x.source(model_id)
    assert s.startswith(f"config.json of {x.repo(model_id)}, ") and "AIConfigurator" in s and "2026-12" in s


def test_step_source_says_the_corpus_has_the_later_version():
    assert "Step 3.5 Flash" in x.source("step-3.7-flash") and "3.7" in x.repo("step-3.7-flash")


def test_excerpt_is_a_copy():
    x.excerpt("glm-5.2")["indexer_types"].clear()
    assert len(x.excerpt("glm-5.2")["indexer_types"]) == 78


@pytest.mark.parametrize("fn", [x.excerpt, x.source, x.repo])
def test_unknown_id_names_the_parameter_and_the_ids(fn, raises_param):
    err = raises_param("model_id", fn, "glm-5")
    assert err.got == "glm-5" and "'glm-5.2'" in err.allowed and "'step-3.7-flash'" in err.allowed


# ---- GLM-5.2 ----

GLM = x.excerpt("glm-5.2")


def test_glm_layout():
    assert x.moe_layout(GLM) == {"layers": 78, "dense_layers": 3, "moe_layers": 75, "routed_experts": 256,
                                 "experts_per_token": 8, "shared_experts": 1}
    assert GLM["vocab_size"] == 154880 and GLM["max_position_embeddings"] == 2**20     # "1M"


def test_glm_layout_same_from_first_k_dense_replace():
    c = {k: v for k, v in GLM.items() if k != "mlp_layer_types"}
    assert x.moe_layout(c) == x.moe_layout(GLM)


def test_glm_index_share():
    """21 layers run their own indexer: 0, 1, 2, then every 4th from 6; so layers 0 and 1 stand
    alone and 19 groups of 4 (2-5, 6-9, ..., 74-77) share one index each."""
    assert x.own_index_layers(GLM) == [0, 1, 2] + list(range(6, 78, 4))
    assert len(x.own_index_layers(GLM)) == 21
    assert x.index_groups(GLM) == [1, 1] + [4] * 19
    assert x.index_schedule(GLM) == GLM["indexer_types"]     # the engines' rule gives the config's list
    assert GLM["index_topk_freq"] == 4


def test_index_schedule_rule_on_a_small_case():
    c = {"index_topk_freq": 2, "index_skip_topk_offset": 1, "num_hidden_layers": 5}
    assert x.index_schedule(c) == ["full", "shared", "full", "shared", "full"]


def test_glm_parameters_by_hand():
    d, ql, kvl, heads = 6144, 2048, 512, 64
    attention = d * ql + ql * heads * (192 + 64) + d * (kvl + 64) + kvl * heads * (192 + 256) + heads * 256 * d
    assert attention == 165_019_648
    indexer = ql * 32 * 128 + d * 128 + d * 32 + 2 * 128
    expert = 3 * d * 2048
    p = x.mla_moe_params(GLM)
    assert p == {"embedding": 154880 * d, "head": 154880 * d, "attention": 78 * attention,
                 "indexer": 21 * indexer, "dense_ffn": 3 * 3 * d * 12288,
                 "routed_experts": 75 * 256 * expert, "shared_experts": 75 * expert,
                 "router": 75 * (256 * d + 256), "norms": 78 * (2 * d + ql + kvl) + d,
                 "mtp": attention + indexer + (256 * d + 256) + 257 * expert + (2 * d + ql + kvl)
                 + 3 * d + 2 * d * d}     # enorm, hnorm, shared-head norm; [emb; h] -> d
    assert x.total_params(GLM) == 743_377_019_904                  # the note: 744B
    assert x.total_params(GLM, mtp=True) == 753_329_940_480        # "as Hugging Face counts": 753B
    assert x.active_params(GLM, embedding=False) == 40_298_947_584  # the note: 40B
    assert x.active_params(GLM) == 40_298_947_584 + 154880 * d


# ---- the formula against independent counts ----

V3 = x.excerpt("deepseek-v3")


def test_formula_gives_deepseek_v3_published_totals():
    """DeepSeek-V3: 671B total and 37B activated (technical report), 11.5B unique MTP parameters
    (the checkpoint's README_WEIGHTS); no key of the formula is tuned to them."""
    assert x.total_params(V3) == 671_026_419_200                           # 671.03B: +0.004%
    assert x.active_params(V3) == 37_552_297_472                           # with the embedding
    assert x.active_params(V3, embedding=False) == 36_625_618_432
    assert x.mla_moe_params(V3)["mtp"] == pytest.approx(11.5e9, rel=0.015)
    assert x.mla_moe_params(V3)["indexer"] == 0


def test_formula_equals_the_registry_counter_on_deepseek_v3():
    from twopaths.specs import params
    ours = params.param_counts("deepseek-v3")
    assert x.total_params(V3) == pytest.approx(ours.total, rel=1e-4)
    assert x.active_params(V3, embedding=False) == pytest.approx(ours.activated(), rel=1e-4)


@pytest.mark.parametrize("model_id,layers", [("glm-5.2", 8), ("deepseek-v3", 5)])
def test_formula_equals_transformers_modules(model_id, layers):
    """The whole corpus config cut to its first layers (GLM-5.2's 8 hold indexers in 0, 1, 2, 6),
    built by transformers on the meta device. transformers keeps the router's selection bias as a
    buffer, not a parameter, and builds no MTP layer."""
    transformers = need.module("transformers")
    torch = need.module("torch")
    c = corpus_config(model_id)
    c.pop("quantization_config", None)
    c["num_hidden_layers"] = layers
    for key in ("indexer_types", "mlp_layer_types"):
        if key in c:
            c[key] = c[key][:layers]
    flat = dict(c)
    config = transformers.CONFIG_MAPPING[flat.pop("model_type")](**flat)
    with torch.device("meta"):
        model = transformers.AutoModelForCausalLM.from_config(config)
    hf = Counter({n: p.numel() for n, p in model.named_parameters()})
    with_indexer = {int(n.split(".")[2]) for n in hf if re.search(r"\.indexer\.", n)}
    assert with_indexer == ({0, 1, 2, 6} if "indexer_types" in c else set())
    moe_layers = x.moe_layout(c)["moe_layers"]
    assert sum(hf.values()) == x.total_params(c) - moe_layers * c["n_routed_experts"]


# ---- Mixtral, the Qwen hybrids, Step Flash ----

def test_mixtral_experts():
    lay = x.moe_layout(x.excerpt("mixtral-8x7b"))
    assert (lay["routed_experts"], lay["experts_per_token"], lay["shared_experts"]) == (8, 2, 0)


QWEN = ["qwen3.5-397b-a17b", "qwen3.5-122b-a10b", "qwen3.5-35b-a3b", "qwen3.5-27b"]


@pytest.mark.parametrize("model_id", QWEN)
def test_qwen_linear_to_full_is_3_to_1(model_id):
    types = x.text_part(x.excerpt(model_id))["layer_types"]
    assert x.ratio(types, "linear_attention", "full_attention") == 3
    assert x.repeating_unit(types) == ["linear_attention"] * 3 + ["full_attention"]


def test_qwen_397b_counts():
    types = x.text_part(x.excerpt("qwen3.5-397b-a17b"))["layer_types"]
    assert x.type_counts(types) == {"linear_attention": 45, "full_attention": 15}


def test_step_flash_sliding_to_full():
    """45 layers, full attention first and every 4th: the unit is 3 sliding per full, but the 45th
    layer is full too, so over the whole model 33 sliding to 12 full, 2.75:1."""
    types = x.excerpt("step-3.7-flash")["layer_types"]
    assert x.type_counts(types) == {"full_attention": 12, "sliding_attention": 33}
    assert x.repeating_unit(types) == ["full_attention"] + ["sliding_attention"] * 3
    assert x.ratio(types, "sliding_attention", "full_attention") == Fraction(11, 4)


def test_ratio_names_a_kind_the_list_lacks(raises_param):
    raises_param("denominator", x.ratio, ["a", "a", "b"], "a", "c")


def test_repeating_unit_small_cases():
    assert x.repeating_unit(["a", "b", "a"]) == ["a", "b"]
    assert x.repeating_unit(["a", "a", "b"]) == ["a", "a", "b"]


# ---- K3's vision tower ----

def test_k3_vision_params_by_hand():
    """27 layers of 1024*4608 (wqkv) + 1536*1024 (wo) + 2*1024*4096 (MLP) + 2*1024 (norms), the
    14x14 patch conv 3*14*14*1024, the 64x64 position table and the final norm: 401.2M, the
    report's 401M. The projector (4096^2 + 4096*7168 + 7168) would add 46.1M."""
    c = x.excerpt("kimi-k3-vision")
    per_layer = 1024 * 4608 + 1536 * 1024 + 2 * 1024 * 4096 + 2 * 1024
    assert per_layer == 14_682_112
    assert x.vision_params(c) == 27 * per_layer + 3 * 14 * 14 * 1024 + 64 * 64 * 1024 + 1024 == 401_214_464
    assert x.vision_params(c, projector=True) - x.vision_params(c) == 4096 * 4096 + 4096 * 7168 + 7168


def test_vision_params_takes_the_whole_config():
    whole = corpus_config("kimi-k3-vision")
    assert x.vision_params(whole) == x.vision_params(x.excerpt("kimi-k3-vision"))


def test_vision_params_refuses_another_tower(raises_param):
    c = x.excerpt("kimi-k3-vision")
    c["vision_config"]["attn_bias"] = True
    raises_param("vision_config.attn_bias", x.vision_params, c)

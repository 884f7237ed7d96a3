"""Parameter and weight-byte accounting: published totals, transformers' own module shapes as an
oracle, per-GPU sums, and bad input."""

import dataclasses
import re
from collections import Counter

import pytest
import torch
from hypothesis import given, strategies as st

from twopaths import specs
from twopaths.specs import params
from twopaths.calc import weights
from twopaths.claims import rounds_to

# Published (total, activated) as the model cards print them. Tolerance: the count rounds to each at
# the printed precision (2.8T: within 0.05T). V3.2's card repeats V3's 671B; its count is that plus
# the DSA indexer, which the test takes off before comparing.
PUBLISHED = {"kimi-k3": ("2.8", "104"), "deepseek-v4-pro": ("1.6", "49"), "deepseek-v4-flash": ("284", "13"),
             "deepseek-v3.2": ("671", "37"), "deepseek-v3": ("671", "37")}
SCALE = {"kimi-k3": (1e12, 1e9), "deepseek-v4-pro": (1e12, 1e9)}


@pytest.mark.parametrize("model_id", list(PUBLISHED))
def test_published_totals_reproduced(model_id):
    counts = params.param_counts(model_id)
    total_scale, active_scale = SCALE.get(model_id, (1e9, 1e9))
    total, active = PUBLISHED[model_id]
    indexer = counts.component("DSA indexer").params if model_id == "deepseek-v3.2" else 0
    assert rounds_to(total, (counts.total - indexer) / total_scale)
    assert rounds_to(active, (counts.activated() - indexer) / active_scale)
    assert not rounds_to(total, counts.total / total_scale) or not indexer   # the indexer does show


def _hf_model(model_id):
    """transformers' own model class on the meta device, configured from the spec's config excerpt."""
    import transformers
    cfg = {k: v for k, v in specs.model(model_id).raw["config"].items() if "." not in k}
    config = transformers.CONFIG_MAPPING[cfg.pop("model_type")](**cfg)
    with torch.device("meta"):
        return transformers.AutoModelForCausalLM.from_config(config)


HF_GROUPS = [   # transformers parameter names -> the counter's format groups
    (r"embed_tokens", "embedding"), (r"lm_head", "head"), (r"mlp\.experts\.", "routed_experts"),
    (r"shared_experts", "shared_experts"), (r"mlp\.gate\.", "router"), (r"_hc\.|hc_head", "residual"),
    (r"norm\.(weight|bias)$|layernorm", "norms"), (r"mlp\.(gate|up|down)_proj", "dense_ffn"), (r"self_attn", "attention"),
]


@pytest.mark.parametrize("model_id", ["deepseek-v3", "deepseek-v3.2", "deepseek-v4-flash", "deepseek-v4-pro"])
def test_counts_equal_transformers_modules(model_id):
    """Group by group, the formulas give what transformers' modules hold. The one difference is the
    routers' selection bias, a checkpoint tensor that transformers keeps as a buffer."""
    hf = Counter()
    for name, p in _hf_model(model_id).named_parameters():
        group = next(g for pattern, g in HF_GROUPS if re.search(pattern, name))
        hf[group] += p.numel()
    ours = params.param_counts(model_id).by_group()
    experts, moe_layers = weights.moe_shape(params.param_counts(model_id), specs.model(model_id))
    assert ours.pop("router") - hf.pop("router") == experts * moe_layers
    assert ours == dict(hf)


def test_k3_components_follow_its_config():
    c = specs.model("kimi-k3").raw["config"]
    counts = params.param_counts("kimi-k3")
    experts = counts.component("routed experts")
    per_expert = 3 * c["routed_expert_hidden_size"] * c["moe_intermediate_size"]
    assert experts.params == experts.layers * c["num_experts"] * per_expert
    assert experts.activated == experts.layers * c["num_experts_per_token"] * per_expert
    assert experts.layers == c["num_hidden_layers"] - c["first_k_dense_replace"]
    assert counts.component("KDA attention").layers == 69 and counts.component("Gated MLA attention").layers == 24


def test_mtp_is_one_more_moe_layer_outside_the_totals():
    v3 = params.param_counts("deepseek-v3")
    c = specs.model("deepseek-v3").raw["config"]
    mtp = v3.component("MTP")
    assert not mtp.in_total
    moe_layer = sum(v3.component(n).params / v3.component(n).layers
                    for n in ("MLA attention", "router", "routed experts", "shared experts"))
    d = c["hidden_size"]
    norms = c["q_lora_rank"] + c["kv_lora_rank"] + 2 * d        # attention's two, the layer's two
    assert mtp.params == moe_layer + norms + 2 * d * d + 3 * d   # plus eh_proj and enorm, hnorm, head norm
    assert params.param_counts("kimi-k3").component("MTP").params == 0   # num_nextn_predict_layers: 0


def test_shipped_formats_read_from_the_configs():
    assert weights.shipped_formats("kimi-k3")["routed_experts"] == "mxfp4"
    assert weights.shipped_formats("kimi-k3")["attention"] == "bf16"
    assert weights.shipped_formats("deepseek-v4-pro")["routed_experts"] == "mxfp4"
    assert weights.shipped_formats("deepseek-v4-pro")["attention"] == "fp8"
    assert weights.shipped_formats("deepseek-v3")["routed_experts"] == "fp8"
    assert set(weights.shipped_formats("deepseek-v3").values()) == {"bf16", "fp8"}


def test_format_bytes_include_scales():
    n = 128 * 128 * 10
    assert weights.WEIGHT_FORMATS["bf16"].bytes(n) == 2 * n
    assert weights.WEIGHT_FORMATS["fp8"].bytes(n) == n + 10 * 4
    assert weights.WEIGHT_FORMATS["mxfp4"].bytes(n) == n / 2 + n / 32
    assert weights.WEIGHT_FORMATS["fp4"].bytes(n) == n / 2 + n / 16


@given(model_id=st.sampled_from(list(PUBLISHED)), data=st.data())
def test_expert_bytes_over_the_ep_group_sum_to_the_model(model_id, data):
    spec = specs.model(model_id)
    experts, _ = weights.moe_shape(params.param_counts(spec), spec)
    redundant = data.draw(st.sampled_from([0, experts // 8]))
    ep = data.draw(st.sampled_from(weights.ep_sizes(spec, redundant)))
    g = weights.weights_per_gpu(spec, ep, redundant_experts=redundant)
    total = weights.weight_bytes(spec)["routed_experts"]
    assert g.experts_per_gpu * ep == experts + redundant
    assert g.expert_bytes * ep == pytest.approx(total * (experts + redundant) / experts, rel=1e-12)
    assert g.other_bytes == pytest.approx(sum(weights.weight_bytes(spec).values()) - total, rel=1e-12)


@pytest.mark.parametrize("model_id", ["deepseek-v4-pro", "kimi-k3", "deepseek-v3.2"])
def test_tensor_parallel_splits_all_but_the_headless_weights(model_id):
    """TP n: the weights that belong to no head stay whole on every rank, the rest splits n ways."""
    dp = weights.weights_per_gpu(model_id, 16)
    whole = sum(weights.WEIGHT_FORMATS[weights.shipped_formats(model_id)[g]].bytes(n)
                for g, n in params.tp_replicated(model_id).items())
    for n in (2, 8):
        tp = weights.weights_per_gpu(model_id, 16, tp=n)
        assert tp.other_bytes == pytest.approx(whole + (dp.other_bytes - whole) / n, rel=1e-12)
        assert tp.expert_bytes == dp.expert_bytes
    assert 0 < whole < dp.other_bytes / 2


def test_headless_weights_by_hand():
    """K3: 24 MLA layers of q_a (7168 x 1536) and kv_a (7168 x 576), 69 KDA forget-gate downs
    (7168 x 128), plus the embedding, router, latent projections, shared experts, AttnRes and norms,
    whole; the output head and the dense FFN split."""
    rep = params.tp_replicated("kimi-k3")
    assert rep["attention"] == 24 * 7168 * (1536 + 576) + 69 * 7168 * 128
    by_group = params.param_counts("kimi-k3").by_group()
    whole = ("embedding", "router", "latent_proj", "shared_experts", "residual", "norms")
    assert all(rep[g] == by_group[g] for g in whole)
    assert set(rep) == {"attention", *whole}


def test_kv_space():
    h200 = specs.gpu("h200")
    assert weights.kv_space_per_gpu(0, h200, usable_fraction=1.0) == h200.hbm_bytes
    assert weights.kv_space_per_gpu(10e9, "h200", usable_fraction=0.5, overhead_bytes=5e9) == 0.5 * h200.hbm_bytes - 15e9


def test_bad_input(raises_param):
    raises_param("model", params.param_counts, dataclasses.replace(specs.model("kimi-k3"), raw={}))   # no family
    raises_param("model", params.param_counts, "no-such-model")
    raises_param("format of attention", weights.weight_bytes, "kimi-k3", {"attention": "int3"})
    raises_param("format group", weights.weight_bytes, "kimi-k3", {"experts": "fp8"})
    raises_param("tp", weights.weights_per_gpu, "kimi-k3", 32, tp=5)
    raises_param("ep", weights.weights_per_gpu, "deepseek-v4-pro", 385)
    raises_param("ep", weights.weights_per_gpu, "deepseek-v4-pro", 7)
    raises_param("redundant_experts", weights.weights_per_gpu, "deepseek-v4-pro", 16, redundant_experts=-1)
    raises_param("usable_fraction", weights.kv_space_per_gpu, 1e9, "h200", usable_fraction=0)
    raises_param("usable_fraction", weights.kv_space_per_gpu, 1e9, "h200", usable_fraction=1.5)
    raises_param("gpu", weights.kv_space_per_gpu, 1e9, "a100")


def test_router_and_shared_expert_rows_by_hand():
    """Routers: one gate (experts x hidden) plus one selection bias per expert, in every MoE layer,
    all activated; K3's shared experts sit in its 92 MoE layers."""
    k3, v4 = params.param_counts("kimi-k3"), params.param_counts("deepseek-v4-pro")
    r = k3.component("router")
    assert r.params == r.activated == 92 * (896 * 7168 + 896) and r.layers == 92
    assert v4.component("router").layers == 61 and k3.component("shared experts").layers == 92


def test_v32_headless_weights_include_the_indexer_key():
    """V3.2: q_a (7168 x 1536), kv_a (7168 x 576) and the indexer's shared key (7168 x 128) in each
    of its 61 layers stay whole under attention TP."""
    assert params.tp_replicated("deepseek-v3.2")["attention"] == 61 * 7168 * (1536 + 576 + 128)
    assert params.tp_replicated("deepseek-v3")["attention"] == 61 * 7168 * (1536 + 576)

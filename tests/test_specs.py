"""The spec registry: loads, counts layers the way the configs schedule them, refuses unknown names."""

import pytest

from twopaths import specs


def test_every_model_loads_under_public_assumptions():
    for m in specs.model_ids("public", include_reference=True):
        s = specs.model(m)
        assert s.attention and s.params_total >= s.params_active > 0
        assert s.source


def test_k3_last_layer_is_mla():
    c = specs.model("kimi-k3").raw["config"]
    assert c["linear_attn_config.full_attn_layers"][-1] == c["num_hidden_layers"]   # as the article says


def test_article_assumptions_cover_only_what_the_article_states(raises_param):
    assert set(specs.model_ids("article")) == {"kimi-k3", "deepseek-v3.2", "deepseek-v4-pro"}
    assert specs.model("kimi-k3", "article").kv_format == "bf16"
    err = raises_param("model", specs.model, "deepseek-v3", "article")
    assert "article" in str(err)


def test_bad_names(raises_param):
    raises_param("model", specs.model, "gpt-9")
    raises_param("assumptions", specs.model, "kimi-k3", "rumour")
    raises_param("gpu", specs.gpu, "tpu-v9")


def test_gpus_name_their_sources():
    for g in specs.gpu_ids():
        spec = specs.gpu(g)
        # Floors and ceilings a real accelerator sits within, wide enough for a 40 GB A100 and the
        # L40S's 864 GB/s of GDDR6 (the old floors, 50 GB and 1 TB/s, refused both), narrow enough
        # to catch a unit slip: GiB typed as MiB or TB/s as GB/s lands a factor of 1,000 outside.
        assert 16e9 <= spec.hbm_bytes <= 1e12, g
        assert 300e9 <= spec.hbm_bandwidth <= 20e12, g
        assert spec.source, g
    assert specs.gpu("h200").hbm_bytes == 141e9
    assert specs.gpu("b300").hbm_bytes == 288e9


def _groups(spec):
    return [(g.kind, g.layers, g.dims) for g in spec.attention]


def test_groups_follow_each_config_excerpt():
    """Every cache group from_config derives is derived again here, by hand, from the verbatim config
    keys kept in the spec."""
    c = specs.model("kimi-k3").raw["config"]
    kda = {"heads": c["linear_attn_config.num_heads"], "head_dim_k": c["linear_attn_config.head_dim"],
           "head_dim_v": c["linear_attn_config.head_dim"], "conv_kernel": c["linear_attn_config.short_conv_kernel_size"]}
    mla = {"kv_lora_rank": c["kv_lora_rank"], "rope_dim": c["qk_rope_head_dim"]}
    assert _groups(specs.model("kimi-k3")) == [("kda", len(c["linear_attn_config.kda_layers"]), kda),
                                               ("mla", len(c["linear_attn_config.full_attn_layers"]), mla)]
    assert len(c["linear_attn_config.kda_layers"]) + len(c["linear_attn_config.full_attn_layers"]) == c["num_hidden_layers"]

    for m in ("deepseek-v4-pro", "deepseek-v4-flash"):
        c = specs.model(m).raw["config"]
        L = c["num_hidden_layers"]
        ratios = c["compress_ratios"][:L]
        assert len(c["compress_ratios"]) == L + c["num_nextn_predict_layers"] and c["num_key_value_heads"] == 1
        entry = {"entry_dim": c["head_dim"], "rope_dim": c["qk_rope_head_dim"]}
        assert _groups(specs.model(m)) == [
            ("window", L, {"window": c["sliding_window"], **entry}),
            ("compressed", ratios.count(4), {"ratio": 4, **entry}),
            ("indexer", ratios.count(4), {"ratio": 4, "index_dim": c["index_head_dim"]}),
            ("compressed", ratios.count(128), {"ratio": 128, **entry}),
        ]
        assert ratios.count(0) + ratios.count(4) + ratios.count(128) == L

    for m in ("deepseek-v3.2", "deepseek-v3"):
        c = specs.model(m).raw["config"]
        expected = [("mla", c["num_hidden_layers"], {"kv_lora_rank": c["kv_lora_rank"], "rope_dim": c["qk_rope_head_dim"]})]
        if "index_head_dim" in c:
            expected.append(("indexer", c["num_hidden_layers"], {"ratio": 1, "index_dim": c["index_head_dim"]}))
        assert _groups(specs.model(m)) == expected

    for m in ("llama-3.1-405b", "qwen-2.5-72b"):
        c = specs.model(m).raw["config"]
        head_dim = c["hidden_size"] // c["num_attention_heads"]      # neither config states head_dim
        assert _groups(specs.model(m)) == [("mha", c["num_hidden_layers"], {
            "kv_heads": c["num_key_value_heads"], "head_dim_k": head_dim, "head_dim_v": head_dim})]


def test_spec_layers_agree_with_config():
    for m in specs.model_ids("public", include_reference=True):
        s = specs.model(m)
        assert s.layers == s.raw["config"]["num_hidden_layers"], m


def test_malformed_groups_are_refused_with_their_place():
    with pytest.raises(ValueError, match="here: cache group kind 'gqa'"):
        specs._groups([{"kind": "gqa", "layers": 2}], "here")
    with pytest.raises(ValueError, match="here: mla group needs layers >= 1"):
        specs._groups([{"kind": "mla", "kv_lora_rank": 512, "rope_dim": 64}], "here")
    with pytest.raises(ValueError, match=r"lacks \['rope_dim'\]"):
        specs._groups([{"kind": "mla", "layers": 2, "kv_lora_rank": 512}], "here")

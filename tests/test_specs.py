"""The spec registry: loads, counts layers the way the configs schedule them, refuses unknown names."""

import pytest

from twopaths import specs


def test_every_model_loads_under_public_assumptions():
    for m in specs.model_ids("public", include_reference=True):
        s = specs.model(m)
        assert s.attention and s.params_total >= s.params_active > 0
        assert s.source


def test_k3_layer_plan_matches_its_schedule():
    k3 = specs.model("kimi-k3")
    full = k3.raw["full_attn_layers"]
    groups = {g.kind: g.layers for g in k3.attention}
    assert groups == {"mla": len(full), "kda": k3.layers - len(full)} == {"mla": 24, "kda": 69}
    assert full[-1] == k3.layers        # the last layer is MLA, as the article says


@pytest.mark.parametrize("model_id", ["deepseek-v4-pro", "deepseek-v4-flash"])
def test_v4_layer_plan_matches_compress_ratios(model_id):
    s = specs.model(model_id)
    ratios = s.raw["compress_ratios"]
    assert len(ratios) == s.layers
    compressed = {g["ratio"]: g.layers for g in s.attention if g.kind == "compressed"}
    indexer = sum(g.layers for g in s.attention if g.kind == "indexer")
    window = sum(g.layers for g in s.attention if g.kind == "window")
    assert compressed == {4: ratios.count(4), 128: ratios.count(128)}
    assert indexer == ratios.count(4)          # one indexer per CSA layer
    assert window == s.layers                  # every layer keeps the raw window


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
        assert spec.hbm_bytes > 50e9 and spec.hbm_bandwidth > 1e12 and spec.source
    assert specs.gpu("h200").hbm_bytes == 141e9
    assert specs.gpu("b300").hbm_bytes == 288e9

"""The companion note's table data (specs/trends.yaml) and the attention routes read from the registry."""

from datetime import date

from twopaths import specs
from twopaths.claims import claims
from twopaths.specs import trends


def test_columns_are_the_notes_five_models():
    cols = trends.columns()
    assert len(cols) == 5
    assert [c for c in cols if c not in specs.model_ids()] == ["glm-5.2"]   # the one without a config
    for c in cols:
        assert trends.note_entry(c)["release"]
        assert trends.release(c) <= date(2026, 8, 6)                      # the article's "data as of" date


def test_glm_figures_are_the_notes_printed_ones():
    """GLM-5.2's figures here and the note's claims (claims/trends.yaml) are the same numbers."""
    glm, stated = trends.note_entry("glm-5.2"), claims("trends")
    assert glm["params"]["total"] == stated["trends-glm-total-params"].value * 1e9
    assert glm["params"]["total_hf"] == stated["trends-glm-total-params-hf"].value * 1e9
    assert glm["params"]["active"] == stated["trends-glm-active-params"].value * 1e9
    assert glm["layers"] == stated["trends-glm-layers"].value
    assert glm["dense_layers"] == stated["trends-glm-dense-layers"].value
    assert glm["moe_layers"] == stated["trends-glm-moe-layers"].value == glm["layers"] - glm["dense_layers"]
    assert glm["moe"] == {"routed": stated["trends-glm-routed-experts"].value,
                          "top_k": stated["trends-glm-experts-per-token"].value,
                          "shared": stated["trends-glm-shared-experts"].value}
    assert glm["vocab"] == stated["trends-glm-vocab"].value
    assert glm["index_layers"] == stated["trends-glm-independent-index-layers"].value
    assert "note" in glm["source"]


def test_release_dates():
    assert trends.release("deepseek-v3") == date(2024, 12, 26)
    assert trends.release("glm-5.2") == date(2026, 6, 1)         # printed as a month
    assert trends.release("deepseek-v4-pro") < trends.release("kimi-k3")


def test_attention_routes_follow_the_configs():
    k3 = specs.model("kimi-k3")
    c = k3.config
    assert trends.attention_routes(k3) == {"compression": len(c["linear_attn_config.full_attn_layers"]), "sparse": 0,
                                           "linear": len(c["linear_attn_config.kda_layers"]), "sliding window": 0}
    for m in ("deepseek-v4-pro", "deepseek-v4-flash"):
        c = specs.model(m).config
        L = c["num_hidden_layers"]
        ratios = c["compress_ratios"][:L]
        routes = trends.attention_routes(specs.model(m))
        assert routes == {"compression": sum(r > 0 for r in ratios), "sparse": ratios.count(4),
                          "linear": 0, "sliding window": L}
    v3 = specs.model("deepseek-v3")
    assert trends.attention_routes(v3)["compression"] == v3.config["num_hidden_layers"]
    v32 = specs.model("deepseek-v3.2")
    assert trends.attention_routes(v32)["sparse"] == v32.config["num_hidden_layers"]


def test_published_figures_name_their_source():
    mtp = trends.published("deepseek-v3-mtp")
    lo, hi = mtp["second_token_acceptance"]
    assert 0 < lo < hi < 1 and mtp["tps_speedup"] > 1 and "2412.19437" in mtp["source"]


def test_bad_names(raises_param):
    raises_param("model", trends.note_entry, "gpt-9")
    raises_param("model", trends.release, "deepseek-v3.2")          # in the registry, not in the note's table
    raises_param("published figure", trends.published, "rumour")


def test_routes_of_every_note_model():
    for m in trends.columns():
        r = trends.routes(m)
        assert set(r) == set(trends.ROUTES)
        layers = specs.model(m).layers if m in specs.model_ids() else trends.note_entry(m)["layers"]
        assert all(0 <= n <= layers for n in r.values()) and sum(r.values()) >= layers

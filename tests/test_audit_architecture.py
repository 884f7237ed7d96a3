"""The architecture, companion-note and benchmark checks: which of the article's structural figures
the public configs contradict, which differences the article's own inputs expose, and that a derived
figure is computed from its inputs rather than read back."""

import dataclasses

import pytest

from twopaths.claims import all_claims, rounds_to
from twopaths.claims.audit import audit
from twopaths.claims.checks import architecture

TOPICS = ["architecture", "trends", "benchmarks"]


@pytest.fixture(scope="module")
def rows():
    return {r.id: r for r in audit(TOPICS)}


def test_every_difference_in_these_topics_is_explained(rows):
    differs = {cid: r.note.split(":")[0] for cid, r in rows.items() if r.verdict == "differs"}
    assert differs == {
        "pro-over-flash-size": "wrong term",                  # 4x is 49B/13B; by total size 1.6T/284B = 5.6
        "trends-v4-pro-activation-rate": "rounding",          # 49/1600 = 3.06%, truncated to 3.0%
        "trends-v4-pro-vocab": "inconsistent assumption",     # 128K nominal; vocab_size 129,280
        "trends-v4-flash-vocab": "inconsistent assumption",
        "trends-glm-total-params": "rounding",                # 743.4B in GLM-5.2's config; 744B is GLM-5's
        "v4-larger-base": "inconsistent assumption",          # 1.6T is not larger than 2.8T
        "v4-output-price-fraction": "rounding",               # 100/6 = 16.7, truncated to 16
    }


@pytest.mark.parametrize("cid, public", [
    ("k3-mla-latent-dim", 512), ("k3-mla-latents", 1),      # one 512-dim latent, not two of 640
    ("v4-routed-experts", 384), ("v4-experts-per-token", 6),  # V4-Pro routes 6 of 384, not V3's 8 of 256
    ("v32-per-token-layer", 1152),                           # 512 + 64 values in BF16, not 2,048 bytes
])
def test_article_assumptions_the_public_configs_contradict(rows, cid, public):
    r = rows[cid]
    assert r.verdict == "matches"            # consistent with the article's own arithmetic...
    assert r.public_config == public         # ...but not with the model as released
    assert not rounds_to(r.stated, r.public_config)
    assert r.inputs.status == "fails" and r.category != "holds"   # and the verdict says so


def test_the_nominal_three_to_one_is_not_the_layer_count(rows):
    # the article's 75% and 25% follow from 3:1; K3's 69 and 24 of 93 layers give 74.2% and 25.8%
    for cid in ("k3-lossy-layer-share", "k3-precise-layer-share", "trends-hybrid-linear-share"):
        assert rows[cid].verdict == "matches"
        assert not rounds_to(rows[cid].stated, rows[cid].public_config)
    assert rows["k3-lossy-layer-share"].public_config == pytest.approx(100 * 69 / 93)
    assert rows["k3-kda-mla-ratio"].recomputed == pytest.approx(69 / 24)
    # ...and 3:1 holds for 2.875 to one digit, so the shares drawn from it hold to the precision it carries
    for cid in ("k3-lossy-layer-share", "k3-precise-layer-share", "trends-hybrid-linear-share"):
        assert rows[cid].inputs.status == "holds" and "its inputs carry" in rows[cid].inputs.reason, cid
        assert rows[cid].overall == "holds", cid


def test_v4_layer_schedule_as_the_note_prints_it(rows):
    # "61 (first 2 HCA + 30 CSA + 29 HCA)" and "43 (first 2 SWA + 21 CSA + 20 HCA)", each part from compress_ratios
    for cid in ("trends-v4-pro-leading-hca-layers", "trends-v4-pro-csa-layers", "trends-v4-pro-hca-layers",
                "trends-v4-flash-leading-swa-layers", "trends-v4-flash-csa-layers", "trends-v4-flash-hca-layers"):
        assert rows[cid].verdict == "matches" and rows[cid].public_config == float(rows[cid].stated), cid
    assert rows["trends-v4-flash-extra-csa-layers"].public_config == 1


def test_a_million_tokens_is_not_two_to_the_twentieth(rows):
    assert rows["csa-entries-1m"].recomputed == 250          # 1e6 / 4, the article's arithmetic
    assert rows["csa-entries-1m"].public_config == pytest.approx(2**20 / 4 / 1e3)
    assert rows["hca-entries-1m"].public_config == pytest.approx(2**20 / 128 / 1e3)
    # DeepSeek's 27% of V3.2's FLOPs holds at 1e6 tokens; at the config's 2^20 it rounds to 26%
    assert rows["v4-flops-share-of-v32"].verdict == "matches"
    assert not rounds_to("27", rows["v4-flops-share-of-v32"].public_config)


def test_expert_shares_follow_each_claims_own_definition(rows):
    assert rows["k3-expert-activation-rate"].recomputed == pytest.approx(100 * 18 / 898)     # experts, shared counted
    assert rows["trends-k3-activation-rate"].recomputed == pytest.approx(100 * 104 / 2800)   # parameters
    assert rows["v4-expert-activation-rate"].public_config == pytest.approx(100 * 6 / 384)


def test_mhc_mixing_has_spectral_norm_one():
    assert architecture.largest_singular_value(4, seed=3) == pytest.approx(1, abs=1e-12)


def test_a_derived_figure_follows_its_inputs(monkeypatch):
    """Changing a printed input moves what is derived from it: the checks compute, they do not read back."""
    every = all_claims()
    changed = dict(every, **{"k3-kda-mla-ratio": dataclasses.replace(every["k3-kda-mla-ratio"], stated="4"),
                             "flash-preview-deepswe": dataclasses.replace(every["flash-preview-deepswe"], stated="10.0")})
    monkeypatch.setattr(architecture, "all_claims", lambda: changed)
    by_id = {r.id: r for r in audit(TOPICS)}
    assert by_id["k3-lossy-layer-share"].recomputed == pytest.approx(80)
    assert by_id["k3-lossy-layer-share"].public_config == pytest.approx(100 * 69 / 93)   # the config did not move
    assert by_id["flash-deepswe-gain"].recomputed == pytest.approx(444)


def test_a_v4_claim_is_checked_against_v4_s_config(monkeypatch):
    """Every check of a V4 claim reads V4's config on its public side; where its article side reads
    V3.2's (the article's DSV4 routing is V3.2's), the check says so in its basis."""
    from twopaths.claims.audit import CHECKS
    from twopaths.claims import claims
    read = []
    real = architecture.model
    monkeypatch.setattr(architecture, "model", lambda m, *a: read.append(m) or real(m, *a))
    older = {"deepseek-v3", "deepseek-v3.2"}
    for cid in claims("architecture"):
        c = CHECKS.get(cid)
        if not cid.startswith("v4-") or "v32" in cid or c is None or c.public is None:
            continue
        read.clear()
        c.public()
        assert not older & set(read), cid
        read.clear()
        c.article()
        assert not older & set(read) or "V3.2" in c.basis, cid


@pytest.fixture(scope="module")
def every():
    return {r.id: r for r in audit()}


def test_a_stated_figure_of_the_release_is_judged_against_the_config(every):
    dense = every["v4-dense-ffn-layers"]                 # 3 stated, none in the config
    assert dense.inputs.status == "fails" and dense.reasoning.status == "fails"


def test_external_models_are_read_from_their_config_excerpts(rows):
    for cid, value in (("trends-glm-layers", 78), ("trends-glm-independent-index-layers", 21),
                       ("trends-glm-index-share-layers", 4), ("mixtral-experts", 8),
                       ("trends-qwen-linear-ratio", 3), ("latent-moe-chain-matrices", 4)):
        r = rows[cid]
        assert r.public_config == value and r.overall == "holds", cid
        assert "config" in r.source or "excerpt" in r.source or "model card" in r.source, cid
    assert rows["trends-k3-vision-params"].public_config == pytest.approx(401.2, abs=0.05)
    assert rows["trends-glm-total-params"].overall == "slip (rounding)"       # 743.4B printed as 744B
    assert rows["trends-v3-context"].overall == "holds"        # 128K, V3's documented context


def test_attributions_and_comparisons_are_claims(every):
    hc = every["hc-proposed-by-kimi"]
    assert hc.overall == "wrong: inputs" and "ByteDance" in hc.note and "2409.19606" in hc.source
    base = every["v4-larger-base"]                      # 1.6T is not larger than 2.8T
    assert base.recomputed == 0 and base.arithmetic.status == "fails"
    # a ratio derived from benchmark scores is consistent with them, which verifies nothing
    assert every["flash-terminal-bench-gain"].overall == "consistent, not verified"


def test_what_stays_unchecked_says_which_kind_it_is(every):
    from twopaths.claims import UNCHECKABLE
    left = [r for r in every.values() if r.category == "not checkable"]
    assert left and all(r.note.split(":")[0] in UNCHECKABLE for r in left)
    # GLM-5.2 and Mixtral have configs now: what is left of them is scores, prices and API limits
    kinds = {r.note.split(":")[0] for r in left if r.id.startswith(("trends-glm-", "mixtral-"))}
    assert kinds == {"benchmark score", "price", "no source in the project"}

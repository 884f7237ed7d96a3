"""Checks for the companion note's figures (``trends.yaml``): its five-model table and its text.

The same three routes as ``architecture``: a figure the note derives (an activation rate, a layer
sum, a 3:1 share) from the printed values it is derived from; a figure it copies from a model's
release recounted from that model's config excerpt, which ``public`` reads too. A table cell such as
"61 (2 HCA + 30 CSA + 29 HCA)" is checked both ways: the total as the sum of the printed parts, each
part from the config's layer list.
"""

from __future__ import annotations

from itertools import takewhile

from ...calc import kv
from ...specs import excerpts, model
from ...specs.trends import published
from ..audit import check
from .architecture import (FLASH, K3, PRO, V3, V32, activated, compress_ratios, config, context, csa_hca_ratios,
                           external, fact, k3_layer_lists, key, stated, total)

MODELS = {"k3": K3, "v4-pro": PRO, "v4-flash": FLASH, "v3": V3}


# ---- V4's layer schedule ----

def leading(model_id: str, ratio: int) -> int:
    """How many of the first layers have compress ratio ``ratio``."""
    return sum(1 for _ in takewhile(lambda r: r == ratio, compress_ratios(model_id)))


def after_leading(model_id: str, ratio: int) -> int:
    """Layers with compress ratio ``ratio`` past the leading run of them."""
    return compress_ratios(model_id).count(ratio) - leading(model_id, ratio)


def csa(model_id: str) -> int:
    return compress_ratios(model_id).count(csa_hca_ratios(model_id)[0])


def hca(model_id: str) -> int:
    return compress_ratios(model_id).count(csa_hca_ratios(model_id)[1])


# ---- III. Attention (the text) ----

fact("trends-csa-compression", PRO, lambda m: csa_hca_ratios(m)[0])
fact("trends-hca-compression", PRO, lambda m: csa_hca_ratios(m)[1])
fact("trends-v32-dsa-topk", V32, key("index_topk"))
fact("trends-v4-swa-window", PRO, key("sliding_window"))


def linear_share() -> float:
    """The linear layers' share of a hybrid mixing linear and full attention at the note's 3:1."""
    ratio = stated("trends-k3-linear-ratio")
    return ratio / (ratio + 1)


def k3_kv_reduction(tokens: int) -> float:
    """How much less K3's cache (BF16, KDA state included) holds than 93 layers of its MLA would."""
    mla = kv.layer_bytes(model(K3), "mla", tokens, "bf16") * config(K3)["num_hidden_layers"]
    return 1 - kv.request_kv_bytes(model(K3), tokens, "bf16") / mla


K3_SHARE = "from the nominal 3:1; K3's config, 69 KDA and 24 MLA layers of 93, gives"
check("trends-hybrid-linear-share", public=lambda: k3_layer_lists()[0] / config(K3)["num_hidden_layers"],
      explain=f"{K3_SHARE} 74.2%")(linear_share)
check("trends-hybrid-full-share", public=lambda: k3_layer_lists()[1] / config(K3)["num_hidden_layers"],
      explain=f"{K3_SHARE} 25.8%")(lambda: 1 - linear_share())
check("trends-hybrid-kv-reduction", public=lambda: k3_kv_reduction(context(K3)),
      explain="against as many full-attention layers of the same width; K3's own cache in BF16 at 1M, its KDA "
              "state included, is 74.0% below 93 layers of its MLA")(linear_share)

# ---- the appendix table: sizes ----

for name, model_id in MODELS.items():
    fact(f"trends-{name}-total-params", model_id, total)
    fact(f"trends-{name}-active-params", model_id, activated)


def rate_of(name: str):
    """The note's activation rate: its printed activated count over its printed total."""
    return lambda: stated(f"trends-{name}-active-params") / stated(f"trends-{name}-total-params")


RATE = "activated over total parameters, the note's definition (part I of the article counts experts instead)"
for name, model_id in MODELS.items():
    explained = dict(explain="49B/1.6T = 3.06%, which rounds to 3.1%; 3.0% truncates it") \
        if name == "v4-pro" else dict(explain=RATE)
    check(f"trends-{name}-activation-rate", public=lambda m=model_id: activated(m) / total(m), **explained)(rate_of(name))

# ---- the appendix table: layers ----


def printed_sum(*claim_ids: str):
    return lambda: sum(stated(c) for c in claim_ids)


check("trends-k3-layers", public=lambda: config(K3)["num_hidden_layers"])(
    printed_sum("trends-k3-kda-layers", "trends-k3-mla-layers"))
fact("trends-k3-kda-layers", K3, lambda m: k3_layer_lists(m)[0])
fact("trends-k3-mla-layers", K3, lambda m: k3_layer_lists(m)[1])
check("trends-v4-pro-layers", public=lambda: config(PRO)["num_hidden_layers"])(
    printed_sum("trends-v4-pro-leading-hca-layers", "trends-v4-pro-csa-layers", "trends-v4-pro-hca-layers"))
fact("trends-v4-pro-leading-hca-layers", PRO, lambda m: leading(m, csa_hca_ratios(m)[1]))
fact("trends-v4-pro-csa-layers", PRO, csa)
fact("trends-v4-pro-hca-layers", PRO, lambda m: after_leading(m, csa_hca_ratios(m)[1]))
check("trends-v4-flash-layers", public=lambda: config(FLASH)["num_hidden_layers"])(
    printed_sum("trends-v4-flash-leading-swa-layers", "trends-v4-flash-csa-layers", "trends-v4-flash-hca-layers"))
fact("trends-v4-flash-leading-swa-layers", FLASH, lambda m: leading(m, 0))
fact("trends-v4-flash-csa-layers", FLASH, csa)
fact("trends-v4-flash-hca-layers", FLASH, lambda m: after_leading(m, csa_hca_ratios(m)[1]))
fact("trends-v3-layers", V3, key("num_hidden_layers"))
fact("trends-v3-dense-layers", V3, key("first_k_dense_replace"))

# ---- the appendix table: attention ----

fact("trends-k3-linear-ratio", K3, lambda m: k3_layer_lists(m)[0] / k3_layer_lists(m)[1],
     explain="69/24 = 2.875, which the printed one digit of 3:1 covers")
check("trends-v4-pro-csa-hca-ratio", public=lambda: csa(PRO) / hca(PRO))(
    lambda: stated("trends-v4-pro-csa-layers")
    / (stated("trends-v4-pro-leading-hca-layers") + stated("trends-v4-pro-hca-layers")))
check("trends-v4-flash-csa-hca-ratio", public=lambda: csa(FLASH) / hca(FLASH))(
    lambda: stated("trends-v4-flash-csa-layers") / stated("trends-v4-flash-hca-layers"))
check("trends-v4-flash-extra-csa-layers", public=lambda: csa(FLASH) - hca(FLASH))(
    lambda: stated("trends-v4-flash-csa-layers") - stated("trends-v4-flash-hca-layers"))
for name, model_id in (("v4-pro", PRO), ("v4-flash", FLASH)):
    fact(f"trends-{name}-index-topk", model_id, key("index_topk"))
    fact(f"trends-{name}-heads", model_id, key("num_attention_heads"))
    fact(f"trends-{name}-head-dim", model_id, key("head_dim"))
fact("trends-v3-heads", V3, key("num_attention_heads"))

# ---- the appendix table: MoE, routing and residual ----

fact("trends-k3-routed-experts", K3, key("num_experts"))
fact("trends-k3-experts-per-token", K3, key("num_experts_per_token"))
fact("trends-k3-shared-experts", K3, key("num_shared_experts"))
for name, model_id in (("v4-pro", PRO), ("v4-flash", FLASH), ("v3", V3)):
    fact(f"trends-{name}-routed-experts", model_id, key("n_routed_experts"))
    fact(f"trends-{name}-experts-per-token", model_id, key("num_experts_per_tok"))
    fact(f"trends-{name}-shared-experts", model_id, key("n_shared_experts"))
for name, model_id in (("v4-pro", PRO), ("v4-flash", FLASH)):
    fact(f"trends-{name}-hash-layers", model_id, key("num_hash_layers"))
    fact(f"trends-{name}-mhc-channels", model_id, key("hc_mult"))

# ---- the appendix table: vocabulary and context ----

NOMINAL_VOCAB = ("128K is the tokenizer's nominal size; the config's vocab_size, the embedding's rows, is 129,280, "
                 "the figure the same table prints in full for V3")
fact("trends-k3-vocab", K3, key("vocab_size"))
fact("trends-v4-pro-vocab", PRO, key("vocab_size"), reason="inconsistent assumption", fails="inputs",
     explain=NOMINAL_VOCAB)
fact("trends-v4-flash-vocab", FLASH, key("vocab_size"), reason="inconsistent assumption", fails="inputs",
     explain=NOMINAL_VOCAB)
fact("trends-v3-vocab", V3, key("vocab_size"))
for name, model_id in (("k3", K3), ("v4-pro", PRO), ("v4-flash", FLASH)):
    fact(f"trends-{name}-context", model_id, context)
V3_CONTEXT = published("deepseek-v3-context")
check("trends-v3-context", public=lambda: V3_CONTEXT["tokens_k"] * 1e3, fact=True,
      basis=f"V3's documented context ({V3_CONTEXT['source']})",
      explain="128K is V3's documented context; its config's max_position_embeddings, 163,840, is the "
              "YaRN position limit (factor 40 on 4,096 positions), not the context it was trained to")(
    lambda: V3_CONTEXT["tokens_k"] * 1e3)

# ---- GLM-5.2, Qwen3.5 and K3's vision tower: the config excerpts of specs/excerpts.yaml ----

GLM = "glm-5.2"


def glm_layout(name: str):
    return lambda c: excerpts.moe_layout(c)[name]


for cid, read in (("layers", glm_layout("layers")), ("dense-layers", glm_layout("dense_layers")),
                  ("moe-layers", glm_layout("moe_layers")), ("routed-experts", glm_layout("routed_experts")),
                  ("experts-per-token", glm_layout("experts_per_token")),
                  ("shared-experts", glm_layout("shared_experts")), ("vocab", lambda c: c["vocab_size"]),
                  ("context", lambda c: c["max_position_embeddings"]),
                  ("independent-index-layers", lambda c: len(excerpts.own_index_layers(c))),
                  ("index-share-layers", lambda c: c["index_topk_freq"]),
                  ("active-params", lambda c: excerpts.active_params(c, embedding=False)),
                  ("total-params-hf", lambda c: excerpts.total_params(c, mtp=True))):
    external(f"trends-glm-{cid}", GLM, read)
external("trends-glm-total-params", GLM, excerpts.total_params,
         explain="GLM-5.2's config gives 743.4B without its MTP layer; 744B is what GLM-5 and GLM-5.1, "
                 "whose indexer runs in every layer, come to")
check("trends-glm-activation-rate", explain=RATE, cite=excerpts.source(GLM),
      public=lambda: (lambda c: excerpts.active_params(c, embedding=False) / excerpts.total_params(c))(
          excerpts.excerpt(GLM)))(rate_of("glm"))
QWEN = "qwen3.5-397b-a17b"
external("trends-qwen-linear-ratio", QWEN, lambda c: float(excerpts.ratio(
    excerpts.text_part(c)["layer_types"], "linear_attention", "full_attention")))
external("trends-k3-vision-params", "kimi-k3-vision", excerpts.vision_params)

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
from ...specs import model
from ..audit import check
from .architecture import (FLASH, K3, PRO, V3, V32, activated, compress_ratios, config, context, csa_hca_ratios,
                           fact, k3_layer_lists, key, stated, total)

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
    explained = dict(reason="arithmetic", explain="49B/1.6T = 3.06%, which rounds to 3.1%, not 3.0%") \
        if name == "v4-pro" else dict(explain=RATE)
    check(f"trends-{name}-activation-rate", public=lambda m=model_id: activated(m) / total(m), **explained)(rate_of(name))
check("trends-glm-activation-rate", explain=RATE)(rate_of("glm"))

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
fact("trends-v3-context", V3, context, reason="inconsistent assumption", fails="inputs",
     explain="128K is the length DeepSeek's report extended V3 to in training; its config's max_position_embeddings, "
             "YaRN's factor 40 on 4,096 positions, is 163,840")

# ---- GLM-5.2: no config in the project (specs/trends.yaml records the note's own cells), so only the
# note's internal arithmetic can be checked ----

check("trends-glm-layers")(printed_sum("trends-glm-dense-layers", "trends-glm-moe-layers"))

"""Checks for the article's structural figures (``architecture.yaml``): sizes, layer counts, heads,
experts, compression ratios and the shares drawn from them.

The recomputation under the article's assumptions takes one of three routes:
- a figure the article derives (a share, a ratio, an entry count) is computed from the printed values
  of the claims it is derived from (``stated``): the article's own inputs;
- a figure that is the article's own assumption (K3's 640-dim latent counted twice, its KDA state,
  V3.2's 2,048 bytes per layer) comes from ``specs.model(id, "article")``;
- a figure the article takes from a model's release (sizes, experts, dimensions) has no assumption of
  its own behind it: it is recounted from the model's config excerpt (``fact``), parameter totals by
  ``param_counts``.
``public`` is the public config's value; a "1M" context there is ``max_position_embeddings`` (2^20).
"""

from __future__ import annotations

import math
from functools import cache

import numpy as np

from ...calc import attention_flops, kv
from ...layers import routers
from ...specs import excerpts, model
from ...specs.alternatives import alternative
from ...specs.params import param_counts
from .. import SCALE, all_claims
from ..audit import check
from .kv_cache import kda_recurrent_state, part

K3, PRO, FLASH, V32, V3 = "kimi-k3", "deepseek-v4-pro", "deepseek-v4-flash", "deepseek-v3.2", "deepseek-v3"


# ---- inputs ----

def stated(claim_id: str) -> float:
    """A claim's printed value in SI: the article's own input to a figure derived from it."""
    c = all_claims()[claim_id]
    return c.value / 100 if c.unit == "%" else c.value * SCALE.get(c.unit, 1)


def config(model_id: str) -> dict:
    """The verbatim config excerpt the spec of ``model_id`` keeps."""
    return model(model_id).raw["config"]


def key(name: str):
    """A reader of one config key, for ``fact``."""
    return lambda model_id: config(model_id)[name]


@cache
def _counts(model_id: str):
    return param_counts(model_id)


def total(model_id: str) -> int:
    return _counts(model_id).total


def activated(model_id: str) -> int:
    return _counts(model_id).activated()


def context(model_id: str) -> int:
    """The config's context limit, what its model card calls 1M (or 128K)."""
    return config(model_id)["max_position_embeddings"]


def compress_ratios(model_id: str) -> list[int]:
    """V4's compress ratio per layer (0: sliding window only, 4: CSA, 128: HCA); the config's list
    carries one more entry, for the MTP layer, which is left out."""
    c = config(model_id)
    return c["compress_ratios"][:c["num_hidden_layers"]]


def csa_hca_ratios(model_id: str) -> tuple[int, int]:
    """(CSA's, HCA's) compression ratio: the two nonzero ratios of the config's list."""
    csa, hca = sorted({r for r in compress_ratios(model_id) if r})
    return csa, hca


def k3_layer_lists(model_id: str = K3) -> tuple[int, int]:
    """(KDA, full-attention) layer counts from K3's config lists."""
    c = config(model_id)
    return len(c["linear_attn_config.kda_layers"]), len(c["linear_attn_config.full_attn_layers"])


def group(model_id: str, kind: str, assumptions: str = "article"):
    """The first cache group of ``kind`` of ``model_id`` (the article's: ``specs/article.yaml``)."""
    return next(g for g in model(model_id, assumptions).attention if g.kind == kind)


def fact(claim_id: str, model_id: str, read, **explained):
    """Register a figure the article takes from a model's release: both columns read its config."""
    def value():
        return float(read(model_id))
    check(claim_id, public=value, basis=f"{model_id}'s config (a figure the article takes from the "
                                         "release)", fact=True, **explained)(value)


def largest_singular_value(n: int, seed: int = 0) -> float:
    """The spectral norm of a random point of the Birkhoff polytope (doubly stochastic n x n, a convex
    combination of permutation matrices), the manifold mHC projects its mixing matrices onto."""
    rng = np.random.default_rng(seed)
    weights = rng.dirichlet(np.ones(n))
    eye = np.eye(n)
    matrix = sum(w * eye[rng.permutation(n)] for w in weights)
    return float(np.linalg.norm(matrix, 2))


# ---- Introduction ----

fact("v4-total-params", PRO, total)
fact("v4-active-params", PRO, activated)
fact("v4-context", PRO, context)
fact("k3-total-params", K3, total)
fact("k3-active-params", K3, activated)
fact("k3-context", K3, context)

# ---- I. Attention ----


check("k3-layers", public=lambda: config(K3)["num_hidden_layers"])(
    lambda: sum(g.layers for g in model(K3, "article").attention))
check("k3-kda-layers", public=lambda: k3_layer_lists()[0])(lambda: group(K3, "kda").layers)
check("k3-mla-layers", public=lambda: k3_layer_lists()[1])(lambda: group(K3, "mla").layers)
check("k3-kda-heads", public=lambda: config(K3)["linear_attn_config.num_heads"])(lambda: group(K3, "kda")["heads"])
check("k3-kda-head-dim", public=lambda: config(K3)["linear_attn_config.head_dim"])(
    lambda: group(K3, "kda")["head_dim_k"])
check("kda-state-per-layer-bytes", public=lambda: kda_recurrent_state(),
      explain="heads x d_head^2 x 2 bytes, from the config; beside it the short convolution keeps its last 3 "
              "inputs of q, k and v (221,184 B), counted in the fixed memory (kda-state-total)")(
    lambda: kv.layer_bytes(model(K3, "article"), "kda", 0))
check("k3-kda-mla-ratio", public=lambda: k3_layer_lists()[0] / k3_layer_lists()[1],
      explain="69/24 = 2.875, which the printed one digit of 3:1 covers")(
    lambda: group(K3, "kda").layers / group(K3, "mla").layers)

NOMINAL = "from the nominal 3:1 mix; K3's layer counts (the article's 69 and 24 of 93, as in its config) give"
check("k3-lossy-layer-share", public=lambda: k3_layer_lists()[0] / config(K3)["num_hidden_layers"],
      explain=f"{NOMINAL} 69/93 = 74.2%")(
    lambda: stated("k3-kda-mla-ratio") / (stated("k3-kda-mla-ratio") + 1))
check("k3-precise-layer-share", public=lambda: k3_layer_lists()[1] / config(K3)["num_hidden_layers"],
      explain=f"{NOMINAL} 24/93 = 25.8%")(
    lambda: 1 / (stated("k3-kda-mla-ratio") + 1))

# ---- I. Hardware adaptation ----

fact("kda-gate-lower-bound", K3, key("linear_attn_config.gate_lower_bound"))
check("kda-min-retention", public=lambda: math.exp(config(K3)["linear_attn_config.gate_lower_bound"]))(
    lambda: math.exp(stated("kda-gate-lower-bound")))
check("kda-tile-log-decay-bound",
      public=lambda: stated("kda-tile") * config(K3)["linear_attn_config.gate_lower_bound"])(
    lambda: stated("kda-tile") * stated("kda-gate-lower-bound"))

# ---- I. Stable LatentMoE ----

fact("k3-routed-experts", K3, key("num_experts"))
fact("k3-experts-per-token", K3, key("num_experts_per_token"))
fact("k3-shared-experts", K3, key("num_shared_experts"))


def _k3_expert_share(k, shared, experts):
    return (k + shared) / (experts + shared)


check("k3-expert-activation-rate",
      public=lambda: _k3_expert_share(*(config(K3)[n] for n in ("num_experts_per_token", "num_shared_experts", "num_experts"))),
      explain="a share of experts, (16 + 2)/(896 + 2), shared ones counted; the companion note's 3.7% "
              "is activated over total parameters")(
    lambda: _k3_expert_share(stated("k3-experts-per-token"), stated("k3-shared-experts"), stated("k3-routed-experts")))

V3_ROUTING = "the article's 8 of 256 is V3 and V3.2's routing, read here from V3.2's config; V4-Pro's routes 6 of 384"
# The article's figure is V3.2's routing: the article column shows where it comes from, the public
# column is V4-Pro's own config, which the claim is about.
V32_BASIS = "V3.2's config, the model the article's DSV4 routing is taken from"
check("v4-routed-experts", public=lambda: config(PRO)["n_routed_experts"], explain=V3_ROUTING, basis=V32_BASIS)(
    lambda: config(V32)["n_routed_experts"])
check("v4-experts-per-token", public=lambda: config(PRO)["num_experts_per_tok"], explain=V3_ROUTING,
      basis=V32_BASIS)(lambda: config(V32)["num_experts_per_tok"])
check("v4-expert-activation-rate", public=lambda: config(PRO)["num_experts_per_tok"] / config(PRO)["n_routed_experts"],
      explain="routed experts only, 8/256 (K3's 2.0% counts its shared experts); V4-Pro's config gives 6/384")(
    lambda: stated("v4-experts-per-token") / stated("v4-routed-experts"))
def k3_rank(shares: dict) -> int:
    """K3's place among ``shares`` (model -> share of experts a token uses), lowest first."""
    return 1 + sum(v < shares["k3"] for m, v in shares.items() if m != "k3")


def public_share(model_id: str) -> float:
    """Experts a token uses, shared ones counted, by the model's config (chapter 4's definition)."""
    return routers.moe_counts(config(model_id)).activation_rate()


check("k3-sparsest",
      public=lambda: k3_rank({"k3": public_share(K3), "v4": public_share(PRO),
                              "mixtral": stated("mixtral-expert-activation-rate")}),
      reasoning="K3's 2.0% counts its 2 shared experts, DSV4's 3.1% leaves its shared expert out: the "
                "ranking sets two shares with unlike denominators side by side")(
    lambda: k3_rank({"k3": stated("k3-expert-activation-rate"), "v4": stated("v4-expert-activation-rate"),
                     "mixtral": stated("mixtral-expert-activation-rate")}))
def external(claim_id: str, model_id: str, read, **explained):
    """Register a figure of a model the project keeps only a config excerpt of (``specs/excerpts.yaml``):
    both columns read it, as ``fact`` does for the registry's models."""
    def value():
        return float(read(excerpts.excerpt(model_id)))
    check(claim_id, public=value, fact=True, basis=f"{model_id}'s config excerpt", cite=excerpts.source(model_id),
          **explained)(value)


MIXTRAL = "mixtral-8x7b"
external("mixtral-experts", MIXTRAL, lambda c: excerpts.moe_layout(c)["routed_experts"])
external("mixtral-experts-per-token", MIXTRAL, lambda c: excerpts.moe_layout(c)["experts_per_token"])
check("mixtral-expert-activation-rate", cite=excerpts.source(MIXTRAL),
      public=lambda: (lambda lay: lay["experts_per_token"] / lay["routed_experts"])(
          excerpts.moe_layout(excerpts.excerpt(MIXTRAL))))(
    lambda: stated("mixtral-experts-per-token") / stated("mixtral-experts"))


def latent_chain(model_id: str) -> int:
    """Matrix products a routed token passes through in sequence: the expert's up (its gate beside it)
    and down, and around them a down and an up projection where the experts work in a latent narrower
    than the hidden size (``routed_expert_hidden_size``)."""
    c = config(model_id)
    latent = c.get("routed_expert_hidden_size", c["hidden_size"]) < c["hidden_size"]
    return 2 + 2 * latent


fact("latent-moe-chain-matrices", K3, latent_chain)
fact("situ-gate-softcap", K3, key("activation_situ_beta"))
fact("situ-linear-softcap", K3, key("activation_situ_linear_beta"))
fact("k3-hidden-size", K3, key("hidden_size"))
fact("k3-moe-latent-size", K3, key("routed_expert_hidden_size"))

# ---- II. CSA + HCA ----

fact("csa-compression", PRO, lambda m: csa_hca_ratios(m)[0])


def entries_1m(claim_id: str, ratio_claim: str, which: int):
    """Compressed entries at 1M: the article's 1e6 over its ratio; the config's 2^20 over the config's,
    and each reading of "1M" (``million-tokens``) over the config's ratio."""
    check(claim_id, public=lambda: context(PRO) // csa_hca_ratios(PRO)[which],
          depends=("million-tokens", lambda o: million(o) // csa_hca_ratios(PRO)[which]))(
        lambda: stated("v4-context") / stated(ratio_claim))


entries_1m("csa-entries-1m", "csa-compression", 0)
fact("v4-pro-index-topk", PRO, key("index_topk"))
fact("flash-index-topk", FLASH, key("index_topk"))
fact("csa-sliding-window", PRO, key("sliding_window"))
fact("hca-compression", PRO, lambda m: csa_hca_ratios(m)[1])
entries_1m("hca-entries-1m", "hca-compression", 1)
fact("hca-sliding-window", PRO, key("sliding_window"))   # one window group spans every V4 layer, HCA ones too


def kv_share(tokens: int) -> float:
    """V4-Pro's cache over V3.2's for one request of ``tokens`` tokens, in BF16 as the article computes KV."""
    return kv.request_kv_bytes(model(PRO), tokens, "bf16") / kv.request_kv_bytes(model(V32), tokens, "bf16")


def flops_share(tokens: int) -> float:
    """V4-Pro's FLOPs per decoded token over V3.2's at context ``tokens`` (weights plus attention)."""
    return attention_flops.flops_per_token(PRO, tokens) / attention_flops.flops_per_token(V32, tokens)


def kv_share_with(indexer: str, kv_dtype: str = "fp8") -> float:
    """V4-Pro's cache over V3.2's at the config's context in the layouts each ships (FP8), with V4's
    indexer keys stored as option ``indexer`` of ``specs/alternatives.yaml`` (V3.2 keeps its
    published FP8 keys): DeepSeek's claim is about its serving layouts."""
    pro, v32, tokens = model(PRO), model(V32), context(PRO)
    entry = kv.formats_for(pro, kv_dtype)[0]
    return (kv.request_kv_bytes(pro, tokens, (entry, indexer_format(indexer)))
            / kv.request_kv_bytes(v32, tokens, kv_dtype))


def indexer_format(option: str) -> kv.KVFormat:
    """One option for V4's cached indexer key (``specs/alternatives.yaml``, ``v4-indexer-keys``)."""
    settings = alternative("v4-indexer-keys").option(option).settings
    if "indexer_format" in settings:
        return kv.FORMATS[settings["indexer_format"]]
    return kv.KVFormat(f"{option}-indexer", settings["value_bytes"], settings["rope_bytes"],
                       source=alternative("v4-indexer-keys").option(option).source)


def million(option: str) -> int:
    """What "1M tokens" counts under option ``option`` of ``million-tokens``."""
    return alternative("million-tokens").option(option).settings["tokens"]


check("v4-kv-share-of-v32", public=lambda: kv_share_with(alternative("v4-indexer-keys").used),
      depends=("v4-indexer-keys", kv_share_with),
      explain="the article adopts DeepSeek's 10% (and builds part III's V4 cache on it); in the layouts "
              "each ships, indexer keys included, the two configs' caches give 11.5% with FP8 indexer "
              "keys and 10.4% with FP4 ones")(
    lambda: kv_share(int(stated("v4-context"))))
check("v4-flops-share-of-v32", public=lambda: flops_share(context(PRO)),
      depends=("million-tokens", lambda o: flops_share(million(o))),
      explain="2 FLOPs per activated parameter plus attention over 1M tokens, from the two configs")(
    lambda: flops_share(int(stated("v4-context"))))

# ---- II. mHC and engineering details ----

fact("mhc-streams", PRO, key("hc_mult"))
check("mhc-singular-values", public=lambda: largest_singular_value(config(PRO)["hc_mult"]),
      explain="exactly 1 on the constraint set: a doubly stochastic matrix keeps the all-ones vector and has norm 1")(
    lambda: largest_singular_value(int(stated("mhc-streams"))))

# ---- II. Post-training headroom ----

fact("flash-total-params", FLASH, total)
fact("flash-active-params", FLASH, activated)
check("pro-over-flash-size", public=lambda: total(PRO) / total(FLASH), reason="wrong term",
      explain="4x is the ratio of activated parameters (49B/13B = 3.8); by total size, which the article names, "
              "Pro is 1.6T/284B = 5.6 times Flash")(
    lambda: stated("v4-total-params") / stated("flash-total-params"))

# ---- II. DSV4 never abandoned MLA ----

fact("v4-head-dim", PRO, key("head_dim"))

# ---- III. KV Cache: the dimensions ----

check("k3-mla-latent-dim", public=lambda: config(K3)["kv_lora_rank"],
      explain="the article's own latent; K3's config caches kv_lora_rank 512 plus a 64-dim rope key")(
    lambda: group(K3, "mla")["kv_lora_rank"])
check("k3-mla-latents", public=lambda: group(K3, "mla", "public").dims.get("latents", 1),
      explain="the article's K/V dual latent; K3's config has one kv_lora_rank latent serving K and V, as standard MLA")(
    lambda: group(K3, "mla")["latents"])
check("v32-layers", public=lambda: config(V32)["num_hidden_layers"])(lambda: group(V32, "stated").layers)
check("v32-per-token-layer", public=lambda: kv.layer_bytes(model(V32), "mla", 1, "bf16"),
      explain="the article's own figure; V3.2's 512 + 64 latent is 1,152 bytes in BF16, 656 in its FP8 layout")(
    lambda: kv.layer_bytes(model(V32, "article"), "stated", 1))
fact("v32-latent-dim", V32, key("kv_lora_rank"))


# ---- III. KV Cache: the layers that are "free" and the quarter that is the bottleneck ----

def kda_layer_share(spec) -> float:
    """KDA layers over all of K3's layers, from its cache groups."""
    layers = {g.kind: g.layers for g in spec.attention}
    return layers["kda"] / sum(layers.values())


def nominal_share() -> float:
    """KDA's share of layers from the printed "3:1"."""
    r = stated("k3-kda-mla-ratio")
    return r / (r + 1)


check("k3-free-layer-share", public=lambda: kda_layer_share(model(K3)))(nominal_share)
check("k3-bottleneck-layer-share", public=lambda: 1 - kda_layer_share(model(K3)))(lambda: 1 - nominal_share())
check("kda-state-context-free", public=lambda: part(model(K3), "KDA state") / part(model(K3), "KDA state", 1000))(
    lambda: part(model(K3, "article"), "KDA state") / part(model(K3, "article"), "KDA state", 1000))

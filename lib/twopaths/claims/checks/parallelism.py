"""Checks for part III's bare GPU counts, parallel layout and expert-parallel sizing (``parallelism.yaml``).

Each check redoes one step of the article's derivation from the figures the article carries into
that step (``specs/deployment.yaml`` and ``calc.request``'s "stated" basis: 2.8T at one byte a
parameter, 61.6 GB and 12.2 GB a 1M-token request, 2.78T - 0.5T - 0.1T over 898 experts, a 5 GB and
3 GB overhead), rounding as the article prints (``rounding="article"``), so an error is reported at
the step that makes it and not again downstream. Figures the article takes from a model's release are
recounted from its config (``fact``). Public: the same step from the public configs (parameter counts,
shipped formats, 384 routed experts for V4-Pro) under the book's serving assumptions
(``specs.serving``; ``calc.placement`` for one GPU of an EP group).
"""

from __future__ import annotations

from functools import cache

from ...calc import bare, ep, fleet, moe, placement
from ...calc.request import model_weight_bytes
from ...calc.rounding import to_step
from ...calc.weights import weight_bytes
from ...specs import gpu as hardware_gpu
from ...specs.deployment import anchors, deployment, hardware, workload
from ...specs.params import param_counts
from ...specs.serving import assumptions
from .. import claims
from ..audit import check
from .architecture import config, fact, stated, total

K3, PRO = "kimi-k3", "deepseek-v4-pro"
TAG = {K3: "k3", PRO: "v4"}


@cache
def bare_count(model: str, basis: str = "stated") -> bare.BareCount:
    """The bare count as the article computes it, or under the book's serving assumptions (public
    configs, shipped formats, BF16 cache, the H200 the driver exposes less its runtime reserve)."""
    if basis == "stated":
        return bare.bare(model, basis=basis, rounding="article")
    a = assumptions("book")
    return bare.bare(model, basis="public", kv_dtype=a.kv_dtype, state_dtype=a.state_dtype,
                     formats=a.formats(), capacity_bytes=placement.cache_capacity("h200", a))


@cache
def row(model: str, ep_size: int) -> ep.EPRow:
    """One row of the article's EP table on H200, as the article computes it."""
    return ep.ep_row(model, "h200", ep_size, "article")


@cache
def public_row(model: str, ep_size: int) -> dict:
    """The same row under the book's serving assumptions: one GPU of an attention-DP unit of
    ``ep_size`` GPUs (``calc.placement``), with the fields the article's table has."""
    m = placement.memory(model, "h200", placement.Placement(ep_size), workload().average_context, assumptions("book"))
    per_gpu = m.expert_bytes / (weight_bytes(model)["routed_experts"] / moe.routed_experts(model, "public"))
    return {"nodes": ep_size / hardware().gpus_per_node, "experts_per_gpu": round(per_gpu),
            "weights_per_gpu": m.expert_bytes, "kv_per_gpu": m.kv_room}


def smallest_valid_ep(model: str) -> int:
    """The EP size of the smallest valid placement for a 500K-token request on H200 (book assumptions)."""
    return fleet.prefill_unit(model, "h200", workload().average_context, assumptions("book")).placement.ep


def group_params(model: str, *groups: str) -> int:
    by_group = param_counts(model).by_group()
    return sum(by_group.get(g, 0) for g in groups)


def moe_params(model: str) -> float:
    """Step 2: the total less what the article takes off for attention and embedding."""
    d = deployment(model)
    return d.params_total - sum(d.excluded_params.values())


def expert_params(model: str, method: str = "article") -> float:
    """Parameters of one routed expert (all its layers): the article's MoE share, carried as it prints it
    (to 0.1T), over its divisor; or the config's routed-expert parameters over its routed experts."""
    if method == "article":
        return to_step(moe_params(model), ep.PRINTED_MOE, "article") / deployment(model).experts_in_divisor
    return group_params(model, "routed_experts") / moe.routed_experts(model, "public")


def public_expert_bytes(model: str) -> float:
    """One routed expert (all its layers) in the shipped format, scales included."""
    return weight_bytes(model)["routed_experts"] / moe.routed_experts(model, "public")


def node_fanout(experts: int, top_k: int) -> float:
    """Expected share of K3's EP=32 unit's nodes one token's experts land on (no node-limited routing)."""
    per_node = experts * hardware().gpus_per_node // deployment(K3).ep
    return ep.dispatch_fanout(experts, top_k, per_node)


# ---- GPU requirements: the bare count ----

HBM = hardware_gpu("h200").hbm_bytes
# The sentence follows a line that gives both bytes and GPUs; its printed 1.3% is the bytes' share
# (12 of 877 GPUs is 1.37%, which would print 1.4%), so it is read as bytes, and says so.
BYTE_SHARE = ("the bytes, the reading its printed figure follows: weights over weights and caches (by GPUs "
              "the shares are 20/4,389 = 0.46% and 12/877 = 1.37%)")


for m in (K3, PRO):
    t = TAG[m]
    check(f"{t}-weights-bytes", public=lambda m=m: model_weight_bytes(m, "public"))(
        lambda m=m: model_weight_bytes(m, "stated"))
    check(f"{t}-weight-gpus", public=lambda m=m: bare_count(m, "public").weights_gpus,
          serving=True)(
        lambda m=m: bare_count(m).weight_bytes / HBM)
    check(f"{t}-kv-gpus", public=lambda m=m: bare_count(m, "public").kv_gpus, serving=True)(
        lambda m=m: bare_count(m).kv_bytes / HBM)
    check(f"{t}-weight-share-bare", public=lambda m=m: bare_count(m, "public").weights_share,
          serving=True, basis=BYTE_SHARE)(
        lambda m=m: bare_count(m).weights_share)
    check(f"{t}-gpus-bare", public=lambda m=m: bare_count(m, "public").total, serving=True,
          carried=lambda m=m: bare_count(m).total)(
        lambda m=m: (bare_count(m).weight_bytes + bare_count(m).kv_bytes) / HBM)
check("gpu-gap-bare", public=lambda: bare_count(K3, "public").total / bare_count(PRO, "public").total,
      serving=True)(
    lambda: bare_count(K3).total / bare_count(PRO).total)

# ---- Step 1: parallelism ----

fact("k3-dense-ffn-layers", K3, lambda m: config(m).get("first_k_dense_replace", 0))
fact("v4-dense-ffn-layers", PRO, lambda m: config(m).get("first_k_dense_replace", 0), reason="wrong term",
     explain="V4-Pro has no dense FFN layer; its first 3 layers are hash-routed MoE layers (num_hash_layers), "
             "which the same sentence says replaced them")

# ---- Step 2: expert sizes ----

fact("k3-total-params-precise", K3, total)
fact("k3-attention-params", K3, lambda m: group_params(m, "attention"), reason="inconsistent assumption",
     fails="inputs", explain="the config's 69 KDA and 24 Gated MLA layers hold 0.036T, a fourteenth of the 0.5T taken off")
fact("k3-embedding-params", K3, lambda m: group_params(m, "embedding", "head"), reason="inconsistent assumption",
     fails="inputs", explain="the config's embedding and untied output head hold 2.3B together, a fortieth of the 0.1T taken off")
fact("v4-non-expert-params", PRO, lambda m: total(m) - group_params(m, "routed_experts"), reason="inconsistent assumption",
     fails="inputs", explain="the config has 0.026T outside the routed experts (attention, shared experts, embeddings, mHC), "
             "not 0.3T")
check("k3-moe-params", public=lambda: group_params(K3, "routed_experts", "shared_experts"),
      explain="from 0.6T taken off for attention and embedding; the config's experts hold 2.73T")(lambda: moe_params(K3))
check("k3-experts-counted", public=lambda: config(K3)["num_experts"] + config(K3)["num_shared_experts"])(
    lambda: deployment(K3).routed_experts + deployment(K3).shared_experts)
SHARED_IN_DIVISOR = ("the 2 full-width shared experts counted as routed ones in the divisor; DSV4's size "
                     "leaves its shared expert out")
check("k3-expert-params", public=lambda: expert_params(K3, "public"),
      explain=SHARED_IN_DIVISOR, reasoning=SHARED_IN_DIVISOR)(lambda: expert_params(K3))
check("k3-expert-params-zh", public=lambda: expert_params(K3, "public"), reason="wrong term",
      explain="2.2T / 898 is 2.45 billion parameters, not trillion; the 2.45 GB it goes on to is right for billions")(
    lambda: expert_params(K3))
check("k3-expert-bytes", public=lambda: public_expert_bytes(K3))(lambda: ep.article_expert_bytes(K3, "article"))
check("v4-expert-bytes", public=lambda: public_expert_bytes(PRO),
      explain="over 256 routed experts (V3's count); V4-Pro's config has 384, shipped in FP4")(
    lambda: ep.article_expert_bytes(PRO, "article"))
def non_routed_bytes(model: str) -> float:
    """Every weight outside the routed experts, in the shipped formats: what each GPU of an
    attention-DP unit holds whole beside its experts."""
    return sum(b for group, b in weight_bytes(model).items() if group != "routed_experts")


for m in (K3, PRO):
    d = deployment(m)
    check(f"{TAG[m]}-per-gpu-overhead", public=lambda m=m: non_routed_bytes(m), fact=True,
          reason="inconsistent assumption", fails="inputs",
          basis=f"{m}'s config: every weight outside the routed experts, as shipped",
          explain=f"the weights outside the routed experts (attention, embeddings, shared experts, router "
                  f"and the rest) hold {(total(m) - group_params(m, 'routed_experts')) / 1e9:.1f}B parameters, "
                  f"{non_routed_bytes(m) / 1e9:.1f} GB as shipped, all of it on each GPU under attention DP; "
                  f"the article's own step 2 takes {sum(d.excluded_params.values()) / 1e12:g}T off for them")(
        lambda m=m: non_routed_bytes(m))
DEEPSEEK_EPLB = anchors("decode_throughput")["deepseek-production"]
check("eplb-redundant-experts", public=lambda: DEEPSEEK_EPLB["redundant_experts"], fact=True,
      basis=f"DeepSeek's production decode layout ({DEEPSEEK_EPLB['source']})",
      cite=f"specs/anchors.yaml deepseek-production: {DEEPSEEK_EPLB['source']}")(
    lambda: DEEPSEEK_EPLB["redundant_experts"])
check("eplb-experts", public=lambda: moe.routed_experts(PRO, "public") + deployment(PRO).redundant_experts)(
    lambda: moe.routed_experts(PRO) + deployment(PRO).redundant_experts)

# ---- Step 2: the EP tables (H200; the article's weights per GPU are its routed experts only) ----

FIELDS = {"nodes": "nodes", "experts-per-gpu": "experts_per_gpu", "weights-per-gpu": "weights_per_gpu",
          "free-per-gpu": "kv_per_gpu"}
def overhead_fault(model: str) -> str:
    """Why the article's per-GPU overhead for attention and embedding contradicts its own step 2."""
    d = deployment(model)
    held = sum(d.excluded_params.values())      # one byte a parameter, as the article prices them
    return (f"inconsistent assumption: {d.overhead_bytes / 1e9:g} GB a GPU for attention and embedding, while "
            f"step 2 takes {held / 1e12:g}T parameters off the experts for them: {held / 1e9:,.0f} GB at one "
            f"byte a parameter, every GB of it on each GPU under the attention DP its unit runs, and still "
            f"{held / d.ep / 1e9:.1f} GB a GPU were they split over the {d.ep} GPUs")


EXPLAINED = {"k3-ep32-free-per-gpu": dict(reasoning=overhead_fault(K3)),
             "v4-ep16-free-per-gpu": dict(reasoning=overhead_fault(PRO)),
             "k3-ep16-free-per-gpu": dict(
    reason="inconsistent assumption", fails="reasoning",
    explain="141 - 137 leaves out the 5 GB of attention and embedding that the EP=32 row and step 4 take off; "
            "with it EP=16 has no room at all")}
EXPERTS_ONLY = ("routed experts only, in both columns; under attention DP a GPU also keeps every non-expert "
                "weight (the parallelism chapter)")
TOPIC = claims("parallelism")
for m in (K3, PRO):
    for size in deployment(m).ep_tried:
        for suffix, field in FIELDS.items():
            cid = f"{TAG[m]}-ep{size}-{suffix}"
            if cid in TOPIC:
                only = dict(explain=EXPERTS_ONLY, reasoning=EXPERTS_ONLY)
                explained = EXPLAINED.get(cid, only if suffix == "weights-per-gpu" else {})
                check(cid, public=lambda m=m, s=size, f=field: public_row(m, s)[f], **explained)(
                    lambda m=m, s=size, f=field: getattr(row(m, s), f))
    check(f"{TAG[m]}-ep-size", public=lambda m=m: smallest_valid_ep(m),
          explain="the article's column: the smallest whole-node EP size that leaves any HBM for KV; the "
                  "public column: the smallest EP size of a valid placement under the book's serving "
                  "assumptions, where every GPU holds its weights and a whole 500K-token request")(
        lambda m=m: ep.min_viable_ep(m, "h200", "article"))

check("k3-routing-fanout", public=lambda: node_fanout(config(K3)["num_experts"], config(K3)["num_experts_per_token"]),
      reason="wrong term",
      explain="16/32 is the share of the unit's GPUs a token can reach at most; 16 random experts of 896 "
              "over 4 nodes miss a node only 1% of the time")(
    lambda: node_fanout(deployment(K3).routed_experts, int(stated("k3-experts-per-token"))))
fact("k3-latent-comm-reduction", K3, lambda m: config(m)["hidden_size"] / config(m)["routed_expert_hidden_size"])

"""Checks for part I's KDA state and part III's KV-cache figures (``kv_cache.yaml``).

Article assumptions: ``specs.model(id, "article")`` (K3's MLA latent of 640 counted for K and V,
BF16, V4-Pro at 10% of V3.2's stated 2,048 B per layer). Public: the configs, BF16 KV, KDA state in
BF16 (one layer's recurrent state alone; the total with each layer's short-conv tail).
"""

from ...calc import kv
from ...specs import model
from ...specs.alternatives import alternative
from ..audit import check

M = 1_000_000          # the article's "1M" tokens
CONCURRENCY = 10_000


def art(m):
    return model(m, "article")


def pub(m):
    return model(m, "public")


def request(spec, tokens=M):
    return kv.request_kv_bytes(spec, tokens, "bf16" if spec.assumptions == "public" else None)


def part(spec, label, tokens=M):
    return kv.kv_breakdown(spec, tokens, "bf16" if spec.assumptions == "public" else None)[label]


def state_dtype(option: str) -> str:
    """The KDA state dtype under option ``option`` of ``k3-kda-state-dtype`` (specs/alternatives.yaml)."""
    return alternative("k3-kda-state-dtype").option(option).settings["state_dtype"]


def kda_recurrent_state(dtype: str = "bf16") -> int:
    """One K3 KDA layer's recurrent state alone, from the config: heads x K x V values (no conv tail)."""
    g = next(g for g in pub("kimi-k3").attention if g.kind == "kda")
    return kv.kda_state_bytes(g["heads"], g["head_dim_k"], g["head_dim_v"], dtype)


def kda_state(option: str, total: bool = False) -> float:
    """K3's KDA state with the state in that dtype: one layer's recurrent state, or every layer's
    fixed memory (states and their short-convolution tails)."""
    if total:
        return kv.kv_breakdown(pub("kimi-k3"), M, "bf16", state_dtype(option))["KDA state"]
    return kda_recurrent_state(state_dtype(option))


# The per-layer claim names its quantity, 96 heads of 128 x 128: the recurrent state. The total is the
# fixed memory the article sets against a growing cache, so the convolution tails that every layer
# keeps beside its state (3 inputs of q, k and v, 221,184 B in BF16) count there.
check("kda-state-per-layer", public=kda_recurrent_state,
      depends=("k3-kda-state-dtype", kda_state))(lambda: kv.layer_bytes(art("kimi-k3"), "kda", 0))
check("kda-state-total", public=lambda: part(pub("kimi-k3"), "KDA state"),
      explain="the 69 layers' states with their short-convolution tails, the fixed memory a request holds",
      depends=("k3-kda-state-dtype", lambda o: kda_state(o, total=True)))(
    lambda: part(art("kimi-k3"), "KDA state"))
check("k3-mla-per-token-layer", public=lambda: kv.layer_bytes(pub("kimi-k3"), "mla", 1, "bf16"))(
    lambda: kv.layer_bytes(art("kimi-k3"), "mla", 1))
check("k3-mla-per-token", public=lambda: part(pub("kimi-k3"), "MLA latent", 1))(
    lambda: part(art("kimi-k3"), "MLA latent", 1))
check("k3-mla-request-1m", public=lambda: part(pub("kimi-k3"), "MLA latent"))(
    lambda: part(art("kimi-k3"), "MLA latent"))
check("k3-request-1m", public=lambda: request(pub("kimi-k3")))(lambda: request(art("kimi-k3")))
check("k3-kda-share-1m", public=lambda: part(pub("kimi-k3"), "KDA state") / request(pub("kimi-k3")),
      reason="unit slip",
      explain="207 is the KDA state in MiB, divided here by a request in GB; in one unit the share is higher")(
    lambda: part(art("kimi-k3"), "KDA state") / request(art("kimi-k3")))
check("v32-per-token", public=lambda: kv.kv_bytes_per_token(pub("deepseek-v3.2"), "bf16"))(
    lambda: kv.kv_bytes_per_token(art("deepseek-v3.2")))
check("v4-per-token", public=lambda: kv.kv_bytes_per_token(pub("deepseek-v4-pro"), "bf16"))(
    lambda: kv.kv_bytes_per_token(art("deepseek-v4-pro")))
check("v4-request-1m", public=lambda: request(pub("deepseek-v4-pro")), reason="unit slip",
      explain="the 12.2 KiB per token (printed as KB) is multiplied by a million as if it were 12.2 kB")(
    lambda: request(art("deepseek-v4-pro")))
check("k3-over-v4-request", public=lambda: request(pub("kimi-k3")) / request(pub("deepseek-v4-pro")))(
    lambda: request(art("kimi-k3")) / request(art("deepseek-v4-pro")))
check("k3-10k-requests", public=lambda: CONCURRENCY * request(pub("kimi-k3")))(
    lambda: CONCURRENCY * request(art("kimi-k3")))
check("v4-10k-requests", public=lambda: CONCURRENCY * request(pub("deepseek-v4-pro")), reason="unit slip",
      explain="carries the 12.2 GB per request, itself a KiB figure read as kB")(
    lambda: CONCURRENCY * request(art("deepseek-v4-pro")))

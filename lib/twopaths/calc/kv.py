"""KV-cache bytes: per token, per request and where a request stops fitting on a GPU.

A model's cache is a list of groups (see ``twopaths.specs``), each a set of layers sharing a
layout. Per layer and per request of ``T`` tokens a group holds:

=============  ==========================================================  ===================
kind           what is cached                                              grows with T as
=============  ==========================================================  ===================
``mha``        K and V for ``kv_heads`` heads (MHA, GQA, MQA)              T
``mla``        the normalised latent (``kv_lora_rank``) plus the rope key   T
``kda``        a fixed K x V state per (value) head, plus the conv tail   constant
``window``     the last ``window`` raw entries                             min(T, window)
``compressed`` one entry per ``ratio`` tokens (V4's CSA and HCA)           floor(T / ratio)
``indexer``    one Lightning Indexer key per ``ratio`` tokens              floor(T / ratio)
``scaled``     a stated fraction of another model's cache (article only)   as that model
``stated``     a stated byte count per token per layer (article only)       T
=============  ==========================================================  ===================

Entry sizes depend on the storage format (``KVFormat``, in ``specs.cache_formats``): plain
BF16/FP32, or the FP8 layouts that FlashMLA ships, where the rope part stays BF16 and the rest
carries block scales.
"""

from __future__ import annotations

import math

from ..errors import ParameterError, check_choice, check_int, check_real
from ..specs import ModelSpec, model as _model
from ..specs.cache_formats import (FORMATS, KV_DTYPES, LABELS, STATE_BYTES, STATE_DTYPES,  # noqa: F401
                                   KVFormat, entry_bytes, formats_for, group_label)


MAX_TOKENS = 10**12   # far beyond any context in the book; guards the searches below


def mha_bytes_per_token(kv_heads: int, head_dim_k: int, head_dim_v: int, fmt: KVFormat) -> int:
    """One layer's K and V for one token: MHA (kv_heads = heads), GQA or MQA (kv_heads = 1)."""
    check_int("kv_heads", kv_heads, minimum=1)
    check_int("head_dim_k", head_dim_k, minimum=1)
    check_int("head_dim_v", head_dim_v, minimum=1)
    return entry_bytes(kv_heads * (head_dim_k + head_dim_v), 0, fmt)


def mla_bytes_per_token(kv_lora_rank: int, rope_dim: int, fmt: KVFormat, latents: int = 1) -> int:
    """One MLA layer's cache for one token: ``latents`` x kv_lora_rank latent plus the shared rope key.

    ``latents=1`` is MLA as DeepSeek and Kimi ship it (one latent serves as key and value);
    ``latents=2`` reproduces the article's "K/V dual latent" reading.
    """
    check_int("kv_lora_rank", kv_lora_rank, minimum=1)
    check_int("latents", latents, minimum=1, maximum=2)
    return entry_bytes(latents * kv_lora_rank + rope_dim, rope_dim, fmt)


def kda_state_bytes(heads: int, head_dim_k: int, head_dim_v: int, state_dtype: str = "bf16",
                    conv_kernel: int = 0, conv_dtype: str = "bf16", value_heads: int | None = None) -> int:
    """One KDA layer's fixed state: value_heads x K x V, plus the short convolution's last kernel-1
    inputs of q, k (``heads`` each) and v (``value_heads``; zero when ``conv_kernel`` is 0, as the
    article counts it). ``value_heads`` defaults to ``heads``; more is grouped value attention."""
    check_int("heads", heads, minimum=1)
    value_heads = check_int("value_heads", heads if value_heads is None else value_heads, minimum=heads)
    check_int("head_dim_k", head_dim_k, minimum=1)
    check_int("head_dim_v", head_dim_v, minimum=1)
    check_choice("state_dtype", state_dtype, STATE_DTYPES)
    check_choice("conv_dtype", conv_dtype, STATE_DTYPES)
    check_int("conv_kernel", conv_kernel, minimum=0)
    state = value_heads * head_dim_k * head_dim_v * STATE_BYTES[state_dtype]
    width = 2 * heads * head_dim_k + value_heads * head_dim_v
    return state + max(conv_kernel - 1, 0) * width * STATE_BYTES[conv_dtype]


def _check_tokens(tokens) -> int:
    return check_int("tokens", tokens, minimum=0, maximum=MAX_TOKENS)


def _group_bytes(spec: ModelSpec, g, tokens: int, kv_dtype, state_dtype: str) -> int:
    fmt, index_fmt = formats_for(spec, kv_dtype)
    if g.kind == "mha":
        per_layer = tokens * mha_bytes_per_token(g["kv_heads"], g["head_dim_k"], g["head_dim_v"], fmt)
    elif g.kind == "mla":
        per_layer = tokens * mla_bytes_per_token(g["kv_lora_rank"], g["rope_dim"], fmt, g.dims.get("latents", 1))
    elif g.kind == "kda":
        per_layer = kda_state_bytes(g["heads"], g["head_dim_k"], g["head_dim_v"], state_dtype,
                                    g.dims.get("conv_kernel", 0), value_heads=g.dims.get("value_heads"))
    elif g.kind == "window":
        per_layer = min(tokens, g["window"]) * entry_bytes(g["entry_dim"], g["rope_dim"], fmt)
    elif g.kind == "compressed":
        per_layer = (tokens // g["ratio"]) * entry_bytes(g["entry_dim"], g["rope_dim"], fmt)
    elif g.kind == "indexer":
        per_layer = (tokens // g["ratio"]) * entry_bytes(g["index_dim"], 0, index_fmt)
    elif g.kind == "stated":
        per_layer = tokens * g["bytes_per_token_layer"]
    elif g.kind == "scaled":   # a fraction of bytes need not be whole: keep it exact
        other = _model(g["of"], spec.assumptions)
        return g["factor"] * request_kv_bytes(other, tokens, kv_dtype, state_dtype)
    else:  # the registry's loader refuses unknown kinds; this guards a hand-made spec
        raise ParameterError("kind", g.kind, "mha, mla, kda, window, compressed, indexer, scaled or stated")
    return g.layers * per_layer


def _spec(spec) -> ModelSpec:
    return _model(spec) if isinstance(spec, str) else spec


def layer_bytes(spec, kind: str, tokens: int = 1, kv_dtype=None, state_dtype: str | None = None) -> float:
    """Bytes one layer of ``spec``'s first ``kind`` group holds for ``tokens`` tokens
    (per token for the growing kinds at ``tokens=1``; the fixed state for ``kda``)."""
    spec, tokens = _spec(spec), _check_tokens(tokens)
    groups = [g for g in spec.attention if g.kind == kind]
    if not groups:
        raise ParameterError("kind", kind, "a kind of cache " + spec.id + " has: "
                             + ", ".join(sorted({g.kind for g in spec.attention})))
    g = groups[0]
    return _group_bytes(spec, g, tokens, kv_dtype, state_dtype or spec.state_dtype or "bf16") / g.layers


def kv_breakdown(spec, tokens: int, kv_dtype=None, state_dtype: str | None = None) -> dict[str, float]:
    """Bytes one request of ``tokens`` tokens holds, by component (labels from ``LABELS``)."""
    spec, tokens = _spec(spec), _check_tokens(tokens)
    state_dtype = state_dtype or spec.state_dtype or "bf16"
    out: dict[str, float] = {}
    for g in spec.attention:
        label = group_label(g)
        out[label] = out.get(label, 0) + _group_bytes(spec, g, tokens, kv_dtype, state_dtype)
    return out


def group_bytes(spec, tokens: int, kv_dtype=None, state_dtype: str | None = None) -> list[tuple]:
    """(group, bytes) for each cache group of ``spec``: what one request of ``tokens`` tokens holds."""
    spec, tokens = _spec(spec), _check_tokens(tokens)
    state_dtype = state_dtype or spec.state_dtype or "bf16"
    return [(g, _group_bytes(spec, g, tokens, kv_dtype, state_dtype)) for g in spec.attention]


def request_kv_bytes(spec, tokens: int, kv_dtype=None, state_dtype: str | None = None) -> float:
    """Total cache bytes of one request of ``tokens`` tokens (KV, compressed entries, fixed state)."""
    return sum(kv_breakdown(spec, tokens, kv_dtype, state_dtype).values())


def fixed_bytes(spec, tokens: int, kv_dtype=None, state_dtype: str | None = None) -> float:
    """Bytes of one request's cache that no longer grow past ``tokens`` tokens: recurrent state and
    full sliding windows. A group counts when it stops growing at all (the same at half of
    ``MAX_TOKENS`` as at ``MAX_TOKENS``, so a growing cache never counts, even at ``MAX_TOKENS``)
    and has reached its size at ``tokens``."""
    now, half, last = (group_bytes(spec, t, kv_dtype, state_dtype) for t in (tokens, MAX_TOKENS // 2, MAX_TOKENS))
    return float(sum(b for (_, b), (_, b_half), (_, b_last) in zip(now, half, last) if b == b_half == b_last))


def kv_bytes_per_token(spec, kv_dtype=None, state_dtype: str | None = None) -> float:
    """Bytes each further token adds, averaged over a long context (the slope of ``request_kv_bytes``).

    Measured over one whole period of every compression ratio, so floor() steps average out.
    """
    spec = _spec(spec)
    period = math.lcm(1, *[g["ratio"] for g in spec.attention if g.kind in ("compressed", "indexer")])
    windows = [g["window"] for g in spec.attention if g.kind == "window"]
    base = max(windows, default=0) + 1_000 * period  # past every window, on a whole period
    grown = request_kv_bytes(spec, base + period, kv_dtype, state_dtype) - request_kv_bytes(spec, base, kv_dtype, state_dtype)
    return grown / period


def max_context(spec, capacity_bytes: float, kv_dtype=None, state_dtype: str | None = None) -> int | None:
    """The longest context whose cache fits in ``capacity_bytes``; None if even 0 tokens do not fit
    and ``MAX_TOKENS`` if the cache never outgrows it (a cache that does not grow)."""
    spec = _spec(spec)
    check_real("capacity_bytes", capacity_bytes, minimum=0)
    fits = lambda t: request_kv_bytes(spec, t, kv_dtype, state_dtype) <= capacity_bytes  # noqa: E731
    if not fits(0):
        return None
    if fits(MAX_TOKENS):
        return MAX_TOKENS
    lo, hi = 0, MAX_TOKENS  # fits(lo), not fits(hi); the cache never shrinks as tokens grow
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if fits(mid) else (lo, mid)
    return lo

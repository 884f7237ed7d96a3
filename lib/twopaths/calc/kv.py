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

Entry sizes depend on the storage format (``KVFormat``): plain BF16/FP32, or the FP8 layouts that
FlashMLA ships, where the rope part stays BF16 and the rest carries block scales.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..errors import ParameterError, check_choice, check_int, check_real
from ..specs import ModelSpec, model as _model


@dataclass(frozen=True)
class KVFormat:
    """How one cached vector of ``dim`` elements (``rope_dim`` of them rope) is stored."""

    name: str
    value_bytes: float        # bytes per non-rope element
    rope_bytes: float         # bytes per rope element
    scale_group: int = 0      # non-rope elements per scale; 0 means no scales
    scale_bytes: int = 0
    pad_bytes: int = 0
    source: str = ""


FORMATS = {
    "bf16": KVFormat("bf16", 2, 2, source="2-byte floats"),
    "fp16": KVFormat("fp16", 2, 2, source="2-byte floats"),
    "fp32": KVFormat("fp32", 4, 4, source="4-byte floats"),
    "fp8-flashmla-v32": KVFormat(
        "fp8-flashmla-v32", 1, 2, scale_group=128, scale_bytes=4,
        source="FlashMLA README: V3.2 FP8 sparse layout, 512 FP8 + 4 fp32 scales + 64 BF16 rope = 656 B"),
    "fp8-flashmla-v4": KVFormat(
        "fp8-flashmla-v4", 1, 2, scale_group=64, scale_bytes=1, pad_bytes=1,
        source="FlashMLA tests/quant.py MODEL1_FP8Sparse: 448 FP8 + 64 BF16 rope + 7 scale bytes + 1 pad = 584 B"),
    "fp8-per-tensor": KVFormat(
        "fp8-per-tensor", 1, 1,
        source="vLLM docs, Quantized KV Cache: FP8 E4M3 K and V, one scale per tensor (not per vector)"),
    "fp8-indexer": KVFormat(
        "fp8-indexer", 1, 1, scale_group=128, scale_bytes=4,
        source="DeepSeek-V3.2-Exp inference code: indexer key FP8[128] + one fp32 scale = 132 B"),
}

# The three choices a chapter offers for the KV dtype, and what each means for each kind of vector.
KV_DTYPES = ("bf16", "fp8", "fp32")
STATE_DTYPES = ("bf16", "fp16", "fp32")
STATE_BYTES = {"bf16": 2, "fp16": 2, "fp32": 4}
MAX_TOKENS = 10**12   # far beyond any context in the book; guards the searches below


def entry_bytes(dim: int, rope_dim: int, fmt: KVFormat) -> int:
    """Bytes of one cached vector of ``dim`` elements of which ``rope_dim`` are rope."""
    check_int("dim", dim, minimum=1)
    check_int("rope_dim", rope_dim, minimum=0, maximum=dim)
    nope = dim - rope_dim
    scales = math.ceil(nope / fmt.scale_group) * fmt.scale_bytes if fmt.scale_group else 0
    total = nope * fmt.value_bytes + rope_dim * fmt.rope_bytes + scales + fmt.pad_bytes
    return int(total)


def formats_for(spec: ModelSpec, kv_dtype) -> tuple[KVFormat, KVFormat]:
    """The (entry, indexer-key) formats for ``kv_dtype``.

    FP8 means the layout the model ships with (``fp8_layout`` in its spec). Indexer keys keep the
    format the model's spec names (``indexer_format``) whatever ``kv_dtype`` says, as DeepSeek's
    inference code stores them; a ``KVFormat`` passed directly is used for everything, and a pair
    ``(entry, indexer)`` of them sets both (to reproduce another tool's assumptions).
    """
    if isinstance(kv_dtype, KVFormat):
        return kv_dtype, kv_dtype
    if isinstance(kv_dtype, tuple) and all(isinstance(f, KVFormat) for f in kv_dtype) and len(kv_dtype) == 2:
        return kv_dtype
    kv_dtype = kv_dtype or spec.kv_format or "bf16"
    check_choice("kv_dtype", kv_dtype, KV_DTYPES)
    entry = FORMATS[spec.raw.get("fp8_layout", "fp8-flashmla-v32")] if kv_dtype == "fp8" else FORMATS[kv_dtype]
    index = FORMATS[spec.raw["indexer_format"]] if "indexer_format" in spec.raw else entry
    return entry, index


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


LABELS = {"mha": "K/V heads", "mla": "MLA latent", "kda": "KDA state", "window": "sliding window",
          "compressed": "compressed entries", "indexer": "indexer keys", "scaled": "stated fraction",
          "stated": "stated bytes"}


def group_label(g) -> str:
    """The label a group's bytes go under in ``kv_breakdown``: the group's own ``label`` where its
    family names the mechanism (a Gated DeltaNet state, sized as a KDA state is; Llama 4's attention
    chunk, sized as a window), else its kind's (CSA and HCA entries kept apart by ratio)."""
    if "label" in g.dims:
        return g["label"]
    return f"compressed entries {g['ratio']}:1" if g.kind == "compressed" else LABELS[g.kind]


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
    full sliding windows (each group compared at ``tokens`` and at ``MAX_TOKENS``)."""
    now = group_bytes(spec, tokens, kv_dtype, state_dtype)
    last = group_bytes(spec, MAX_TOKENS, kv_dtype, state_dtype)
    return float(sum(b for (_, b), (_, b_last) in zip(now, last) if b == b_last))


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

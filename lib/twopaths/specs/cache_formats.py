"""How cache entries are stored: the formats a cached vector can take, which of them a model's
cache uses for a KV dtype, and the names its cache groups go under.

A ``KVFormat`` is plain BF16/FP16/FP32 or one of the FP8 layouts that FlashMLA ships (the rope
part stays BF16 and the rest carries block scales), each with its source. These are facts about
the checkpoints and kernels, so the calculators (``calc.kv``) and the toy caches (``layers``)
both read them from here.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..errors import check_choice, check_int
from . import ModelSpec


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

"""Structural figures of models the project keeps no spec for, computed from verbatim excerpts of
their public config.json (``excerpts.yaml``), so the article's claims about them can be checked.

The excerpts are data with their source, not a dependency: library code never imports
aiconfigurator, whose bundled corpus the excerpts were copied from (tests/test_excerpts.py checks
every key against it). The functions are pure and take an excerpt (or any config dict with the
same keys), so they also run on a full config.json.
"""

from __future__ import annotations

from collections import Counter
from fractions import Fraction
from functools import cache

import yaml

from ..errors import ParameterError
from . import HERE


@cache
def _records() -> dict[str, dict]:
    data = yaml.safe_load((HERE / "excerpts.yaml").read_text())
    return {m["id"]: m for m in data["models"]}


def ids() -> list[str]:
    return list(_records())


def _record(model_id: str) -> dict:
    if model_id not in _records():
        raise ParameterError("model_id", model_id, "one of " + ", ".join(map(repr, ids())))
    return _records()[model_id]


def excerpt(model_id: str) -> dict:
    """The verbatim config excerpt of ``model_id`` (a fresh copy: callers may not alter the data)."""
    return yaml.safe_load(yaml.safe_dump(_record(model_id)["config"]))


def source(model_id: str) -> str:
    """Where the excerpt comes from, as one citation."""
    s = _record(model_id)["source"]
    text = f"{s['file']} of {s['repo']}, {s['as_read']}"
    return f"{text}. {s['note']}" if s.get("note") else text


def repo(model_id: str) -> str:
    """The Hugging Face repo id (AIConfigurator names its copy ``<owner>--<name>_config.json``)."""
    return _record(model_id)["source"]["repo"]


def text_part(c: dict) -> dict:
    """The language model's keys: a multimodal config (Qwen3.5) nests them under ``text_config``."""
    return c.get("text_config", c)


# ---- layer patterns ----

def type_counts(types: list[str]) -> dict[str, int]:
    """How many layers of each kind a per-layer list (``layer_types``, ``indexer_types``) names."""
    return dict(Counter(types))


def ratio(types: list[str], numerator: str, denominator: str) -> Fraction:
    """Layers of kind ``numerator`` per layer of kind ``denominator``, over the whole list: the
    article's "3:1" is this as a fraction (3), and a list whose period is cut short shows it."""
    counts = type_counts(types)
    for name, kind in (("numerator", numerator), ("denominator", denominator)):
        if kind not in counts:
            raise ParameterError(name, kind, "one of " + ", ".join(map(repr, counts)))
    return Fraction(counts[numerator], counts[denominator])


def repeating_unit(types: list[str]) -> list[str]:
    """The shortest block whose repetition gives ``types`` (the last repeat may be cut short): the
    pattern as designed, which a whole-list ratio misses when the layer count is not a multiple."""
    for p in range(1, len(types) + 1):
        if all(types[i] == types[i % p] for i in range(len(types))):
            return types[:p]
    return list(types)


# ---- GLM-5.2's IndexShare ----

def own_index_layers(c: dict) -> list[int]:
    """Layers (0-based) that run their own DSA indexer: ``"full"`` in ``indexer_types``; a
    ``"shared"`` layer reuses the last full layer's top-k and holds no indexer weights."""
    return [i for i, kind in enumerate(c["indexer_types"]) if kind == "full"]


def index_schedule(c: dict) -> list[str]:
    """``indexer_types`` as the serving engines derive it when a config omits it (vLLM, SGLang):
    layer i shares iff max(i - index_skip_topk_offset + 1, 0) % index_topk_freq != 0, so layers 0
    to offset - 2 each keep their own index and from layer offset - 1 on, groups of ``freq`` layers
    share one."""
    freq, offset = c["index_topk_freq"], c["index_skip_topk_offset"]
    return ["shared" if max(i - offset + 1, 0) % freq else "full" for i in range(c["num_hidden_layers"])]


def index_groups(c: dict) -> list[int]:
    """Sizes of the runs of layers that use one index (a full layer and the shared ones after it)."""
    starts = own_index_layers(c) + [len(c["indexer_types"])]
    return [b - a for a, b in zip(starts, starts[1:])]


# ---- MoE layout ----

def moe_layout(c: dict) -> dict[str, int]:
    """Layers, dense-FFN layers, MoE layers, routed experts, experts per token and shared experts.

    Dense layers are ``mlp_layer_types``' "dense" entries where the config lists them (GLM-5.2),
    else DeepSeek's ``first_k_dense_replace`` (with ``moe_layer_freq`` 1, every later layer is MoE);
    a config with neither (Mixtral) is MoE in every layer. Routed experts are ``n_routed_experts``,
    ``num_local_experts`` (Mixtral) or ``num_experts`` (Qwen, Step)."""
    c = text_part(c)
    layers = c["num_hidden_layers"]
    if "mlp_layer_types" in c:
        dense = c["mlp_layer_types"].count("dense")
    else:
        if c.get("moe_layer_freq", 1) != 1:
            raise ParameterError("moe_layer_freq", c["moe_layer_freq"],
                                 "1 (every layer after the dense ones is MoE)")
        dense = c.get("first_k_dense_replace", 0)
    routed = next(c[k] for k in ("n_routed_experts", "num_local_experts", "num_experts") if k in c)
    return {"layers": layers, "dense_layers": dense, "moe_layers": layers - dense, "routed_experts": routed,
            "experts_per_token": c["num_experts_per_tok"], "shared_experts": c.get("n_shared_experts", 0)}


# ---- parameter counts: MLA (+ DSA indexer) + MoE, DeepSeek-V3 / V3.2 / GLM-5.2 ----

def mla_moe_params(c: dict) -> dict[str, int]:
    """Parameters per component of a DeepSeek-V3-style model (MLA, optional DSA indexer, MoE, MTP).

    Every weight is a bias-free matrix or a norm's weight, as the configs say (``attention_bias``
    false). With d = hidden_size, H heads, q/kv latents ql/kvl, head dims nope, rope, v:
      embedding, head  V*d each (no tying: ``tie_word_embeddings`` false)
      attention        per layer q_a d*ql, q_b ql*H*(nope+rope), kv_a d*(kvl+rope),
                       kv_b kvl*H*(nope+v), o H*v*d
      indexer          per layer that runs one (V3.2: all; GLM-5.2: "full" in ``indexer_types``):
                       wq_b ql*Hi*Di, wk d*Di, weights_proj d*Hi, k_norm (LayerNorm) 2*Di
      dense_ffn        SwiGLU 3*d*intermediate_size per dense layer
      routed/shared    SwiGLU 3*d*moe_intermediate_size per expert per MoE layer
      router           E*d gate + E selection bias (noaux_tc) per MoE layer
      norms            per layer 2*d (input, post-attention) + ql + kvl (latent norms); final d
      mtp              per MTP layer one MoE decoder layer with a full indexer, plus enorm, hnorm,
                       the [emb; h] -> d projection 2*d*d and the shared head's norm d; it reuses
                       the main embedding and head, so neither is counted again
    """
    c = text_part(c)
    d, heads, layers = c["hidden_size"], c["num_attention_heads"], c["num_hidden_layers"]
    ql, kvl = c["q_lora_rank"], c["kv_lora_rank"]
    nope, rope, v = c["qk_nope_head_dim"], c["qk_rope_head_dim"], c["v_head_dim"]
    lay = moe_layout(c)
    experts, shared = lay["routed_experts"], lay["shared_experts"]
    attention = d * ql + ql * heads * (nope + rope) + d * (kvl + rope) + kvl * heads * (nope + v) + heads * v * d
    indexer = 0
    if "index_n_heads" in c:
        hi, di = c["index_n_heads"], c["index_head_dim"]
        indexer = ql * hi * di + d * di + d * hi + 2 * di
    index_layers = len(own_index_layers(c)) if "indexer_types" in c else (layers if indexer else 0)
    expert = 3 * d * c["moe_intermediate_size"]
    router = experts * d + experts
    layer_norms = 2 * d + ql + kvl
    mtp_layer = attention + indexer + router + (experts + shared) * expert + layer_norms + 2 * d + 2 * d * d + d
    emb = c["vocab_size"] * d
    return {
        "embedding": emb,
        "head": 0 if c["tie_word_embeddings"] else emb,
        "attention": layers * attention,
        "indexer": index_layers * indexer,
        "dense_ffn": lay["dense_layers"] * 3 * d * c["intermediate_size"],
        "routed_experts": lay["moe_layers"] * experts * expert,
        "shared_experts": lay["moe_layers"] * shared * expert,
        "router": lay["moe_layers"] * router,
        "norms": layers * layer_norms + d,
        "mtp": c.get("num_nextn_predict_layers", 0) * mtp_layer,
    }


def total_params(c: dict, *, mtp: bool = False) -> int:
    """All parameters; the model cards' totals (671B, 744B) leave the MTP layers out, a checkpoint's
    tensor count (Hugging Face's figure) keeps them: ``mtp=True``."""
    parts = mla_moe_params(c)
    return sum(n for k, n in parts.items() if k != "mtp" or mtp)


def active_params(c: dict, *, embedding: bool = True) -> int:
    """Parameters one token uses in the main model: every weight but the routed experts, plus
    ``experts_per_token`` routed experts in each MoE layer; MTP layers left out. The input
    embedding is a lookup, not a matmul; ``embedding=False`` leaves it out too."""
    parts = mla_moe_params(c)
    lay = moe_layout(c)
    routed = parts["routed_experts"] * lay["experts_per_token"] // lay["routed_experts"]
    return sum(n for k, n in parts.items() if k not in ("mtp", "routed_experts")) + routed \
        - (0 if embedding else parts["embedding"])


# ---- K3's vision tower ----

def vision_params(config: dict, *, projector: bool = False) -> int:
    """Parameters of Kimi K3's vision encoder (MoonViT-V2) from ``config["vision_config"]`` (the whole
    config.json, or the excerpt ``kimi-k3-vision``).

    The tower as the published modeling code builds it (bias-free everywhere: ``attn_bias``,
    ``linear_bias``, ``patch_embed_proj_bias`` false; ``norm_type`` rmsnorm; ``mlp_type`` mlp2):
      patch embedding  Conv2d(3 -> h, patch x patch): 3*p*p*h
      position         learned 2D table init_pos_emb_height*width*h (``divided_fixed``: the time
                       table is a fixed sin-cos buffer, not a parameter)
      per layer        wqkv h -> 3*qkv, wo qkv -> h (qkv = ``qkv_hidden_size``), MLP fc0 h -> i and
                       fc1 i -> h, two RMSNorm weights 2*h
      final norm       h
    The 401M the K3 report gives is this tower. ``projector=True`` adds the vision-to-text
    projector (``patchmergerv2``): the merged (kh*kw*mm_hidden) width to itself, then to the text
    width, then an RMSNorm over the text width."""
    vc = config["vision_config"]
    for key, want in (("attn_bias", False), ("linear_bias", False), ("patch_embed_proj_bias", False),
                      ("norm_type", "rmsnorm"), ("mlp_type", "mlp2"), ("pos_emb_type", "divided_fixed"),
                      ("mm_projector_type", "patchmergerv2")):
        if vc.get(key) != want:
            raise ParameterError(f"vision_config.{key}", vc.get(key),
                                 repr(want) + " (the MoonViT-V2 this formula counts)")
    h, qkv, inter, p = vc["vt_hidden_size"], vc["qkv_hidden_size"], vc["vt_intermediate_size"], vc["patch_size"]
    per_layer = h * 3 * qkv + qkv * h + 2 * h * inter + 2 * h
    tower = (3 * p * p * h + vc["init_pos_emb_height"] * vc["init_pos_emb_width"] * h
             + vc["vt_num_hidden_layers"] * per_layer + h)
    if not projector:
        return tower
    kh, kw = vc["merge_kernel_size"]
    merged, text = kh * kw * vc["mm_hidden_size"], vc["text_hidden_size"]
    return tower + merged * merged + merged * text + text

"""A Hugging Face ``config.json`` becomes a ``ModelSpec``: its cache groups, its checkpoint's weight
formats and (through ``specs.params``) its parameter counts, all read from the config's own keys.

The config is first flattened the way the registry's excerpts are written: a multimodal config's
``text_config`` is the model (its outer keys fill in what it lacks), and nested dicts become dotted
keys (``linear_attn_config.num_heads``). Each family names the keys it needs; a missing one, a zero
or negative dimension, or an unknown ``model_type`` is a ``ParameterError`` that names the key.
"""

from __future__ import annotations

import fnmatch
import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from functools import lru_cache
from numbers import Integral
from pathlib import Path

from ..errors import ParameterError
from . import CacheGroup, ModelSpec


def load(path_or_dict) -> dict:
    """The flat config (dotted keys) of a path to a config.json or an already-loaded dict."""
    if isinstance(path_or_dict, Mapping):
        raw = dict(path_or_dict)
    elif isinstance(path_or_dict, (str, Path)):
        path = Path(path_or_dict)
        try:
            raw = json.loads(path.read_text())
        except OSError as e:
            raise ParameterError("config", str(path), f"a readable config.json file ({e.strerror})") from None
        except (UnicodeDecodeError, json.JSONDecodeError) as e:
            raise ParameterError("config", str(path), f"a file holding JSON ({e})") from None
        if not isinstance(raw, dict):
            raise ParameterError("config", str(path), "a JSON object (a model's config.json)")
    else:
        raise ParameterError("config", path_or_dict, "a path to a config.json or a dict")
    text = raw.get("text_config")
    if isinstance(text, Mapping):            # the language model's keys win; the wrapper's fill in
        outer = {k: v for k, v in raw.items() if k not in ("text_config", "vision_config", "audio_config")}
        raw = {**outer, **text}
    return flatten(raw)


def side_quant_config(path_or_dict) -> dict | None:
    """The ModelOpt ``hf_quant_config.json`` beside a config.json given as a path (in a checkpoint
    folder ``hf_quant_config.json``; in AIConfigurator's corpus ``<Org--Model>_hf_quant_config.json``
    beside ``<Org--Model>_config.json``); None where there is none or the config came as a dict (a
    dict may carry it as its ``hf_quant_config`` key, as AIConfigurator keeps it)."""
    if not isinstance(path_or_dict, (str, Path)):
        return None
    path = Path(path_or_dict)
    if not path.name.endswith("config.json"):
        return None
    side = path.with_name(path.name.removesuffix("config.json") + "hf_quant_config.json")
    if not side.is_file():
        return None
    try:
        raw = json.loads(side.read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise ParameterError("hf_quant_config", str(side), f"a readable JSON file ({e})") from None
    if not isinstance(raw, dict):
        raise ParameterError("hf_quant_config", str(side), "a JSON object (ModelOpt's hf_quant_config.json)")
    return raw


def flatten(d: Mapping, prefix: str = "") -> dict:
    """Nested dicts as dotted keys (lists kept whole); already-dotted keys pass through."""
    out = {}
    for k, v in d.items():
        if isinstance(v, Mapping) and v:
            out.update(flatten(v, f"{prefix}{k}."))
        else:
            out[f"{prefix}{k}"] = v             # a dict made in Python may have int keys (id2label)
    return out


@dataclass(frozen=True)
class Family:
    name: str
    model_types: tuple[str, ...]
    needs: tuple[str, ...]                      # keys every config of the family must give
    groups: Callable[[dict], list[CacheGroup]]
    kv_side: dict                               # fp8_layout / indexer_format defaults (calc/kv.py)
    defaults: dict = field(default_factory=dict)   # what the family's transformers config class assumes
    schedules: tuple[str, ...] = ()             # the per-layer schedule keys (SCHEDULES) it reads
    derive: Callable[[dict], dict] | None = None   # keys the family's config class computes (layer count)


class Reader:
    """Key access that names the family and the key when a config lacks it or gives a bad value."""

    def __init__(self, c: dict, family: str):
        self.c, self.family = c, family

    def __call__(self, key, default=None, *, minimum: int = 1):
        if key not in self.c or self.c[key] is None:
            if default is None:
                raise ParameterError(key, None, f"a key the {self.family} family needs (missing from the config)")
            return default
        v = self.c[key]
        if isinstance(v, Integral) and not isinstance(v, bool) and v < minimum:
            raise ParameterError(key, v, f"an integer >= {minimum} (a dimension of the {self.family} config)")
        return v

    def dim(self, key, default=None, *, minimum: int = 1) -> int:
        v = self(key, default, minimum=minimum)
        if isinstance(v, bool) or not isinstance(v, Integral):
            raise ParameterError(key, v, f"an integer >= {minimum} (a dimension of the {self.family} config)")
        return int(v)

    def layer_list(self, key) -> list:
        v = self(key)
        if not isinstance(v, list) or len(v) < self.dim("num_hidden_layers"):
            raise ParameterError(key, v, f"a list with one entry per layer ({self.dim('num_hidden_layers')})")
        return v[:self.dim("num_hidden_layers")]


def _group(kind: str, layers: int, **dims) -> list[CacheGroup]:
    return [CacheGroup(kind, layers, dims)] if layers else []


def _head_dim(r: Reader) -> int:
    return r.dim("head_dim", r.dim("hidden_size") // r.dim("num_attention_heads"))


def _kv(r: Reader, heads_key="num_key_value_heads", dim_key=None, v_key=None) -> dict:
    """K/V dimensions of one attention layer; no num_key_value_heads means MHA, as in transformers."""
    hk = r.dim(dim_key) if dim_key else _head_dim(r)
    return {"kv_heads": r.dim(heads_key, r.dim("num_attention_heads")), "head_dim_k": hk,
            "head_dim_v": r.dim(v_key, hk) if v_key else hk}


def _sliding(r: Reader, kv: dict, window: int) -> dict:
    """A GQA layer that keeps the last ``window`` tokens: one window entry is every KV head's K and V
    (``kv_heads`` kept, so attention TP splits the window by heads as it splits a full layer's)."""
    return {"window": window, "entry_dim": kv["kv_heads"] * (kv["head_dim_k"] + kv["head_dim_v"]), "rope_dim": 0,
            "kv_heads": kv["kv_heads"]}


def gqa_groups(c: dict) -> list[CacheGroup]:
    """MHA / GQA / MQA, with sliding-window layers where ``layer_types`` says so (gpt-oss), from
    ``max_window_layers`` on (Qwen 2/3 with ``use_sliding_window``) or everywhere (Mistral's
    ``sliding_window``)."""
    r = Reader(c, family_of(c).name)
    L, kv = r.dim("num_hidden_layers"), _kv(r)
    if "layer_types" in c:
        types = r.layer_list("layer_types")
    elif c.get("use_sliding_window", c["model_type"] == "mistral") and c.get("sliding_window"):
        # Qwen2/3 slide from layer max_window_layers on (as transformers builds their layer_types)
        full = r.dim("max_window_layers", minimum=0) if c["model_type"].startswith("qwen") else 0
        types = ["full_attention"] * min(full, L) + ["sliding_attention"] * max(L - full, 0)
    else:
        types = ["full_attention"] * L
    unknown = set(types) - {"sliding_attention", "full_attention"}
    if unknown:
        raise ParameterError("layer_types", sorted(unknown), "sliding_attention or full_attention")
    sliding = types.count("sliding_attention")
    out = _group("mha", L - sliding, **kv)
    if sliding:
        out += _group("window", sliding, **_sliding(r, kv, r.dim("sliding_window")))
    return out


def gemma_groups(c: dict) -> list[CacheGroup]:
    """Gemma: sliding and global layers from ``layer_types``; Gemma 4's global layers have their own
    head size and KV heads (``global_head_dim``, ``num_global_key_value_heads``), and hold K and V
    both where K also serves as V (``attention_k_eq_v``), as AIConfigurator counts them. Layers that
    reuse an earlier layer's cache (``num_kv_shared_layers``) hold none of their own."""
    r = Reader(c, "gemma")
    types = r.layer_list("layer_types")
    own = len(types) - r.dim("num_kv_shared_layers", 0, minimum=0)
    types = types[:own]
    local = _kv(r)
    full = {"kv_heads": r.dim("num_global_key_value_heads", local["kv_heads"]),
            "head_dim_k": r.dim("global_head_dim", local["head_dim_k"])}
    full["head_dim_v"] = full["head_dim_k"]
    return (_group("window", types.count("sliding_attention"),
                   **_sliding(r, local, r.dim("sliding_window")))
            + _group("mha", types.count("full_attention"), **full))


def mimo_v2_groups(c: dict) -> list[CacheGroup]:
    """MiMo-V2: ``hybrid_layer_pattern`` marks sliding-window layers (1) among full ones (0); each
    kind has its own KV heads and head sizes (K 192, V 128)."""
    r = Reader(c, "mimo_v2")
    pattern = r.layer_list("hybrid_layer_pattern")
    full = _kv(r, dim_key="head_dim", v_key="v_head_dim")
    swa = _kv(r, "swa_num_key_value_heads", "swa_head_dim", "swa_v_head_dim")
    return (_group("mha", pattern.count(0), **full)
            + _group("window", pattern.count(1), **_sliding(r, swa, r.dim("sliding_window"))))


def llama4_groups(c: dict) -> list[CacheGroup]:
    """Llama 4: the rope layers (``no_rope_layers`` 1, by default three of every four) attend within
    chunks of ``attention_chunk_size`` tokens, so a request holds at most one chunk there, counted
    whole (a window of the chunk size, labelled as a chunk); the NoPE layers attend to everything,
    as full GQA."""
    r = Reader(c, "llama4")
    L = r.dim("num_hidden_layers")
    every = r.dim("no_rope_layer_interval", 4)
    rope = c.get("no_rope_layers") or [int((i + 1) % every != 0) for i in range(L)]
    if len(rope) < L:
        raise ParameterError("no_rope_layers", rope, f"a list with one entry per layer ({L})")
    chunked = sum(rope[:L]) if c.get("attention_chunk_size") else 0
    kv = _kv(r)
    return (_group("window", chunked, **_sliding(r, kv, r.dim("attention_chunk_size", 1)), label="attention chunk")
            + _group("mha", L - chunked, **kv))


def _mla(r: Reader, layers: int) -> list[CacheGroup]:
    return _group("mla", layers, kv_lora_rank=r.dim("kv_lora_rank"), rope_dim=r.dim("qk_rope_head_dim"))


def indexed_layers(r: Reader) -> list[bool]:
    """Per layer, whether it runs (and caches keys for) its own Lightning Indexer. IndexShare
    (GLM-5.2) lets the other layers reuse the top-k of the last one that does. The config says
    which: ``indexer_types`` ("full" or "shared" per layer), or ``index_topk_pattern`` ("S" skips),
    or every ``index_topk_freq``-th layer counted from ``index_skip_topk_offset`` - 1, the rule vLLM
    0.33's DeepSeek-V2 model applies. With none of them every layer indexes (V3.2, GLM-5)."""
    L = r.dim("num_hidden_layers")
    freq, offset = r.dim("index_topk_freq", 1), r.dim("index_skip_topk_offset", 2, minimum=0)
    by_rule = [max(i - offset + 1, 0) % freq == 0 for i in range(L)]
    if r.c.get("index_topk_pattern") is not None:
        by_rule = [t != "S" for t in r.layer_list("index_topk_pattern")]
    if "indexer_types" not in r.c or r.c["indexer_types"] is None:
        return by_rule
    types = r.layer_list("indexer_types")
    if set(types) - {"full", "shared"}:
        raise ParameterError("indexer_types", sorted(set(types) - {"full", "shared"}), "'full' or 'shared' per layer")
    listed = [t == "full" for t in types]
    if listed != by_rule and (freq > 1 or r.c.get("index_topk_pattern") is not None):
        raise ParameterError("indexer_types", f"{sum(listed)} full layers",
                             f"the {sum(by_rule)} the config's index_topk_freq / index_topk_pattern give")
    return listed


def mla_groups(c: dict) -> list[CacheGroup]:
    """MLA (DeepSeek V3, Kimi K2), with DSA's Lightning Indexer keys over every token in each layer
    that runs its own indexer (``index_head_dim``: V3.2, GLM-5; ``indexed_layers``)."""
    r = Reader(c, family_of(c).name)
    L = r.dim("num_hidden_layers")
    out = _mla(r, L)
    if family_of(c).name == "mla+dsa":
        if "layer_types" in c and set(r.layer_list("layer_types")) != {"deepseek_sparse_attention"}:
            raise ParameterError("layer_types", sorted(set(c["layer_types"])), "deepseek_sparse_attention in every layer")
        out += _group("indexer", sum(indexed_layers(r)), ratio=1, index_dim=r.dim("index_head_dim"))
    return out


def deepseek_v4_groups(c: dict) -> list[CacheGroup]:
    """V4: every layer keeps a ``sliding_window`` of raw entries; ``compress_ratios`` (one per layer,
    then the MTP layer's) marks CSA (4:1, with indexer keys per entry) and HCA (128:1) layers."""
    r = Reader(c, "deepseek_v4")
    L = r.dim("num_hidden_layers")
    if r.dim("num_key_value_heads") != 1:
        raise ParameterError("num_key_value_heads", c["num_key_value_heads"], "1 (V4 keeps one shared K=V head)")
    ratios = r.layer_list("compress_ratios")
    odd = sorted(set(ratios) - {0, 4, 128})
    if odd:
        raise ParameterError("compress_ratios", odd, "ratios V4 uses: 0 (window only), 4 (CSA), 128 (HCA)")
    entry = {"entry_dim": r.dim("head_dim"), "rope_dim": r.dim("qk_rope_head_dim")}
    return (_group("window", L, window=r.dim("sliding_window"), **entry)
            + _group("compressed", ratios.count(4), ratio=4, **entry)
            + _group("indexer", ratios.count(4), ratio=4, index_dim=r.dim("index_head_dim"))
            + _group("compressed", ratios.count(128), ratio=128, **entry))


def kimi_linear_groups(c: dict) -> list[CacheGroup]:
    """Kimi Linear / K3: KDA layers (a fixed state per head, plus the short-conv tail) and MLA layers,
    listed in ``linear_attn_config``. MLA with ``mla_use_nope`` still caches the rope key."""
    r = Reader(c, "kimi_linear")
    kda = r("linear_attn_config.kda_layers")
    full = r("linear_attn_config.full_attn_layers")
    if len(kda) + len(full) != r.dim("num_hidden_layers"):
        raise ParameterError("linear_attn_config.kda_layers", len(kda),
                             f"with full_attn_layers ({len(full)}), every one of the {c['num_hidden_layers']} layers")
    hd = r.dim("linear_attn_config.head_dim")
    return (_group("kda", len(kda), heads=r.dim("linear_attn_config.num_heads"), head_dim_k=hd, head_dim_v=hd,
                   conv_kernel=r.dim("linear_attn_config.short_conv_kernel_size"))
            + _mla(r, len(full)))


def gated_deltanet_groups(c: dict) -> list[CacheGroup]:
    """Qwen3-Next / Qwen3.5: Gated DeltaNet layers (a value_heads x K x V state, more value heads than
    key heads) and gated full attention, from ``layer_types`` or every ``full_attention_interval``-th.
    The state is sized as a KDA state is (``calc.kv``) but labelled by its own name."""
    r = Reader(c, family_of(c).name)
    L = r.dim("num_hidden_layers")
    if "layer_types" in c:
        types = r.layer_list("layer_types")
    else:
        every = r.dim("full_attention_interval")
        types = ["full_attention" if (i + 1) % every == 0 else "linear_attention" for i in range(L)]
    full = types.count("full_attention")
    if full + types.count("linear_attention") != L:
        raise ParameterError("layer_types", sorted(set(types)), "linear_attention or full_attention")
    return (_group("kda", L - full, heads=r.dim("linear_num_key_heads"), head_dim_k=r.dim("linear_key_head_dim"),
                   head_dim_v=r.dim("linear_value_head_dim"), conv_kernel=r.dim("linear_conv_kernel_dim"),
                   value_heads=r.dim("linear_num_value_heads"), label="Gated DeltaNet state")
            + _group("mha", full, **_kv(r)))


# NemotronH's schedule, one character a layer (transformers' NemotronHConfig._pattern_to_list), and the
# names its ``layers_block_type`` lists use, the legacy ones as transformers remaps them.
NEMOTRON_H_PATTERN = {"M": "linear_attention", "E": "moe", "*": "full_attention", "-": "mlp"}
NEMOTRON_H_TYPES = {"mamba": "linear_attention", "attention": "full_attention",
                    **{t: t for t in NEMOTRON_H_PATTERN.values()}}


def nemotron_h_schedule(c: dict) -> list[str]:
    """Per layer, what NemotronH's block holds: a Mamba-2 mixer (``linear_attention``), attention,
    an MLP or a MoE. ``layers_block_type`` wins over ``hybrid_override_pattern``, as in transformers."""
    if c.get("layers_block_type") is not None:
        key, v = "layers_block_type", c["layers_block_type"]
        if not isinstance(v, list) or not v or not set(v) <= NEMOTRON_H_TYPES.keys():
            raise ParameterError(key, v, "a list of " + ", ".join(NEMOTRON_H_TYPES) + " (one a layer)")
        return [NEMOTRON_H_TYPES[t] for t in v]
    key, v = "hybrid_override_pattern", c.get("hybrid_override_pattern")
    if not isinstance(v, str) or not v or not set(v) <= NEMOTRON_H_PATTERN.keys():
        raise ParameterError(key, v, "a string of M (Mamba-2), * (attention), - (MLP) or E (MoE), one a layer "
                             "(or a layers_block_type list)")
    return [NEMOTRON_H_PATTERN[ch] for ch in v]


def nemotron_h_layers(c: dict) -> dict:
    """The config with ``num_hidden_layers`` the schedule's length, as NemotronHConfig computes it
    (Nemotron 3 Ultra's config leaves it null); a stated count that disagrees is refused, where
    transformers would only warn."""
    n = len(nemotron_h_schedule(c))
    if c.get("num_hidden_layers") is not None and c["num_hidden_layers"] != n:
        raise ParameterError("num_hidden_layers", c["num_hidden_layers"], f"{n}, the length of the layer schedule")
    return {**c, "num_hidden_layers": n}


def nemotron_h_groups(c: dict) -> list[CacheGroup]:
    """NemotronH (Nemotron-H, Nemotron 3): GQA attention layers and Mamba-2 layers. A Mamba-2 layer
    keeps a fixed state per request: the SSM state, mamba_num_heads x mamba_head_dim x ssm_state_size,
    and the causal conv's last conv_kernel - 1 inputs over x (heads x head_dim) and B, C (n_groups x
    ssm_state_size each). That is a KDA state exactly, with the n_groups B/C groups as its key heads
    (state size as K) and the Mamba heads as its value heads (head_dim as V), so it is one; MLP and
    MoE layers hold no cache."""
    r = Reader(c, "nemotron_h")
    types = nemotron_h_schedule(c)
    return (_group("kda", types.count("linear_attention"), heads=r.dim("n_groups"),
                   head_dim_k=r.dim("ssm_state_size"), head_dim_v=r.dim("mamba_head_dim"),
                   conv_kernel=r.dim("conv_kernel"), value_heads=r.dim("mamba_num_heads"), label="Mamba-2 state")
            + _group("mha", types.count("full_attention"), **_kv(r)))


# Step3p7TextConfig's attribute_map: the hub configs' names for keys the book reads by their own names
# (AIConfigurator's corpus also names the experts num_experts).
STEP3P7_ALIASES = {"moe_num_experts": "n_routed_experts", "num_experts": "n_routed_experts",
                   "moe_top_k": "num_experts_per_tok", "share_expert_dims": "share_expert_dim",
                   "num_attention_groups": "num_key_value_heads",
                   "num_mtp_layers": "num_nextn_predict_layers"}


def step3p7_keys(c: dict) -> dict:
    """The config with each alias under the name the book reads; two names of one key that disagree
    are refused (transformers would take one of them silently)."""
    out = dict(c)
    for key in set(STEP3P7_ALIASES.values()):
        names = [key, *(a for a, k in STEP3P7_ALIASES.items() if k == key)]
        given = {n: c[n] for n in names if c.get(n) is not None}
        if len(set(map(repr, given.values()))) > 1:
            alias = next(n for n in given if n != key)
            raise ParameterError(alias, given[alias], "one value under all its names: "
                                 + ", ".join(f"{n} {v}" for n, v in given.items()))
        if given:
            out[key] = next(iter(given.values()))
    return out


# Step-3.7's per-layer MLP kinds, as Step3p7TextConfig reads them: ``mlp_layer_types`` ("dense" or
# "sparse" a layer), else the hub configs' ``moe_layers_enum`` (the MoE layers' indices), else every
# layer from the fourth on is MoE (its default, whatever first_k_dense_replace says).
STEP3P7_DENSE_DEFAULT = 3


def _mlp_layer_types(r: Reader) -> list[bool] | None:
    """Per layer, whether ``mlp_layer_types`` ("dense" or "sparse") makes it MoE; None without one."""
    if r.c.get("mlp_layer_types") is None:
        return None
    types = r.layer_list("mlp_layer_types")
    if set(types) - {"dense", "sparse"}:
        odd = sorted(set(types) - {"dense", "sparse"})
        raise ParameterError("mlp_layer_types", odd, "'dense' or 'sparse' a layer")
    return [t == "sparse" for t in types]


def _dense_lead(c: dict, moe: list[bool]) -> list[bool]:
    """``moe``, checked against a stated ``first_k_dense_replace`` (AIConfigurator's corpus gives one,
    transformers reads none): the leading dense layers, every later one MoE, or two readings differ."""
    lead, stated = next((i for i, m in enumerate(moe) if m), len(moe)), c.get("first_k_dense_replace")
    if stated is not None and (stated != lead or not all(moe[lead:])):
        raise ParameterError("first_k_dense_replace", c["first_k_dense_replace"],
                             f"{lead}, the dense layers the MLP schedule gives (every later layer MoE)")
    return moe


def step3p7_moe_layers(c: dict) -> list[bool]:
    """Per layer, whether Step-3.7's block holds the MoE (else a dense SwiGLU)."""
    r = Reader(c, "step3p7")
    L = r.dim("num_hidden_layers")
    moe = _mlp_layer_types(r)
    if moe is None and c.get("moe_layers_enum") is not None:
        v = c["moe_layers_enum"]
        items = v.split(",") if isinstance(v, str) else v
        try:
            listed = {int(i) for i in items if str(i).strip()}
        except (TypeError, ValueError):
            raise ParameterError("moe_layers_enum", v, "the MoE layers' indices (a list or a comma-separated "
                                 "string)") from None
        moe = [i in listed for i in range(L)]
    return _dense_lead(c, moe if moe is not None else [i >= STEP3P7_DENSE_DEFAULT for i in range(L)])


# The sliding layers' own attention settings in Step's hub configs (``attention_other_setting``): only
# their query heads differ in transformers' Step3p7TextConfig, which reads nothing else from it; a
# K/V geometry there unlike the full layers' would be the checkpoint's and not transformers', so refused.
STEP3P7_OTHER = "attention_other_setting."
STEP3P7_SAME = {"num_attention_groups": "num_key_value_heads", "head_dim": "head_dim",
                "true_head_dim": "head_dim"}


def step3p7_sliding_heads(c: dict) -> int:
    """Query heads of Step-3.7's sliding-window layers: ``num_sliding_attention_heads``, else
    ``attention_other_setting.num_attention_heads``, else the full layers' ``num_attention_heads``."""
    r = Reader(c, "step3p7")
    for key, same in STEP3P7_SAME.items():
        if c.get(STEP3P7_OTHER + key) is not None and c[STEP3P7_OTHER + key] != r.dim(same):
            raise ParameterError(STEP3P7_OTHER + key, c[STEP3P7_OTHER + key],
                                 f"{same} ({c.get(same)}): the sliding layers' K/V as the full layers'")
    known = {STEP3P7_OTHER + k for k in (*STEP3P7_SAME, "num_attention_heads", "attention_type")}
    odd = sorted(k for k in c if k.startswith(STEP3P7_OTHER) and k not in known)
    if odd:
        raise ParameterError(odd[0], c[odd[0]], "a key of attention_other_setting the book reads: "
                             + ", ".join(sorted(k.removeprefix(STEP3P7_OTHER) for k in known)))
    if c.get("num_sliding_attention_heads") is not None:
        return r.dim("num_sliding_attention_heads")
    return r.dim(STEP3P7_OTHER + "num_attention_heads", r.dim("num_attention_heads"))


def step3p7_layer_heads(c: dict) -> list[int]:
    """Query heads of each Step-3.7 layer: the sliding ones' (``step3p7_sliding_heads``) or the full
    ones'. A config transformers saved also lists them in ``per_layer_config`` (a layer's overrides,
    flattened here to ``per_layer_config.<layer>.<key>``); an override that says otherwise, or of
    another key, is refused."""
    r = Reader(c, "step3p7")
    sliding, full = step3p7_sliding_heads(c), r.dim("num_attention_heads")
    heads = [sliding if t == "sliding_attention" else full for t in r.layer_list("layer_types")]
    for key in (k for k in c if k.startswith("per_layer_config.")):
        layer, _, name = key.removeprefix("per_layer_config.").partition(".")
        if name != "num_attention_heads" or not layer.isdigit() or int(layer) >= len(heads) \
                or c[key] != heads[int(layer)]:
            want = heads[int(layer)] if layer.isdigit() and int(layer) < len(heads) else "a layer's"
            raise ParameterError(key, c[key], f"num_attention_heads of a layer, {want} (the sliding layers' "
                                 "num_sliding_attention_heads, the full ones' num_attention_heads)")
    return heads


def step3p7_groups(c: dict) -> list[CacheGroup]:
    """Step-3.7-Flash: full GQA layers and sliding-window ones (``layer_types``, which hub configs pad
    with the MTP layers' entries), both with the same K/V heads and head size (the sliding layers'
    query heads may differ: ``step3p7_sliding_heads``); the MLP schedule is checked here too."""
    for key in ("attention_bias", "mlp_bias", "use_bidirectional_attention"):
        if c.get(key):
            raise ParameterError(key, c[key], "false (Step-3.7 ships none; the book does not price it)")
    if c.get("use_head_wise_attn_gate") is False:       # transformers builds the gate whatever it says
        raise ParameterError("use_head_wise_attn_gate", False,
                             "true (transformers' Step3p7 gates every head whatever it says)")
    if c.get("gating", True) not in (True, "per-head"):
        raise ParameterError("gating", c["gating"], "true or 'per-head' (one output gate a query head, as "
                             "Step-3.7's g_proj)")
    step3p7_layer_heads(c)
    step3p7_moe_layers(c)
    return gqa_groups(c)


# Nemotron-NAS (DeciLM, Llama-3.x-Nemotron Super/Ultra): each layer's ``block_configs`` entry sets its
# attention and FFN apart. What each may say, with the value the book reads as "not there" for the
# keys it does not price (a sliding window, sink tokens, sparsity); anything else is refused.
NAS_PARTS = {"attention": {"no_op", "replace_with_linear", "n_heads_in_group"},
             "ffn": {"no_op", "replace_with_linear", "ffn_mult"}}
NAS_INERT = {"attention": {"window_length": None, "num_sink_tokens": None, "sparsify": None,
                           "unshifted_sink": False, "use_prefill_window_in_sink_attention": False},
             "ffn": {"sparsify": None}}


@dataclass(frozen=True)
class NasBlock:
    """One Nemotron-NAS layer: its attention (``None`` a no-op, ``"linear"`` a d -> d Linear in its
    place, else its KV heads) and its FFN (``None``, ``"linear"``, else its SwiGLU intermediate size)."""
    attention: int | str | None
    ffn: int | str | None


def ffn_mult_intermediate(ffn_mult: float, hidden: int) -> int:
    """DeciLM's SwiGLU width from ``ffn_mult``: int(2 ffn_mult d / 3), rounded up to a multiple of 256
    (vLLM's nemotron_nas.py, ``_ffn_mult_to_intermediate_size``, from the checkpoint's own
    modeling_decilm.py; Super-49B's 5.25 of 8192 gives 28,672, Llama 3 70B's width)."""
    width = int(2 * ffn_mult * hidden / 3)
    return -(-width // 256) * 256


def nas_blocks(c: dict) -> list[NasBlock]:
    """Each layer of a Nemotron-NAS config from its ``block_configs`` entry: attention with
    num_attention_heads / n_heads_in_group KV heads, or a no-op, or a linear replacement (as the
    checkpoint's DeciLMLinearAttention and DeciLMLinearMLP: one d -> d Linear, NeMo AutoModel's
    decilm/layers.py); an FFN of ``ffn_mult`` (``ffn_mult_intermediate``), or a no-op, or linear."""
    r = Reader(c, "nemotron_nas")
    L, heads = r.dim("num_hidden_layers"), r.dim("num_attention_heads")
    blocks = r.layer_list("block_configs")
    out = []
    for i, b in enumerate(blocks):
        if not isinstance(b, Mapping) or set(b) != set(NAS_PARTS):
            raise ParameterError(f"block_configs[{i}]", b, "an attention and an ffn entry, nothing else")
        parts = {}
        for part, keys in NAS_PARTS.items():
            cfg, key = b[part], f"block_configs[{i}].{part}"
            if not isinstance(cfg, Mapping):
                raise ParameterError(key, cfg, "a dict of the layer's settings")
            inert = NAS_INERT[part]
            odd = sorted(k for k in cfg if k not in keys and (k not in inert or cfg[k] != inert[k]))
            if odd:
                raise ParameterError(f"{key}.{odd[0]}", cfg[odd[0]], "a key the book prices: "
                                     + ", ".join(sorted(keys)) + " (and, unpriced, "
                                     + ", ".join(f"{k} {v}" for k, v in inert.items()) + ")")
            if cfg.get("no_op"):
                parts[part] = None
            elif cfg.get("replace_with_linear"):
                parts[part] = "linear"
            elif part == "attention":
                group = cfg.get("n_heads_in_group")
                if isinstance(group, bool) or not isinstance(group, Integral) or group < 1 or heads % group:
                    raise ParameterError(f"{key}.n_heads_in_group", group, "a divisor of "
                                         f"num_attention_heads ({heads}): the query heads a KV head serves")
                parts[part] = heads // group
            else:
                mult = cfg.get("ffn_mult")
                if isinstance(mult, bool) or not isinstance(mult, (int, float)) or mult <= 0:
                    raise ParameterError(f"{key}.ffn_mult", mult, "a positive multiplier of hidden_size")
                parts[part] = ffn_mult_intermediate(mult, r.dim("hidden_size"))
        out.append(NasBlock(**parts))
    return out[:L]


def nemotron_nas_groups(c: dict) -> list[CacheGroup]:
    """Nemotron-NAS: K and V in the layers that keep attention, one GQA group per KV head count
    (num_attention_heads / n_heads_in_group); no-op and linear-replacement layers cache nothing."""
    r = Reader(c, "nemotron_nas")
    for key in ("attention_bias", "mlp_bias"):
        if c.get(key):
            raise ParameterError(key, c[key], "false (the book's Nemotron-NAS counter prices no biases)")
    kv_heads = [b.attention for b in nas_blocks(c) if isinstance(b.attention, int)]
    hd = _head_dim(r)
    return [g for n in sorted(set(kv_heads), reverse=True)
            for g in _group("mha", kv_heads.count(n), kv_heads=n, head_dim_k=hd, head_dim_v=hd)]


# MiniMax-M3's hub names under ``sparse_attention_config`` for the keys MiniMaxM3VLTextConfig reads
# (its __post_init__ maps them); the selection-only ones change neither the cache nor the weights.
M3_SPARSE = "sparse_attention_config."
M3_ALIASES = {"sparse_num_index_heads": "index_n_heads", "sparse_index_dim": "index_head_dim",
              "sparse_block_size": "index_block_size", "sparse_topk_blocks": "index_topk_blocks",
              "sparse_local_block": "index_local_blocks"}
M3_SELECTION_ONLY = ("sparse_init_block", "sparse_score_type")
M3_LAYER_TYPES = {"full_attention": False, "minimax_m3_sparse": True}


def minimax_m3_keys(c: dict) -> dict:
    """The config with the sparse-attention settings under transformers' names, and ``layer_types``
    from ``sparse_attention_freq`` where it gives none (as MiniMaxM3VLTextConfig builds it). A
    setting the book does not read, two names that disagree, or an index-value path (which adds a
    cache of index values the book does not price) is refused."""
    out = dict(c)
    known = {*M3_ALIASES, *M3_SELECTION_ONLY, "sparse_attention_freq", "sparse_disable_index_value",
             "use_sparse_attention"}
    odd = sorted(k for k in c if k.startswith(M3_SPARSE) and k.removeprefix(M3_SPARSE) not in known)
    if odd:
        raise ParameterError(odd[0], c[odd[0]], "a sparse_attention_config key the book reads: "
                             + ", ".join(sorted(known)))
    for legacy, key in M3_ALIASES.items():
        if c.get(M3_SPARSE + legacy) is None:
            continue
        if c.get(key) is not None and c[key] != c[M3_SPARSE + legacy]:
            raise ParameterError(M3_SPARSE + legacy, c[M3_SPARSE + legacy], f"{c[key]}, the {key} it names")
        out[key] = c[M3_SPARSE + legacy]
    freq = c.get(M3_SPARSE + "sparse_attention_freq")
    if freq is not None:
        if c.get(M3_SPARSE + "use_sparse_attention") is False:
            raise ParameterError(M3_SPARSE + "use_sparse_attention", False, "true where "
                                 "sparse_attention_freq is given (transformers builds the indexers it lists "
                                 "whatever this says)")
        types = ["minimax_m3_sparse" if f else "full_attention" for f in freq]
        if c.get("layer_types") is not None and list(c["layer_types"]) != types:
            raise ParameterError("layer_types", "a list unlike sparse_attention_freq's", "the layers "
                                 "sparse_attention_freq marks as minimax_m3_sparse, the others as "
                                 "full_attention")
        out["layer_types"] = types
        # transformers builds no index-value path at all; a config that says a sparse layer has one
        # (0 here) describes a cache the book does not price
        disabled = c.get(M3_SPARSE + "sparse_disable_index_value")
        if disabled is not None and (len(disabled) != len(freq)
                                     or any(f and not x for f, x in zip(freq, disabled))):
            raise ParameterError(M3_SPARSE + "sparse_disable_index_value", disabled, "1 on every sparse "
                                 "layer (the book prices index keys, not an index-value path)")
    return out


def minimax_m3_moe_layers(c: dict) -> list[bool]:
    """Per layer, whether MiniMax-M3's block holds the MoE: ``mlp_layer_types``, else ``moe_layer_freq``
    (1 or 0 a layer), else every layer, as MiniMaxM3VLTextConfig reads them."""
    r = Reader(c, "minimax_m3")
    moe = _mlp_layer_types(r)
    if moe is None and c.get("moe_layer_freq") is not None:
        freq = r.layer_list("moe_layer_freq")
        if set(freq) - {0, 1}:
            raise ParameterError("moe_layer_freq", sorted(set(freq) - {0, 1}), "0 (dense) or 1 (MoE) a layer")
        moe = [bool(f) for f in freq]
    return _dense_lead(c, moe if moe is not None else [True] * r.dim("num_hidden_layers"))


def minimax_m3_groups(c: dict) -> list[CacheGroup]:
    """MiniMax-M3: GQA attention in every layer, each keeping K and V of every token (its sparse
    attention picks blocks to attend to but evicts nothing); the ``minimax_m3_sparse`` layers also keep
    their Lightning Indexer's key, one ``index_head_dim`` vector a token (transformers'
    MiniMaxM3VLSparseCacheLayer.idx_keys), in the cache's dtype: the book assumes no layout of its own."""
    r = Reader(c, "minimax_m3")
    L = r.dim("num_hidden_layers")
    types = r.layer_list("layer_types") if c.get("layer_types") is not None else ["full_attention"] * L
    if set(types) - M3_LAYER_TYPES.keys():
        odd = sorted(set(types) - M3_LAYER_TYPES.keys())
        raise ParameterError("layer_types", odd, ", ".join(M3_LAYER_TYPES))
    checks = {"attention_output_gate": False, "use_qk_norm": True, "qk_norm_type": "per_head",
              "n_shared_experts": 1, "attention_bias": False, "mlp_bias": False}
    for key, want in checks.items():        # what transformers' MiniMax-M3 builds whatever they say
        if c.get(key) is not None and c[key] != want:
            raise ParameterError(key, c[key], f"{want!r}, as in the MiniMax-M3 transformers builds and the "
                                 "book counts")
    inter = r.dim("intermediate_size")
    if c.get("moe_intermediate_size") is not None and c["moe_intermediate_size"] != inter:
        raise ParameterError("moe_intermediate_size", c["moe_intermediate_size"],
                             f"intermediate_size ({inter}): transformers sizes the experts by it")
    minimax_m3_moe_layers(c)
    sparse = sum(M3_LAYER_TYPES[t] for t in types)
    return _group("mha", L, **_kv(r)) + _group("indexer", sparse, ratio=1, index_dim=r.dim("index_head_dim"))


# V3.2's published inference code keeps indexer keys in FP8 with one fp32 scale whatever the MLA cache
# dtype; V4's is not public, so its keys are assumed stored the same way. FP8 MLA caches take FlashMLA's
# V3.2 layout (calc/kv.py's default), V4's its own; K3 ships no KV quantisation (kv_cache_scheme: null),
# so served in FP8 its MLA cache is assumed to take the layout DeepSeek's MLA uses. Caches of per-head K
# and V (GQA and its sliding, chunked and linear-attention mixes) are FP8 with per-tensor scales, as
# vLLM and SGLang store them: no per-vector scale bytes.
PER_TENSOR_FP8 = {"fp8_layout": "fp8-per-tensor"}
DSA_KEYS = {"indexer_format": "fp8-indexer"}
BASE = ("num_hidden_layers", "hidden_size", "num_attention_heads", "vocab_size")
MLA_KEYS = BASE + ("kv_lora_rank", "qk_rope_head_dim", "qk_nope_head_dim", "v_head_dim")   # q_lora_rank may be null

# Keys that give each layer its own kind: a family that does not read one would price every layer
# alike, so a config that sets one its family does not read is refused rather than misread.
SCHEDULES = ("layer_types", "hybrid_layer_pattern", "full_attention_interval", "compress_ratios",
             "indexer_types", "index_topk_freq", "index_topk_pattern", "block_configs", "layers_block_type")
DSA_SCHEDULES = ("layer_types", "indexer_types", "index_topk_freq", "index_topk_pattern")

FAMILIES = (
    Family("gqa", ("llama", "mistral", "mixtral", "qwen2", "qwen2_moe", "qwen3", "qwen3_moe", "qwen3_vl_text",
                   "qwen3_vl_moe_text", "minimax_m2", "mimo", "gpt_oss"), BASE, gqa_groups, PER_TENSOR_FP8,
           schedules=("layer_types",)),
    Family("gemma", ("gemma2", "gemma3_text", "gemma4_text"), BASE + ("layer_types", "sliding_window"),
           gemma_groups, PER_TENSOR_FP8, schedules=("layer_types",)),
    Family("mimo_v2", ("mimo_v2_flash",), BASE + ("hybrid_layer_pattern", "sliding_window"), mimo_v2_groups, PER_TENSOR_FP8,
           schedules=("hybrid_layer_pattern",)),
    Family("llama4", ("llama4_text",), BASE + ("intermediate_size", "intermediate_size_mlp", "num_local_experts"),
           llama4_groups, PER_TENSOR_FP8, {"tie_word_embeddings": False}),   # Llama4TextConfig's default; its configs omit it
    Family("mla", ("deepseek_v3", "kimi_k2"), MLA_KEYS, mla_groups, {}),
    Family("mla+dsa", ("deepseek_v32", "glm_moe_dsa"), MLA_KEYS + ("index_head_dim",), mla_groups, DSA_KEYS,
           schedules=DSA_SCHEDULES),
    # deepseek_ref: SGLang's name for V4 in its FP8 re-release (same keys, experts in FP8, no tie key)
    Family("deepseek_v4", ("deepseek_v4", "deepseek_ref"), BASE + ("compress_ratios", "head_dim", "sliding_window"),
           deepseek_v4_groups, {"fp8_layout": "fp8-flashmla-v4", **DSA_KEYS}, {"tie_word_embeddings": False},
           schedules=("compress_ratios",)),
    Family("kimi_linear", ("kimi_linear",), MLA_KEYS + ("linear_attn_config.num_heads",), kimi_linear_groups, {}),
    Family("gated_deltanet", ("qwen3_next", "qwen3_5_text", "qwen3_5_moe_text"),
           BASE + ("linear_num_key_heads", "linear_num_value_heads"), gated_deltanet_groups, PER_TENSOR_FP8,
           schedules=("layer_types", "full_attention_interval")),
    # NemotronHConfig's defaults for what some configs omit: Nemotron-H-56B gives no head_dim (its
    # attention_head_dim is a key transformers no longer reads) nor a state dtype
    Family("nemotron_h", ("nemotron_h",), BASE + ("mamba_num_heads", "mamba_head_dim", "ssm_state_size", "n_groups"),
           nemotron_h_groups, PER_TENSOR_FP8, {"head_dim": 128, "mamba_ssm_cache_dtype": "float32"},
           schedules=("hybrid_override_pattern", "layers_block_type"), derive=nemotron_h_layers),
    # Step3p7's text model (transformers' Step3p7TextConfig, model_type step3p5); the corpus flattens it
    Family("step3p7", ("step3p7", "step3p5"),
           BASE + ("layer_types", "sliding_window", "moe_intermediate_size", "share_expert_dim",
                   "n_routed_experts", "num_experts_per_tok", "num_key_value_heads"),
           step3p7_groups, PER_TENSOR_FP8, {"tie_word_embeddings": False, "head_dim": 128},
           schedules=("layer_types",), derive=step3p7_keys),
    # MiniMax-M3's text model (transformers' minimax_m3_vl_text); the corpus has it flat and wrapped
    Family("minimax_m3", ("minimax_m3", "minimax_m3_vl", "minimax_m3_vl_text"),
           BASE + ("num_key_value_heads", "head_dim", "dense_intermediate_size", "shared_intermediate_size",
                   "num_local_experts", "num_experts_per_tok"),
           minimax_m3_groups, PER_TENSOR_FP8, {"tie_word_embeddings": False, "index_head_dim": 128,
                                               "index_n_heads": 4},
           schedules=("layer_types",), derive=minimax_m3_keys),
    # DeciLM's remote-code config: num_key_value_heads and intermediate_size are null, block_configs says
    Family("nemotron_nas", ("nemotron-nas",), BASE + ("block_configs",), nemotron_nas_groups, PER_TENSOR_FP8,
           schedules=("block_configs",)),
)
MODEL_TYPES = {t: f for f in FAMILIES for t in f.model_types}
# Sizes that must be whole and positive wherever a config gives them (others, such as
# shared_intermediate_size or num_kv_shared_layers, may be 0).
POSITIVE = {"intermediate_size", "moe_intermediate_size", "head_dim", "num_key_value_heads", "num_experts",
            "n_routed_experts", "num_local_experts", "num_experts_per_tok", "num_experts_per_token",
            "routed_expert_hidden_size", "global_head_dim", "v_head_dim"}


def family_of(c: dict) -> Family:
    """The family of a flat config, from its ``model_type``."""
    if "model_type" not in c:
        raise ParameterError("model_type", None, "a config.json key naming the architecture (this JSON has none: "
                             "is it a model's config.json?)")
    t = c["model_type"]
    if t not in MODEL_TYPES:
        raise ParameterError("model_type", t, f"one of the {len(MODEL_TYPES)} model_types of the {len(FAMILIES)} "
                             "families the book reads (python -m twopaths.plan --help lists them)")
    return MODEL_TYPES[t]


# ---- the checkpoint's weight formats (the groups are specs/params.py's) ---------------------------

LINEAR_GROUPS = ("attention", "routed_experts", "shared_experts", "dense_ffn", "latent_proj", "mtp")
# Groups a format this file cannot read may cover: every weight but the norms (never quantised).
QUANTISABLE = LINEAR_GROUPS + ("embedding", "head", "router", "residual")
UNKNOWN = "unknown"          # a group whose storage the book cannot price (``weights_unknown`` says why)


def weight_formats(c: dict) -> tuple[dict[str, str], str | None]:
    """The groups a checkpoint stores other than in BF16, from its quantisation keys and those of the
    ModelOpt ``hf_quant_config.json`` beside it (``hf_quant_config.*``), and why the weights are
    unknown where a group's storage cannot be priced (those groups are marked ``UNKNOWN``); None
    when all are priced."""
    q = "quantization_config."
    method = c.get(q + "quant_method")
    if method == "fp8" and c.get(q + "weight_block_size") == [128, 128]:
        # DeepSeek-style FP8 blocks: every Linear but the output head; V4's experts ship in FP4 with
        # e8m0 (ue8m0) scales per 32 weights, the MX layout, or, where NVIDIA's ModelOpt re-quantised
        # them (moe_quant_algo NVFP4), as NVFP4 (an e4m3 scale per 16).
        out = dict.fromkeys(LINEAR_GROUPS, "fp8")
        if c.get(q + "moe_quant_algo") == "NVFP4":      # NVIDIA's re-quantised V4: NVFP4 experts
            out["routed_experts"] = "fp4"
        elif c.get("expert_dtype") == "fp4":
            out["routed_experts"] = "mxfp4"
        return out, None
    if c.get(q + "format") == "mxfp4-pack-quantized":
        # K3: the ignore list keeps self_attn, shared_experts, the dense MLP and lm_head in BF16, so only
        # routed experts are MXFP4. The latent projections' module names are not public;
        # AIConfigurator's K3 model keeps them in BF16 and so does the book.
        group = c.get(q + "config_groups.group_0.weights.group_size")
        if group != 32:
            raise ParameterError(q + "config_groups.group_0.weights.group_size", group, "32 (the MXFP4 block)")
        return {"routed_experts": "mxfp4"}, None
    if method == "mxfp4":                   # gpt-oss: experts in MXFP4, attention and router in BF16
        return {"routed_experts": "mxfp4"}, None
    if any(k.startswith(SIDE) for k in c) or method == "modelopt" or c.get(q + "producer.name") == "modelopt":
        return _modelopt(c)
    if method == "compressed-tensors" and c.get(q + "format") == "pack-quantized":
        return _pack_quantized(c)
    if method is not None or c.get(q + "format") is not None:
        return _unknown(f"{q}quant_method {method or c.get(q + 'format')!r}: a quantisation the book does not "
                        "price (it prices fp8 with 128x128 blocks, mxfp4, mxfp4-pack-quantized, ModelOpt NVFP4 "
                        "and FP8, compressed-tensors INT4 pack-quantized)")
    return {}, None


def _unknown(reason: str, known: dict | None = None, groups=QUANTISABLE) -> tuple[dict[str, str], str]:
    return {**(known or {}), **dict.fromkeys(groups, UNKNOWN)}, reason


# ModelOpt's per-checkpoint quant_algo as the book's formats (calc/weights.py): NVFP4 (and its
# weight-only W4A16 label: the same stored bytes), and FP8 with one scale per tensor.
MODELOPT_FORMATS = {"NVFP4": "fp4", "W4A16_NVFP4": "fp4", "FP8": "fp8-tensor"}


SIDE = "hf_quant_config.quantization."


def _modelopt(c: dict) -> tuple[dict[str, str], str | None]:
    """NVIDIA ModelOpt: one quant_algo for every Linear but the excluded modules, or, MIXED_PRECISION,
    an algo per listed module (``quantized_layers``; unlisted ones stay BF16). The side file's section
    wins where both give one (as AIConfigurator reads them); the exclusions of both apply."""
    q = "quantization_config."
    algo = c.get(SIDE + "quant_algo") or c.get(q + "quant_algo")
    excluded = [*(c.get(SIDE + "exclude_modules") or []), *(c.get(q + "ignore") or []),
                *(c.get(q + "exclude_modules") or [])]
    if algo == "MIXED_PRECISION":
        layers = _nested(c, SIDE + "quantized_layers.") or _nested(c, q + "quantized_layers.")
        if any("quant_algo" not in v for v in layers.values()):
            return _unknown("quantization_config.quantized_layers: an entry without its quant_algo")
        per_module = {m: v["quant_algo"] for m, v in layers.items()}
        return _assign(c, None, per_module, excluded, "quantized_layers")
    if algo not in MODELOPT_FORMATS:
        return _unknown(f"{q}quant_algo {algo!r}: a ModelOpt algo the book does not price (it prices "
                        + ", ".join(MODELOPT_FORMATS) + ", MIXED_PRECISION of those)")
    group = c.get(SIDE + "group_size") or c.get(q + "config_groups.group_0.weights.group_size")
    if MODELOPT_FORMATS[algo] == "fp4" and group not in (None, 16):
        return _unknown(f"{q}group_size {group!r}: NVFP4 scales every 16 weights")
    return _assign(c, algo, {}, excluded, "quant_algo")


def _nested(c: dict, prefix: str) -> dict:
    """A dict the flat config spread over dotted keys, as {module: {key: value}} (module names hold
    dots, so the last dotted part is the key)."""
    out = {}
    for k, v in c.items():
        if k.startswith(prefix):
            module, _, key = k[len(prefix):].rpartition(".")
            out.setdefault(module, {})[key] = v
    return out


def _listed(per_module: dict, name: str, default):
    """The algo of the listed module that holds ``name`` (itself or a parent), else ``default``."""
    for m, algo in per_module.items():
        if name == m or name.startswith(m + "."):
            return algo
    return default


# compressed-tensors INT4 groups the book prices: scales in the checkpoint's 16-bit dtype (no
# scale_dtype given: compressed-tensors keeps the model's), symmetric (no zero points).
INT4_GROUPS = {32: "int4-g32", 128: "int4-g128"}


def _pack_quantized(c: dict) -> tuple[dict[str, str], str | None]:
    """compressed-tensors ``pack-quantized`` (Kimi K2.5's INT4 experts): one config group of 4-bit
    integer weights with a scale per group, on every Linear but the ignore list."""
    g = "quantization_config.config_groups."
    groups = {k.split(".")[2] for k in c if k.startswith(g)}
    w = g + "group_0.weights."
    spec = (c.get(w + "num_bits"), c.get(w + "type"), c.get(w + "strategy"), c.get(w + "symmetric"))
    scale = str(c.get(w + "scale_dtype") or "torch.bfloat16").removeprefix("torch.")
    if groups != {"group_0"} or spec != (4, "int", "group", True) or c.get(w + "group_size") not in INT4_GROUPS \
            or scale not in ("bfloat16", "float16"):
        return _unknown(f"{w[:-1]}: {len(groups)} config group(s), {spec} (num_bits, type, strategy, symmetric), "
                        f"group_size {c.get(w + 'group_size')!r}, scale {scale}: the book prices one group of "
                        "symmetric 4-bit int weights in groups of 32 or 128 with 16-bit scales")
    fmt = INT4_GROUPS[c[w + "group_size"]]
    return _assign(c, fmt, {}, c.get("quantization_config.ignore") or [], "ignore")


# Where a module-name pattern may name parts the book does not count (a vision tower, its projector,
# an MTP head the book gives no parameters): such a pattern excludes nothing the book prices.
UNCOUNTED = ("vision_tower", "mm_projector", "embed_vision", "visual", "multi_modal_projector", "patch_merge_mlp",
             "mtp")
# A multimodal checkpoint's language-model prefixes, as the plain text model names them.
PREFIXES = (("language_model.model.", "model."), ("model.language_model.", "model."),
            ("language_model.lm_head", "lm_head"))


def _canonical(name: str) -> str:
    for a, b in PREFIXES:
        if name.startswith(a):
            return b + name[len(a):]
    return name


def _uncounted(pattern: str) -> bool:
    """Whether a pattern's first module name (after any ``model.``) is a part the book does not count."""
    p = _canonical(re.sub(r"^(re:)?(\.\*|\*)?\.?", "", str(pattern))).removeprefix("model.")
    return re.split(r"[.*\\]", p)[0] in UNCOUNTED


@lru_cache(maxsize=4096)
def _matcher(pattern: str) -> Callable[[str], bool]:
    """Whether an exclusion pattern names a module or a module holding it: ``re:`` a regular
    expression matched from the start (compressed-tensors), else a glob or a module path (ModelOpt)."""
    if pattern.startswith("re:"):
        rx = re.compile(pattern[3:])
        return lambda name: rx.match(name) is not None
    pattern = _canonical(pattern)
    glob = re.compile(fnmatch.translate(pattern)).match
    return lambda name: glob(name) is not None or name.startswith(pattern + ".")


def _assign(c: dict, default: str | None, listed: dict, excluded: list, key: str) -> tuple[dict, str | None]:
    """Each group's format from its modules' algos (``listed`` per module, else ``default``; None or
    an excluded module: BF16). A group whose modules do not share one format, an algo the book does
    not price, or an exclusion pattern that names no module the book knows leaves the weights
    unknown, the reason saying which."""
    names = module_names(c)
    # where the reason points: the side file's section when the checkpoint ships one
    at = (f"hf_quant_config.json's quantization.{key}" if any(k.startswith(SIDE) for k in c)
          else f"quantization_config.{key}")
    if names is None:
        return _unknown(f"{at}: the book does not know {c['model_type']}'s module names, so "
                        "cannot tell which weight groups the quantisation covers")
    unmatched, per_group = _group_algos(names, tuple(map(str, excluded)),
                                        default, tuple((_canonical(m), a) for m, a in listed.items()))
    if unmatched:
        return _unknown(f"{at}: exclusion pattern {unmatched[0]!r} names no module the "
                        "book maps to a weight group")
    out, odd = {}, []
    for group, algos in per_group.items():
        fmts = {"bf16" if a is None else MODELOPT_FORMATS.get(a, a) for a in algos}
        if len(fmts) > 1 or not fmts <= {"bf16", "fp4", "fp8-tensor", *INT4_GROUPS.values()}:
            odd.append(f"{group} ({', '.join(sorted(map(str, algos)))})")
        elif fmts != {"bf16"}:
            out[group] = fmts.pop()
    if odd:
        return _unknown(f"{at}: modules of one weight group stored in different "
                        f"formats, or one the book does not price: {'; '.join(odd)}", out,
                        [g.partition(" ")[0] for g in odd])
    return out, None


@lru_cache(maxsize=256)
def _group_algos(names: tuple, excluded: tuple, default, listed: tuple) -> tuple[list, dict]:
    """(the exclusion patterns that name no module, each group's set of algos); cached, as a spec is
    rebuilt from its config wherever it is looked up."""
    match, lookup = [(p, _matcher(p)) for p in excluded], dict(listed)
    hit, per_group = set(), {}
    for group, ns in names:
        algos = set()
        for n in ns:
            covering = [p for p, m in match if m(n)]
            hit.update(covering)
            algos.add(None if covering else _listed(lookup, n, default))
        if group not in ("embedding", "router") and ns:
            # the quantisers target Linear layers: never the embedding, nor a router the book keeps
            # BF16 (a Linear only in MiniMax, Qwen3-MoE and Gemma 4, whose checkpoints exclude it;
            # DeepSeek's, GLM's, Kimi's and Qwen3.5's gates are parameters, not Linears)
            per_group[group] = frozenset(algos)
    return [p for p in excluded if p not in hit and not _uncounted(p)], per_group


SWIGLU = ("gate_proj", "up_proj", "down_proj")
GQA_ATTN = ("q_proj", "k_proj", "v_proj", "o_proj")


# The config keys module_names reads (its cache key).
MODULE_KEYS = ("model_type", "num_hidden_layers", "q_lora_rank", "index_head_dim", "first_k_dense_replace",
               "num_nextn_predict_layers", "layer_types", "full_attention_interval", "enable_moe_block")


def module_names(c: dict) -> tuple[tuple[str, tuple[str, ...]], ...] | None:
    """The Linear modules of each weight group, as the Hugging Face model names them (the text model's
    prefix, ``model.layers.{i}``), one expert standing for all, as (group, names) pairs; None for a
    model type not listed."""
    return _module_names(tuple((k, tuple(v) if isinstance(v, list) else v) for k in MODULE_KEYS
                               if (v := c.get(k)) is not None))


@lru_cache(maxsize=256)
def _module_names(key: tuple) -> tuple | None:
    c = {k: list(v) if isinstance(v, tuple) else v for k, v in key}
    t, L = c["model_type"], c["num_hidden_layers"]
    layer = "model.layers.{}.".format
    out = {"embedding": ["model.embed_tokens"], "head": ["lm_head"]}

    def add(group, layers, *modules):
        out.setdefault(group, []).extend(layer(i) + m for i in layers for m in modules)

    if t in ("deepseek_v3", "kimi_k2", "deepseek_v32", "glm_moe_dsa"):
        q = ("q_a_proj", "q_b_proj") if c.get("q_lora_rank") else ("q_proj",)
        attn = [f"self_attn.{m}" for m in (*q, "kv_a_proj_with_mqa", "kv_b_proj", "o_proj")]
        if "index_head_dim" in c:
            attn += [f"self_attn.indexer.{m}" for m in ("wq_b", "wk", "weights_proj")]
        dense, mtp = c["first_k_dense_replace"], c.get("num_nextn_predict_layers") or 0
        add("attention", range(L), *attn)
        add("dense_ffn", range(dense), *(f"mlp.{m}" for m in SWIGLU))
        for g, ls in (("routed_experts", range(dense, L)), ("mtp", range(L, L + mtp))):
            add(g, ls, *(f"mlp.experts.0.{m}" for m in SWIGLU))
        add("shared_experts", range(dense, L), *(f"mlp.shared_experts.{m}" for m in SWIGLU))
        add("mtp", range(L, L + mtp), *attn, *(f"mlp.shared_experts.{m}" for m in SWIGLU), "eh_proj")
        add("router", range(dense, L + mtp), "mlp.gate")
    elif t in ("llama", "qwen2", "qwen3", "qwen3_moe", "minimax_m2", "gemma4_text"):
        add("attention", range(L), *(f"self_attn.{m}" for m in GQA_ATTN))
        if t == "minimax_m2":
            add("routed_experts", range(L), *(f"block_sparse_moe.experts.0.{m}" for m in ("w1", "w2", "w3")))
            add("router", range(L), "block_sparse_moe.gate")
        elif t == "qwen3_moe":
            add("routed_experts", range(L), *(f"mlp.experts.0.{m}" for m in SWIGLU))
            add("router", range(L), "mlp.gate")
        else:                               # Gemma 4's dense MLP sits beside its expert block
            add("dense_ffn", range(L), *(f"mlp.{m}" for m in SWIGLU))
        if t == "gemma4_text" and c.get("enable_moe_block"):
            add("routed_experts", range(L), "experts.gate_up_proj", "experts.down_proj")
            add("router", range(L), "router.proj")
    elif t in ("qwen3_5_text", "qwen3_5_moe_text"):
        types = c.get("layer_types") or ["full_attention" if (i + 1) % c["full_attention_interval"] == 0
                                         else "linear_attention" for i in range(L)]
        add("attention", [i for i in range(L) if types[i] == "full_attention"], *(f"self_attn.{m}" for m in GQA_ATTN))
        add("attention", [i for i in range(L) if types[i] != "full_attention"],
            *(f"linear_attn.{m}" for m in ("in_proj_qkv", "in_proj_z", "in_proj_b", "in_proj_a", "out_proj")))
        if t == "qwen3_5_text":
            add("dense_ffn", range(L), *(f"mlp.{m}" for m in SWIGLU))
        else:
            add("routed_experts", range(L), *(f"mlp.experts.0.{m}" for m in SWIGLU))
            add("shared_experts", range(L), *(f"mlp.shared_expert.{m}" for m in SWIGLU), "mlp.shared_expert_gate")
            add("router", range(L), "mlp.gate")
    else:
        return None
    return tuple((g, tuple(ns)) for g, ns in out.items())


def _label(path_or_dict, c: dict) -> str:
    """A file's name (its folder's, for a plain config.json), else the config's own."""
    if isinstance(path_or_dict, (str, Path)):
        path = Path(path_or_dict)
        return path.parent.name if path.stem == "config" else path.stem.removesuffix("_config")
    return c.get("_name_or_path") or c["model_type"]


def readable_name(label: str, c: dict) -> str:
    """What a table calls a model read from a config: ``Model (Org)`` for a Hugging Face id, named
    by the file (AIConfigurator's ``Org--Model``) or else by the config's ``_name_or_path``
    (``Org/Model``; a local path there gives its last folder); otherwise ``label`` itself."""
    given = c.get("_name_or_path")
    if "--" not in label and isinstance(given, str) and given.strip("/ "):
        given = given.strip().rstrip("/")
        label = given.replace("/", "--") if re.fullmatch(r"[\w.-]+/[\w.-]+", given) else Path(given).name
    org, sep, model = label.partition("--")
    return f"{model} ({org})" if sep and org and model else label


# ``mamba_ssm_dtype``: the dtype Qwen3.5's configs keep the Gated DeltaNet state in, which SGLang
# serves it at (mamba2_state_dtype, text_config's before the outer config's, as AIConfigurator's
# sdk/models/qwen35.py mirrors it). ``mamba_ssm_cache_dtype``: NemotronH's SSM state dtype (float32,
# also NemotronHConfig's default), the dtype vLLM keeps a NemotronH SSM state in by default; the conv
# state stays in the model dtype (calc.kv prices it in BF16).
STATE_DTYPE_KEYS = ("mamba_ssm_dtype", "mamba_ssm_cache_dtype")
TORCH_DTYPES = {"float32": "fp32", "bfloat16": "bf16", "float16": "fp16"}


def shipped_state_dtype(c: dict) -> str | None:
    """The dtype the config says its fixed (linear-attention) state is kept in, as the book names
    dtypes; None where the config does not say."""
    for key in STATE_DTYPE_KEYS:
        if c.get(key) is not None:
            v = str(c[key]).removeprefix("torch.")
            if v not in TORCH_DTYPES:
                raise ParameterError(key, c[key], "a state dtype the book prices: " + ", ".join(TORCH_DTYPES))
            return TORCH_DTYPES[v]
    return None


EXPERT_KEYS = ("n_routed_experts", "num_local_experts", "num_experts")
TOP_K_KEYS = ("num_experts_per_tok", "num_experts_per_token")


def _check_top_k(c: dict) -> None:
    """A token picks at most as many experts as a layer routes to."""
    experts = next((c[k] for k in EXPERT_KEYS if c.get(k)), None)
    key = next((k for k in TOP_K_KEYS if c.get(k)), None)
    if experts and key and c[key] > experts:
        raise ParameterError(key, c[key], f"at most the {experts} routed experts of a layer")


def from_config(path_or_dict, *, id: str | None = None, name: str | None = None,
                params: tuple[float, float] | None = None, source: str = "", extra: dict | None = None) -> ModelSpec:
    """The public-assumption spec of a model from its config.json (a path or a dict).

    ``params`` gives stated (total, active) counts, such as a model card's; without it they are
    counted from the config (``specs.params``). ``extra`` adds registry keys kept beside the config.
    """
    c = load(path_or_dict)
    side = side_quant_config(path_or_dict)
    if side is not None:        # kept in the config, so a spec rebuilt from its config reads it again
        c = {**c, **flatten(side, "hf_quant_config.")}
    family = family_of(c)
    c = {**family.defaults, **c}
    if family.derive:
        c = family.derive(c)
    r = Reader(c, family.name)
    for key in family.needs:
        r(key)
    for key in SCHEDULES:
        if c.get(key) is not None and key not in family.schedules:
            v = c[key]
            raise ParameterError(key, f"a list of {len(v)}" if isinstance(v, list) else v,
                                 f"no {key}: the book reads {c['model_type']} as the {family.name} family, with "
                                 f"{', '.join(family.schedules) or 'no per-layer schedule'}, and would price its "
                                 "layers alike")
    for key in POSITIVE & c.keys():              # dimensions only the parameter counter reads
        if c[key] is not None:
            r.dim(key)
    _check_top_k(c)
    groups = tuple(family.groups(c))
    label = id or _label(path_or_dict, c)
    formats, unknown = weight_formats(c)
    raw = {**family.kv_side, **(extra or {}), "config": c, "family": family.name,
           "weight_formats": formats, "weights_unknown": unknown, "shipped_state_dtype": shipped_state_dtype(c)}
    spec = ModelSpec(id=label, name=name or readable_name(label, c), assumptions="public",
                     layers=r.dim("num_hidden_layers"),
                     attention=groups, params_total=0.0, params_active=0.0,
                     source=source or f"config.json ({family.name} family)", raw=raw)
    if params is None:
        from .params import param_counts      # params builds on the spec made here: import when needed
        try:
            counts = param_counts(spec)
        except KeyError as e:                       # a key only the parameter counter reads
            raise ParameterError(e.args[0], None, f"a key the {family.name} family needs "
                                 "(missing from the config)") from None
        params = (counts.total, counts.activated())
    return replace(spec, params_total=float(params[0]), params_active=float(params[1]))

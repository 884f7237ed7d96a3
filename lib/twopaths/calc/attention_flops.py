"""FLOPs and cache bytes one decoded token spends in attention, against context length.

A multiply-add is 2 FLOPs. At context T (the new token sees T tokens, itself included), one layer
attends to ``n_attended`` entries and its indexer scores ``n_scored``:

=========  ===============================================  ===========================  ===========
kind       attends to                                        per head and entry: key+val  scores
=========  ===============================================  ===========================  ===========
``mla``    every token (absorbed MLA, as decode runs it)     (d_c + d_r) + d_c            0
``dsa``    the top k tokens its indexer picks                (d_c + d_r) + d_c            T
``window`` the last w tokens (V4's sliding-only layers)      d + d (one shared head)      0
``csa``    the window + the top k of floor(T/4) entries      d + d                        floor(T/4)
``hca``    the window + every one of floor(T/128) entries    d + d                        0
``kda``    nothing: a fixed state per head (K3's KDA)        3 d_k d_v per token, whatever T  0
=========  ===============================================  ===========================  ===========

    attention FLOPs = 2 H n_attended (key + value)  +  2 H_I d_I n_scored

Prefill (``prefill=True``) runs MLA un-absorbed, as prefill kernels do: per head and entry a key of
``qk_nope + qk_rope`` and a value of ``v_head_dim`` instead of the latent, which is cheaper when many
queries share the keys. The KDA state costs three ``d_k x d_v`` products per head and token (output,
prediction, update) in either form.

The projections (queries, keys, compressors, indexer queries, output) are weights: with the MoE and
everything else they cost 2 FLOPs per activated parameter, whatever T (``twopaths.calc.params``).
Bytes read per token are the cache entries the layer touches, in the layout ``twopaths.calc.kv``
sizes: indexer keys for every scored entry, full entries for every attended one.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import ParameterError
from ..specs import ModelSpec
from . import kv
from .params import param_counts


@dataclass(frozen=True)
class AttentionLayers:
    """``layers`` layers of one ``kind`` and the dimensions that set their cost."""

    kind: str
    layers: int
    heads: int
    key_dim: int
    value_dim: int
    rope_dim: int
    window: int = 0
    ratio: int = 1
    topk: int = 0
    index_heads: int = 0
    index_dim: int = 0
    prefill_key_dim: int = 0     # MLA un-absorbed (0: as in decode)
    prefill_value_dim: int = 0

    def attended(self, tokens: int) -> int:
        entries = tokens // self.ratio
        if self.kind == "mla":
            return tokens
        if self.kind == "kda":
            return 0
        if self.kind == "dsa":
            return min(tokens, self.topk)
        near = min(tokens, self.window)
        return near + {"window": 0, "csa": min(entries, self.topk), "hca": entries}[self.kind]

    def scored(self, tokens: int) -> int:
        return tokens // self.ratio if self.kind in ("dsa", "csa") else 0


def attention_layers(spec: ModelSpec | str) -> list[AttentionLayers]:
    """The attention of ``spec`` by kind, read from its public config (DeepSeek V3, V3.2, V4)."""
    spec = kv._spec(spec)
    c = spec.config
    heads, rope = c.get("num_attention_heads"), c.get("qk_rope_head_dim")
    index = dict(topk=c.get("index_topk", 0), index_heads=c.get("index_n_heads", 0), index_dim=c.get("index_head_dim", 0))
    unabsorbed = dict(prefill_key_dim=c.get("qk_nope_head_dim", 0) + (rope or 0), prefill_value_dim=c.get("v_head_dim", 0))
    if c.get("model_type") in ("deepseek_v3", "deepseek_v32"):
        latent = c["kv_lora_rank"]
        kind = "dsa" if "index_topk" in c else "mla"
        return [AttentionLayers(kind, c["num_hidden_layers"], heads, latent + rope, latent, rope, **index, **unabsorbed)]
    if c.get("model_type") == "kimi_linear":
        latent, mla_layers = c["kv_lora_rank"], len(c["linear_attn_config.full_attn_layers"])
        d = c["linear_attn_config.head_dim"]
        return [AttentionLayers("mla", mla_layers, heads, latent + rope, latent, rope, **unabsorbed),
                AttentionLayers("kda", c["num_hidden_layers"] - mla_layers, c["linear_attn_config.num_heads"], d, d, 0)]
    if c.get("model_type") == "deepseek_v4":
        ratios = c["compress_ratios"][:c["num_hidden_layers"]]
        d, out = c["head_dim"], []
        for ratio, kind in ((0, "window"), (4, "csa"), (128, "hca")):
            if ratios.count(ratio):
                extra = index if kind == "csa" else {}
                out.append(AttentionLayers(kind, ratios.count(ratio), heads, d, d, rope, c["sliding_window"],
                                           max(ratio, 1), **extra))
        return out
    raise ParameterError("model", spec.id, "a DeepSeek V3, V3.2, V4 or Kimi K3 model (the kinds this counter knows)")


def layer_flops(group: AttentionLayers, tokens: int, prefill: bool = False) -> int:
    """FLOPs one layer of ``group`` spends on a new token at context ``tokens``."""
    tokens = kv._check_tokens(tokens)
    if group.kind == "kda":
        return 2 * 3 * group.heads * group.key_dim * group.value_dim
    key, value = group.key_dim, group.value_dim
    if prefill and group.prefill_key_dim:
        key, value = group.prefill_key_dim, group.prefill_value_dim
    core = 2 * group.heads * group.attended(tokens) * (key + value)
    return core + 2 * group.index_heads * group.index_dim * group.scored(tokens)


def attention_flops(spec: ModelSpec | str, tokens: int, prefill: bool = False) -> int:
    """Attention FLOPs per token over every layer of ``spec`` at context ``tokens`` (a decoded token,
    or with ``prefill`` a prompt token)."""
    return sum(g.layers * layer_flops(g, tokens, prefill) for g in attention_layers(spec))


def weight_flops(spec: ModelSpec | str) -> int:
    """2 FLOPs per activated parameter (every projection, expert and the output head)."""
    return 2 * param_counts(kv._spec(spec)).activated()


def flops_per_token(spec: ModelSpec | str, tokens: int) -> int:
    """What one decoded token costs at context ``tokens``: weights plus attention."""
    return weight_flops(spec) + attention_flops(spec, tokens)


def layer_bytes_read(spec: ModelSpec | str, group: AttentionLayers, tokens: int, kv_dtype=None) -> int:
    """Cache bytes one layer of ``group`` reads for a new token: scored indexer keys, attended entries."""
    spec = kv._spec(spec)
    entry_fmt, index_fmt = kv.formats_for(spec, kv_dtype)
    entry = kv.entry_bytes(group.key_dim, group.rope_dim, entry_fmt)
    index = kv.entry_bytes(group.index_dim, 0, index_fmt) if group.index_dim else 0
    return group.attended(kv._check_tokens(tokens)) * entry + group.scored(tokens) * index


def bytes_read_per_token(spec: ModelSpec | str, tokens: int, kv_dtype=None) -> int:
    """Cache bytes one decoded token reads over every layer of ``spec`` at context ``tokens``."""
    return sum(g.layers * layer_bytes_read(spec, g, tokens, kv_dtype) for g in attention_layers(spec))

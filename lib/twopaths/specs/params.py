"""Parameter counts from the public configs: per component, in total and activated per token.

Counts are built from the verbatim config keys each spec keeps (``spec.raw["config"]``), one
formula per module shape, for the three families the book covers: DeepSeek V3 / V3.2 (MLA, with
V3.2's DSA indexer), DeepSeek V4 (sliding window, CSA and HCA with their compressors and indexer,
grouped output projection, mHC) and Kimi K3 (KDA + Gated MLA, Stable LatentMoE, AttnRes).

Conventions, as the model cards count:
- ``total`` excludes the MTP layers (DeepSeek's 671B leaves out the 14B MTP module); they are a
  separate component (``MTP``) with ``in_total=False``.
- ``activated`` counts every non-expert weight, the top-k routed experts of each MoE layer, and the
  output head, but not the input embedding (a lookup, not a matmul); ``activated(..., embedding=True)``
  adds it.
- Norm weights are their own component, so a storage format never applies to them.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import ParameterError
from . import ModelSpec, model

# Which storage-format group each component belongs to (weights.py assigns a format per group).
GROUPS = ("embedding", "head", "attention", "router", "routed_experts", "shared_experts", "dense_ffn",
          "latent_proj", "residual", "norms", "mtp")


@dataclass(frozen=True)
class Component:
    name: str
    group: str
    params: int          # over the whole model
    activated: int       # per token
    layers: int = 1      # how many layers hold it (for per-layer views)
    in_total: bool = True


@dataclass(frozen=True)
class ParamCounts:
    model: str
    components: tuple[Component, ...]

    @property
    def total(self) -> int:
        return sum(c.params for c in self.components if c.in_total)

    def activated(self, embedding: bool = False) -> int:
        return sum(c.activated for c in self.components
                   if c.in_total and (embedding or c.group != "embedding"))

    def by_group(self, *, include_mtp: bool = False) -> dict[str, int]:
        out = dict.fromkeys(GROUPS, 0)
        for c in self.components:
            if c.in_total or include_mtp:
                out[c.group] += c.params
        return {g: n for g, n in out.items() if n}

    def component(self, name: str) -> Component:
        for c in self.components:
            if c.name == name:
                return c
        raise ParameterError("component", name, ", ".join(repr(c.name) for c in self.components))


# ---- module shapes (weights only; a Linear(a -> b) without bias holds a*b) ----

def swiglu(d: int, inter: int) -> int:
    """gate, up (d -> inter) and down (inter -> d)."""
    return 3 * d * inter


def mla(c: dict, heads: int, output_gate: bool = False) -> tuple[int, int]:
    """(weights, norm weights) of one MLA layer: q_a, q_b (or one full-rank q where ``q_lora_rank`` is
    null, as in Kimi Linear), kv_a (latent + rope), kv_b, o [, gate]."""
    d, ql, kvl = c["hidden_size"], c.get("q_lora_rank"), c["kv_lora_rank"]
    nope, rope, v = c["qk_nope_head_dim"], c["qk_rope_head_dim"], c["v_head_dim"]
    q = d * ql + ql * heads * (nope + rope) if ql else d * heads * (nope + rope)
    w = q + d * (kvl + rope) + kvl * heads * (nope + v) + heads * v * d
    if output_gate:             # K3's Gated MLA: a full-rank sigmoid gate on the heads' output
        w += d * heads * v
    return w, (ql or 0) + kvl


def dsa_indexer(c: dict) -> tuple[int, int]:
    """V3.2's Lightning Indexer: q from MLA's q-latent, one shared key, per-head weights; LayerNorm on k."""
    d, ql, h, di = c["hidden_size"], c["q_lora_rank"], c["index_n_heads"], c["index_head_dim"]
    return ql * h * di + d * di + d * h, 2 * di


def kda(c: dict) -> tuple[int, int]:
    """One KDA layer as AIConfigurator and fla read it: q, k, v (d -> H*K each), the output gate (full
    rank d -> H*K where ``use_full_rank_gate``, as K3's; else a low-rank pair d -> K -> H*K, as Kimi
    Linear's), the forget gate's low-rank pair, beta (d -> H), depthwise short convs on q, k, v,
    A_log (H), dt_bias (H*K), o."""
    d, h, k = c["hidden_size"], c["linear_attn_config.num_heads"], c["linear_attn_config.head_dim"]
    p, conv = h * k, c["linear_attn_config.short_conv_kernel_size"]
    gate = d * p if c.get("linear_attn_config.use_full_rank_gate") else d * k + k * p
    w = 3 * d * p + gate + (d * k + k * p) + d * h + 3 * p * conv + h + p + p * d
    return w, k                 # the gated RMSNorm's weight is shared across heads


def v4_attention(c: dict, ratio: int) -> dict[str, tuple[int, int]]:
    """One V4 layer's attention parts, {part: (weights, norm weights)}, for compress ratio 0, 4 or 128."""
    d, ql, h, hd = c["hidden_size"], c["q_lora_rank"], c["num_attention_heads"], c["head_dim"]
    core = (d * ql + ql * h * hd + d * hd                 # q_a, q_b, the single shared kv head
            + c["o_lora_rank"] * h * hd                   # grouped o_a: o_groups blocks of (H*hd/g -> o_lora)
            + d * c["o_groups"] * c["o_lora_rank"]        # o_b
            + h)                                          # one attention-sink logit per head
    parts = {"core": (core, ql + hd)}
    if ratio:
        slots = 2 if ratio == 4 else 1                    # CSA windows overlap: two slots per entry
        parts["compressor"] = (ratio * slots * hd + 2 * d * slots * hd, hd)   # position bias, kv and gate
    if ratio == 4:
        di, hi = c["index_head_dim"], c["index_n_heads"]
        parts["indexer"] = (ratio * 2 * di + 2 * d * 2 * di + ql * hi * di + d * hi, di)
    return parts


def mhc(c: dict) -> int:
    """One mHC (pre/post/residual-mixing weights from the flattened n streams)."""
    n, d = c["hc_mult"], c["hidden_size"]
    return (2 * n + n * n) * (n * d + 1) + 3


# ---- families ----

def _deepseek(spec: ModelSpec) -> list[Component]:
    c = spec.raw["config"]
    d, L, heads = c["hidden_size"], c["num_hidden_layers"], c["num_attention_heads"]
    dense = c["first_k_dense_replace"]
    moe = L - dense
    E, k, shared = c["n_routed_experts"], c["num_experts_per_tok"], c["n_shared_experts"]
    expert = swiglu(d, c["moe_intermediate_size"])
    attn_w, attn_n = mla(c, heads)
    comps = _embedding_and_head(c)
    comps.append(Component("MLA attention", "attention", L * attn_w, L * attn_w, L))
    norms = L * (attn_n + 2 * d) + d
    if "index_n_heads" in c:
        idx_w, idx_n = dsa_indexer(c)
        comps.append(Component("DSA indexer", "attention", L * idx_w, L * idx_w, L))
        norms += L * idx_n
    comps += [
        Component("dense FFN", "dense_ffn", dense * swiglu(d, c["intermediate_size"]),
                  dense * swiglu(d, c["intermediate_size"]), dense),
        Component("router", "router", moe * (E * d + E), moe * (E * d + E), moe),   # gate + selection bias
        Component("routed experts", "routed_experts", moe * E * expert, moe * k * expert, moe),
        Component("shared experts", "shared_experts", moe * shared * expert, moe * shared * expert, moe),
        Component("norms", "norms", norms, norms, L),
    ]
    mtp_layer = attn_w + attn_n + (E * d + E) + (E + shared) * expert + 2 * d
    comps.append(_mtp(c, mtp_layer))
    return comps


def _deepseek_v4(spec: ModelSpec) -> list[Component]:
    c = spec.raw["config"]
    d, L = c["hidden_size"], c["num_hidden_layers"]
    E, k, shared = c["n_routed_experts"], c["num_experts_per_tok"], c["n_shared_experts"]
    expert = swiglu(d, c["moe_intermediate_size"])
    ratios = c["compress_ratios"][:L]        # the list carries one more entry, for the MTP layer
    kind = {0: "sliding-window", 4: "CSA", 128: "HCA"}
    sums: dict[str, list[int]] = {}
    norms = L * 2 * d + d
    for r in ratios:
        if r not in kind:
            raise ValueError(f"{spec.id}: compress ratio {r} is not one V4 uses (0, 4, 128)")
        for part, (w, n) in v4_attention(c, r).items():
            name = f"{kind[r]} attention" if part == "core" else f"{kind[r]} {part}"
            acc = sums.setdefault(name, [0, 0])
            acc[0] += w
            acc[1] += 1 if part == "core" else 0
            norms += n
    comps = _embedding_and_head(c)
    comps += [Component(name, "attention", w, w, max(n, 1)) for name, (w, n) in sums.items()]
    hc = L * 2 * mhc(c) + c["hc_mult"] * (c["hc_mult"] * d + 1) + 1     # two per layer, plus the head's
    comps += [
        Component("router", "router", L * (E * d + E), L * (E * d + E), L),
        Component("routed experts", "routed_experts", L * E * expert, L * k * expert, L),
        Component("shared experts", "shared_experts", L * shared * expert, L * shared * expert, L),
        Component("mHC residual streams", "residual", hc, hc, L),
        Component("norms", "norms", norms, norms, L),
    ]
    last = c["compress_ratios"][L] if len(c["compress_ratios"]) > L else 0
    mtp_attn = sum(w + n for w, n in v4_attention(c, last).values())
    comps.append(_mtp(c, mtp_attn + (E * d + E) + (E + shared) * expert + 2 * mhc(c) + 2 * d))
    return comps


def _kimi_k3(spec: ModelSpec) -> list[Component]:
    c = spec.raw["config"]
    d, L, heads = c["hidden_size"], c["num_hidden_layers"], c["num_attention_heads"]
    n_kda = len(c["linear_attn_config.kda_layers"])
    n_mla = len(c["linear_attn_config.full_attn_layers"])
    dense = c["first_k_dense_replace"]
    moe = L - dense
    E, k, shared = c["num_experts"], c["num_experts_per_token"], c["num_shared_experts"]
    # K3's LatentMoE and AttnRes; Kimi Linear has neither (its experts are full width)
    latent = c.get("routed_expert_hidden_size") or d
    proj = 2 * d * latent if "routed_expert_hidden_size" in c else 0
    expert = swiglu(latent, c["moe_intermediate_size"])             # routed experts live in the latent
    shared_expert = swiglu(d, c["moe_intermediate_size"])            # shared experts stay full width
    kda_w, kda_n = kda(c)
    mla_w, mla_n = mla(c, heads, output_gate=c.get("mla_use_output_gate", False))
    # AttnRes: a zero-initialised pseudo-query (d) and an RMSNorm (d) per sublayer, plus the final one.
    attnres = (2 * L + 1) * 2 * d if c.get("attn_res_block_size") else 0
    norms = n_kda * kda_n + n_mla * mla_n + L * 2 * d + d + (moe * latent if c.get("latent_moe_use_norm") else 0)
    comps = _embedding_and_head(c)
    comps += [
        Component("KDA attention", "attention", n_kda * kda_w, n_kda * kda_w, n_kda),
        Component("Gated MLA attention", "attention", n_mla * mla_w, n_mla * mla_w, n_mla),
        Component("dense FFN", "dense_ffn", dense * swiglu(d, c["intermediate_size"]),
                  dense * swiglu(d, c["intermediate_size"]), dense),
        Component("router", "router", moe * (E * d + E), moe * (E * d + E), moe),
        Component("latent projections", "latent_proj", moe * proj, moe * proj, moe),
        Component("routed experts", "routed_experts", moe * E * expert, moe * k * expert, moe),
        Component("shared experts", "shared_experts", moe * shared * shared_expert,
                  moe * shared * shared_expert, moe),
        Component("AttnRes residual", "residual", attnres, attnres, L),
        Component("norms", "norms", norms, norms, L),
    ]
    comps.append(_mtp(c, 0))
    return comps


def _moe_or_dense(c: dict, d: int, layers: int) -> list[Component]:
    """The FFN of ``layers`` GQA-family layers: routed experts (Mixtral, Qwen-MoE, MiniMax, gpt-oss;
    gpt-oss's experts and router carry biases, MiniMax's router a selection bias) with a gated shared
    expert where the config has one (Qwen), or a dense SwiGLU."""
    E = c.get("num_local_experts") or c.get("num_experts") or c.get("n_routed_experts")
    if not E:
        ffn = swiglu(d, c["intermediate_size"]) + (2 * c["intermediate_size"] + d if c.get("mlp_bias") else 0)
        return [Component("dense FFN", "dense_ffn", layers * ffn, layers * ffn, layers)]
    inter, bias = c.get("moe_intermediate_size") or c["intermediate_size"], c["model_type"] == "gpt_oss"
    expert = swiglu(d, inter) + (2 * inter + d if bias else 0)
    router = E * d + (E if bias or c.get("use_routing_bias") else 0)
    shared = c.get("shared_expert_intermediate_size") or 0
    shared = swiglu(d, shared) + d if shared else 0      # the shared expert and its sigmoid gate
    k = c["num_experts_per_tok"]
    return [Component("router", "router", layers * router, layers * router, layers),
            Component("routed experts", "routed_experts", layers * E * expert, layers * k * expert, layers),
            Component("shared experts", "shared_experts", layers * shared, layers * shared, layers)]


def _gqa_attention(c: dict, heads: int, kv_heads: int, head_dim: int, gate: bool = False) -> tuple[int, int]:
    """(weights, norm weights) of one GQA layer: q (and its output gate), k, v, o; Qwen2's q/k/v biases,
    ``attention_bias``'s four, gpt-oss's per-head sinks; Qwen3's per-head q/k norms, MiniMax's whole ones."""
    d, q, kv = c["hidden_size"], heads * head_dim, kv_heads * head_dim
    w = d * q * (2 if gate else 1) + 2 * d * kv + q * d
    if c["model_type"] in ("qwen2", "qwen2_moe", "mimo"):       # Qwen2 and MiMo: q, k, v biases only
        w += q + 2 * kv
    elif c.get("attention_bias"):
        w += q + 2 * kv + d
    w += heads if c["model_type"] == "gpt_oss" else 0
    if c.get("use_qk_norm") and c.get("qk_norm_type") == "per_layer":
        norms = q + kv
    elif c["model_type"].startswith("qwen3"):
        norms = 2 * head_dim
    else:
        norms = 0
    return w, norms


def _gqa(spec: ModelSpec) -> list[Component]:
    c = spec.raw["config"]
    d, L, heads = c["hidden_size"], c["num_hidden_layers"], c["num_attention_heads"]
    head_dim = c.get("head_dim") or d // heads
    attn_w, attn_n = _gqa_attention(c, heads, c.get("num_key_value_heads") or heads, head_dim)
    ffn = _moe_or_dense(c, d, L)
    norms = L * (attn_n + 2 * d) + d
    comps = _embedding_and_head(c) + [Component("attention", "attention", L * attn_w, L * attn_w, L)] + ffn
    comps.append(Component("norms", "norms", norms, norms, L))
    layer = attn_w + attn_n + 2 * d + sum(f.params for f in ffn) // L
    comps.append(_mtp(c, layer))
    return comps


def _gemma(spec: ModelSpec) -> list[Component]:
    """Gemma 2/3/4: sliding and global layers (Gemma 4's global ones with their own head size and KV
    heads, and no v_proj where K serves as V); per-head q/k norms; a dense GeGLU MLP in every layer,
    and with ``enable_moe_block`` a routed-expert block beside it (router: projection, input scale and
    a scale per expert) with its three extra norms."""
    c = spec.raw["config"]
    if c.get("hidden_size_per_layer_input"):
        raise ParameterError("hidden_size_per_layer_input", c["hidden_size_per_layer_input"],
                             "0 (the counter does not read Gemma's per-layer input embeddings)")
    d, L, heads = c["hidden_size"], c["num_hidden_layers"], c["num_attention_heads"]
    attn_w = attn_n = 0
    for t in c["layer_types"][:L]:
        glob = t == "full_attention"
        hd = c.get("global_head_dim") or c["head_dim"] if glob else c["head_dim"]
        kvh = (c.get("num_global_key_value_heads") or c["num_key_value_heads"]) if glob else c["num_key_value_heads"]
        v = 0 if glob and c.get("attention_k_eq_v") else d * kvh * hd
        attn_w += 2 * d * heads * hd + d * kvh * hd + v
        attn_n += 2 * hd
    dense = L * swiglu(d, c["intermediate_size"])
    comps = _embedding_and_head(c) + [Component("attention", "attention", attn_w, attn_w, L),
                                      Component("dense FFN", "dense_ffn", dense, dense, L)]
    norms = attn_n + L * 4 * d + d
    if c.get("enable_moe_block"):
        E, k = c["num_experts"], c["top_k_experts"]
        expert = swiglu(d, c["moe_intermediate_size"])
        comps += [Component("router", "router", L * (E * d + d + E), L * (E * d + d + E), L),
                  Component("routed experts", "routed_experts", L * E * expert, L * k * expert, L)]
        norms += L * 3 * d
    return comps + [Component("norms", "norms", norms, norms, L), _mtp(c, 0)]


def _mimo_v2(spec: ModelSpec) -> list[Component]:
    """MiMo-V2: full layers (K 192, V 128 per head) and sliding-window ones with their own heads and a
    sink logit per head; ``moe_layer_freq`` marks the dense (0) and MoE layers; the router carries a
    selection bias, as DeepSeek's."""
    c = spec.raw["config"]
    d, L = c["hidden_size"], c["num_hidden_layers"]
    attn = 0
    for swa in c["hybrid_layer_pattern"][:L]:
        pre = "swa_" if swa else ""
        h, kvh = c[pre + "num_attention_heads"], c[pre + "num_key_value_heads"]
        hk, hv = c[pre + "head_dim"], c[pre + "v_head_dim"]
        sinks = c.get("add_swa_attention_sink_bias" if swa else "add_full_attention_sink_bias")
        attn += d * (h * hk + kvh * (hk + hv)) + h * hv * d + (h if sinks else 0)
    moe = sum(1 for f in c["moe_layer_freq"][:L] if f)
    E, k = c["n_routed_experts"], c["num_experts_per_tok"]
    expert = swiglu(d, c["moe_intermediate_size"])
    dense = (L - moe) * swiglu(d, c["intermediate_size"])
    norms = L * 2 * d + d
    return _embedding_and_head(c) + [
        Component("attention", "attention", attn, attn, L),
        Component("dense FFN", "dense_ffn", dense, dense, L - moe),
        Component("router", "router", moe * (E * d + E), moe * (E * d + E), moe),
        Component("routed experts", "routed_experts", moe * E * expert, moe * k * expert, moe),
        Component("norms", "norms", norms, norms, L), _mtp(c, 0)]


def _llama4(spec: ModelSpec) -> list[Component]:
    """Llama 4: GQA attention (its q/k norm has no weight); MoE layers (``moe_layers``, by default every
    ``interleave_moe_layer_step``-th) with routed experts and one shared expert of ``intermediate_size``,
    dense SwiGLU layers of ``intermediate_size_mlp`` between them."""
    c = spec.raw["config"]
    d, L, heads = c["hidden_size"], c["num_hidden_layers"], c["num_attention_heads"]
    hd, kvh = c.get("head_dim") or d // heads, c["num_key_value_heads"]
    step = c.get("interleave_moe_layer_step", 1)
    moe = len(c.get("moe_layers") or range(step - 1, L, step))
    E, k, expert = c["num_local_experts"], c["num_experts_per_tok"], swiglu(d, c["intermediate_size"])
    attn = L * (2 * d * heads * hd + 2 * d * kvh * hd)
    dense = (L - moe) * swiglu(d, c["intermediate_size_mlp"])
    norms = L * 2 * d + d
    return _embedding_and_head(c) + [
        Component("attention", "attention", attn, attn, L),
        Component("dense FFN", "dense_ffn", dense, dense, L - moe),
        Component("router", "router", moe * E * d, moe * E * d, moe),
        Component("routed experts", "routed_experts", moe * E * expert, moe * k * expert, moe),
        Component("shared experts", "shared_experts", moe * expert, moe * expert, moe),
        Component("norms", "norms", norms, norms, L), _mtp(c, 0)]


def gated_deltanet(c: dict) -> tuple[int, int]:
    """One Gated DeltaNet layer (Qwen3-Next, Qwen3.5): q, k (key heads) and v, z (value heads) from
    d; beta and a (one per value head); the depthwise conv over q, k, v; A_log and dt_bias; o."""
    d, K = c["hidden_size"], c["linear_conv_kernel_dim"]
    qk, nv = c["linear_num_key_heads"] * c["linear_key_head_dim"], c["linear_num_value_heads"]
    v = nv * c["linear_value_head_dim"]
    w = d * (2 * qk + 2 * v) + d * 2 * nv + (2 * qk + v) * K + 2 * nv + v * d
    return w, c["linear_value_head_dim"]      # the gated RMSNorm's weight is shared across heads


def _qwen_hybrid(spec: ModelSpec) -> list[Component]:
    c = spec.raw["config"]
    d, L, heads = c["hidden_size"], c["num_hidden_layers"], c["num_attention_heads"]
    full = sum(g.layers for g in spec.attention if g.kind == "mha")
    linear = L - full
    attn_w, attn_n = _gqa_attention(c, heads, c["num_key_value_heads"], c["head_dim"],
                                    gate=c.get("attn_output_gate", True))
    gdn_w, gdn_n = gated_deltanet(c)
    ffn = _moe_or_dense(c, d, L)
    norms = full * attn_n + linear * gdn_n + L * 2 * d + d
    comps = _embedding_and_head(c) + [
        Component("Gated DeltaNet attention", "attention", linear * gdn_w, linear * gdn_w, linear),
        Component("gated attention", "attention", full * attn_w, full * attn_w, full)] + ffn
    comps += [Component("norms", "norms", norms, norms, L), _mtp(c, 0)]
    return comps


def mamba2(c: dict) -> tuple[int, int]:
    """One NemotronH Mamba-2 mixer: in_proj (d -> z and x of heads x head_dim each, B and C of n_groups
    x state size each, dt one a head), the depthwise conv over x, B, C with its bias, dt_bias, A_log
    and D (one a head), out_proj; its gated RMSNorm holds heads x head_dim weights."""
    d, heads, N = c["hidden_size"], c["mamba_num_heads"], c["ssm_state_size"]
    inner = heads * c["mamba_head_dim"]
    conv = inner + 2 * c["n_groups"] * N
    bias = c.get("use_bias", False)
    w = d * (inner + conv + heads) + (inner + conv + heads if bias else 0)
    w += conv * c["conv_kernel"] + (conv if c.get("use_conv_bias", True) else 0) + 3 * heads
    return w + inner * d + (d if bias else 0), inner


def relu2_mlp(c: dict, d: int, inter: int) -> int:
    """NemotronH's MLP: up (d -> inter) and down, no gate (squared ReLU), biases where ``mlp_bias``."""
    return 2 * d * inter + (inter + d if c.get("mlp_bias") else 0)


def _nemotron_h(spec: ModelSpec) -> list[Component]:
    """NemotronH as transformers builds it: a schedule of Mamba-2, GQA attention (q, k, v, o, no
    biases), MLP and MoE blocks, each behind one RMSNorm. A MoE block holds a sigmoid router with its
    selection bias (a buffer in transformers, in the checkpoint), routed experts and one shared expert
    (squared-ReLU MLPs), and on Nemotron 3 Super and Ultra latent projections d -> moe_latent_size ->
    d around the routed experts, which then run in the latent. The MTP block is not counted."""
    from .from_config import nemotron_h_schedule
    c = spec.raw["config"]
    d, L, heads, hd = c["hidden_size"], c["num_hidden_layers"], c["num_attention_heads"], c["head_dim"]
    types = nemotron_h_schedule(c)
    n_mamba, n_attn, n_mlp, moe = (types.count(t) for t in ("linear_attention", "full_attention", "mlp", "moe"))
    mamba_w, mamba_n = mamba2(c)
    attn = 2 * d * heads * hd + 2 * d * c["num_key_value_heads"] * hd
    mlp = relu2_mlp(c, d, c["intermediate_size"]) if n_mlp else 0
    comps = _embedding_and_head(c) + [
        Component("Mamba-2 mixer", "attention", n_mamba * mamba_w, n_mamba * mamba_w, n_mamba),
        Component("attention", "attention", n_attn * attn, n_attn * attn, n_attn),
        Component("dense FFN", "dense_ffn", n_mlp * mlp, n_mlp * mlp, n_mlp)]
    if moe:
        E, k = c["n_routed_experts"], c["num_experts_per_tok"]
        latent = c.get("moe_latent_size") or d
        # fc1 (d -> latent) and fc2 (latent -> d) have an MLP's shape
        proj = relu2_mlp(c, d, latent) if c.get("moe_latent_size") else 0
        expert = relu2_mlp(c, latent, c["moe_intermediate_size"])
        shared = relu2_mlp(c, d, c["moe_shared_expert_intermediate_size"])   # one MLP, as transformers builds it
        comps += [Component("router", "router", moe * (E * d + E), moe * (E * d + E), moe),
                  Component("latent projections", "latent_proj", moe * proj, moe * proj, moe),
                  Component("routed experts", "routed_experts", moe * E * expert, moe * k * expert, moe),
                  Component("shared experts", "shared_experts", moe * shared, moe * shared, moe)]
    norms = n_mamba * mamba_n + L * d + d
    return comps + [Component("norms", "norms", norms, norms, L), _mtp(c, 0)]


def _step3p7(spec: ModelSpec) -> list[Component]:
    """Step-3.7-Flash as transformers builds it: GQA attention with per-head q/k norms and a sigmoid
    output gate a query head (g_proj, d -> heads), the sliding layers with their own query heads;
    dense SwiGLU layers, then MoE layers of routed experts, one shared expert of ``share_expert_dim``
    and a sigmoid router with its selection bias (a buffer in transformers, in the checkpoint). The
    MTP layers are not counted."""
    from .from_config import step3p7_layer_heads, step3p7_moe_layers
    c = spec.raw["config"]
    d, L, hd, kvh = c["hidden_size"], c["num_hidden_layers"], c["head_dim"], c["num_key_value_heads"]
    attn = sum(2 * d * h * hd + 2 * d * kvh * hd + d * h for h in step3p7_layer_heads(c))
    moe = sum(step3p7_moe_layers(c))
    E, k = c["n_routed_experts"], c["num_experts_per_tok"]
    expert, dense = swiglu(d, c["moe_intermediate_size"]), (L - moe) * swiglu(d, c["intermediate_size"])
    router = E * d + (E if c.get("use_moe_router_bias", True) else 0)
    shared = swiglu(d, c["share_expert_dim"])
    norms = L * (2 * hd + 2 * d) + d
    return _embedding_and_head(c) + [
        Component("attention", "attention", attn, attn, L),
        *_dense_then_moe(L, moe, dense, router, E, k, expert, shared), Component("norms", "norms", norms, norms, L),
        _mtp(c, 0)]


def _nemotron_nas(spec: ModelSpec) -> list[Component]:
    """Nemotron-NAS as its DeciLM layers hold it, layer by layer (``from_config.nas_blocks``): GQA
    attention (q, k, v, o, no biases) with its input RMSNorm, or a d -> d Linear in its place with the
    norm, or nothing; a SwiGLU of the layer's own width with its post-attention RMSNorm, or a d -> d
    Linear with the norm, or nothing. Dense: every weight is active."""
    from .from_config import nas_blocks
    c = spec.raw["config"]
    d, heads = c["hidden_size"], c["num_attention_heads"]
    hd = c.get("head_dim") or d // heads
    blocks = nas_blocks(c)
    attn = ffn = norms = 0
    for b in blocks:
        if b.attention == "linear":
            attn += d * d
        elif b.attention is not None:
            attn += 2 * d * heads * hd + 2 * d * b.attention * hd
        ffn += d * d if b.ffn == "linear" else swiglu(d, b.ffn) if b.ffn is not None else 0
        norms += d * ((b.attention is not None) + (b.ffn is not None))
    norms += d
    n_attn, n_ffn = (sum(getattr(b, part) is not None for b in blocks) for part in ("attention", "ffn"))
    return _embedding_and_head(c) + [
        Component("attention", "attention", attn, attn, n_attn),
        Component("dense FFN", "dense_ffn", ffn, ffn, n_ffn),
        Component("norms", "norms", norms, norms, len(blocks)), _mtp(c, 0)]


def _minimax_m3(spec: ModelSpec) -> list[Component]:
    """MiniMax-M3 as transformers builds its text model: GQA attention with per-head q/k norms in every
    layer, and on the sparse layers a Lightning Indexer (q: d -> index heads x index_head_dim, one key
    d -> index_head_dim, each with its norm); dense SwiGLU layers of ``dense_intermediate_size``, then
    MoE layers of routed experts (``intermediate_size`` wide), one shared expert of
    ``shared_intermediate_size`` and a sigmoid router with its selection bias (a buffer in
    transformers, in the checkpoint). The MTP modules are not counted."""
    from .from_config import minimax_m3_moe_layers
    c = spec.raw["config"]
    d, L, heads = c["hidden_size"], c["num_hidden_layers"], c["num_attention_heads"]
    hd, kvh = c["head_dim"], c["num_key_value_heads"]
    sparse = sum(g.layers for g in spec.attention if g.kind == "indexer")
    idim = c["index_head_dim"]
    attn = L * (2 * d * heads * hd + 2 * d * kvh * hd)
    indexer = sparse * (d * c["index_n_heads"] * idim + d * idim)
    moe = sum(minimax_m3_moe_layers(c))
    E, k = c["num_local_experts"], c["num_experts_per_tok"]
    expert, dense = swiglu(d, c["intermediate_size"]), (L - moe) * swiglu(d, c["dense_intermediate_size"])
    router = E * d + (E if c.get("use_routing_bias", True) else 0)
    shared = swiglu(d, c["shared_intermediate_size"])
    norms = L * (2 * hd + 2 * d) + sparse * 2 * idim + d
    return _embedding_and_head(c) + [
        Component("attention", "attention", attn, attn, L),
        Component("Lightning Indexer", "attention", indexer, indexer, sparse),
        *_dense_then_moe(L, moe, dense, router, E, k, expert, shared), Component("norms", "norms", norms, norms, L),
        _mtp(c, 0)]


def _dense_then_moe(L: int, moe: int, dense: int, router: int, E: int, k: int, expert: int,
                    shared: int) -> list[Component]:
    """The FFN side of a model whose first ``L - moe`` layers are dense (``dense`` parameters in all)
    and whose ``moe`` others each hold a router, ``E`` routed experts of ``expert`` parameters (``k``
    a token) and one shared expert: Step-3.7's and MiniMax-M3's layout."""
    return [Component("dense FFN", "dense_ffn", dense, dense, L - moe),
            Component("router", "router", moe * router, moe * router, moe),
            Component("routed experts", "routed_experts", moe * E * expert, moe * k * expert, moe),
            Component("shared experts", "shared_experts", moe * shared, moe * shared, moe)]


def _embedding_and_head(c: dict) -> list[Component]:
    emb = c["vocab_size"] * c["hidden_size"]
    head = 0 if c["tie_word_embeddings"] else emb
    return [Component("embedding", "embedding", emb, emb),
            Component("output head", "head", head, head)]


def _mtp(c: dict, layer_params: int) -> Component:
    """MTP layers: one decoder layer each plus the [emb; h] -> d projection and its two norms;
    embedding and head are shared with the main model. Not part of the published totals."""
    n = c.get("num_nextn_predict_layers", 0)
    d = c["hidden_size"]
    per = layer_params + 2 * d * d + 2 * d + d if layer_params else 0
    return Component("MTP", "mtp", n * per, 0, n, in_total=False)


# Keyed by specs.from_config's family names.
FAMILIES = {"mla": _deepseek, "mla+dsa": _deepseek, "deepseek_v4": _deepseek_v4, "kimi_linear": _kimi_k3,
            "gqa": _gqa, "gated_deltanet": _qwen_hybrid, "gemma": _gemma, "mimo_v2": _mimo_v2,
            "llama4": _llama4, "nemotron_h": _nemotron_h, "step3p7": _step3p7,
            "nemotron_nas": _nemotron_nas, "minimax_m3": _minimax_m3}


# ---- what attention tensor parallelism cannot split ----

# Whole on every rank as SGLang serves attention TP inside data-parallel attention: the embedding is
# not vocab-split under DP attention (VocabParallelEmbedding(enable_tp=not dp_attention)), and the
# DeepEP MoE path builds the shared experts unsplit (tp_size=1).
TP_REPLICATED_GROUPS = ("embedding", "router", "latent_proj", "shared_experts", "residual", "norms")
# Whole on every rank of one plain TP group (no data-parallel attention beside it): the embedding
# is vocabulary-parallel and the shared experts split like any MLP (vLLM 0.33.0's K3 KimiMLP
# replicates them only under sequence-parallel MoE, which needs DP; VocabParallelEmbedding).
PLAIN_TP_REPLICATED = ("router", "latent_proj", "residual", "norms")


def tp_replicated(spec: ModelSpec | str, groups: tuple[str, ...] = TP_REPLICATED_GROUPS) -> dict[str, int]:
    """Parameters of each group that every rank of an attention TP group holds whole.

    The projections that make one vector for all heads belong to no head: MLA's q_a and kv_a (the
    latents), V4's q_a and its single shared K=V head, V4's compressors (their entries are per token),
    KDA's forget-gate down-projection, V3.2's and MiniMax-M3's indexer keys. So do the router,
    LatentMoE's latent projections, the residual mixers and the norms, and, as SGLang serves it with
    data-parallel attention, the embedding and the shared experts. The rest (per-head projections, output
    projections, the dense FFN, the output head) splits ``tp`` ways. A dense model is served with
    plain TP, whose vocabulary-parallel embedding splits too (SGLang's ``VocabParallelEmbedding``
    with ``enable_tp`` unless DP attention is on). ``groups`` names the whole groups another way of
    serving keeps (``PLAIN_TP_REPLICATED``; an engine's, ``specs/engines.yaml``)."""
    spec = model(spec) if isinstance(spec, str) else spec
    c, by_group = spec.raw["config"], param_counts(spec).by_group()
    dense = not by_group.get("routed_experts")
    out = {g: by_group.get(g, 0) for g in groups if not (dense and g == "embedding")}
    d, family = c["hidden_size"], spec.raw["family"]
    if family in ("mla", "mla+dsa"):
        per_layer = d * (c.get("q_lora_rank") or 0) + d * (c["kv_lora_rank"] + c["qk_rope_head_dim"])
        attention = c["num_hidden_layers"] * (per_layer + (d * c["index_head_dim"] if "index_n_heads" in c else 0))
    elif family == "kimi_linear":
        mla_down = d * (c.get("q_lora_rank") or 0) + d * (c["kv_lora_rank"] + c["qk_rope_head_dim"])
        attention = (len(c["linear_attn_config.full_attn_layers"]) * mla_down
                     + len(c["linear_attn_config.kda_layers"]) * d * c["linear_attn_config.head_dim"])
    elif family == "deepseek_v4":
        attention = 0
        for r in c["compress_ratios"][:c["num_hidden_layers"]]:
            parts = v4_attention(c, r)
            attention += d * c["q_lora_rank"] + d * c["head_dim"] + parts.get("compressor", (0, 0))[0]
            if "indexer" in parts:          # the indexer's own compressor; its query heads split
                attention += r * 2 * c["index_head_dim"] + 2 * d * 2 * c["index_head_dim"]
    elif family == "minimax_m3":       # each sparse layer's indexer key: one vector for all its heads
        attention = sum(g.layers for g in spec.attention if g.kind == "indexer") * d * c["index_head_dim"]
    else:       # GQA, Gated DeltaNet, Mamba-2: every projection is per head (KV heads >= tp assumed)
        attention = 0
    out["attention"] = attention
    return out


def param_counts(spec: ModelSpec | str) -> ParamCounts:
    """Per-component parameter counts of ``spec`` (a spec or a model id) from its public config."""
    spec = model(spec) if isinstance(spec, str) else spec
    family = spec.raw.get("family")
    if family not in FAMILIES:
        raise ParameterError("model", spec.id, "a model of a family the counter reads: " + ", ".join(FAMILIES))
    return ParamCounts(spec.id, tuple(FAMILIES[family](spec)))

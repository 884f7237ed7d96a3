"""FLOPs and cache bytes one decoded token spends in attention, against context length.

A multiply-add is 2 FLOPs. At context T (the new token sees T tokens, itself included), one layer
attends to ``n_attended`` entries and its indexer scores ``n_scored``:

=========  ===============================================  ===========================  ===========
kind       attends to                                        per head and entry: key+val  scores
=========  ===============================================  ===========================  ===========
``mla``    every token (absorbed MLA, as decode runs it)     (d_c + d_r) + d_c (prefill:  0
                                                             the cheaper form, below)
``dsa``    the top k tokens its indexer picks                as mla                       T
``gqa``    every token (MHA, GQA, MQA; gated attention)      d_k + d_v                    0
``window`` the last w tokens (V4's sliding-only layers;      d + d (V4: one shared head)  0
           GQA sliding layers; Llama 4's chunks)             d_k + d_v (GQA)
``csa``    the window + the top k of floor(T/4) entries      d + d                        floor(T/4)
``hca``    the window + every one of floor(T/128) entries    d + d                        0
``kda``    nothing: a fixed state per head (K3's KDA)        3 d_k d_v a token, any T;    0
                                                             chunked form in prefill
``gdn``    nothing: a fixed state per value head (Gated      as kda in decode; chunked    0
           DeltaNet, Qwen3-Next and Qwen3.5)                 form in prefill (below)
``ssd``    nothing: a fixed head_dim x N state per head      2 d N a token (update,       0
           (Mamba-2, NemotronH)                              output); chunked in prefill
=========  ===============================================  ===========================  ===========

    attention FLOPs = 2 H n_attended (key + value)  +  2 H_I d_I n_scored

``H`` counts query heads: in GQA each cached K/V head serves ``H / kv_heads`` of them, each taking
its own ``q k`` and ``p v`` products (QK^T and PV, as FlashAttention computes them). A token at
position T of a fresh prompt is the same token as a decoded one at context T, so a causal prompt of
T tokens costs the sum of these over positions 1..T: about half the square ``H (d_k + d_v) T^2``
for a full layer, ``2 H (d_k + d_v) w T`` once T passes a window ``w``. The book prices the tokens a
turn adds past a cached prefix (``calc.fleet``), each at its context.

Prefill (``prefill=True``) computes ``new_tokens`` tokens in one pass, at the end of a context of
``tokens``: the first ``tokens - new_tokens`` entries are a cached prefix (the book prices the
``prompt_tokens_per_turn`` tokens a turn adds, ``calc.prefill``; ``new_tokens`` left out is a fresh
prompt, nothing cached). An MLA layer (``mla`` and ``dsa``) has two forms, and an engine may run
either (vLLM's ``vllm/model_executor/layers/attention/mla_attention.py`` names them):

- un-absorbed (vLLM's "compute friendly" ``forward_mha``): per head and entry a key of
  ``qk_nope + qk_rope`` and a value of ``v_head_dim``. The cache holds latents, so every prefix
  entry is first up-projected to every head's key and value, ``2 d_c H (qk_nope + v_head_dim)``
  FLOPs an entry (``kv_b_proj``), once per pass: vLLM's chunked-context prefill does it in
  workspace-sized chunks of the prefix, merging their partial softmax, so the work per entry is the
  same however many chunks. A pass's prefix is up-projected once whatever its new tokens, so each
  new token carries ``(tokens - new_tokens) / new_tokens`` of it (rounded down to whole FLOPs). The
  new tokens' own keys and values come from ``kv_b_proj`` as weights, counted with the parameters.
- absorbed (``forward_mqa``, what decode runs): per head and entry the latent, ``(d_c + d_r) + d_c``,
  nothing up-projected; its query and output absorb ``kv_b_proj`` at the same weight FLOPs a token.

A layer costs the cheaper of the two. For a full MLA layer with T much longer than n new tokens
the un-absorbed form wins once n > d_c (nope + v) / ((d_c + d_r + d_c) - (nope + rope + v)): 171
new tokens for K3 and V3 (512 x 256 / 768), so it is what the book's 2,000-token turns run. It is
also what the engines run there: vLLM for every request longer than its decode threshold (one
token, or the speculative ones: the ``reorder_batch_threshold`` its MLA backends split a batch by,
``mla_attention.py``), SGLang once a batch's prefixes reach 8,192 tokens (``MHA_CHUNKED_KV``, its
``SGLANG_CHUNKED_PREFIX_CACHE_THRESHOLD``; absorbed ``MLA`` below it,
``deepseek_common/attention_backend_handler.py``); under 171 new tokens vLLM would still run the
dearer un-absorbed form, so there the count is a lower bound. A DSA layer attends to only its top k,
but a pass's queries pick their own, so the un-absorbed form must up-project every prefix entry any
of them may pick (counted as the whole prefix, an upper bound); once the prefix is 12 times the new
tokens (768 x 2048 / 131,072 for V3.2) the absorbed form is cheaper, and it is the one DSA kernels
run (vLLM's ``FLASHMLA_SPARSE`` takes only the 576-wide latent, ``flashmla_sparse.py``). V4's window,
CSA and HCA layers have no up-projection to leave out: an entry is the key and the value itself
(one head of ``head_dim`` shared by every query head), so prefill costs what decode does.

The KDA state costs three ``d_k x d_v`` products per head and token (output, prediction, update)
in decode. Gated DeltaNet decodes with the same three products per value head (fla's
``fused_recurrent_gated_delta_rule``: ``S^T k``, the rank-one update, ``S^T q``), and both prefill
in chunks of ``C`` tokens (fla's ``chunk_gated_delta_rule`` and ``chunk_kda``, ``chunk_size=64``;
Yang et al., "Gated Delta Networks", arXiv:2412.06464, section 3.3; for KDA the chunkwise algorithm
of the Kimi Linear report, arXiv:2510.26692). Per chunk and value head, with K, Q: C x d_k,
V: C x d_v and the state S: d_k x d_v, the multiply-adds are

    A = beta K K^T (C^2 d_k), T = (I + A)^-1 (forward substitution: C (C-1) (C-2) / 6),
    W = T beta K (C^2 d_k), U = T beta V (C^2 d_v)          (fla ``chunk_gated_delta_rule_fwd_intra``)
    V' = U - W S (C d_k d_v), S <- S + K^T V' (C d_k d_v)     (``chunk_gated_delta_rule_fwd_h``)
    O = Q S (C d_k d_v) + (Q K^T masked) V' (C^2 d_k + C^2 d_v)   (``chunk_fwd_o``)

so a Gated DeltaNet token costs ``2 (3 d_k d_v + C (3 d_k + 2 d_v)) + (C-1)(C-2)/3`` FLOPs a value
head, whatever the context (the C x C products counted as the dense tiles the kernels multiply; the
gates' decays are elementwise and, like softmax, not counted). Qwen3-Next repeats its key heads onto
the value heads before the kernel, so every product runs per value head. KDA's decay is per channel
(a d_k vector a token, not GDN's scalar), so it cannot be applied to K K^T and Q K^T as a C x C mask
after the product: it is folded into the operands, ``(K exp(G - G_n)) (K exp(G_n - G))^T``, about a
reference point ``G_n`` near the block for the exponentials to stay in range. fla's ``chunk_kda``
(fla-core 0.6.0, ``ops/kda/chunk_intra.py``, ``chunk_kda_fwd_intra``) therefore cuts a chunk into
sub-chunks of ``BC = 16`` and multiplies only the causal ones, the ``NC (NC+1) / 2`` tiles on and
below the diagonal (10 of 16 for NC = C / BC = 4), each ``BC^2 d_k``, for ``A_kk`` and ``A_qk`` alike;
W, U, the state and the output then take GDN's products (``recompute_w_u_fwd``,
``chunk_gated_delta_rule_fwd_h`` with a per-channel gate, ``chunk_gla_fwd_o_gk`` with the ``A_qk``
already made). A KDA token costs ``2 (3 d_k d_v + C (d_k + 2 d_v) + NC (NC+1) BC^2 d_k / C) +
(C-1)(C-2)/3`` FLOPs a head: fewer in the two C x C key products than GDN's dense tiles, the same
elsewhere (fla's reference ``naive_chunk_kda`` multiplies the dense tiles, as GDN's kernels do). The
token-parallel kernel fla runs for the diagonal tiles when ``safe_gate`` is off takes only their
causal half, ``BC (BC+1) / 2`` of ``BC^2`` pairs, a difference counted here as whole tiles.

A Mamba-2 layer (NemotronH) keeps per head a state h of head_dim x N (``ssm_state_size``), fed by
B and C vectors of N shared by the heads of one of ``n_groups`` groups. A decoded token costs two
products a head (vLLM's and mamba_ssm's ``selective_state_update``): the rank-one update
``h <- exp(dt A) h + dt x B^T`` (its decay elementwise, not counted) and the output ``y = h C``,
``2 x 2 d N`` FLOPs. A prompt is computed in chunks of Q = ``chunk_size`` tokens (SSD, Dao and Gu,
"Transformers are SSMs", arXiv:2405.21060, section 6; ``mamba_chunk_scan_combined``): per chunk
``C B^T`` per group (Q^2 N, ``_bmm_chunk_fwd``), and per head the chunk's state ``B^T x`` (Q N d,
``_chunk_state_fwd``), the intra-chunk output ``(C B^T masked) x`` (Q^2 d) and the output from the
state carried in ``C h`` (Q N d, ``_chunk_scan_fwd``), so a token costs
``2 (H (2 N d + Q d) + G Q N)`` FLOPs (the causal Q x Q tiles counted dense, the state passing
between chunks elementwise). The D skip and the gate are elementwise; the depthwise conv's
``conv_kernel`` multiply-adds per channel are its weights, counted with the parameters.

The projections (queries, keys, values, gates, compressors, indexer queries, Gated DeltaNet's and
Mamba-2's short convolutions, output) are weights: with the MoE and everything else they cost 2 FLOPs per activated
parameter, whatever T (``twopaths.specs.params``), so they are not counted here.
Bytes read per token are the cache entries the layer touches, in the layout ``twopaths.calc.kv``
sizes: indexer keys for every scored entry, full entries for every attended one.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import ParameterError, check_int
from ..specs import ModelSpec
from ..specs.from_config import Reader, _kv, step3p7_sliding_heads
from ..specs.params import param_counts
from . import kv

GDN_CHUNK = 64      # chunk_size of fla's chunk_gated_delta_rule (its default, and the only size its fused path takes)
KDA_CHUNK = 64      # chunk_size of fla's chunk_kda (its default; its intra kernel takes 32 or 64)
KDA_SUB_CHUNK = 16  # BC of fla's chunk_kda_fwd_intra: the tiles its per-channel decays are folded into


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
    kv_heads: int = 0            # GQA: the K/V heads an entry holds (0: one MLA latent or V4 entry)
    chunk: int = 0               # Gated DeltaNet, KDA and Mamba-2: the prefill kernel's chunk size
    sub_chunk: int = 0           # KDA: the tiles of its C x C key products (0: one dense C x C tile)
    groups: int = 0              # Mamba-2: the n_groups its B and C are shared in

    def attended(self, tokens: int) -> int:
        entries = tokens // self.ratio
        if self.kind in ("mla", "gqa"):
            return tokens
        if self.kind in ("kda", "gdn", "ssd"):
            return 0
        if self.kind == "dsa":
            return min(tokens, self.topk)
        near = min(tokens, self.window)
        return near + {"window": 0, "csa": min(entries, self.topk), "hca": entries}[self.kind]

    def scored(self, tokens: int) -> int:
        return tokens // self.ratio if self.kind in ("dsa", "csa") else 0

    @property
    def entry_dim(self) -> int:
        """Elements of one cached entry: every K/V head's key and value in GQA, else ``key_dim``."""
        return self.kv_heads * (self.key_dim + self.value_dim) if self.kv_heads else self.key_dim


def _deepseek(spec: ModelSpec) -> list[AttentionLayers]:
    """MLA (DeepSeek V3, Kimi K2), DSA (V3.2, GLM-5), V4's window, CSA and HCA, K3's MLA and KDA."""
    c, family = spec.config, spec.raw["family"]
    heads, rope = c.get("num_attention_heads"), c.get("qk_rope_head_dim")
    index = dict(topk=c.get("index_topk", 0), index_heads=c.get("index_n_heads", 0),
                 index_dim=c.get("index_head_dim", 0))
    unabsorbed = dict(prefill_key_dim=c.get("qk_nope_head_dim", 0) + (rope or 0),
                      prefill_value_dim=c.get("v_head_dim", 0))
    latent = c.get("kv_lora_rank")
    if family == "mla":
        return [AttentionLayers("mla", c["num_hidden_layers"], heads, latent + rope, latent, rope, **unabsorbed)]
    if family == "mla+dsa":         # the indexer's keys: every one named when a config lacks it
        r = Reader(c, family)
        index = dict(topk=r.dim("index_topk"), index_heads=r.dim("index_n_heads"), index_dim=r.dim("index_head_dim"))
        # IndexShare (GLM-5.2): a layer without its own indexer (from_config counts those with one)
        # scores nothing and attends to the top k it reuses
        indexed = sum(g.layers for g in spec.attention if g.kind == "indexer")
        reusing = dict(index, index_heads=0, index_dim=0)
        return [AttentionLayers("dsa", n, heads, latent + rope, latent, rope, **x, **unabsorbed)
                for n, x in ((indexed, index), (c["num_hidden_layers"] - indexed, reusing)) if n]
    if family == "kimi_linear":
        mla_layers = len(c["linear_attn_config.full_attn_layers"])
        d = c["linear_attn_config.head_dim"]
        return [AttentionLayers("mla", mla_layers, heads, latent + rope, latent, rope, **unabsorbed),
                AttentionLayers("kda", c["num_hidden_layers"] - mla_layers, c["linear_attn_config.num_heads"],
                                d, d, 0, chunk=KDA_CHUNK, sub_chunk=KDA_SUB_CHUNK)]
    ratios = c["compress_ratios"][:c["num_hidden_layers"]]     # deepseek_v4
    d, out = c["head_dim"], []
    for ratio, kind in ((0, "window"), (4, "csa"), (128, "hca")):
        if ratios.count(ratio):
            extra = index if kind == "csa" else {}
            out.append(AttentionLayers(kind, ratios.count(ratio), heads, d, d, rope, c["sliding_window"],
                                       max(ratio, 1), **extra))
    return out


def _sliding_heads(c: dict, family: str) -> tuple[int, dict]:
    """Query heads and K/V dimensions of a family's sliding-window layers: MiMo-V2's have their own
    (``swa_*``), the others' are the config's main ones (Gemma's local layers, gpt-oss, Mistral,
    Qwen's sliding layers, Llama 4's chunked ones)."""
    r = Reader(c, family)
    if family == "mimo_v2":
        return r.dim("swa_num_attention_heads"), _kv(r, "swa_num_key_value_heads", "swa_head_dim", "swa_v_head_dim")
    if family == "step3p7":             # its own query heads, the full layers' K/V
        return step3p7_sliding_heads(c), _kv(r)
    return r.dim("num_attention_heads"), _kv(r)


def _softmax_and_delta(spec: ModelSpec) -> list[AttentionLayers]:
    """GQA, sliding and Gated DeltaNet layers from the spec's cache groups (``specs.from_config``):
    an ``mha`` group attends to every token with the config's query heads (Gemma's global layers and
    Qwen's gated attention included), a ``window`` group to its last ``window`` tokens (Llama 4's
    chunked layers: at most one chunk, counted whole, an upper bound on the ``(T-1) mod C + 1`` a
    token at position T sees), a Gated DeltaNet ``kda`` group keeps a state per value head."""
    c, family = spec.config, spec.raw["family"]
    if c.get("num_kv_shared_layers"):     # those layers attend but hold no cache group of their own
        raise ParameterError("model", spec.id, "a model whose every layer holds its own cache (its "
                             f"num_kv_shared_layers, {c['num_kv_shared_layers']}, attend on another's)")
    heads = Reader(c, family).dim("num_attention_heads")
    out = []
    for g in spec.attention:
        if g.kind == "mha":
            out.append(AttentionLayers("gqa", g.layers, heads, g["head_dim_k"], g["head_dim_v"], 0,
                                       kv_heads=g["kv_heads"]))
        elif g.kind == "window":
            q_heads, d = _sliding_heads(c, family)
            out.append(AttentionLayers("window", g.layers, q_heads, d["head_dim_k"], d["head_dim_v"], 0,
                                       window=g["window"], kv_heads=d["kv_heads"]))
        else:                             # from_config gives these families no other kind
            out.append(AttentionLayers("gdn", g.layers, g["value_heads"], g["head_dim_k"], g["head_dim_v"], 0,
                                       chunk=GDN_CHUNK))
    return out


def _mamba_hybrid(spec: ModelSpec) -> list[AttentionLayers]:
    """NemotronH: GQA layers (every token, the config's query heads) and Mamba-2 layers, whose
    ``kda`` group holds the n_groups as its heads, N as K and the Mamba heads of head_dim as values."""
    r = Reader(spec.config, "nemotron_h")
    heads, chunk = r.dim("num_attention_heads"), r.dim("chunk_size")
    out = []
    for g in spec.attention:
        if g.kind == "mha":
            out.append(AttentionLayers("gqa", g.layers, heads, g["head_dim_k"], g["head_dim_v"], 0,
                                       kv_heads=g["kv_heads"]))
        else:                             # from_config gives NemotronH no other kind
            out.append(AttentionLayers("ssd", g.layers, g["value_heads"], g["head_dim_k"], g["head_dim_v"], 0,
                                       chunk=chunk, groups=g["heads"]))
    return out


# Keyed by specs.from_config's family names.
READERS = {"mla": _deepseek, "mla+dsa": _deepseek, "deepseek_v4": _deepseek, "kimi_linear": _deepseek,
           "gqa": _softmax_and_delta, "gemma": _softmax_and_delta, "mimo_v2": _softmax_and_delta,
           "llama4": _softmax_and_delta, "gated_deltanet": _softmax_and_delta, "nemotron_h": _mamba_hybrid,
           "step3p7": _softmax_and_delta, "nemotron_nas": _softmax_and_delta}


def attention_layers(spec: ModelSpec | str) -> list[AttentionLayers]:
    """The attention of ``spec`` by kind, read from its public config and cache groups."""
    spec = kv._spec(spec)
    family = spec.raw.get("family")
    if family not in READERS:
        raise ParameterError("model", spec.id, f"a model of the {', '.join(READERS)} families "
                             f"({spec.id} is of the {family!r} family, whose attention is not counted)")
    return READERS[family](spec)


def _key_tiles(group: AttentionLayers) -> int:
    """Multiply-adds of one C x C key product (``K K^T`` or ``Q K^T``) per chunk and head, over
    ``d_k``: one dense C x C tile, or KDA's causal sub-chunk tiles (module docstring)."""
    C, BC = group.chunk, group.sub_chunk or group.chunk
    if C % BC:
        raise ParameterError("sub_chunk", BC, f"a divisor of the chunk size {C}")
    n = C // BC
    tiles = n * (n + 1) // 2 if group.sub_chunk else 1
    return tiles * BC * BC * group.key_dim


def delta_prefill_flops(group: AttentionLayers) -> int:
    """FLOPs a token costs one Gated DeltaNet or KDA layer in the chunked form (module docstring):
    its share of a chunk's products, whatever the context (whole FLOPs, exact for C = 64)."""
    C, dk, dv = group.chunk, group.key_dim, group.value_dim
    products = 3 * C * dk * dv + C * C * (dk + 2 * dv) + 2 * _key_tiles(group)
    chunk = 2 * (products + C * (C - 1) * (C - 2) // 6)
    return group.heads * chunk // C


def gdn_prefill_flops(group: AttentionLayers) -> int:
    """``delta_prefill_flops`` of a Gated DeltaNet layer (dense C x C tiles)."""
    return delta_prefill_flops(group)


def ssd_prefill_flops(group: AttentionLayers) -> int:
    """FLOPs a prompt token costs one Mamba-2 layer in SSD's chunked form (module docstring), N being
    ``key_dim`` and the head size ``value_dim``: ``2 (H (2 N d + Q d) + G Q N)``."""
    Q, N, d = group.chunk, group.key_dim, group.value_dim
    return 2 * (group.heads * (2 * N * d + Q * d) + group.groups * Q * N)


def upprojection_flops(group: AttentionLayers) -> int:
    """FLOPs that turn one cached MLA latent (``d_c``) into every head's key (its ``qk_nope`` part;
    the RoPE part is cached as it is) and value: ``2 d_c H (qk_nope + v_head_dim)``."""
    nope = group.prefill_key_dim - group.rope_dim
    return 2 * group.value_dim * group.heads * (nope + group.prefill_value_dim)


def latent_prefill_flops(group: AttentionLayers, tokens: int, new_tokens: int) -> int:
    """FLOPs a new token of a pass of ``new_tokens`` costs one MLA or DSA layer at context
    ``tokens``, its indexer aside: the cheaper of the absorbed form and the un-absorbed one with its
    share of up-projecting the cached prefix (module docstring)."""
    attended = group.attended(tokens)
    absorbed = 2 * group.heads * attended * (group.key_dim + group.value_dim)
    prefix = (tokens - new_tokens) * upprojection_flops(group) // new_tokens
    unabsorbed = 2 * group.heads * attended * (group.prefill_key_dim + group.prefill_value_dim) + prefix
    return min(absorbed, unabsorbed)


def _new_tokens(tokens: int, new_tokens: int | None) -> int:
    if new_tokens is None:
        return tokens
    return check_int("new_tokens", new_tokens, minimum=1, maximum=tokens)


def layer_flops(group: AttentionLayers, tokens: int, prefill: bool = False,
                new_tokens: int | None = None) -> int:
    """FLOPs one layer of ``group`` spends on a new token at context ``tokens``; in ``prefill``, one
    of ``new_tokens`` computed in one pass past a cached prefix (None: the whole context is new)."""
    tokens = kv._check_tokens(tokens)
    new = _new_tokens(tokens, new_tokens) if prefill else tokens
    if group.kind in ("kda", "gdn") and prefill and group.chunk:
        return delta_prefill_flops(group)
    if group.kind == "ssd":
        return ssd_prefill_flops(group) if prefill else 2 * 2 * group.heads * group.key_dim * group.value_dim
    if group.kind in ("kda", "gdn"):
        return 2 * 3 * group.heads * group.key_dim * group.value_dim
    if prefill and group.prefill_key_dim:
        core = latent_prefill_flops(group, tokens, new)
    else:
        core = 2 * group.heads * group.attended(tokens) * (group.key_dim + group.value_dim)
    return core + 2 * group.index_heads * group.index_dim * group.scored(tokens)


def attention_flops(spec: ModelSpec | str, tokens: int, prefill: bool = False,
                    new_tokens: int | None = None) -> int:
    """Attention FLOPs per token over every layer of ``spec`` at context ``tokens`` (a decoded token,
    or with ``prefill`` a prompt token, one of ``new_tokens`` a pass adds past a cached prefix)."""
    return sum(g.layers * layer_flops(g, tokens, prefill, new_tokens) for g in attention_layers(spec))


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
    entry = kv.entry_bytes(group.entry_dim, group.rope_dim, entry_fmt)
    index = kv.entry_bytes(group.index_dim, 0, index_fmt) if group.index_dim else 0
    return group.attended(kv._check_tokens(tokens)) * entry + group.scored(tokens) * index


def bytes_read_per_token(spec: ModelSpec | str, tokens: int, kv_dtype=None) -> int:
    """Cache bytes one decoded token reads over every layer of ``spec`` at context ``tokens``."""
    return sum(g.layers * layer_bytes_read(spec, g, tokens, kv_dtype) for g in attention_layers(spec))

"""Attention FLOPs and bytes per decoded token: the formulas on the public configs, the entry counts
against what the toy layers let a query see, GQA, sliding, Gated DeltaNet and KDA layers by hand and
against torch's FLOP counter, MLA prefill past a cached prefix (the prefix's up-projection, or the
absorbed form where cheaper) by hand from K3's config, and bad input."""

import importlib.util
import math
from dataclasses import replace
from pathlib import Path

import pytest

from twopaths.calc.decode import plan_step

import need
import torch
import yaml
from hypothesis import given, strategies as st
from torch.utils.flop_counter import FlopCounterMode

from twopaths import specs
from twopaths.calc import attention_flops as af, fleet, kv
from twopaths.specs.serving import assumptions
from twopaths.layers.csa_hca import CSA, HCA
from twopaths.layers.dsa import DSA
from twopaths.layers.window import WindowAttention, window_mask

M = 1_000_000


def test_layer_plans_follow_the_configs():
    assert [(g.kind, g.layers) for g in af.attention_layers("deepseek-v4-pro")] == [("csa", 30), ("hca", 31)]
    assert [(g.kind, g.layers) for g in af.attention_layers("deepseek-v4-flash")] == [("window", 2), ("csa", 21), ("hca", 20)]
    assert [(g.kind, g.topk) for g in af.attention_layers("deepseek-v3.2")] == [("dsa", 2048)]
    assert [g.kind for g in af.attention_layers("deepseek-v3")] == ["mla"]


@pytest.mark.parametrize("T", [1, 100, 5_000, M])
def test_flops_by_hand(T):
    dsa = 61 * (2 * 128 * min(T, 2048) * (576 + 512) + 2 * 64 * 128 * T)
    assert af.attention_flops("deepseek-v3.2", T) == dsa
    assert af.attention_flops("deepseek-v3", T) == 61 * 2 * 128 * T * (576 + 512)
    near = min(T, 128)
    csa = 2 * 128 * (near + min(T // 4, 1024)) * 1024 + 2 * 64 * 128 * (T // 4)
    hca = 2 * 128 * (near + T // 128) * 1024
    assert af.attention_flops("deepseek-v4-pro", T) == 30 * csa + 31 * hca
    assert af.flops_per_token("deepseek-v4-pro", T) == af.weight_flops("deepseek-v4-pro") + 30 * csa + 31 * hca


def test_bytes_by_hand():
    # FP8: V3.2 entries 656 B, V4 entries 584 B, indexer keys 132 B (the layouts kv.py sizes)
    assert af.bytes_read_per_token("deepseek-v3.2", M, "fp8") == 61 * (2048 * 656 + M * 132)
    v4 = 30 * ((128 + 1024) * 584 + (M // 4) * 132) + 31 * (128 + M // 128) * 584
    assert af.bytes_read_per_token("deepseek-v4-pro", M, "fp8") == v4


def test_sparse_paths_grow_slower_than_dense():
    for T in (10_000, 100_000, M):
        assert af.attention_flops("deepseek-v4-pro", T) < af.attention_flops("deepseek-v3.2", T) < af.attention_flops("deepseek-v3", T)


def _seen_by_last_query(layer, T):
    """How many keys (raw and compressed) the toy layer lets its last query attend to."""
    x, pos = torch.randn(1, T, 32), torch.arange(T)
    with torch.no_grad():
        if isinstance(layer, DSA):
            return int((layer.indexer(x, layer.q_norm(layer.wq_a(x)), pos)[0, -1] >= 0).sum())
        raw = int(window_mask(pos, pos, layer.window)[-1].sum())
        extra = layer.compressed(x, layer.q_norm(layer.wq_a(x)), pos, None)
        return raw + (0 if extra is None else int(extra[1][0, -1].sum()))


@pytest.mark.parametrize("T", [3, 9, 33, 70])
def test_entry_counts_are_what_the_toy_layers_attend(T):
    kw = dict(heads=2, head_dim=16, rope_dim=4, window=8)
    cases = [(WindowAttention(32, **kw), af.AttentionLayers("window", 1, 2, 16, 16, 4, window=8)),
             (WindowAttention(32, **{**kw, "window": None}), af.AttentionLayers("mla", 1, 2, 16, 16, 4)),
             (CSA(32, 4, topk=5, index_dim=8, **kw), af.AttentionLayers("csa", 1, 2, 16, 16, 4, 8, 4, 5, 4, 8)),
             (HCA(32, 8, **kw), af.AttentionLayers("hca", 1, 2, 16, 16, 4, 8, 8)),
             (DSA(32, topk=6, rope_dim=4, index_dim=8), af.AttentionLayers("dsa", 1, 4, 68, 64, 4, topk=6))]
    for layer, group in cases:
        assert _seen_by_last_query(layer, T) == group.attended(T), (group.kind, T)


def test_bad_input(raises_param):
    unknown = replace(specs.model("qwen-2.5-72b"), raw={**specs.model("qwen-2.5-72b").raw, "family": "rwkv7"})
    raises_param("model", af.attention_layers, unknown)
    with pytest.raises(ValueError, match="qwen-2.5-72b is of the 'rwkv7' family"):
        af.attention_layers(unknown)
    raises_param("tokens", af.attention_flops, "deepseek-v3.2", -1)
    # Gemma's KV-shared layers attend on another layer's cache, so its groups do not list them
    with pytest.raises(ValueError, match="model: got 'tiny-gemma'.*num_kv_shared_layers, 1"):
        af.attention_layers(specs.from_config({**GEMMA, "num_kv_shared_layers": 1}, id="tiny-gemma"))


def test_k3_counts_its_mla_layers_and_a_fixed_kda_cost():
    """K3: 24 MLA layers over every token (96 heads, 576 + 512 absorbed, 192 + 128 un-absorbed in
    prefill) and 69 KDA layers at three 128 x 128 products per head in decode, whatever the context;
    in prefill KDA runs chunked, 169,238 FLOPs a token and head (``test_kda_prefill_by_hand``)."""
    t = 500_000
    mla_decode = 24 * 2 * 96 * t * (576 + 512)
    mla_prefill = 24 * 2 * 96 * t * (192 + 128)
    kda = 69 * 2 * 3 * 96 * 128 * 128
    assert af.attention_flops("kimi-k3", t) == mla_decode + kda
    assert af.attention_flops("kimi-k3", t, prefill=True) == mla_prefill + 69 * 96 * 169_238   # a fresh prompt
    assert af.attention_flops("kimi-k3", 1) - kda == 24 * 2 * 96 * (576 + 512)


def _k3_config():
    """K3's dimensions as the registry's YAML carries them from its config.json (read here, not
    through the calculator)."""
    path = Path(af.__file__).resolve().parents[1] / "specs" / "models" / "kimi-k3.yaml"
    return yaml.safe_load(path.read_text())


def test_the_reviewers_mla_prefix_upprojection_by_hand():
    """Issue 24, item 5: a turn's 2,000 new tokens past a cached prefix of 498,000 (a 500K session)
    must up-project every prefix latent to full keys and values in each MLA layer, 2 d_c H (nope + v)
    FLOPs an entry, once a pass: about 6.3 GFLOP a new token and layer for K3, 1,097 GFLOP a prompt
    token in all instead of 946, and 348 prefill nodes by work instead of 300 (H200, 10,000
    sessions, rho 0.25)."""
    y = _k3_config()
    c = y["config"]
    H, d_c, nope, rope, v = (c["num_attention_heads"], c["kv_lora_rank"], c["qk_nope_head_dim"],
                             c["qk_rope_head_dim"], c["v_head_dim"])
    mla_layers = len(c["linear_attn_config.full_attn_layers"])
    kda_layers, kda_heads, d = (c["num_hidden_layers"] - mla_layers, c["linear_attn_config.num_heads"],
                                c["linear_attn_config.head_dim"])
    T, n = 500_000, 2_000
    per_entry = 2 * d_c * H * (nope + v)
    assert per_entry == 25_165_824
    upproject = (T - n) * per_entry // n                       # a new token's share, one layer
    assert upproject == 249 * per_entry and round(upproject / 1e9, 1) == 6.3
    attend = 2 * H * T * (nope + rope + v)                     # un-absorbed: 192 + 128 an entry
    C, BC = 64, 16                                             # fla's chunk_kda: chunk and sub-chunk
    tiles = (C // BC) * (C // BC + 1) // 2
    chunk = 2 * (3 * C * d * d + C * C * (d + 2 * d) + 2 * tiles * BC * BC * d + C * (C - 1) * (C - 2) // 6)
    kda = kda_heads * chunk // C
    weights = 2 * float(y["params"]["active"])               # YAML reads 104.0e9 as text
    by_hand = weights + mla_layers * (attend + upproject) + kda_layers * kda
    assert round(by_hand / 1e9) == 1_097
    before = weights + mla_layers * attend + kda_layers * 6 * kda_heads * d * d   # no prefix, KDA recurrent
    assert round(before / 1e9) == 946
    assert af.attention_flops("kimi-k3", T, prefill=True, new_tokens=n) == by_hand - weights
    # prefill by work: 10,000 x 0.25 sessions finish a turn of 1,000 tokens each 1,000 / v s at the
    # plan's speed v (one token a step, about 31 tokens/s), 2,000 new tokens a turn
    p = fleet.plan("kimi-k3", "h200", assumptions(), fleet.workload(rho=0.25))
    demand = 10_000 * 0.25 / (1000 * plan_step(p).step) * n
    unit = 2                                                   # K3's prefill unit: EP16, 2 nodes of 8
    work = {f: unit * math.ceil(math.ceil(math.ceil(demand / (0.4 * specs.gpu("h200").bf16_flops / f)) / 8) / unit)
            for f in (before, by_hand)}
    assert work == {before: 48, by_hand: 54}
    assert p.prefill.unit_nodes == unit and p.prefill.by_work == 54


def test_the_cheaper_mla_form_is_counted():
    """Absorbed (576 + 512 an entry, nothing up-projected) against un-absorbed (192 + 128) plus the
    prefix's share: for a full MLA layer the un-absorbed form wins from 171 new tokens (512 x 256 /
    768); a DSA layer attends to only its top 2,048, so absorbed wins once the prefix is 12 times the
    new tokens; V4's entries are their own keys and values, nothing to up-project."""
    k3, = [g for g in af.attention_layers("kimi-k3") if g.kind == "mla"]
    T = 1_000_000
    absorbed = 2 * 96 * T * (576 + 512)
    for n in (100, 170, 171, 2_000):
        unabsorbed = 2 * 96 * T * (192 + 128) + (T - n) * 2 * 512 * 96 * 256 // n
        assert af.layer_flops(k3, T, prefill=True, new_tokens=n) == min(absorbed, unabsorbed)
    assert af.layer_flops(k3, T, prefill=True, new_tokens=170) == absorbed
    assert af.layer_flops(k3, T, prefill=True, new_tokens=171) < absorbed
    dsa, = af.attention_layers("deepseek-v3.2")
    absorbed = 2 * 128 * 2048 * (576 + 512)
    for n, prefix in ((2_000, 23_000), (2_000, 25_000), (2_000, T - 2_000)):
        unabsorbed = 2 * 128 * 2048 * (192 + 128) + prefix * 2 * 512 * 128 * 256 // n
        index = 2 * 64 * 128 * (n + prefix)
        assert af.layer_flops(dsa, n + prefix, prefill=True, new_tokens=n) == min(absorbed, unabsorbed) + index
    assert af.layer_flops(dsa, 27_000, prefill=True, new_tokens=2_000) == af.layer_flops(dsa, 27_000)
    assert af.layer_flops(dsa, 25_000, prefill=True, new_tokens=2_000) < af.layer_flops(dsa, 25_000)
    for g in af.attention_layers("deepseek-v4-pro"):
        assert af.layer_flops(g, T, prefill=True, new_tokens=2_000) == af.layer_flops(g, T)


def test_new_tokens_are_checked(raises_param):
    k3, = [g for g in af.attention_layers("kimi-k3") if g.kind == "mla"]
    raises_param("new_tokens", af.layer_flops, k3, 1_000, True, 0)
    raises_param("new_tokens", af.layer_flops, k3, 1_000, True, 1_001)
    raises_param("new_tokens", af.attention_flops, "kimi-k3", 1_000, True, 2.5)
    assert af.layer_flops(k3, 1_000, True, 1_000) == af.layer_flops(k3, 1_000, True)   # all new: no prefix


def test_kda_prefill_by_hand():
    """K3's KDA in fla's chunk_kda: chunks of 64 cut into sub-chunks of 16, the per-channel decay
    folded into the operands of the 10 causal 16 x 16 tiles of each C x C key product (K K^T and
    Q K^T), the rest as Gated DeltaNet. Per chunk and head, multiply-adds: 3 C d^2 = 3,145,728
    (W S, K^T V', Q S), C^2 (d + 2 d) = 1,572,864 (T K, T V, A_qk V'), 2 x 10 x 16^2 x d = 655,360
    (A_kk, A_qk), C (C-1) (C-2) / 6 = 41,664 (the triangular inverse): 5,415,616, so 10,831,232 FLOPs
    a chunk, 169,238 a token and head, against 98,304 in the recurrent (decode) form."""
    kda = af.attention_layers("kimi-k3")[1]
    assert (kda.kind, kda.chunk, kda.sub_chunk, kda.heads, kda.key_dim) == ("kda", 64, 16, 96, 128)
    per_chunk = 3 * 64 * 128 * 128 + 64 * 64 * 3 * 128 + 2 * 10 * 16 * 16 * 128 + 64 * 63 * 62 // 6
    assert per_chunk == 5_415_616 and 2 * per_chunk // 64 == 169_238
    assert af.layer_flops(kda, 10, prefill=True) == af.layer_flops(kda, 10**6, prefill=True) == 96 * 169_238
    assert af.layer_flops(kda, 10) == 96 * 2 * 3 * 128 * 128 == 96 * 98_304
    # GDN's dense 64 x 64 tiles for the same layer: 2 x 6 x 16^2 x d more multiply-adds a chunk
    dense = replace(kda, sub_chunk=0)
    assert af.layer_flops(dense, 10, prefill=True) == 96 * (2 * (per_chunk + 2 * 6 * 256 * 128) // 64)
    with pytest.raises(ValueError, match="sub_chunk: got 24"):
        af.layer_flops(replace(kda, sub_chunk=24), 10, prefill=True)


def test_prefill_form_changes_only_mla():
    """V4's layers share one K=V head: no un-absorbed form, so prefill costs what decode does."""
    assert af.attention_flops("deepseek-v4-pro", 65_536, prefill=True) == af.attention_flops("deepseek-v4-pro", 65_536)
    assert af.attention_flops("deepseek-v3", 4096, prefill=True) < af.attention_flops("deepseek-v3", 4096)


# Small configs whose every count can be checked by hand: 8 query heads on 2 K/V heads of 32.
GQA = {"model_type": "llama", "num_hidden_layers": 2, "hidden_size": 256, "num_attention_heads": 8,
       "tie_word_embeddings": False,
       "num_key_value_heads": 2, "head_dim": 32, "vocab_size": 1000, "intermediate_size": 512}
# Qwen3 sliding from layer max_window_layers on: layer 0 full, layers 1 and 2 keep 16 tokens.
SLIDING = {**GQA, "model_type": "qwen3", "num_hidden_layers": 3, "use_sliding_window": True,
           "max_window_layers": 1, "sliding_window": 16}
GEMMA = {**GQA, "model_type": "gemma3_text", "sliding_window": 16,
         "layer_types": ["sliding_attention", "full_attention"]}


@pytest.mark.parametrize("T", [1, 16, 17, 5_000])
def test_gqa_and_sliding_by_hand(T):
    """Each of the 8 query heads takes q.k (32) and p.v (32) over every attended token: 2 x 8 x 64 =
    1,024 FLOPs a token and layer; the sliding layers stop at their 16 tokens. MHA-style layers have
    no un-absorbed form, so prefill costs what decode does."""
    gqa, sliding = specs.from_config(GQA, id="tiny-gqa"), specs.from_config(SLIDING, id="tiny-swa")
    assert af.attention_flops(gqa, T) == af.attention_flops(gqa, T, prefill=True) == 2 * 1024 * T
    assert af.attention_flops(sliding, T) == 1024 * T + 2 * 1024 * min(T, 16)
    assert [(g.kind, g.layers, g.window) for g in af.attention_layers(sliding)] == [("gqa", 1, 0), ("window", 2, 16)]
    # a GQA token reads the whole cache a request holds (2 heads x (32 + 32) x 2 B an entry)
    for spec in (gqa, sliding):
        assert af.bytes_read_per_token(spec, T, "bf16") == kv.request_kv_bytes(spec, T, "bf16")
    assert af.bytes_read_per_token(gqa, T, "bf16") == 2 * T * 256


def test_gemma_global_layers_take_their_own_dims():
    """Gemma 4's global layers: their own head size and K/V heads (K serving as V still costs p.v)."""
    spec = specs.from_config({**GEMMA, "global_head_dim": 64, "num_global_key_value_heads": 1,
                              "attention_k_eq_v": True}, id="tiny-gemma4")
    T = 1_000
    assert af.attention_flops(spec, T) == 2 * 8 * 16 * 64 + 2 * 8 * T * 128


@pytest.mark.parametrize("T", [1, 500, 70_000])
def test_counts_are_what_torch_counts_for_one_query(T):
    """torch's FLOP counter on softmax(q K^T) V for the last query of a context of T, K/V heads
    repeated onto the query heads as GQA kernels read them."""
    spec = specs.from_config(SLIDING, id="tiny-swa")
    full, window = af.attention_layers(spec)

    def counted(group, keys):
        q = torch.zeros(1, group.heads, 1, group.key_dim)
        k = torch.zeros(1, group.kv_heads, keys, group.key_dim).repeat_interleave(group.heads // group.kv_heads, 1)
        v = torch.zeros(1, group.kv_heads, keys, group.value_dim).repeat_interleave(group.heads // group.kv_heads, 1)
        with FlopCounterMode(display=False) as counter:
            torch.softmax(q @ k.transpose(-1, -2), -1) @ v
        return counter.get_total_flops()

    assert af.layer_flops(full, T) == counted(full, T)
    assert af.layer_flops(window, T) == counted(window, min(T, 16))


def test_a_gated_deltanet_layer_by_hand():
    """Chunks of C = 4, d_k = 4, d_v = 8, 2 value heads. Per chunk and head, multiply-adds:
    3 C d_k d_v = 384 (W S, K^T V', Q S), C^2 (3 d_k + 2 d_v) = 448 (K K^T, T K, T V, Q K^T, A V'),
    C (C-1) (C-2) / 6 = 4 (the triangular inverse): 836, so 1,672 FLOPs a chunk, 418 a token a
    head, 836 a token for the layer. Decode: the three state products, 2 x 3 x 2 x 4 x 8 = 384."""
    g = af.AttentionLayers("gdn", 1, 2, 4, 8, 0, chunk=4)
    assert af.layer_flops(g, 10, prefill=True) == af.layer_flops(g, 10**9, prefill=True) == 836
    assert af.layer_flops(g, 10) == 384
    assert g.attended(10**6) == 0 and af.layer_bytes_read("qwen-2.5-72b", g, 10**6) == 0


def test_a_mamba2_layer_by_hand():
    """2 heads of head_dim 4, state size N = 8, one B/C group, chunks of Q = 4. Decode: the update and
    the output, 2 x 2 x 2 x 4 x 8 = 256. Prefill, per token: per head the chunk state B^T x and the
    output C h (N d = 32 multiply-adds each) and the intra-chunk output (Q d = 16), 80 a head, 160;
    plus C B^T for the group (Q N = 32): 192 multiply-adds, 384 FLOPs, whatever the context."""
    g = af.AttentionLayers("ssd", 1, 2, 8, 4, 0, chunk=4, groups=1)
    assert af.layer_flops(g, 10) == af.layer_flops(g, 10**9) == 256
    assert af.layer_flops(g, 10, prefill=True) == af.layer_flops(g, 10**9, prefill=True) == 384
    assert g.attended(10**6) == 0 and af.layer_bytes_read("qwen-2.5-72b", g, 10**6) == 0


def test_nemotron_3_nano_attention_by_hand():
    """Nemotron-3-Nano-30B-A3B: 6 GQA layers (32 query heads, K and V of 128) over every token and 23
    Mamba-2 layers (64 heads of 64, N = 128, 8 groups, chunk_size 128): 2 x 2 x 64 x 64 x 128 a decoded
    token; 2 (64 (2 x 128 x 64 + 128 x 64) + 8 x 128 x 128) = 3,407,872 a prompt token."""
    need.module("aiconfigurator_core")
    from twopaths.specs.lookup import corpus_path
    spec = specs.from_config(corpus_path("nvidia--NVIDIA-Nemotron-3-Nano-30B-A3B-BF16"))
    t = 100_000
    assert af.attention_flops(spec, t) == 6 * 2 * 32 * t * 256 + 23 * 2 * 2 * 64 * 64 * 128
    assert af.attention_flops(spec, t, prefill=True) == 6 * 2 * 32 * t * 256 + 23 * 3_407_872


def _fla_reference(op: str = "gated_delta_rule"):
    """fla's naive.py of ``op`` needs only torch and einops; loaded by path, as importing fla wants
    triton."""
    found = importlib.util.find_spec("fla")
    if found is None:
        need.missing("fla (fla-core)", "pip install -r requirements.txt")
    path = Path(found.submodule_search_locations[0]) / "ops" / op / "naive.py"
    spec = importlib.util.spec_from_file_location(f"fla_{op}_naive", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("C, dk, dv", [(4, 4, 8), (16, 8, 8), (64, 32, 16)])
def test_gated_deltanet_products_are_fla_reference_chunk_products(C, dk, dv):
    """fla's PyTorch reference of the chunked form (naive_chunk_gated_delta_rule) multiplies exactly
    the products the count names, bar the triangular inverse it runs as a loop of elementwise sums."""
    naive = _fla_reference()
    heads, T = 2, 2 * C
    q, k = torch.randn(1, T, heads, dk), torch.randn(1, T, heads, dk)
    v, g, beta = torch.randn(1, T, heads, dv), -torch.rand(1, T, heads), torch.rand(1, T, heads)
    with FlopCounterMode(display=False) as counter:
        naive.naive_chunk_gated_delta_rule(q, k, v, g, beta, chunk_size=C)
    layer = af.AttentionLayers("gdn", 1, heads, dk, dv, 0, chunk=C)
    inverse = heads * 2 * C * (C - 1) * (C - 2) // 6 // C          # a token's share of the solve
    assert T * (af.layer_flops(layer, T, prefill=True) - inverse) == counter.get_total_flops()


@pytest.mark.parametrize("C, BC, dk, dv", [(16, 4, 8, 8), (64, 16, 32, 16)])
def test_kda_products_are_fla_reference_chunk_products_but_the_upper_tiles(C, BC, dk, dv):
    """fla's PyTorch reference of chunked KDA (naive_chunk_kda) multiplies GDN's products, its C x C
    key products (K K^T, Q K^T) as dense tiles, per-channel decays folded in elementwise; the count
    takes the causal sub-chunk tiles chunk_kda multiplies, so the reference runs the (NC-1) NC / 2
    tiles above the diagonal of both products more, and the triangular inverse as elementwise sums."""
    naive = _fla_reference("kda")
    heads, T = 2, 2 * C
    q, k = torch.randn(1, T, heads, dk), torch.randn(1, T, heads, dk)
    v, g, beta = torch.randn(1, T, heads, dv), -torch.rand(1, T, heads, dk), torch.rand(1, T, heads)
    with FlopCounterMode(display=False) as counter:
        naive.naive_chunk_kda(q, k, v, g, beta, chunk_size=C)
    layer = af.AttentionLayers("kda", 1, heads, dk, dv, 0, chunk=C, sub_chunk=BC)
    inverse = heads * 2 * C * (C - 1) * (C - 2) // 6 // C          # a token's share of the solve
    n = C // BC
    upper = heads * 2 * 2 * (n - 1) * n // 2 * BC * BC * dk // C    # a token's share of the skipped tiles
    assert T * (af.layer_flops(layer, T, prefill=True) - inverse + upper) == counter.get_total_flops()


def _prompt(group, T):
    """FLOPs of a fresh causal prompt of T tokens: the token at position t sees t tokens."""
    return sum(af.layer_flops(group, t, prefill=True) for t in range(1, T + 1))


@given(st.integers(2, 400))
def test_causal_prompts_grow_quadratically_in_full_layers_linearly_past_a_window(T):
    full, window = af.attention_layers(specs.from_config(SLIDING, id="tiny-swa"))
    per_token = af.layer_flops(full, 1)                       # 2 x 8 x 64 a token seen
    assert _prompt(full, T) == per_token * T * (T + 1) // 2    # half the square
    second = _prompt(full, T + 1) - 2 * _prompt(full, T) + _prompt(full, T - 1)
    assert second == per_token > 0
    if T > window.window:
        assert _prompt(window, T + 1) - _prompt(window, T) == per_token * window.window
    gdn = af.AttentionLayers("gdn", 1, 2, 4, 8, 0, chunk=4)
    assert _prompt(gdn, T) == T * af.layer_flops(gdn, 1, prefill=True)


def test_the_corpus_families_count_by_hand():
    """From the corpus configs: Qwen3-235B (94 GQA layers, 64 heads of 128), Qwen3.5-397B (15 gated
    attention layers of 32 heads of 256, 45 Gated DeltaNet layers of 64 value heads, 128 x 128),
    MiMo-V2-Flash (9 full layers, 39 sliding ones of 128 with their own heads, K 192 and V 128),
    GLM-5 (DSA: MLA un-absorbed in prefill, 256 + 256, over its top 2,048, 32 indexer heads of 128)
    and Kimi K2 (MLA as V3, 64 heads)."""
    need.module("aiconfigurator_core")
    from twopaths.specs.lookup import corpus_path
    ids = {n: specs.add_model(corpus_path(n)) for n in (
        "Qwen--Qwen3-235B-A22B", "Qwen--Qwen3.5-397B-A17B", "XiaomiMiMo--MiMo-V2-Flash", "zai-org--GLM-5",
        "moonshotai--Kimi-K2-Instruct")}
    T = 500_000
    assert af.attention_flops(ids["Qwen--Qwen3-235B-A22B"], T, prefill=True) == 94 * 2 * 64 * T * 256
    gdn = 2 * (3 * 128 * 128 + 64 * 5 * 128) + 63 * 62 // 3           # a value head, C = 64
    assert af.attention_flops(ids["Qwen--Qwen3.5-397B-A17B"], T, prefill=True) == \
        15 * 2 * 32 * T * 512 + 45 * 64 * gdn
    assert af.attention_flops(ids["Qwen--Qwen3.5-397B-A17B"], T) == 15 * 2 * 32 * T * 512 + 45 * 6 * 64 * 128 * 128
    assert af.attention_flops(ids["XiaomiMiMo--MiMo-V2-Flash"], T) == 9 * 2 * 64 * T * 320 + 39 * 2 * 64 * 128 * 320
    assert af.attention_flops(ids["zai-org--GLM-5"], T, prefill=True) == \
        78 * (2 * 64 * 2048 * 512 + 2 * 32 * 128 * T)
    assert af.attention_flops(ids["zai-org--GLM-5"], T) == 78 * (2 * 64 * 2048 * 1088 + 2 * 32 * 128 * T)
    assert af.attention_flops(ids["moonshotai--Kimi-K2-Instruct"], T) == 61 * 2 * 64 * T * 1088

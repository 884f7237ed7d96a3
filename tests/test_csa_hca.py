"""V4's attention against transformers' ``deepseek_v4`` modules on a tiny config, decode against
prefill, cache bytes against the calculator, and bad input.

The oracle is transformers' model code (a test dependency); weights are copied from its modules
into ours. Its grouped low-rank output projection is one linear map, so ours holds the product.
"""

import pytest
import torch

from twopaths.calc import kv
from twopaths.layers.csa_hca import CSA, HCA, token_view
from twopaths.layers.window import WindowAttention, attend, cache_spec, rope

D, H, HEAD, ROPE, QR, WIN, IH, ID, TOPK = 48, 4, 32, 8, 24, 8, 4, 16, 3
KINDS = ("sliding_attention", "compressed_sparse_attention", "heavily_compressed_attention")
TOL = 1e-5


@pytest.fixture(autouse=True)
def one_thread():
    """Tiny tensors: threads only contend on a shared machine."""
    n = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(n)


@pytest.fixture(scope="module")
def hf():
    from transformers.models.deepseek_v4 import modeling_deepseek_v4 as M
    from transformers.models.deepseek_v4.configuration_deepseek_v4 import DeepseekV4Config

    cfg = DeepseekV4Config(
        vocab_size=32, hidden_size=D, num_hidden_layers=3, num_attention_heads=H, head_dim=HEAD, q_lora_rank=QR,
        partial_rotary_factor=ROPE / HEAD, o_groups=2, o_lora_rank=16, sliding_window=WIN,
        compress_rates={KINDS[1]: 4, KINDS[2]: 8}, index_n_heads=IH, index_head_dim=ID, index_topk=TOPK,
        layer_types=list(KINDS), mlp_layer_types=["moe"] * 3, n_routed_experts=4, num_experts_per_tok=2,
        moe_intermediate_size=8)
    cfg._attn_implementation = "eager"
    return M, cfg


def _randomise(module, seed):
    gen = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in module.named_parameters():
            noise = torch.randn(p.shape, generator=gen)
            p.copy_(1 + 0.1 * noise if name.endswith("norm.weight") else noise * (0.15 if p.dim() > 1 else 1.0))


def _copy_compressor(ours, theirs):
    ours.wkv.weight.copy_(theirs.kv_proj.weight)
    ours.wgate.weight.copy_(theirs.gate_proj.weight)
    ours.slot_bias.copy_(theirs.position_bias)
    ours.norm.weight.copy_(theirs.kv_norm.weight)


def _pair(hf, layer_idx, seed=1):
    """Their attention layer with random weights, and ours with the same weights."""
    M, cfg = hf
    theirs = M.DeepseekV4Attention(cfg, layer_idx)
    _randomise(theirs, seed)
    common = dict(heads=H, head_dim=HEAD, window=WIN, rope_dim=ROPE, q_rank=QR)
    ours = [WindowAttention(D, rope_theta=cfg.rope_theta, **common),
            CSA(D, 4, topk=TOPK, index_heads=IH, index_dim=ID, rope_theta=cfg.compress_rope_theta, **common),
            HCA(D, 8, rope_theta=cfg.compress_rope_theta, **common)][layer_idx]
    with torch.no_grad():
        ours.wq_a.weight.copy_(theirs.q_a_proj.weight)
        ours.q_norm.weight.copy_(theirs.q_a_norm.weight)
        ours.wq_b.weight.copy_(theirs.q_b_proj.weight)
        ours.wkv.weight.copy_(theirs.kv_proj.weight)
        ours.kv_norm.weight.copy_(theirs.kv_norm.weight)
        ours.sinks.copy_(theirs.sinks)
        groups = theirs.o_a_proj.weight.view(cfg.o_groups, cfg.o_lora_rank, -1)
        ours.wo.weight.copy_(theirs.o_b_proj.weight @ torch.block_diag(*groups))
        if layer_idx:
            _copy_compressor(ours.compressor, theirs.compressor)
        if layer_idx == 1:
            idx = theirs.compressor.indexer
            _copy_compressor(ours.indexer.compressor, idx)
            ours.indexer.wq.weight.copy_(idx.q_b_proj.weight)
            ours.indexer.ww.weight.copy_(idx.scorer.weights_proj.weight)
    return theirs, ours


def _their_inputs(hf, x):
    M, cfg = hf
    B, T, _ = x.shape
    pos = torch.arange(T)[None].expand(B, -1)
    rot = M.DeepseekV4RotaryEmbedding(cfg)
    emb = {k: rot(x, pos, layer_type=k) for k in ("main", "compress")}
    i = torch.arange(T)
    visible = (i[:, None] >= i[None, :]) & (i[:, None] - i[None, :] < WIN)
    mask = torch.zeros(B, 1, T, T).masked_fill(~visible, float("-inf"))
    return emb, pos, mask


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("layer_idx", [0, 1, 2], ids=["window", "csa", "hca"])
def test_layer_matches_transformers(hf, layer_idx, seed):
    torch.manual_seed(10 * seed + layer_idx)
    x = torch.randn(2, 37, D)             # 37: the last window is left open for both ratios
    theirs, ours = _pair(hf, layer_idx, seed)
    emb, pos, mask = _their_inputs(hf, x)
    with torch.no_grad():
        if layer_idx == 1:   # CSA: both attend over our picks; the picks are compared, up to ties, below
            picks = ours.indexer(x, ours.q_norm(ours.wq_a(x)), torch.arange(x.shape[1]))
            theirs.compressor.indexer.forward = lambda *args, **kwargs: picks
        expected, _ = theirs(x, emb, pos, mask)
        got = ours(x)
    assert expected.abs().mean() > 0.1                  # not a vanishing signal
    torch.testing.assert_close(got, expected, rtol=0, atol=TOL)


@pytest.mark.parametrize("layer_idx", [1, 2], ids=["csa", "hca"])
def test_compressor_entries_match_transformers(hf, layer_idx):
    torch.manual_seed(10 + layer_idx)
    x = torch.randn(2, 35, D)
    theirs, ours = _pair(hf, layer_idx)
    _, pos, _ = _their_inputs(hf, x)
    with torch.no_grad():
        q_res = theirs.q_a_norm(theirs.q_a_proj(x))
        expected = theirs.compressor(x, q_res, pos, None, layer_idx)[0][:, 0]
        got = ours.compressor(x)
    assert got.shape == expected.shape == (2, 35 // ours.ratio, HEAD)
    torch.testing.assert_close(got, expected, rtol=0, atol=TOL)


@pytest.mark.parametrize("seed", [3, 4, 5])
def test_indexer_picks_match_transformers(hf, seed):
    torch.manual_seed(seed)
    x = torch.randn(2, 41, D)
    theirs, ours = _pair(hf, 1, seed)
    _, pos, _ = _their_inputs(hf, x)
    seen = {}
    hook = theirs.compressor.indexer.scorer.register_forward_hook(lambda m, args, out: seen.update(scores=out))
    with torch.no_grad():
        q_res = theirs.q_a_norm(theirs.q_a_proj(x))
        expected = theirs.compressor.indexer(x, q_res, pos, None, 1)
        got = ours.indexer(x, q_res, torch.arange(41))
        scores = ours.indexer.scores(x, q_res, torch.arange(41))
    hook.remove()
    visible = ours.indexer.visible(torch.arange(41))
    assert (visible > TOPK).any()                         # some queries really choose
    # their scorer's own output, so the scales (1/sqrt(heads), 1/sqrt(dim)) are checked, not only the ranking
    shown = torch.arange(scores.shape[-1])[None, :] < visible[:, None]
    assert seen["scores"].shape == scores.shape
    torch.testing.assert_close(scores[:, shown], seen["scores"][:, shown], rtol=0, atol=1e-5)
    assert scores[:, shown].abs().max() > 0.1
    # ReLU scores tie at exactly zero and each side breaks ties its own way: compare the picked scores
    picked = [scores.gather(-1, i.clamp_min(0)).masked_fill(i < 0, float("-inf")).sort(-1).values for i in (got, expected)]
    torch.testing.assert_close(picked[0], picked[1], rtol=0, atol=1e-5)
    assert torch.equal(got, _topk_by_hand(scores, visible, TOPK))


def _topk_by_hand(scores, visible, k):
    """The k best of each query's visible entries, best first, ties to the earlier entry, -1 past
    what it sees: a plain sort per query, apart from the layer's masked tensor sort."""
    out = torch.full((*scores.shape[:2], k), -1, dtype=torch.long)
    for b in range(scores.shape[0]):
        for t in range(scores.shape[1]):
            seen = sorted(range(int(visible[t])), key=lambda j: (-float(scores[b, t, j]), j))[:k]
            out[b, t, :len(seen)] = torch.tensor(seen, dtype=torch.long)
    return out


@pytest.mark.parametrize("cls", [WindowAttention, CSA, HCA])
@pytest.mark.parametrize("chunk", [1, 5])
def test_decode_equals_prefill(cls, chunk):
    torch.manual_seed(chunk)
    extra = {CSA: {"topk": TOPK}, HCA: {"ratio": 8}}.get(cls, {})
    layer = cls(D, heads=H, head_dim=HEAD, window=WIN, rope_dim=ROPE, q_rank=QR, **extra)
    _randomise(layer, 5)
    x = torch.randn(2, 30, D)
    with torch.no_grad():
        full = layer(x)
        cache = layer.new_cache()
        steps = torch.cat([layer(x[:, a:a + chunk], cache) for a in range(0, 30, chunk)], dim=1)
    torch.testing.assert_close(steps, full, rtol=0, atol=TOL)
    assert cache.length == 30


@pytest.mark.parametrize("tokens", [5, 29])
@pytest.mark.parametrize("dtype,kv_dtype", [(torch.float32, "fp32"), (torch.bfloat16, "bf16")])
def test_cache_bytes_equal_the_calculator(tokens, dtype, kv_dtype):
    kw = dict(heads=H, head_dim=HEAD, window=WIN, rope_dim=ROPE)
    for layer in (WindowAttention(D, **kw), WindowAttention(D, **{**kw, "window": None}), CSA(D, 4, index_dim=ID, **kw),
                  HCA(D, 8, **kw)):
        layer, cache = layer.to(dtype), layer.new_cache()
        with torch.no_grad():
            for a in range(0, tokens, 4):
                layer(torch.randn(1, min(4, tokens - a), D, dtype=dtype), cache)
        assert cache.parts() == kv.kv_breakdown(cache_spec(layer), tokens, kv_dtype), (layer, tokens)
    # the groups themselves, written out: a window of raw entries, 4:1 entries, indexer keys
    assert [(g.kind, g.dims) for g in CSA(D, 4, index_dim=ID, **kw).cache_groups()] == [
        ("window", {"window": WIN, "entry_dim": HEAD, "rope_dim": ROPE}),
        ("compressed", {"ratio": 4, "entry_dim": HEAD, "rope_dim": ROPE}), ("indexer", {"ratio": 4, "index_dim": ID})]


@pytest.mark.parametrize("cls", [HCA, CSA])
def test_every_past_token_is_seen_raw_or_compressed_and_csa_sees_k_entries(cls):
    torch.manual_seed(4)
    layer = cls(D, 4, heads=H, head_dim=HEAD, window=WIN, rope_dim=ROPE, **({"topk": 2} if cls is CSA else {}))
    view = token_view(layer, torch.randn(1, 60, D))
    t = torch.arange(60)
    assert torch.equal((view == 2).sum(1), (t + 1).clamp(max=WIN))
    if cls is HCA:
        assert (view[t[:, None] >= t[None, :]] > 0).all() and (view[t[:, None] < t[None, :]] == 0).all()
    else:                                   # k entries of 2m tokens each, at most
        assert ((view == 1).sum(1) <= 2 * 4 * 2).all() and (view == 1).sum() > 0


def test_rope_is_relative_and_invertible():
    torch.manual_seed(0)
    q, k = torch.randn(1, 1, 16), torch.randn(1, 1, 16)
    score = lambda a, b: (rope(q, torch.tensor([a]), 1e4, 8) * rope(k, torch.tensor([b]), 1e4, 8)).sum()  # noqa: E731
    torch.testing.assert_close(score(7, 3), score(104, 100))
    x = torch.randn(2, 5, 3, 16)
    pos = torch.arange(5) * 11
    torch.testing.assert_close(rope(rope(x, pos, 1e4, 8), pos, 1e4, 8, inverse=True), x, rtol=0, atol=1e-6)


def test_bad_input(raises_param):
    raises_param("ratio", HCA, D, 0, window=WIN, head_dim=HEAD)
    err = raises_param("ratio", HCA, D, 3, window=WIN, head_dim=HEAD)
    assert "divisor of the window" in str(err)
    raises_param("ratio", CSA, D, 16, window=WIN, head_dim=HEAD)            # 16 does not divide 8
    raises_param("topk", CSA, D, 4, window=WIN, head_dim=HEAD, topk=0)
    raises_param("rope_dim", WindowAttention, D, head_dim=HEAD, rope_dim=7)
    q, kv = torch.randn(1, 2, 4, 8), torch.randn(1, 2, 3, 8)
    allowed = torch.ones(1, 2, 2, dtype=torch.bool)
    raises_param("k", attend, q, kv, kv, allowed, 1.0)                      # 3 KV heads for 4 query heads
    raises_param("sinks", attend, q, kv[:, :, :1], kv[:, :, :1], allowed, 1.0, torch.zeros(3))


def test_training_teaches_the_indexer_without_touching_the_rest():
    """Top-k passes no gradient: the indexer learns only from its distillation loss, fed detached
    inputs, so the attention's own gradients are the same with or without it."""
    torch.manual_seed(6)
    x = torch.randn(2, 40, D)
    grads = {}
    for weight in (0.0, 1.0):
        torch.manual_seed(7)
        layer = CSA(D, 4, heads=H, head_dim=HEAD, window=WIN, rope_dim=ROPE, topk=2, index_dim=ID, index_loss=weight)
        layer(x).square().mean().backward()
        grads[weight] = {n: p.grad for n, p in layer.named_parameters()}
    for name, g in grads[0.0].items():
        if name.startswith("indexer."):
            assert g is None and grads[1.0][name] is not None and grads[1.0][name].abs().sum() > 0, name
        else:
            torch.testing.assert_close(grads[1.0][name], g, rtol=0, atol=0)


def test_benchmark_fills_caches_as_decoding_would():
    """The decode benchmark builds its caches directly; they must hold what a real prefill leaves
    (the layer run over the tokens with a cache), byte for byte, and what the layer's dimensions
    give by hand: FP32 entries of 128 values (512 B), CSA's 128-token window, one compressed entry
    and one indexer key of 64 values (256 B; not the entry's width, so the two cannot be swapped)
    per 4 tokens."""
    from twopaths.bench import csa as bench

    dense, csa = bench.layers(d_model=64, heads=2, head_dim=128, topk=8, index_dim=64)
    by_hand = {
        (dense, 5): {"MLA latent": 5 * 512},
        (dense, 1_001): {"MLA latent": 1_001 * 512},
        (csa, 5): {"sliding window": 5 * 512, "compressed entries 4:1": 512, "indexer keys": 256},
        (csa, 1_001): {"sliding window": 128 * 512, "compressed entries 4:1": 250 * 512,
                       "indexer keys": 250 * 256},
    }
    for (layer, tokens), parts in by_hand.items():
        prefilled = layer.new_cache()
        with torch.no_grad():
            layer(torch.randn(1, tokens, 64), prefilled)
        cache = bench.filled_cache(layer, tokens)
        assert cache.parts() == prefilled.parts() == parts
        assert cache.length == prefilled.length == tokens
        assert cache.buffer_nbytes == prefilled.buffer_nbytes      # the open window and CSA's overlap half
        assert cache.raw.shape == prefilled.raw.shape
        for part in ("compressor", "indexer"):
            a, b = getattr(cache, part), getattr(prefilled, part)
            assert (a is None) == (b is None)
            if a is not None:
                assert a.entries.shape == b.entries.shape and a.ratio == b.ratio
                assert [t.shape for t in a.prev or ()] == [t.shape for t in b.prev or ()]
    times = bench.time_decode(csa, 1_001, repeats=2)
    assert len(times) == 2 and all(t > 0 for t in times)


def test_entry_probs_average_the_heads_of_scaled_logits():
    """Each head's softmax over the entries a query sees, of q.e / sqrt(head_dim), averaged over heads:
    rows sum to 1 where a query sees an entry; written here from the layer's own queries and entries."""
    torch.manual_seed(0)
    layer = HCA(32, ratio=4, window=8, heads=2, head_dim=16, q_rank=16, rope_dim=4)
    x = torch.randn(1, 12, 32)
    probs = layer.entry_probs(x)
    pos = torch.arange(12)
    c_q = layer.q_norm(layer.wq_a(x))
    entries, seen = HCA.compressed(layer, x, c_q, pos, None)
    logits = torch.einsum("bthd,bsd->bhts", layer.queries(c_q, pos), entries) / 16 ** 0.5
    expected = torch.softmax(logits.masked_fill(~seen[:, None], float("-inf")), -1).nan_to_num(0.0).mean(1)
    torch.testing.assert_close(probs, expected)
    sees = seen[0].any(-1)
    torch.testing.assert_close(probs[0][sees].sum(-1), torch.ones(int(sees.sum())))


def test_a_csa_entry_covers_two_windows():
    """CSA's entry w pools tokens [(w - 1) m, (w + 1) m). At m = 4 and a 4-token window, query 13 sees
    entries 0-2 (every one, topk 64), so tokens 0-11 are pooled and 10-13 raw: 8 and 9 only through
    entry 2, which a one-window entry would leave unseen."""
    torch.manual_seed(0)
    layer = CSA(32, ratio=4, window=4, heads=2, head_dim=16, q_rank=16, rope_dim=4, index_heads=2, index_dim=8)
    view = token_view(layer, torch.randn(1, 16, 32))
    assert view[13].tolist() == [1] * 10 + [2] * 4 + [0] * 2

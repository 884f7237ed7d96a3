"""V3.2's DSA against fla's ``naive_dsa``, its indexer against transformers' ``DeepseekV32Indexer``;
decode against prefill; cache bytes against the calculator."""

import importlib.util
import pathlib

import pytest
import torch

from twopaths.calc import kv
from twopaths.layers.dsa import DSA
from twopaths.layers.indexer import rope_half, selected
from twopaths.layers.window import attend, cache_spec, rope

D, H, C, R, IH, ID, TOPK = 48, 4, 32, 8, 4, 16, 7


@pytest.fixture(scope="module")
def fla_naive():
    import fla

    spec = importlib.util.spec_from_file_location("fla_dsa_naive", pathlib.Path(fla.__file__).parent / "ops/dsa/naive.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _layer(seed=0):
    torch.manual_seed(seed)
    return DSA(D, heads=H, latent_dim=C, rope_dim=R, q_rank=24, topk=TOPK, index_heads=IH, index_dim=ID)


def test_layer_matches_fla(fla_naive):
    """fla selects and attends from our projections; the output projection is applied to both. The
    selections agree up to ties (ReLU scores tie at exactly zero, and each breaks ties its own way);
    attention over our selection agrees with fla's attention over the same selection."""
    layer, x = _layer(), torch.randn(2, 40, D)
    pos, ix = torch.arange(40), layer.indexer
    with torch.no_grad():
        c_q = layer.q_norm(layer.wq_a(x))
        q = rope(layer.wq_b(c_q).view(2, 40, H, -1), pos, layer.rope_theta, R)
        key = torch.cat([layer.c_norm(layer.wc(x)), rope(layer.wr(x), pos, layer.rope_theta, R)], -1)[:, :, None]
        q_idx = rope_half(ix.wq(c_q).view(2, 40, IH, ID), pos, ix.rope_theta, ix.rope_dim)
        k_idx = rope_half(ix.k_norm(ix.wk(x)), pos, ix.rope_theta, ix.rope_dim)
        w_idx = ix.ww(x) * IH ** -0.5
        theirs = fla_naive.naive_dsa_indexer(q_idx, k_idx, w_idx, topk=TOPK, scale=ID ** -0.5, activation="relu")
        ours = ix(x, c_q, pos)
        scores = ix.scores(x, c_q, pos)
        picked = [scores.gather(-1, i.clamp_min(0)).masked_fill(i < 0, float("-inf")).sort(-1).values for i in (ours, theirs)]
        o = fla_naive.naive_dsa(q, key, key[..., :C], None, None, indices=ours, topk=TOPK, scale=(C + R) ** -0.5)
        expected, got = layer.wo(o.flatten(2)), layer(x)
    torch.testing.assert_close(picked[0], picked[1], rtol=0, atol=1e-6)
    assert expected.abs().mean() > 0.1
    torch.testing.assert_close(got, expected, rtol=0, atol=1e-5)


class _TopkInput(torch.overrides.TorchFunctionMode):
    """Records the tensor handed to ``topk``: V3.2's indexer scores inline, with no scorer module
    a forward hook could watch, and ranks its masked scores with ``topk``."""

    def __torch_function__(self, func, types, args=(), kwargs=None):
        if func is torch.Tensor.topk:
            self.scores = args[0].clone()
        return func(*args, **(kwargs or {}))


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_indexer_matches_transformers(seed):
    """Their indexer and ours on the same weights, with their rotary embedding and a causal mask:
    the scores agree on every visible entry, and the picks agree up to ties (ReLU makes exact
    zeros common, and each side breaks ties its own way)."""
    from transformers.models.deepseek_v32 import modeling_deepseek_v32 as M
    from transformers.models.deepseek_v32.configuration_deepseek_v32 import DeepseekV32Config

    cfg = DeepseekV32Config(hidden_size=D, q_lora_rank=24, qk_rope_head_dim=R, index_n_heads=IH, index_head_dim=ID,
                            index_topk=TOPK, num_attention_heads=H, num_hidden_layers=1)
    torch.manual_seed(seed)
    theirs, ix = M.DeepseekV32Indexer(cfg, 0), _layer(seed).indexer
    T = 33
    x, c_q = torch.randn(2, T, D), torch.randn(2, T, 24)
    pos = torch.arange(T)
    with torch.no_grad():
        for p in theirs.parameters():               # LayerNorm's weight and bias too, off their 1 and 0
            p.normal_(0.0, 0.3)
        ix.wq.weight.copy_(theirs.wq_b.weight)
        ix.ww.weight.copy_(theirs.weights_proj.weight)
        ix.wk.weight.copy_(theirs.wk.weight)
        ix.k_norm.weight.copy_(theirs.k_norm.weight)
        ix.k_norm.bias.copy_(theirs.k_norm.bias)
        emb = M.DeepseekV32RotaryEmbedding(cfg)(x, pos[None])
        causal = torch.ones(T, T, dtype=torch.bool).tril()[None]
        with _TopkInput() as seen:
            expected = theirs(x, c_q, emb, causal, pos[None]).long()
        got, scores = ix(x, c_q, pos), ix.scores(x, c_q, pos)
    assert seen.scores.shape == scores.shape == (2, T, T)
    torch.testing.assert_close(scores.masked_select(causal), seen.scores.masked_select(causal), rtol=0, atol=1e-5)
    assert scores.masked_select(causal).abs().max() > 0.1                 # not a vanishing signal
    # they pick from -inf entries where a query sees fewer than topk tokens: those picks count as none
    expected = expected.masked_fill(expected > pos[:, None], -1)
    picked = [scores.gather(-1, i.clamp_min(0)).masked_fill(i < 0, float("-inf")).sort(-1).values
              for i in (got, expected)]
    torch.testing.assert_close(picked[0], picked[1], rtol=0, atol=1e-5)


def test_grouped_attention_over_picks_matches_fla(fla_naive):
    """The attention core with 2 key/value heads for 4 query heads, on fla's own picks."""
    torch.manual_seed(1)
    B, T = 2, 25
    q, k, v = torch.randn(B, T, 4, 16), torch.randn(B, T, 2, 16), torch.randn(B, T, 2, 12)
    q_idx, k_idx, w_idx = torch.randn(B, T, 2, 8), torch.randn(B, T, 8), torch.randn(B, T, 2)
    expected, picks = fla_naive.naive_dsa(q, k, v, q_idx, k_idx, w_idx, topk=6, return_indices=True)
    got = attend(q, k, v, selected(picks, T), 16 ** -0.5)
    torch.testing.assert_close(got, expected, rtol=0, atol=1e-5)


@pytest.mark.parametrize("chunk", [1, 6])
def test_decode_equals_prefill_and_cache_bytes_equal_the_calculator(chunk):
    layer, x = _layer(chunk), torch.randn(1, 27, D)
    with torch.no_grad():
        full, cache = layer(x), layer.new_cache()
        steps = torch.cat([layer(x[:, a:a + chunk], cache) for a in range(0, 27, chunk)], dim=1)
    torch.testing.assert_close(steps, full, rtol=0, atol=1e-5)
    assert cache.parts() == kv.kv_breakdown(cache_spec(layer), 27, "fp32")
    assert [g.kind for g in layer.cache_groups()] == ["mla", "indexer"]


def test_bad_input(raises_param):
    raises_param("topk", DSA, D, topk=0)
    raises_param("heads", DSA, D, heads=0)
    raises_param("rope_dim", DSA, D, rope_dim=40, index_dim=32)          # the indexer rotates as many channels


def test_training_teaches_the_indexer():
    layer, x = _layer(3), torch.randn(2, 30, D)
    layer(x).square().mean().backward()
    assert all(p.grad is not None and p.grad.abs().sum() > 0 for p in layer.indexer.parameters())
    layer.zero_grad(set_to_none=True)
    layer.index_loss = 0.0
    layer(x).square().mean().backward()
    assert all(p.grad is None for p in layer.indexer.parameters())

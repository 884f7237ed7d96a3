"""Details of the toy layers that the oracle tests could not see, each found by a mutant that
survived them: defaults that must be the reference's, a norm's eps, a loss weight, an init range,
edge bins, and shapes with more than two dimensions."""

import importlib.util
from pathlib import Path

import pytest
import torch
from torch import nn

from twopaths.layers import attnres, dsa, hyper_connections, latent_moe, quantile_balancing, routers, speculative
from twopaths.layers.csa_hca import CSA, HCA
from twopaths.layers.ffn import as_activation
from twopaths.layers.indexer import distill_loss, rope_half, topk_mass
from twopaths.layers.mla import MLA
from twopaths.layers.window import WindowAttention, cache_spec


def _fla_attnres():
    path = Path(importlib.util.find_spec("fla").origin).parent / "ops" / "attnres" / "naive.py"
    spec = importlib.util.spec_from_file_location("fla_attnres_naive", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.naive_attnres


def test_depth_attention_default_eps_is_flas():
    """Sources with a mean square near 1e-6, where the RMSNorm's eps decides the keys."""
    torch.manual_seed(0)
    sources = [1e-3 * torch.randn(3, 8) * (1 + i) for i in range(3)]
    query, weight = torch.randn(8), torch.ones(8)
    torch.testing.assert_close(attnres.depth_attention(query, sources, weight)[0],
                               _fla_attnres()(query, sources, weight), rtol=0, atol=1e-9)


def test_dsa_has_no_biases_zero_in_zero_out():
    layer = dsa.DSA(16, heads=2, latent_dim=8, rope_dim=4, topk=3, index_heads=2, index_dim=8)
    with torch.no_grad():
        assert torch.equal(layer(torch.zeros(1, 5, 16)), torch.zeros(1, 5, 16))


def test_dsa_norms_take_its_eps():
    """A large eps against RMSNorms built here: the latent, query and indexer norms all take it."""
    layer = dsa.DSA(16, heads=2, latent_dim=8, rope_dim=4, topk=3, index_heads=2, index_dim=8, eps=0.5)
    for norm in (layer.c_norm, layer.q_norm, layer.indexer.k_norm):
        assert norm.eps == 0.5
    x = 0.3 * torch.randn(2, 6, 16)
    torch.testing.assert_close(layer.c_norm(layer.wc(x)), nn.functional.rms_norm(layer.wc(x), (8,), eps=0.5))


def test_dsa_index_loss_scales_the_indexers_gradient():
    grads = []
    for weight in (1.0, 2.5):
        torch.manual_seed(3)
        layer = dsa.DSA(16, heads=2, latent_dim=8, rope_dim=4, topk=3, index_heads=2, index_dim=8,
                        index_loss=weight)
        layer(torch.randn(2, 9, 16)).sum().backward()
        grads.append(layer.indexer.wq.weight.grad)
    torch.testing.assert_close(grads[1], 2.5 * grads[0])


def test_residual_rms_follows_the_prenorm_stream():
    """A block that adds the normalised stream back: x <- x + rmsnorm(x), so each RMS grows by one."""
    x = torch.full((4, 8), 3.0)
    assert latent_moe.residual_rms([nn.Identity(), nn.Identity()], x) == pytest.approx([3.0, 4.0, 5.0])


def test_experts_start_as_nn_linear_would():
    torch.manual_seed(0)
    ex = latent_moe.Experts(4, 64, 32, act="swiglu")
    for w in (ex.w_gate, ex.w_up, ex.w_down):
        bound = w.shape[-1] ** -0.5
        assert w.abs().max() <= bound and w.max() > 0.95 * bound and w.min() < -0.95 * bound
        assert abs(w.mean().item()) < 0.05 * bound
    assert latent_moe.Experts(4, 8, 8, act="relu2").w_gate is None     # an ungated FFN has no gate


def test_expand_streams_copies_every_position():
    x = torch.randn(2, 3, 5)
    out = hyper_connections.expand_streams(x, 4)
    assert out.shape == (2, 3, 4, 5) and all(torch.equal(out[..., s, :], x) for s in range(4))


def test_gate_weights_sum_to_the_scale_unless_told_not_to():
    scores, idx = torch.rand(5, 6), torch.tensor([[0, 1]] * 5)
    torch.testing.assert_close(routers.gate_weights(scores, idx, scale=2.0).sum(-1), torch.full((5,), 2.0))
    torch.testing.assert_close(routers.gate_weights(scores, idx, normalize=False), scores[:, :2])
    hashed = routers.HashRouter(4, 6, 2, vocab=10, normalize=False)
    r = hashed(torch.randn(5, 4), torch.arange(5))
    torch.testing.assert_close(r.weights, r.scores.gather(1, r.indices))


def test_aux_free_update_default_rate_is_deepseeks():
    """DeepSeek-V3's bias update speed, 0.001: each expert moves by the rate, up if under-loaded."""
    load = torch.tensor([1.0, 3.0])
    torch.testing.assert_close(routers.aux_free_update(torch.zeros(2), load), torch.tensor([1e-3, -1e-3]))


def test_speculative_checks_at_their_edges(raises_param):
    speculative.check_draft(torch.tensor([[0, 4]]), 5)
    raises_param("draft", speculative.check_draft, torch.tensor([[0, 5]]), 5)      # id == vocab
    with_zeros = torch.tensor([[[0.0, 1.0], [0.5, 0.5]]])
    assert speculative.check_probs("p", with_zeros) is with_zeros                  # zeros are probabilities
    raises_param("p", speculative.check_probs, "p", torch.ones(2, 3) / 3)           # not [B, rows, V]
    draft, p = torch.tensor([[0, 1]]), torch.full((1, 3, 4), 0.25)
    raises_param("q", speculative.verify, draft, torch.full((1, 3, 4), 0.25), p)    # q needs gamma rows


def test_histogram_clamps_residuals_to_the_edge_bins():
    """Scores 10, 0, -10 with top-1: the cutoff is 0, so the residuals 0 - s are -10 (below the
    bounds: bin 0), 0 (the middle bin) and 10 (above them: the last bin)."""
    scores = torch.tensor([[10.0, 0.0, -10.0]]).expand(5, 3)
    hist = quantile_balancing.histogram(scores, torch.zeros(3), 1, 4, (-1.0, 1.0))
    assert hist[0, 0] == hist[1, 2] == hist[2, 3] == 5 and hist.sum() == 15


def test_cache_spec_counts_the_layers_parameters():
    layer = WindowAttention(16, heads=2, head_dim=8, window=4, rope_dim=4)
    spec = cache_spec(layer)
    assert spec.name == spec.id == "WindowAttention"
    assert spec.params_total == spec.params_active == sum(p.numel() for p in layer.parameters())


def test_swiglu_is_silu_of_the_gate_times_up():
    g, u = torch.randn(5, 7), torch.randn(5, 7)
    torch.testing.assert_close(as_activation("swiglu")(g, u), nn.functional.silu(g) * u)


def test_topk_mass_needs_as_many_picks_as_k(raises_param):
    """Five queries, two picks each: k = 3 is refused even though there are five queries."""
    p = torch.softmax(torch.randn(1, 5, 6), -1)
    raises_param("k", topk_mass, p, p.topk(2, -1).indices, 3)
    raises_param("k", topk_mass, p, p.topk(2, -1).indices, 0)


def test_distill_loss_averages_over_every_query_that_sees_an_entry():
    """A query that sees one entry has KL 0, and still counts in the mean."""
    visible = torch.tensor([1, 3])
    p = torch.tensor([[[1.0, 0.0, 0.0], [0.2, 0.3, 0.5]]])
    scores = torch.zeros(1, 2, 3)                                     # uniform over what each sees
    kl = (p[0, 1] * (p[0, 1].log() - torch.log(torch.tensor(1 / 3)))).sum()
    torch.testing.assert_close(distill_loss(scores, p, visible), kl / 2)


def test_distill_loss_leaves_out_a_query_that_sees_no_entry():
    """The first query sees nothing (its attention is all zero): the mean is over the second alone.
    Averaged over every query instead, the loss would be half of this."""
    visible = torch.tensor([0, 3])
    p = torch.tensor([[[0.0, 0.0, 0.0], [0.2, 0.3, 0.5]]])
    scores = torch.zeros(1, 2, 3)
    kl = (p[0, 1] * (p[0, 1].log() - torch.log(torch.tensor(1 / 3)))).sum()
    torch.testing.assert_close(distill_loss(scores, p, visible), kl)


def test_rope_half_keeps_the_input_dtype():
    x = torch.randn(1, 3, 2, 8).bfloat16()
    assert rope_half(x, torch.arange(3), 10_000.0, 4).dtype == torch.bfloat16


def test_mla_output_gate_has_no_bias():
    layer = MLA(16, 2, 8, 4, 4, 4, output_gate=True)
    assert layer.gate.bias is None and all(not n.endswith("bias") for n, _ in layer.named_parameters())


def test_csa_and_hca_hand_their_eps_to_their_compressors():
    for layer in (CSA(16, 4, head_dim=8, rope_dim=2, topk=2, eps=0.25), HCA(16, 8, head_dim=8, rope_dim=2, eps=0.25)):
        assert layer.compressor.norm.eps == 0.25
    assert CSA(16, 4, head_dim=8, rope_dim=2, topk=2, eps=0.25).indexer.compressor.norm.eps == 0.25

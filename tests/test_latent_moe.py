"""LatentMoE: the projection plumbing against transformers' Nemotron-H latent MoE, the norm, the chain's scale."""

import pytest
import torch

from twopaths.layers import latent_moe, routers
from twopaths.layers.ffn import FFN

D, LATENT, E, K, H, SH = 16, 8, 8, 2, 12, 20


@pytest.mark.parametrize("norm", [False, True])
def test_plumbing_matches_nemotron_h_latent_moe(norm):
    """Nemotron-H has our shape without the norm and with relu^2 experts: match it with norm=False, act=relu2.
    With the norm, Nemotron-H's own RMSNorm placed before its fc2_latent_proj is K3's stable form; the
    chain is scaled down so that the latent's mean square (~1e-5) is near eps, and where eps sits shows."""
    from transformers import NemotronHConfig
    from transformers.models.nemotron_h.modeling_nemotron_h import NemotronHMoE, NemotronHRMSNorm
    torch.manual_seed(0)
    cfg = NemotronHConfig(hidden_size=D, moe_latent_size=LATENT, n_routed_experts=E, num_experts_per_tok=K,
                          moe_intermediate_size=H, moe_shared_expert_intermediate_size=SH, n_group=2,
                          topk_group=1, routed_scaling_factor=2.0, norm_topk_prob=True, mlp_hidden_act="relu2")
    router = routers.TopKRouter(D, E, K, "sigmoid", n_group=2, topk_group=1, scale=2.0)
    ours = latent_moe.LatentMoE(D, LATENT, E, K, H, n_shared=1, shared_hidden=SH, act="relu2", norm=norm,
                                router=router)
    ref = NemotronHMoE(cfg)
    with torch.no_grad():
        if norm:
            ours.down.weight.mul_(0.1)
            ours.norm.weight.uniform_(0.5, 1.5)
            ref_norm = NemotronHRMSNorm(LATENT, eps=ours.norm.eps)
            ref_norm.weight.copy_(ours.norm.weight)
            ref.fc2_latent_proj = torch.nn.Sequential(ref_norm, ref.fc2_latent_proj)
            fc2 = ref.fc2_latent_proj[1]
        else:
            fc2 = ref.fc2_latent_proj
        ref.gate.weight.copy_(router.proj.weight)
        ref.fc1_latent_proj.weight.copy_(ours.down.weight)
        fc2.weight.copy_(ours.up.weight)
        ref.experts.up_proj.copy_(ours.experts.w_up)
        ref.experts.down_proj.copy_(ours.experts.w_down)
        ref.shared_experts.up_proj.weight.copy_(ours.shared.w_up.weight)
        ref.shared_experts.down_proj.weight.copy_(ours.shared.w_down.weight)
    x = torch.randn(2, 10, D)
    y = ours(x)
    torch.testing.assert_close(y, ref(x), rtol=1e-5, atol=1e-6)
    assert len(ours.last_routing.indices.unique()) > E // 2          # many experts took part
    if norm:                                                          # the regime where eps matters
        mean_square = ours.experts(ours.down(x.flatten(0, 1)), ours.last_routing.indices,
                                   ours.last_routing.weights).square().mean()
        assert 1e-7 < mean_square < 1e-3


def test_routed_path_follows_the_formula():
    torch.manual_seed(1)
    m = latent_moe.LatentMoE(D, LATENT, E, K, H, n_shared=2, shared_hidden=SH, act="situ")
    x = torch.randn(6, D)
    y = m(x)
    r = m.last_routing
    z = m.down(x)
    mixed = torch.stack([sum(r.weights[t, j] * _expert(m.experts, int(r.indices[t, j]), z[t])
                             for j in range(K)) for t in range(6)])
    expected = m.up(m.norm(mixed)) + m.shared(x)
    torch.testing.assert_close(y, expected, rtol=1e-5, atol=1e-6)


def _expert(ex, e, z):
    return ex.w_down[e] @ ex.act(ex.w_gate[e] @ z, ex.w_up[e] @ z)


def test_two_shared_experts_are_one_twice_as_wide():
    torch.manual_seed(2)
    a, b, both = FFN(D, SH), FFN(D, SH), FFN(D, 2 * SH)
    with torch.no_grad():
        both.w_gate.weight.copy_(torch.cat([a.w_gate.weight, b.w_gate.weight]))
        both.w_up.weight.copy_(torch.cat([a.w_up.weight, b.w_up.weight]))
        both.w_down.weight.copy_(torch.cat([a.w_down.weight, b.w_down.weight], dim=1))
    x = torch.randn(5, D)
    torch.testing.assert_close(both(x), a(x) + b(x), rtol=1e-5, atol=1e-6)


def _rms(t):
    return t.pow(2).mean().sqrt().item()


@pytest.mark.parametrize("norm", [True, False])
def test_the_norm_removes_the_chain_gain(norm):
    """Scale every weight of the routed chain but W_up by 3: with the norm the output's RMS barely moves."""
    torch.manual_seed(3)
    m = latent_moe.LatentMoE(D, LATENT, E, K, H, n_shared=0, act="swiglu", norm=norm)
    x = torch.randn(64, D)
    before = m(x)
    with torch.no_grad():
        for w in m.chain()[:-1]:
            w.mul_(3.0)
    ratio = _rms(m(x)) / _rms(before)
    if norm:
        assert 0.8 < ratio < 1.25, ratio
    else:
        assert ratio > 3 ** 4, ratio           # at least the four linear gains; silu adds more


def test_the_norm_cancels_a_linear_gain_exactly():
    torch.manual_seed(4)
    m = latent_moe.LatentMoE(D, LATENT, E, K, H, n_shared=0, act="swiglu", norm=True, eps=0.0)
    x = torch.randn(32, D)
    before = m(x)
    with torch.no_grad():
        m.experts.w_down.mul_(7.0)             # after the activation: a pure scale on the weighted sum
    torch.testing.assert_close(m(x), before, rtol=1e-5, atol=1e-6)


def test_residual_rms_counts_every_block():
    blocks = [latent_moe.LatentMoE(D, LATENT, E, K, H) for _ in range(3)]
    x = torch.randn(4, 5, D)
    rms = latent_moe.residual_rms(blocks, x)
    # by hand: the stream's RMS before the first block and after each, every block fed the normed stream
    expected, h = [float(x.pow(2).mean().sqrt())], x
    with torch.no_grad():
        for b in blocks:
            h = h + b(h / h.pow(2).mean(-1, keepdim=True).add(torch.finfo(h.dtype).eps).sqrt())
            expected.append(float(h.pow(2).mean().sqrt()))
    assert rms == pytest.approx(expected, rel=1e-5)


def test_bad_arguments(raises_param):
    raises_param("top_k", latent_moe.LatentMoE, D, LATENT, E, E + 1, H)
    raises_param("latent", latent_moe.LatentMoE, D, 0, E, K, H)
    raises_param("act", latent_moe.LatentMoE, D, LATENT, E, K, H, act="gelu")


@pytest.mark.parametrize("norm, slope", [(True, 1.0), (False, 6.0)])
def test_init_chain_sets_the_gain(norm, slope):
    """Every chain matrix at RMS gain g. With the norm only W_up's g reaches the output; without, the chain
    multiplies g by W_down, then g^2 for gate times up (each sees W_down's g too), then W_down_e and W_up: g^6."""
    x = torch.randn(256, D, generator=torch.Generator().manual_seed(5))
    out = []
    for gain in (1.0, 2.0):
        torch.manual_seed(0)
        m = latent_moe.LatentMoE(D, LATENT, E, K, H, n_shared=0, act="swiglu", norm=norm)
        latent_moe.init_chain_(m, gain, torch.Generator().manual_seed(1))
        with torch.no_grad():
            out.append(_rms(m.routed(x)))
    assert out[1] / out[0] == pytest.approx(2.0 ** slope, rel=0.25 if norm else 0.5)


@pytest.mark.parametrize("n_shared, shared_hidden, width", [(2, SH, 2 * SH), (3, None, 3 * H), (1, SH, SH)])
def test_shared_experts_are_one_ffn_n_times_as_wide(n_shared, shared_hidden, width):
    """n shared experts of hidden h are one FFN of hidden n h (K3: 2 x 3072 = 6144); without
    shared_hidden each takes the routed experts' hidden."""
    m = latent_moe.LatentMoE(D, LATENT, E, K, H, n_shared=n_shared, shared_hidden=shared_hidden)
    assert m.shared.w_up.weight.shape == (width, D)
    assert m.shared.w_down.weight.shape == (D, width)
    assert latent_moe.LatentMoE(D, LATENT, E, K, H, n_shared=0).shared is None


def test_init_chain_draws_each_matrix_with_its_fan_in():
    """init_chain_ redraws N(0, 1) * gain / sqrt(fan_in), matrix after matrix from one generator. The fan-ins
    by hand: W_down reads d = 16, the experts' gate and up read the latent 8, their down reads hidden 12,
    W_up reads the latent 8."""
    m = latent_moe.LatentMoE(D, LATENT, E, K, H, n_shared=0, act="swiglu")
    latent_moe.init_chain_(m, 2.0, torch.Generator().manual_seed(7))
    gen = torch.Generator().manual_seed(7)
    for w, fan_in in zip(m.chain(), [D, LATENT, LATENT, H, LATENT], strict=True):
        torch.testing.assert_close(w.detach(), torch.randn(w.shape, generator=gen) * (2.0 / fan_in ** 0.5))

"""SwiGLU, SiTU-GLU and V4's clipped SwiGLU: V4's MLP in transformers, the SiTU formula, gradients at the caps."""

import math

import pytest
import torch
from hypothesis import given, strategies as st

from twopaths.layers import ffn


def test_clipped_ffn_matches_deepseek_v4_mlp():
    from transformers import DeepseekV4Config
    from transformers.models.deepseek_v4.modeling_deepseek_v4 import DeepseekV4MLP
    torch.manual_seed(0)
    ours = ffn.FFN(16, 24, ffn.Activation("clip", limit=10.0))
    ref = DeepseekV4MLP(DeepseekV4Config(hidden_size=16, moe_intermediate_size=24, swiglu_limit=10.0))
    with torch.no_grad():
        ref.gate_proj.weight.copy_(ours.w_gate.weight)
        ref.up_proj.weight.copy_(ours.w_up.weight)
        ref.down_proj.weight.copy_(ours.w_down.weight)
    x = 8 * torch.randn(64, 16)                     # large enough that both clamps bite
    g, u = ours.w_gate(x), ours.w_up(x)
    assert (g > 10).any() and (u.abs() > 10).any()
    torch.testing.assert_close(ours(x), ref(x), rtol=1e-6, atol=1e-6)


def test_swiglu_is_silu_gate_times_up():
    from transformers.activations import ACT2FN
    g, u = torch.randn(100), torch.randn(100)
    torch.testing.assert_close(ffn.swiglu(g, u), ACT2FN["silu"](g) * u)


def test_situ_formula_and_bound():
    g = torch.linspace(-200, 200, 4001)
    u = torch.linspace(300, -300, 4001)
    h = ffn.situ(g, u, 4.0, 25.0)
    expected = 4 * torch.tanh(g / 4) * torch.sigmoid(g) * 25 * torch.tanh(u / 25)   # sigma on the uncapped g
    torch.testing.assert_close(h, expected)
    assert h.abs().max() <= 4.0 * 25.0
    assert h.abs().max() > 0.9 * 4.0 * 25.0              # the bound is approached, not just respected


@given(st.floats(-0.2, 0.2), st.floats(-1, 1))
def test_situ_is_swiglu_near_zero(g, u):
    g, u = torch.tensor(g, dtype=torch.float64), torch.tensor(u, dtype=torch.float64)
    # tanh(x/b)*b = x - x^3/(3b^2) + ...: the caps only bend what is far from zero
    assert abs(ffn.situ(g, u) - ffn.swiglu(g, u)).item() <= 0.2 ** 3 / (3 * 16) + 1 ** 3 / (3 * 625) + 1e-12


def _grads(act, g, u):
    _, dg, du = ffn.grads(act, g, u)
    return dg, du


def test_clip_gradient_jumps_at_the_boundary_and_situ_does_not():
    eps, L = 1e-4, 10.0
    across = torch.tensor([L - eps, L + eps], dtype=torch.float64)     # just inside, just outside the cap
    two, one = torch.full_like(across, 2.0), torch.ones_like(across)
    clip, situ = ffn.Activation("clip", limit=L), ffn.Activation("situ")
    _, du = _grads(clip, two, across)                                   # d/du at |u| = L
    assert du[0] == pytest.approx(float(torch.nn.functional.silu(two[0]))) and du[1] == 0
    dg, _ = _grads(clip, across, one)                                   # d/dg at g = L
    assert dg[0] > 0.9 and dg[1] == 0
    _, du = _grads(situ, two, across)
    dg, _ = _grads(situ, across, one)
    assert abs(du[1] - du[0]) < 1e-3 and abs(dg[1] - dg[0]) < 1e-3     # continuous across the same points


def test_gradients_match_finite_differences():
    torch.manual_seed(1)
    g = (5 * torch.randn(20, dtype=torch.float64)).requires_grad_()
    u = (30 * torch.randn(20, dtype=torch.float64)).requires_grad_()
    assert torch.autograd.gradcheck(lambda a, b: ffn.situ(a, b), (g, u))


def test_relu2_ffn_has_no_gate():
    layer = ffn.FFN(8, 12, "relu2")
    assert layer.w_gate is None
    x = torch.randn(5, 8)
    torch.testing.assert_close(layer(x), layer.w_down(torch.relu(layer.w_up(x)) ** 2))


def test_softcap_limits():
    x = torch.tensor([-math.inf, 0.0, math.inf])
    assert ffn.softcap(x, 4.0).tolist() == [-4.0, 0.0, 4.0]


def test_bad_activation_arguments(raises_param):
    raises_param("beta1", ffn.Activation, "situ", beta1=0.0)
    raises_param("beta2", ffn.Activation, "situ", beta2=0)
    raises_param("beta1", ffn.situ, torch.ones(2), torch.ones(2), 0.0)
    raises_param("beta2", ffn.situ, torch.ones(2), torch.ones(2), 4.0, -1.0)
    raises_param("beta", ffn.softcap, torch.ones(2), 0.0)
    raises_param("limit", ffn.Activation, "clip", limit=0.0)
    raises_param("act", ffn.FFN, 8, 12, "gelu")
    raises_param("hidden", ffn.FFN, 8, 0)


def test_activation_passes_its_own_caps():
    # SiTU with beta1 = 4, beta2 = 1 at gate 1, up 3: 4 tanh(1/4) sigmoid(1) * 1 tanh(3 / 1).
    situ = ffn.Activation("situ", beta1=4.0, beta2=1.0)
    expected = 4 * math.tanh(0.25) / (1 + math.exp(-1)) * math.tanh(3.0)
    assert situ(torch.tensor([1.0]), torch.tensor([3.0])).item() == pytest.approx(expected, rel=1e-6)
    # clip with limit 2 at gate 5, up -7: silu(2) * -2 = 2 sigmoid(2) * -2.
    clip = ffn.Activation("clip", limit=2.0)
    expected = 2 / (1 + math.exp(-2)) * -2
    assert clip(torch.tensor([5.0]), torch.tensor([-7.0])).item() == pytest.approx(expected, rel=1e-6)

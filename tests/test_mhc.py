"""mHC against transformers' DeepSeek V4 port, the Sinkhorn projection's properties, bad input.

The oracle is transformers 5.24 ``DeepseekV4HyperConnection`` / ``DeepseekV4HyperHead`` and the way
``DeepseekV4DecoderLayer`` wires two of them around attention and the MoE (with ``comb`` transposed).
The tiny config is built inline; its attention and MoE are replaced by small stand-ins so the test checks
the stream arithmetic, which is all the connection owns.
"""

import pytest
import torch
from hypothesis import given, strategies as st
from torch import nn
from transformers.models.deepseek_v4 import modeling_deepseek_v4 as hf
from transformers.models.deepseek_v4.configuration_deepseek_v4 import DeepseekV4Config

from twopaths.layers.hyper_connections import collapse
from twopaths.layers.mhc import MHC, MHCHead, sinkhorn

TOL = 1e-5


def _config(dim=16, streams=4, iters=20, eps=1e-6, rms_eps=1e-6):
    return DeepseekV4Config(hidden_size=dim, hc_mult=streams, hc_sinkhorn_iters=iters, hc_eps=eps,
                            rms_norm_eps=rms_eps, num_hidden_layers=1, num_attention_heads=2, head_dim=16,
                            q_lora_rank=8, o_groups=1, o_lora_rank=8, n_routed_experts=4, num_experts_per_tok=2,
                            moe_intermediate_size=8, index_n_heads=2, index_head_dim=8, index_topk=4,
                            vocab_size=32, sliding_window=4)


def _randomise_(hc):
    with torch.no_grad():
        hc.fn.normal_(0, 0.5)       # large enough that res is far from uniform
        hc.base.normal_()
        hc.scale.uniform_(0.5, 1.5)


def _ours(hc, cfg):
    m = MHC(cfg.hidden_size, cfg.hc_mult, cfg.hc_sinkhorn_iters, cfg.hc_eps, cfg.rms_norm_eps)
    with torch.no_grad():
        m.phi.copy_(hc.fn)
        m.bias.copy_(hc.base)
        m.scale.copy_(hc.scale)
    return m


# hc_eps of 0.05 to 0.3 moves pre, and every Sinkhorn step, by far more than TOL
@pytest.mark.parametrize("streams,iters,rms_eps,hc_eps", [(4, 20, 1e-6, 1e-6), (3, 5, 1e-5, 0.05), (1, 1, 1e-6, 0.3),
                                                          (4, 3, 1e-6, 0.2), (2, 4, 0.3, 1e-6)])
def test_weights_match_transformers(streams, iters, rms_eps, hc_eps):
    torch.manual_seed(streams * 10 + iters)
    cfg = _config(streams=streams, iters=iters, eps=hc_eps, rms_eps=rms_eps)
    ref = hf.DeepseekV4HyperConnection(cfg)
    _randomise_(ref)
    x = torch.randn(2, 5, streams, cfg.hidden_size)
    post, comb, collapsed = ref(x)
    pre, post2, res = _ours(ref, cfg).weights(x)
    assert (post2 - post).abs().max().item() < TOL
    assert (res - comb).abs().max().item() < TOL
    assert (collapse(x, pre) - collapsed).abs().max().item() < TOL


class _Attn(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.lin = nn.Linear(dim, dim)

    def forward(self, x, **kwargs):
        return self.lin(x), None


class _Mlp(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.lin = nn.Linear(dim, dim)

    def forward(self, x, input_ids=None):
        return torch.tanh(self.lin(x))


def test_decoder_layer_wiring_matches_transformers():
    """Two connections and two prenorms around stand-in sublayers: the H_res transpose is exercised."""
    torch.manual_seed(0)
    cfg = _config(eps=0.1)
    layer = hf.DeepseekV4DecoderLayer(cfg, 0)
    layer.self_attn, layer.mlp = _Attn(cfg.hidden_size), _Mlp(cfg.hidden_size)
    _randomise_(layer.attn_hc)
    _randomise_(layer.ffn_hc)
    with torch.no_grad():
        layer.input_layernorm.weight.uniform_(0.5, 1.5)
        layer.post_attention_layernorm.weight.uniform_(0.5, 1.5)
    x = torch.randn(2, 5, cfg.hc_mult, cfg.hidden_size)
    expected = layer(x)
    attn_hc, ffn_hc = _ours(layer.attn_hc, cfg), _ours(layer.ffn_hc, cfg)
    h = attn_hc(x, lambda u: layer.self_attn(layer.input_layernorm(u))[0])
    got = ffn_hc(h, lambda u: layer.mlp(layer.post_attention_layernorm(u)))
    assert (got - expected).abs().max().item() < TOL
    # The same layer with res read by its second index is wrong by far more than the tolerance.
    pre, post, res = attn_hc.weights(x)
    y = layer.self_attn(layer.input_layernorm(collapse(x, pre)))[0]
    untransposed = post.unsqueeze(-1) * y.unsqueeze(-2) + res @ x
    assert (untransposed - attn_hc(x, lambda u: layer.self_attn(layer.input_layernorm(u))[0])).abs().max() > 1e-2


def test_defaults_are_v4s():
    cfg = DeepseekV4Config()
    for m in (MHC(16), MHCHead(16)):
        assert (m.streams, m.eps, m.norm_eps) == (cfg.hc_mult, cfg.hc_eps, cfg.rms_norm_eps)
    assert MHC(16).sinkhorn_iters == cfg.hc_sinkhorn_iters


@pytest.mark.parametrize("hc_eps,rms_eps", [(1e-6, 1e-6), (0.2, 1e-6), (1e-6, 0.3)])
def test_head_matches_transformers(hc_eps, rms_eps):
    torch.manual_seed(3)
    cfg = _config(eps=hc_eps, rms_eps=rms_eps)
    ref = hf.DeepseekV4HyperHead(cfg)
    with torch.no_grad():
        ref.hc_fn.normal_(0, 0.5)
        ref.hc_base.normal_()
        ref.hc_scale.fill_(0.7)
    head = MHCHead(cfg.hidden_size, cfg.hc_mult, cfg.hc_eps, cfg.rms_norm_eps)
    with torch.no_grad():
        head.phi.copy_(ref.hc_fn)
        head.bias.copy_(ref.hc_base)
        head.scale.copy_(ref.hc_scale)
    x = torch.randn(2, 5, cfg.hc_mult, cfg.hidden_size)
    assert (head(x) - ref(x)).abs().max().item() < TOL


@given(st.integers(1, 6), st.floats(0.1, 0.5), st.integers(0, 2**16))
def test_sinkhorn_lands_on_the_doubly_stochastic_matrices(n, spread, seed):
    """Moderate logits and enough iterations: rows and columns both sum to one."""
    gen = torch.Generator().manual_seed(seed)
    m = sinkhorn(spread * torch.randn(16, n, n, generator=gen, dtype=torch.float64), iters=100, eps=0.0)
    assert (m >= 0).all()
    assert torch.allclose(m.sum(-2), torch.ones(16, n, dtype=torch.float64), atol=1e-12)   # columns: last step
    assert torch.allclose(m.sum(-1), torch.ones(16, n, dtype=torch.float64), atol=1e-9)
    # Doubly stochastic: the largest singular value of any product is one.
    prod = torch.linalg.multi_dot(list(m)) if n > 1 else m.prod(0)
    assert abs(torch.linalg.matrix_norm(prod, ord=2).item() - 1.0) < 1e-5


def test_twenty_iterations_leave_rows_inexact_on_spread_logits():
    """Columns are normalised last and are exact; rows of peaked matrices are still off after 20 steps."""
    gen = torch.Generator().manual_seed(0)
    m = sinkhorn(4 * torch.randn(256, 4, 4, generator=gen, dtype=torch.float64), iters=20, eps=0.0)
    assert (m.sum(-2) - 1).abs().max() < 1e-12
    assert (m.sum(-1) - 1).abs().max() > 1e-2


def test_sinkhorn_epsilon_keeps_sums_under_one():
    m = sinkhorn(torch.randn(64, 4, 4), iters=20, eps=1e-6)
    assert (m.sum(-2) < 1).all() and (m.sum(-2) > 1 - 1e-5).all()


def test_bad_input(raises_param):
    raises_param("streams", MHC, 16, 0)
    raises_param("streams", MHCHead, 16, 0)
    raises_param("sinkhorn_iters", MHC, 16, 4, 0)
    raises_param("iters", sinkhorn, torch.zeros(4, 4), 0)
    raises_param("iters", sinkhorn, torch.zeros(4, 4), -3)
    raises_param("logits", sinkhorn, torch.zeros(4, 3))
    raises_param("logits", sinkhorn, torch.zeros(4))
    raises_param("eps", sinkhorn, torch.zeros(4, 4), 20, -1.0)
    m = MHC(16, 4)
    raises_param("x", m.weights, torch.zeros(2, 3, 16))
    raises_param("x", m, torch.zeros(2, 4, 15), lambda u: u)
    raises_param("x", MHCHead(16, 4), torch.zeros(2, 16))


# --- the deep-stack experiment the chapter runs --------------------------------------------------------

def test_stacks_keep_mhc_products_bounded_and_let_hc_drift():
    from twopaths.experiments import deep_streams as ds

    h = torch.randn(16, 8, generator=torch.Generator().manual_seed(0))
    with torch.no_grad():
        hc = ds.composite(ds.Stack("hc", 16, 8, spread=0.3, seed=1)(h)[2])[-1]
        mhc_stack = ds.Stack("mhc", 16, 8, spread=0.3, diagonal=4.0, seed=1)
        res = mhc_stack(h)[2]
    fwd, _ = ds.gains(ds.composite(res)[-1])
    assert (fwd <= 1 + 1e-5).all()                                   # columns are exact: forward gain <= 1
    assert torch.linalg.matrix_norm(hc, ord=2).max() > 2             # unconstrained mixing stretches
    assert res[0].diagonal(dim1=-2, dim2=-1).mean() > 0.9            # the diagonal logit starts near I
    # composite is the product R_L^T ... R_1^T, applied in order
    a, b = torch.randn(2, 3, 3), torch.randn(2, 3, 3)
    assert torch.allclose(ds.composite([a, b])[-1], b.transpose(-1, -2) @ a.transpose(-1, -2))


def test_trace_gradients_end_at_one_at_the_top():
    from twopaths.experiments import deep_streams as ds

    h, probe = torch.randn(2, 4, 8)
    t = ds.trace(ds.Stack("residual", 5, 8), h, probe)
    assert len(t.rms) == len(t.grad) == 6 and t.grad[-1] == 1.0 and t.res == []


def test_stack_bad_input(raises_param):
    from twopaths.experiments import deep_streams as ds

    raises_param("kind", ds.Stack, "highway", 4, 8)
    raises_param("layers", ds.Stack, "mhc", 0, 8)
    raises_param("streams", ds.Stack, "mhc", 4, 8, 0)
    raises_param("spread", ds.Stack, "hc", 4, 8, 4, -0.1)

"""Plain hyper-connections: the hyper-connections package as oracle, the identity at init, bad input.

The oracle is lucidrains' ``hyper_connections.HyperConnections`` (0.4.11), which implements the HC
paper's Algorithm 2. Its parameterisation matches ours one to one: static_alpha, dynamic_alpha_fn and
its scale, static_beta, dynamic_beta_fn and its scale. Two things are mapped rather than shared: its
per-stream norm is ``F.normalize(x) * sqrt(D) * (gamma + 1)``, an RMSNorm with weight ``gamma + 1`` and no
epsilon (so ours runs with ``norm_eps=1e-12``), and it folds the streams into the batch as ``(b s)``
where ours keeps them as an axis ``[b, t, s, d]``.
"""

import pytest
import torch
from einops import rearrange
from hyper_connections import HyperConnections

from twopaths.layers.hyper_connections import HyperConnection, collapse, expand_streams, mix


def _pair(streams, dim, layer, seed):
    torch.manual_seed(seed)
    ref = HyperConnections(streams, dim=dim, layer_index=layer)
    with torch.no_grad():
        for p in ref.parameters():
            p.add_(0.3 * torch.randn_like(p))      # away from the init, where every dynamic term is zero
    ours = HyperConnection(dim, streams, layer=layer, norm_eps=1e-12)
    with torch.no_grad():
        ours.static_alpha.copy_(ref.static_alpha)
        ours.static_beta.copy_(ref.static_beta)
        ours.alpha_fn.copy_(ref.dynamic_alpha_fn)
        ours.beta_fn.copy_(ref.dynamic_beta_fn)
        ours.alpha_scale.copy_(ref.dynamic_alpha_scale)
        ours.beta_scale.copy_(ref.dynamic_beta_scale)
        ours.norm_weight.copy_(ref.norm.gamma + 1)
    return ref, ours


@pytest.mark.parametrize("streams,dim,layer", [(4, 16, 2), (2, 8, 5), (1, 8, 0)])
def test_matches_hyper_connections_package(streams, dim, layer):
    ref, ours = _pair(streams, dim, layer, seed=streams + dim + layer)
    lin = torch.nn.Linear(dim, dim)
    branch = lambda u: torch.tanh(lin(u))  # noqa: E731
    x = torch.randn(3, 5, streams, dim)
    branch_in, add_residual = ref(rearrange(x, "b t s d -> (b s) t d"))
    expected = rearrange(add_residual(branch(branch_in)), "(b s) t d -> b t s d", s=streams)
    got = ours(x, branch)
    assert (got - expected).abs().max().item() < 1e-5
    pre, _, _ = ours.weights(x)
    assert (collapse(x, pre) - branch_in).abs().max().item() < 1e-5


def test_at_init_each_stream_is_a_plain_residual():
    torch.manual_seed(0)
    hc = HyperConnection(8, streams=4, layer=3)
    lin = torch.nn.Linear(8, 8)
    h = torch.randn(2, 8)
    out = hc(expand_streams(h, 4), lin)
    assert torch.allclose(out, expand_streams(h + lin(h), 4))


def test_static_hc_is_dynamic_hc_with_silent_dynamic_terms():
    torch.manual_seed(1)
    static, dynamic = HyperConnection(8, 3, dynamic=False), HyperConnection(8, 3)
    with torch.no_grad():
        static.static_alpha.add_(torch.randn(3, 4))
        dynamic.static_alpha.copy_(static.static_alpha)
    x = torch.randn(5, 3, 8)
    for a, b in zip(static.weights(x), dynamic.weights(x)):
        assert torch.equal(a, b)


def test_mix_reads_res_by_its_first_index():
    x = torch.tensor([[1.0], [10.0]])                   # two streams of one channel
    res = torch.tensor([[0.0, 1.0], [0.0, 0.0]])        # res[0, 1]: stream 0 flows into stream 1
    out = mix(x, torch.zeros(1), torch.zeros(2), res)
    assert out.flatten().tolist() == [0.0, 1.0]


def test_bad_input(raises_param):
    raises_param("streams", HyperConnection, 8, 0)
    raises_param("dim", HyperConnection, 0, 4)
    raises_param("streams", expand_streams, torch.zeros(3), 0)
    hc = HyperConnection(8, 4)
    raises_param("x", hc.weights, torch.zeros(2, 3, 8))
    raises_param("x", hc, torch.zeros(2, 4, 7), lambda u: u)
    x = torch.zeros(2, 4, 8)
    raises_param("pre", collapse, x, torch.zeros(2, 3))
    raises_param("y", mix, x, torch.zeros(2, 7), torch.zeros(2, 4), torch.zeros(2, 4, 4))
    raises_param("post", mix, x, torch.zeros(2, 8), torch.zeros(2, 3), torch.zeros(2, 4, 4))
    raises_param("res", mix, x, torch.zeros(2, 8), torch.zeros(2, 4), torch.zeros(2, 4, 3))


@pytest.mark.parametrize("layer, stream", [(0, 0), (2, 2), (5, 1)])
def test_pre_reads_stream_layer_mod_n_at_init(layer, stream):
    # the HC paper's initialisation: layer l's branch input is stream l mod n alone
    pre, post, res = HyperConnection(8, 4, layer, dynamic=False).weights(torch.ones(1, 4, 8))
    assert pre[0].tolist() == [1.0 if i == stream else 0.0 for i in range(4)]
    assert post[0].tolist() == [1.0] * 4 and torch.equal(res[0], torch.eye(4))

"""The KDA chapter's demonstrations, on inputs whose answers are known by hand."""

import torch

from twopaths.experiments import kda_demos
from twopaths.layers import kda


def test_read_back_delta_rule_overwrites_linear_attention_sums():
    e = torch.eye(4)
    keys, values = torch.stack([e[0], e[1], e[0]]), torch.stack([e[0], 2 * e[1], 3 * e[2]])
    delta, linear = kda_demos.read_back(keys, values, e[0])
    assert torch.equal(delta[0], e[0]) and torch.equal(delta[-1], 3 * e[2])
    assert torch.equal(linear[-1], e[0] + 3 * e[2])
    half, _ = kda_demos.read_back(keys, values, e[0], beta=torch.tensor([1.0, 1.0, 0.5]).view(1, 3, 1))
    assert torch.allclose(half[-1], 0.5 * e[0] + 1.5 * e[2])


def test_layer_gates_floor_holds_and_unbounded_does_not():
    unbounded, floored = kda_demos.layer_gates(512, 2, 8, 4.0, -5.0, torch.Generator().manual_seed(0))
    assert unbounded.shape == floored.shape == (512, 2, 8)
    assert floored.min() >= -5.0 and floored.max() <= 0
    assert unbounded.min() < -5.0 and unbounded.max() <= 0


def test_tile_scores_match_exact_when_the_factors_are_small():
    q, k = kda.l2_normalise(torch.randn(2, 16, 8, generator=torch.Generator().manual_seed(1))).unbind(0)
    f, ex = kda_demos.tile_scores_bf16(q, k, torch.full((16, 8), -0.5))
    assert f.shape == ex.shape == (16 * 17 // 2,)
    assert ((f - ex).abs().max() / ex.abs().max()) < 0.02
    f, _ = kda_demos.tile_scores_bf16(q, k, torch.full((16, 8), -50.0))   # e^800 overflows
    assert not torch.isfinite(f).all()


def test_order_change_linear_attention_is_order_free_and_the_delta_rule_is_not():
    q, k, v, g, beta = kda.random_inputs(1, 32, 1, 8, 8, seed=3)
    orders = [torch.randperm(32, generator=torch.Generator().manual_seed(p)) for p in range(3)]
    change = kda_demos.order_change(q, k, v, g, beta, orders)
    assert max(change["linear attention"]) < 1e-5
    assert min(change["delta rule (no decay)"]) > 0.1 and min(change["KDA (decay and delta rule)"]) > 0.1

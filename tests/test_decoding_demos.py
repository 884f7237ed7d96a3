"""The routing-and-decoding chapter's experiments on inputs whose outcome is known."""

import torch

from twopaths.experiments import decoding_demos as demos


def test_score_functions_choose_alike_and_weigh_differently():
    gen = torch.Generator().manual_seed(0)
    x, w = torch.randn(256, 16, generator=gen), torch.randn(32, 16, generator=gen) / 4
    c = demos.compare_score_functions(x, w, 4)
    assert c.agreement == 1.0 and c.tied == 0.0 and c.unexplained == 0
    assert c.weight_spread["sigmoid"] < c.weight_spread["sqrtsoftplus"]   # the sigmoid flattens weights
    big = demos.compare_score_functions(x, 40 * w, 4)   # saturated sigmoids tie in float32
    assert big.tied > 0 and big.unexplained == 0 and big.agreement < 1.0


def test_constructed_case_and_its_verifications():
    q, p = demos.constructed_case(8, 3, 1.0, seed=1)
    assert q.shape == (3, 8) and p.shape == (4, 8)
    assert torch.allclose(q.sum(-1), torch.ones(3, dtype=torch.float64))
    same, _ = demos.constructed_case(8, 3, 0.0, seed=1)
    assert torch.allclose(same, p[:3])                  # no noise: the draft is the target
    out = demos.run_case(same, p, 200, seed=2)
    assert (out.n_accepted == 3).all()                  # a perfect draft is always kept
    out = demos.run_case(q, p, 2000, seed=2)
    assert 0 < out.n_accepted.double().mean() < 3

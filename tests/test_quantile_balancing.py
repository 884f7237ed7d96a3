"""Quantile Balancing: Megatron-LM's published unit vectors, the histogram against a brute-force count,
additivity (what makes one all-reduce enough), convergence, the sign trap and bad input."""

import numpy as np
import pytest
import torch

from twopaths.layers import quantile_balancing as qb, routers


def test_megatron_unit_vector():
    """Megatron-LM tests/unit_tests (test_qb_histogram_recovery): the published golden values."""
    hist = torch.tensor([[0, 2, 2, 0], [2, 2, 0, 0]], dtype=torch.int32)
    bias, bounds = qb.bias_from_histogram(hist, (-1.0, 1.0), top_k=1)
    torch.testing.assert_close(bias, torch.tensor([0.25, -0.25]))
    assert bounds == pytest.approx((-1.25, 1.25))


def test_pooled_histogram_is_not_the_mean_of_micro_batches():
    """Megatron's second vector: pool the counts, then take the quantile, never the other way round."""
    bounds = (0.0, 10.0)
    mb1, mb2 = torch.zeros(2, 10, dtype=torch.int32), torch.zeros(2, 10, dtype=torch.int32)
    mb1[0, 0], mb1[0, 9], mb1[1, 0] = 3, 1, 4
    mb2[0, 9], mb2[1, 0] = 4, 4
    pooled, _ = qb.bias_from_histogram(mb1 + mb2, bounds, 1)
    mean = (qb.bias_from_histogram(mb1, bounds, 1)[0] + qb.bias_from_histogram(mb2, bounds, 1)[0]) / 2
    assert not torch.allclose(pooled, mean)
    # by hand: expert 0 reaches 4 of 8 counts 1/5 into bin 9 (9.2); expert 1 half-way into bin 0 (0.5)
    torch.testing.assert_close(pooled, torch.tensor([9.2 - 4.85, 0.5 - 4.85]))


def _scores(T, E, seed=0):
    gen = torch.Generator().manual_seed(seed)
    return torch.sigmoid(torch.randn(T, E, generator=gen) + torch.linspace(-1, 1, E))


def test_histogram_matches_a_brute_force_count():
    E, K, bins, bounds = 6, 2, 7, (-0.9, 0.7)       # bounds narrower than the data: the edges collect the rest
    s, b = _scores(500, E), torch.randn(E) * 0.1
    alpha = np.sort((s + b).numpy(), axis=1)[:, -(K + 1)]
    x = alpha[:, None] - s.numpy()
    edges = np.linspace(*bounds, bins + 1)
    expected = np.stack([np.histogram(np.clip(x[:, j], edges[0], edges[-1] - 1e-6), edges)[0] for j in range(E)])
    got = qb.histogram(s, b, K, bins, bounds, chunk=128).numpy()
    assert np.abs(got - expected).sum() <= 2                 # fp32 rounding may move a value on an edge
    assert (got.sum(1) == 500).all()


def test_histograms_of_disjoint_batches_add():
    s, b = _scores(900, 8), torch.randn(8) * 0.1
    whole = qb.histogram(s, b, 2, 50, (-1, 1))
    parts = qb.histogram(s[:300], b, 2, 50, (-1, 1)) + qb.histogram(s[300:], b, 2, 50, (-1, 1))
    assert torch.equal(whole, parts)
    bal = qb.QuantileBalancer(8, 2, bins=50)
    bal.bias = b
    bal.observe(s[:300])
    bal.observe(s[300:])
    assert torch.equal(bal.step(), qb.bias_from_histogram(whole, (-1, 1), 2)[0])


def test_exact_bias_admits_the_fair_share():
    """With the cutoffs held, expert j admits the tokens with x_tj < b_j: the k/E quantile gives k T/E."""
    E, K, T = 16, 2, 4000
    s, b = _scores(T, E), torch.zeros(E)
    x = qb.residuals(s, b, K)
    raw = x.kthvalue(T * K // E, dim=0).values                 # the uncentred quantile
    m = T * K // E
    # the m-th smallest: fewer than m strictly below, at least m at or below (ties: each token's cutoff
    # expert sits exactly at x = b)
    assert ((x < raw).sum(0) < m).all() and ((x <= raw).sum(0) >= m).all()
    new = qb.exact_bias(s, b, K)
    torch.testing.assert_close(new, raw - raw.mean())


def test_histogram_bias_approaches_the_exact_one():
    E, K = 32, 4
    s, b = _scores(20_000, E, seed=1), torch.zeros(E)
    exact = qb.exact_bias(s, b, K)
    for bins in (100, 1000, 10_000):
        approx, _ = qb.bias_from_histogram(qb.histogram(s, b, K, bins, (-1, 1)), (-1, 1), K)
        assert (approx - exact).abs().max() < 2 * 2 / bins + 1e-4, bins     # within about a bin width


@pytest.mark.parametrize("bins, worst", [(None, 0.01), (1000, 0.05)])
def test_iterating_on_one_batch_balances_it(bins, worst):
    E, K = 16, 2
    s = _scores(4000, E)
    before = routers.max_violation(routers.expert_load(s.topk(K).indices, E))
    bal = qb.QuantileBalancer(E, K, bins)
    for _ in range(15):
        bal.observe(s)
        bal.step()
    after = routers.max_violation(routers.expert_load((s + bal.bias).topk(K).indices, E))
    assert before > 1 and after < worst, (before, after)


def test_the_sign_trap():
    """The bias solved for ``s + b``, applied as ``s - b`` (the micro-batch convention), unbalances more."""
    E, K = 16, 2
    s = _scores(4000, E)
    bal = qb.QuantileBalancer(E, K)
    for _ in range(5):
        bal.observe(s)
        bal.step()
    vio = lambda choice: routers.max_violation(routers.expert_load(choice.topk(K).indices, E))  # noqa: E731
    assert vio(s + bal.bias) < vio(s) < vio(s - bal.bias)


def test_bytes_on_the_wire():
    assert qb.allreduce_bytes(896, 1000, 1) == 0
    assert qb.allreduce_bytes(896, 1000, 2) == 896 * 1000 * 4
    assert qb.allreduce_bytes(896, 1000, 64) == pytest.approx(2 * 63 / 64 * 896 * 1000 * 4)
    assert qb.gather_bytes(65_536, 896, 8) == 7 * 65_536 * 896 * 4


def test_bad_input(raises_param):
    s, b = _scores(10, 4), torch.zeros(4)
    raises_param("top_k", qb.admission_cutoff, s, b, 4)              # needs a (k+1)-th expert
    raises_param("top_k", qb.QuantileBalancer, 4, 5)
    raises_param("bins", qb.histogram, s, b, 1, 0, (-1, 1))
    raises_param("bins", qb.QuantileBalancer, 4, 1, bins=-3)
    raises_param("bounds", qb.histogram, s, b, 1, 10, (1, -1))
    raises_param("bounds", qb.bias_from_histogram, torch.ones(4, 3), (0, 0), 1)
    raises_param("hist", qb.bias_from_histogram, torch.zeros(4, 3), (0, 1), 1)
    raises_param("bins", qb.allreduce_bytes, 896, 0, 8)
    raises_param("chunk", qb.histogram, s, b, 1, 10, (-1, 1), 0)


def test_step_needs_an_observation():
    bal = qb.QuantileBalancer(4, 1, bins=8)
    with pytest.raises(RuntimeError):
        bal.step()


def test_exact_bias_rounds_the_fair_share_up():
    """T k / E = 3 * 1 / 2 = 1.5: the quantile is the ceil(1.5) = 2nd smallest residual. By hand, with b = 0
    the cutoff (2nd largest of 2) is each token's smaller score: alpha = [0.1, 0.2, 0.3], residuals
    x_:0 = [-0.8, 0, -0.2] and x_:1 = [0, -0.4, 0]; 2nd smallest: [-0.2, 0], centred: [-0.1, 0.1]."""
    s = torch.tensor([[0.9, 0.1], [0.2, 0.6], [0.5, 0.3]], dtype=torch.float64)
    got = qb.exact_bias(s, torch.zeros(2, dtype=torch.float64), 1)
    torch.testing.assert_close(got, torch.tensor([-0.1, 0.1], dtype=torch.float64))


def test_histogram_quantile_of_a_fractional_target():
    """3 counts per expert, k/E = 1/2: the target is 1.5 counts, so the bin holding the 2nd count is read.
    By hand, bins of width 1 on (0, 3): expert 0 has counts [1, 0, 2]; 1 count lies below bin 2, so 0.5 of
    its 2 counts: 2 + 0.25 = 2.25. Expert 1 [2, 1, 0]: 1.5 of bin 0's 2 counts: 0.75. Centred on 1.5."""
    hist = torch.tensor([[1, 0, 2], [2, 1, 0]], dtype=torch.int32)
    bias, bounds = qb.bias_from_histogram(hist, (0.0, 3.0), top_k=1)
    torch.testing.assert_close(bias, torch.tensor([0.75, -0.75]))
    assert bounds == pytest.approx((-1.75, 1.75))

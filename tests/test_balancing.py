"""The balancing race of the LatentMoE chapter: same batches for every method, QB balances, the sign
convention matters."""

import torch

from twopaths.experiments import balancing


def _batch_maker(E=32, T=2048, skew=1.5):
    popular = skew * torch.linspace(0, 1, E)   # expert j's score grows with j: the last are favoured

    def batch(gen):
        return torch.sigmoid(torch.randn(T, E, generator=gen) + popular)
    return batch


def test_max_violation_counts_the_busiest_expert():
    scores = torch.tensor([[0.9, 0.1, 0.0, 0.0]] * 4)   # every token picks expert 0
    assert balancing.max_violation(scores, torch.zeros(4), 1) == 3.0   # 4 tokens against a mean of 1
    bias = torch.tensor([-1.0, 0, 0, 0])
    assert balancing.max_violation(scores, bias, 1) == 3.0   # now expert 1 takes them all
    assert balancing.max_violation(scores, -bias, 1, sign=-1) == 3.0


def test_quantile_balancing_beats_no_bias_and_histograms_match_exact():
    batch = _batch_maker()
    held_out = batch(torch.Generator().manual_seed(99))
    vio, exact_bias = balancing.compare(batch, held_out, 4, [1000], steps=3, seed=0)
    assert list(vio) == balancing.methods([1000]) and all(len(v) == 4 for v in vio.values())
    assert len({v[0] for v in vio.values()}) == 1            # one starting point for all
    assert vio["no bias"][-1] == vio["no bias"][0]
    assert vio["QB exact"][-1] < vio["no bias"][0] / 4
    assert abs(vio["QB 1,000 bins"][-1] - vio["QB exact"][-1]) < 0.2 * vio["QB exact"][-1] + 0.02
    # the same bias with the opposite sign unbalances
    assert balancing.max_violation(held_out, exact_bias, 4, sign=-1) > vio["no bias"][0]

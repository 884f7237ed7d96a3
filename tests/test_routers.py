"""Routers against transformers' DeepSeek-V4 (sqrt-softplus, hash) and DeepSeek-V3 (sigmoid, groups) code."""

import pytest
import torch

from twopaths.layers import routers

D, E, K, VOCAB, T = 16, 12, 3, 50, 40


def _sorted(weights, indices):
    """Order each row's picks by expert id: top-k with sorted=False need not agree on order."""
    order = indices.argsort(-1)
    return weights.gather(1, order), indices.gather(1, order)


def _assert_same_routing(ours: routers.Routing, theirs_weights, theirs_indices):
    w1, i1 = _sorted(ours.weights, ours.indices)
    w2, i2 = _sorted(theirs_weights, theirs_indices)
    assert torch.equal(i1, i2)
    torch.testing.assert_close(w1, w2, rtol=1e-6, atol=1e-7)


def _v4_config():
    from transformers import DeepseekV4Config
    return DeepseekV4Config(hidden_size=D, n_routed_experts=E, num_experts_per_tok=K, vocab_size=VOCAB,
                            scoring_func="sqrtsoftplus", routed_scaling_factor=1.5)


def test_v4_topk_router_matches_transformers():
    from transformers.models.deepseek_v4.modeling_deepseek_v4 import DeepseekV4TopKRouter
    torch.manual_seed(0)
    ours = routers.TopKRouter(D, E, K, "sqrtsoftplus", scale=1.5)
    ours.bias.copy_(torch.randn(E) * 0.3)                 # a bias that changes the choice
    ref = DeepseekV4TopKRouter(_v4_config())
    with torch.no_grad():
        ref.weight.copy_(ours.proj.weight)
        ref.e_score_correction_bias.copy_(ours.bias)
    x = torch.randn(2, T // 2, D)
    got = ours(x)
    logits, w, idx = ref(x)
    torch.testing.assert_close(got.scores, torch.nn.functional.softplus(logits).sqrt())
    _assert_same_routing(got, w, idx)
    # the bias moved some choices away from the plain top-k of the scores
    assert not torch.equal(got.indices.sort(-1).values, got.scores.topk(K).indices.sort(-1).values)


def test_v4_hash_router_matches_transformers():
    from transformers.models.deepseek_v4.modeling_deepseek_v4 import DeepseekV4HashRouter
    torch.manual_seed(1)
    ours = routers.HashRouter(D, E, K, VOCAB, scale=1.5, seed=3)
    ref = DeepseekV4HashRouter(_v4_config())
    with torch.no_grad():
        ref.weight.copy_(ours.proj.weight)
        ref.tid2eid.copy_(ours.table)
    x, ids = torch.randn(2, T // 2, D), torch.randint(0, VOCAB, (2, T // 2))
    got = ours(x, ids)
    _, w, idx = ref(x, ids)
    assert torch.equal(got.indices, ours.table[ids.reshape(-1)])
    _assert_same_routing(got, w, idx)


def test_hash_table_rows_are_distinct_experts():
    table = routers.hash_table(VOCAB, E, K, seed=0)
    assert table.shape == (VOCAB, K)
    assert all(len(set(row.tolist())) == K for row in table)
    assert torch.equal(table, routers.hash_table(VOCAB, E, K, seed=0))
    assert not torch.equal(table, routers.hash_table(VOCAB, E, K, seed=1))


@pytest.mark.parametrize("n_group, topk_group", [(1, 1), (4, 2), (6, 3)])
def test_v3_group_limited_router_matches_transformers(n_group, topk_group):
    from transformers import DeepseekV3Config
    from transformers.models.deepseek_v3.modeling_deepseek_v3 import DeepseekV3TopkRouter
    torch.manual_seed(2)
    cfg = DeepseekV3Config(hidden_size=D, n_routed_experts=E, num_experts_per_tok=K, n_group=n_group,
                           topk_group=topk_group, routed_scaling_factor=2.5, norm_topk_prob=True)
    ours = routers.TopKRouter(D, E, K, "sigmoid", n_group=n_group, topk_group=topk_group, scale=2.5)
    ours.bias.copy_(torch.randn(E) * 0.1)
    ref = DeepseekV3TopkRouter(cfg)
    with torch.no_grad():
        ref.weight.copy_(ours.proj.weight)
        ref.e_score_correction_bias.copy_(ours.bias)
    x = torch.randn(T, D)
    _, w, idx = ref(x)
    _assert_same_routing(ours(x), w, idx)


def test_group_limit_keeps_choices_inside_the_best_groups():
    torch.manual_seed(3)
    choice = torch.rand(T, E)
    idx = routers.group_limited_topk(choice, K, n_group=4, topk_group=1)
    groups = idx // (E // 4)
    assert (groups == groups[:, :1]).all()                  # one group kept: every pick inside it


def test_aux_free_update_moves_against_the_load():
    bias = torch.zeros(4)
    load = torch.tensor([10, 2, 6, 6])
    new = routers.aux_free_update(bias, load, rate=0.01)
    assert new.tolist() == pytest.approx([-0.01, 0.01, 0.0, 0.0])


def test_aux_free_update_balances_a_skewed_router():
    torch.manual_seed(4)
    r = routers.TopKRouter(D, E, K)
    x = torch.randn(2000, D) + 0.8                           # a shifted input favours some experts
    before = routers.max_violation(routers.expert_load(r(x).indices, E))
    with torch.no_grad():
        for _ in range(60):
            r.bias.copy_(routers.aux_free_update(r.bias, routers.expert_load(r(x).indices, E), rate=5e-3))
    after = routers.max_violation(routers.expert_load(r(x).indices, E))
    assert after < before / 3, (before, after)


def test_moe_counts_reads_either_naming():
    v4 = {"n_routed_experts": 384, "num_experts_per_tok": 6, "n_shared_experts": 1}
    k3 = {"num_experts": 896, "num_experts_per_token": 16, "num_shared_experts": 2, "top_k": 50}
    assert routers.moe_counts(v4) == (384, 6, 1)
    assert routers.moe_counts(k3) == (896, 16, 2)
    assert routers.moe_counts(k3).activation_rate() == pytest.approx(18 / 898)
    assert routers.moe_counts(k3).activation_rate(with_shared=False) == pytest.approx(16 / 896)


# --- bad input ---------------------------------------------------------------------------------------

def test_bad_router_arguments(raises_param):
    raises_param("top_k", routers.TopKRouter, D, E, E + 1)
    raises_param("top_k", routers.TopKRouter, D, E, 0)
    raises_param("n_group", routers.TopKRouter, D, E, K, n_group=5)
    raises_param("topk_group", routers.TopKRouter, D, E, K, n_group=4, topk_group=5)
    raises_param("top_k", routers.TopKRouter, D, E, 4, n_group=4, topk_group=1)
    raises_param("score", routers.TopKRouter, D, E, K, "softmax")
    raises_param("top_k", routers.hash_table, VOCAB, E, E + 1)
    raises_param("top_k", routers.group_limited_topk, torch.rand(3, E), E + 1)
    raises_param("rate", routers.aux_free_update, torch.zeros(2), torch.ones(2), 0.0)
    raises_param("config", routers.moe_counts, {"num_experts": 8})


def test_gate_weights_by_hand():
    """The chosen experts' scores [0.5, 0.4]: unnormalised times 2 is [1.0, 0.8]; normalised they are
    [5/9, 4/9], times 2 [10/9, 8/9]."""
    scores, idx = torch.tensor([[0.2, 0.5, 0.1, 0.4]]), torch.tensor([[1, 3]])
    torch.testing.assert_close(routers.gate_weights(scores, idx, 2.0, normalize=False), torch.tensor([[1.0, 0.8]]))
    torch.testing.assert_close(routers.gate_weights(scores, idx, 2.0), torch.tensor([[10 / 9, 8 / 9]]))


def test_max_violation_by_hand():
    """MaxVio = max / mean - 1: loads [4, 2, 3, 3] have mean 3, so 4/3 - 1 = 1/3; equal loads give 0."""
    assert routers.max_violation(torch.tensor([4, 2, 3, 3])) == pytest.approx(1 / 3, rel=1e-6)
    assert routers.max_violation(torch.tensor([5, 5, 5])) == 0.0

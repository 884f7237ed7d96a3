"""The Lightning Indexer against fla's ``naive_dsa_indexer``; the recall measure and the distillation
loss; bad input. (V4's indexer against transformers is in test_csa_hca.py.)"""

import importlib.util
import math
import pathlib

import pytest
import torch

from twopaths.layers.indexer import LightningIndexer, causal_topk, distill_loss, index_scores, selected, topk_mass


@pytest.fixture(scope="module")
def fla_naive():
    """fla's pure-torch DSA reference, loaded by path: ``fla.ops`` imports Triton kernels."""
    import fla

    path = pathlib.Path(fla.__file__).parent / "ops" / "dsa" / "naive.py"
    spec = importlib.util.spec_from_file_location("fla_dsa_naive", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("B,T,HI,DI,topk", [(2, 33, 4, 16, 5), (1, 20, 8, 32, 64), (3, 9, 1, 8, 1)])
def test_token_indexer_matches_fla(fla_naive, B, T, HI, DI, topk):
    torch.manual_seed(T)
    q, k, w = torch.randn(B, T, HI, DI), torch.randn(B, T, DI), torch.randn(B, T, HI)
    expected = fla_naive.naive_dsa_indexer(q, k, w, topk=topk, activation="relu")
    scores = index_scores(q, k, w, DI ** -0.5)
    got = causal_topk(scores, torch.arange(T) + 1, topk)
    assert got.shape == expected.shape == (B, T, topk)
    assert torch.equal(got < 0, expected.sort(-1, descending=True).values < 0)    # the same number of picks
    # ReLU scores tie at exactly zero and each side breaks ties its own way: the picked scores agree
    torch.testing.assert_close(picked_scores(scores, got), picked_scores(scores, expected), rtol=0, atol=1e-6)
    assert (got == -1).any() == (topk > 1)                 # early queries see fewer than topk tokens


def picked_scores(scores, idx):
    """The scores of the picks, sorted; -inf for no pick."""
    return scores.gather(-1, idx.clamp_min(0)).masked_fill(idx < 0, float("-inf")).sort(-1).values


def test_selected_mask_and_padding():
    idx = torch.tensor([[[2, 0, -1], [1, -1, -1]]])
    assert selected(idx, 4).tolist() == [[[True, False, True, False], [False, True, False, False]]]


def test_topk_mass_is_one_for_exact_picks_and_below_for_others():
    torch.manual_seed(0)
    p = torch.softmax(torch.randn(2, 6, 10), dim=-1)
    exact = p.topk(3, dim=-1).indices
    torch.testing.assert_close(topk_mass(p, exact, 3), torch.ones(2, 6))
    worst = (-p).topk(3, dim=-1).indices
    assert (topk_mass(p, worst, 3) < 1).all()


def test_distillation_pulls_the_scores_to_the_attention():
    torch.manual_seed(0)
    visible = torch.tensor([0, 2, 5, 5])
    p = torch.softmax(torch.randn(1, 4, 5).masked_fill(torch.arange(5) >= visible[:, None], float("-inf")), -1)
    p = p.nan_to_num(0.0)                                   # the query that sees nothing
    assert distill_loss(torch.log(p.clamp_min(1e-30)), p, visible) < 1e-6
    assert distill_loss(torch.zeros(1, 4, 5), p, visible) > 1e-3


def test_indexer_streaming_equals_one_shot():
    torch.manual_seed(1)
    for variant, ratio in (("v3.2", 1), ("v4", 1), ("v4", 4)):
        ix = LightningIndexer(16, 8, heads=2, dim=8, topk=3, ratio=ratio, rope_dim=4, variant=variant)
        x, c_q = torch.randn(2, 19, 16), torch.randn(2, 19, 8)
        with torch.no_grad():
            state = ix.new_state()
            steps = torch.cat([ix(x[:, t:t + 1], c_q[:, t:t + 1], torch.tensor([t]), state) for t in range(19)], 1)
        assert torch.equal(steps, ix(x, c_q, torch.arange(19)))      # ties, common at zero, go the same way
        assert state.count == 19 // ratio


def test_bad_input(raises_param):
    q, k = torch.randn(1, 4, 2, 8), torch.randn(1, 4, 8)
    raises_param("w", index_scores, q, k, torch.randn(1, 4, 3), 1.0)        # 3 weights for 2 heads
    raises_param("k", causal_topk, torch.randn(1, 4, 4), torch.arange(4), 0)
    p = torch.softmax(torch.randn(1, 2, 4), -1)
    err = raises_param("k", topk_mass, p, p.topk(4, -1).indices, 5)         # more than the 4 entries
    assert "4 entries" in str(err)
    raises_param("k", topk_mass, p, p.topk(2, -1).indices, 3)               # more than the picks given
    raises_param("topk", LightningIndexer, 16, 8, topk=0)
    raises_param("ratio", LightningIndexer, 16, 8, ratio=0)
    raises_param("index_heads", LightningIndexer, 16, 8, heads=0)
    raises_param("variant", LightningIndexer, 16, 8, variant="v3")
    raises_param("ratio", LightningIndexer, 16, 8, ratio=4, variant="v3.2")    # V3.2 keys every token
    raises_param("rope_dim", LightningIndexer, 16, 8, rope_dim=3)


def test_recall_experiment_learns_and_beats_chance():
    from twopaths.experiments import indexer_recall as ir

    s = ir.Setting(d_model=32, head_dim=32, tokens=96, batch=4, steps=40, window=32, lr=1e-2)
    rows, losses = ir.run([4], [1, 4], s, progress=False)
    assert [(r.ratio, r.k) for r in rows] == [(4, 1), (4, 4)]
    assert sum(losses[4][-5:]) < 0.9 * sum(losses[4][:5])
    for r in rows:
        assert 0 < r.chance and r.untrained + 0.1 < r.trained <= 1 + 1e-6


def test_an_entry_becomes_visible_once_its_window_closes():
    # ratio 4: the entry of tokens 0-3 is closed at position 3, the next at position 7
    idx = LightningIndexer(16, 8, heads=2, dim=8, topk=2, ratio=4)
    assert idx.visible(torch.arange(8)).tolist() == [0, 0, 0, 1, 1, 1, 1, 2]


def test_distill_loss_averages_over_the_queries_that_see_an_entry():
    # query 0 sees nothing (its KL is 0 by construction), query 1 sees both entries with KL = log 2
    # (p = [1, 0] against uniform scores): the mean over queries that see any is log 2, not log 2 / 2
    scores, p = torch.zeros(1, 2, 2), torch.tensor([[[0.0, 0.0], [1.0, 0.0]]])
    assert distill_loss(scores, p, torch.tensor([0, 2])).item() == pytest.approx(math.log(2), rel=1e-6)


def test_each_variant_turns_its_own_channels():
    """V3.2 rotates the leading rope_dim channels half-split (i with i + rope_dim/2) at theta^(-2i/rope_dim);
    V4 the trailing ones in adjacent pairs. theta 100, rope_dim 4: frequencies 1 and 1/10; position 3."""
    x, pos = torch.tensor([[[1.0, 1.0, 0.0, 0.0, 5.0, 6.0]]]), torch.tensor([3])
    v32 = LightningIndexer(16, 8, heads=1, dim=6, ratio=1, rope_dim=4, rope_theta=100.0, variant="v3.2")
    half = [math.cos(3), math.cos(0.3), math.sin(3), math.sin(0.3), 5.0, 6.0]
    assert v32._rope(x, pos)[0, 0].tolist() == pytest.approx(half, abs=1e-6)
    v4 = LightningIndexer(16, 8, heads=1, dim=6, ratio=4, rope_dim=4, rope_theta=100.0)
    y = torch.tensor([[[5.0, 6.0, 1.0, 0.0, 1.0, 0.0]]])
    pairs = [5.0, 6.0, math.cos(3), math.sin(3), math.cos(0.3), math.sin(0.3)]
    assert v4._rope(y, pos)[0, 0].tolist() == pytest.approx(pairs, abs=1e-6)

"""Speculative verification: transformers' implementation as the oracle, a chi-square test that the
emitted tokens follow the target, exact formulas for the expected tokens per pass, bad input."""

import math

import pytest
import torch
from hypothesis import given, strategies as st
from scipy import stats

from twopaths.calc import drafting
from twopaths.layers import speculative as sp

SIGNIFICANCE = 1e-3    # a seeded chi-square test fails when p < SIGNIFICANCE


def _pair(batch, gamma, vocab, seed, spread=1.5):
    gen = torch.Generator().manual_seed(seed)
    q_logits = spread * torch.randn(batch, gamma, vocab, generator=gen)
    p_logits = spread * torch.randn(batch, gamma + 1, vocab, generator=gen)
    return q_logits, p_logits, gen


def _drafts(q, gen):
    """Drafts sampled from q [B, gamma, V], as a draft model would: [B, gamma]."""
    B, gamma, V = q.shape
    return torch.multinomial(q.reshape(-1, V), 1, generator=gen).view(B, gamma)


# --- the oracle: transformers' _speculative_sampling on the same inputs ---------------------------

@pytest.mark.parametrize("gamma", [1, 5])
def test_same_tokens_as_transformers(gamma):
    from transformers.generation.utils import _speculative_sampling

    for seed in range(100):
        q_logits, p_logits, gen = _pair(1, gamma, 11, seed)
        q, p = q_logits.softmax(-1), p_logits.softmax(-1)
        draft = _drafts(q, gen)
        prompt = torch.tensor([[5, 2, 7]])
        torch.manual_seed(10_000 + seed)          # both draw from torch's global generator, in the same order
        theirs, their_n = _speculative_sampling(torch.cat([prompt, draft], 1), q_logits, gamma, p_logits)
        torch.manual_seed(10_000 + seed)
        ours = sp.verify(draft, q, p)
        n = int(ours.n_accepted[0])
        assert n == int(their_n)
        assert torch.equal(ours.tokens[0, : n + 1], theirs[0])
        assert (ours.tokens[0, n + 1:] == -1).all()


# --- the output distribution is the target's --------------------------------------------------------

def _fixed_case(vocab=6, gamma=3):
    """One target and one draft distribution per position; the target rows do not depend on the
    drafts, which keeps every conditional below a fixed distribution."""
    q_logits, p_logits, _ = _pair(1, gamma, vocab, seed=7, spread=1.0)
    return q_logits.softmax(-1)[0], p_logits.softmax(-1)[0]


def _run_ours(q, p, trials, seed):
    gen = torch.Generator().manual_seed(seed)
    gamma = q.shape[0]
    qb, pb = q.expand(trials, -1, -1).contiguous(), p.expand(trials, -1, -1).contiguous()
    return sp.verify(_drafts(qb, gen), qb, pb, gen)


def test_verified_tokens_follow_the_target():
    q, p = _fixed_case()
    out = _run_ours(q, p, 40_000, seed=1)
    assert min(sp.target_law_pvalues(out, q, p)) > SIGNIFICANCE


def test_transformers_passes_the_same_test():
    from transformers.generation.utils import _speculative_sampling

    q, p = _fixed_case()
    gamma, trials = q.shape[0], 2_000
    gen = torch.Generator().manual_seed(2)
    torch.manual_seed(2)
    tokens, ns = torch.full((trials, gamma + 1), -1), torch.zeros(trials, dtype=torch.long)
    for t in range(trials):
        draft = _drafts(q[None], gen)
        out, n = _speculative_sampling(draft, q.log()[None], gamma, p.log()[None])
        tokens[t, : out.shape[1]], ns[t] = out[0], n
    assert min(sp.target_law_pvalues(sp.Verified(tokens, ns), q, p)) > SIGNIFICANCE


def test_the_chi_square_test_can_fail():
    """Keeping every draft (no correction) emits q's tokens, and the same test rejects it."""
    q, p = _fixed_case()
    gen = torch.Generator().manual_seed(3)
    trials = 40_000
    draft = _drafts(q.expand(trials, -1, -1), gen)
    bonus = torch.multinomial(p[-1].expand(trials, -1), 1, generator=gen)
    tokens = torch.cat([draft, bonus], 1)
    n = torch.full((trials,), q.shape[0])
    assert sp.target_law_pvalues(sp.Verified(tokens, n), q, p)[0] < SIGNIFICANCE


def test_chi_square_pvalue_is_scipys():
    gen = torch.Generator().manual_seed(9)
    probs = torch.tensor([0.5, 0.3, 0.15, 0.04, 0.01])
    for n in (50, 400, 5_000):
        sample = torch.multinomial(probs, n, replacement=True, generator=gen)
        counts = torch.bincount(sample, minlength=5).double()
        expected = probs.double() * n
        keep = expected >= 5
        obs = torch.cat([counts[keep], counts[~keep].sum(0, keepdim=True)]) if (~keep).any() else counts
        exp = torch.cat([expected[keep], expected[~keep].sum(0, keepdim=True)]) if (~keep).any() else expected
        theirs = stats.chisquare(obs.numpy(), exp.numpy() * obs.sum().item() / exp.sum().item()).pvalue
        assert sp.chi_square_pvalue(sample, probs) == pytest.approx(theirs, rel=1e-9, abs=1e-15)


def test_identical_draft_is_always_kept():
    _, p_logits, gen = _pair(64, 4, 9, seed=4)
    p = p_logits.softmax(-1)
    draft = _drafts(p[:, :4], gen)
    out = sp.verify(draft, p[:, :4], p, gen)
    assert (out.n_accepted == 4).all()
    assert torch.equal(out.tokens[:, :4], draft)


# --- greedy ------------------------------------------------------------------------------------------

@given(st.integers(0, 10_000), st.integers(1, 6))
def test_greedy_emits_the_target_argmax_path(seed, gamma):
    q_logits, p_logits, gen = _pair(8, gamma, 5, seed)
    p = p_logits.softmax(-1)
    best = p.argmax(-1)
    # drafts that agree with the target for a random number of positions, then disagree
    agree = torch.randint(0, gamma + 1, (8,), generator=gen)
    draft = torch.where(torch.arange(gamma)[None] < agree[:, None], best[:, :gamma], (best[:, :gamma] + 1) % 5)
    out = sp.verify_greedy(draft, p)
    assert torch.equal(out.n_accepted, agree)
    for b in range(8):
        n = int(agree[b])
        assert torch.equal(out.tokens[b, : n + 1], best[b, : n + 1])


# --- expected tokens per target pass -------------------------------------------------------------------

def test_iid_formula_exact_values():
    assert sp.expected_tokens(0.5, 3) == 1.875               # 1 + 1/2 + 1/4 + 1/8
    assert sp.expected_tokens(0.8, 1) == pytest.approx(1.8, abs=1e-15)
    assert sp.expected_tokens(0.0, 5) == 1.0
    assert sp.expected_tokens(1.0, 5) == 6.0
    assert sp.expected_tokens(0.9, 4) == pytest.approx(1 + 0.9 + 0.81 + 0.729 + 0.6561, abs=1e-12)


@given(st.floats(0, 1), st.integers(1, 12))
def test_positional_formula_reduces_to_iid(alpha, gamma):
    assert sp.expected_tokens_positional([alpha] * gamma) == pytest.approx(sp.expected_tokens(alpha, gamma), rel=1e-9)


@given(st.lists(st.floats(0, 1), min_size=1, max_size=8))
def test_pmf_sums_to_one_and_gives_the_mean(alphas):
    pmf = sp.accepted_length_pmf(alphas)
    assert sum(pmf) == pytest.approx(1.0, abs=1e-12)
    assert sum((i + 1) * w for i, w in enumerate(pmf)) == pytest.approx(sp.expected_tokens_positional(alphas), abs=1e-12)


def test_positional_formula_exact_value():
    assert sp.expected_tokens_positional([0.9, 0.5, 0.2]) == pytest.approx(1 + 0.9 + 0.45 + 0.09, abs=1e-15)


def test_acceptance_rate_is_one_minus_total_variation():
    _, p_logits, _ = _pair(3, 4, 17, seed=5)
    p = p_logits.softmax(-1)
    a, b = p[:, :4], p[:, 1:]
    tv = 0.5 * (a - b).abs().sum(-1)
    torch.testing.assert_close(sp.acceptance_rate(a, b), 1 - tv)


def test_measured_tokens_per_pass_match_the_formula():
    q, p = _fixed_case(vocab=8, gamma=4)
    out = _run_ours(q, p, 50_000, seed=6)
    emitted = (out.n_accepted + 1).double()
    expected = sp.expected_tokens_positional(sp.acceptance_rate(p[:4], q))
    se = emitted.std().item() / math.sqrt(emitted.numel())
    assert abs(emitted.mean().item() - expected) < 4 * se


def test_speedup():
    assert sp.speedup(1.8, 1, 0.0) == 1.8
    assert sp.speedup(2.5, 3, 0.1) == pytest.approx(2.5 / 1.3)
    assert sp.speedup(2.5, 3, 0.1, verify_ratio=2.0) == pytest.approx(2.5 / 2.3)


# --- bad input ---------------------------------------------------------------------------------------

def test_bad_input(raises_param):
    q_logits, p_logits, gen = _pair(2, 3, 7, seed=8)
    q, p = q_logits.softmax(-1), p_logits.softmax(-1)
    draft = _drafts(q, gen)
    raises_param("gamma", sp.expected_tokens, 0.5, 0)
    raises_param("gamma", sp.expected_tokens, 0.5, -2)
    raises_param("gamma", sp.speedup, 1.0, 0, 0.1)
    raises_param("draft", sp.verify, draft[:, :0], q[:, :0], p[:, :1])          # a draft of length 0
    raises_param("p", sp.verify, draft, q, 1.5 * p)                              # rows summing to 1.5
    raises_param("q", sp.verify, draft, q * 0.9, p)
    raises_param("p", sp.verify, draft, q, p[:, :3])                             # gamma rows, not gamma+1
    raises_param("q", sp.verify, draft, q[..., :6].softmax(-1), p)               # vocabulary mismatch
    raises_param("q", sp.acceptance_rate, p[:, :3], q[..., :6])
    raises_param("draft", sp.verify, draft + 7, q, p)                           # ids outside the vocabulary
    raises_param("p", sp.verify_greedy, draft, p - 0.1)                          # negative entries, wrong sums
    raises_param("alpha", sp.expected_tokens, 1.2, 2)
    raises_param("alphas", sp.expected_tokens_positional, [])
    raises_param("alphas", sp.accepted_length_pmf, [0.5, -0.1])
    raises_param("cost_ratio", sp.speedup, 1.5, 2, -0.1)
    raises_param("tokens_per_pass", sp.speedup, 3.5, 2, 0.1)


# --- what drafting and verifying cost (calc.drafting) -----------------------------------------------------------------------------

def test_draft_costs_from_the_config():
    from twopaths import specs
    from twopaths.specs import params
    from twopaths.calc import weights

    d = drafting.draft_costs("deepseek-v3", 4096, "fp8")
    c = specs.model("deepseek-v3").raw["config"]
    assert (d.experts, d.top_k) == (c["n_routed_experts"], c["num_experts_per_tok"])
    # the MTP layer's routed experts: all n_routed_experts experts of one MoE layer
    per_expert = 3 * c["hidden_size"] * c["moe_intermediate_size"]
    mtp = params.param_counts("deepseek-v3").component("MTP")
    assert d.mtp_routed / (d.mtp_routed + d.mtp_fixed - weights.weight_bytes("deepseek-v3")["head"]) == \
        pytest.approx(c["n_routed_experts"] * per_expert / mtp.params, rel=1e-12)
    # one token reads top_k / E of the experts; E tokens' worth of draws read nearly all of them
    assert d.target_step(1) == pytest.approx(d.fixed + d.routed * c["num_experts_per_tok"] / c["n_routed_experts"] + d.kv)
    assert d.target_step(10_000) == pytest.approx(d.fixed + d.routed + 10_000 * d.kv)
    # two tokens read 1 - (1 - k/E)^2 of the experts, nearly twice the k/E one reads
    k_over_e = c["num_experts_per_tok"] / c["n_routed_experts"]
    assert d.verify_ratio(1, 1) == pytest.approx((d.fixed + d.routed * (1 - (1 - k_over_e) ** 2) + d.kv)
                                                 / (d.fixed + d.routed * k_over_e + d.kv), rel=1e-12)
    assert d.verify_ratio(1, 1) > 1.4
    assert d.verify_ratio(100_000, 3) == pytest.approx(1.0, abs=1e-9)   # every expert is read anyway
    # one MTP step over one target step, each reading its fixed bytes, k/E of its experts and one token's KV
    assert d.cost_ratio(1) == pytest.approx((d.mtp_fixed + d.mtp_routed * k_over_e + d.mtp_kv)
                                            / (d.fixed + d.routed * k_over_e + d.kv), rel=1e-12)
    assert d.cost_ratio(1) < 0.1


def test_roofline_times():
    from dataclasses import replace

    from twopaths import specs

    d, h200 = drafting.draft_costs("deepseek-v4-pro", 8192, "fp8"), specs.gpu("h200")
    endless = replace(h200, fp8_flops=float("inf"), bf16_flops=float("inf"))
    assert d.verify_ratio(8, 3, endless) == pytest.approx(d.verify_ratio(8, 3))         # bandwidth alone
    assert d.cost_ratio(8, endless) == pytest.approx(d.cost_ratio(8))
    starved = replace(h200, fp8_flops=1e9, bf16_flops=1e9)                               # compute alone
    assert d.verify_ratio(8, 3, starved) == pytest.approx(4.0)                           # gamma + 1 tokens of work
    assert d.cost_ratio(8, starved) == pytest.approx((d.mtp_weight_flops + d.mtp_attn_flops)
                                                     / (d.weight_flops + d.attn_flops))
    assert d.target_seconds(h200, 1) >= d.target_step(1) / h200.hbm_bandwidth


def test_draft_costs_refuse_a_model_without_mtp(raises_param):
    raises_param("model_id", drafting.draft_costs, "kimi-k3", 4096)
    raises_param("context", drafting.draft_costs, "deepseek-v3", 0)

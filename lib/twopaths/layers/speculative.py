"""Speculative decoding: verify a draft against the target, and what to expect from it.

A cheap draft proposes ``gamma`` tokens ``x_1..x_gamma``, sampled from its distributions ``q_i``;
one target pass scores the same positions and gives ``p_1..p_{gamma+1}``. Verification
(Leviathan et al. 2023; Chen et al. 2023):

- keep ``x_i`` with probability ``min(1, p_i(x_i) / q_i(x_i))``, left to right;
- at the first rejection, emit a sample from the residual ``norm(max(0, p_i - q_i))`` and stop;
- if every draft is kept, emit a bonus sample from ``p_{gamma+1}``.

Each emitted token is then distributed exactly as the target would have sampled it. One pass
emits ``n + 1`` tokens, ``n`` the drafts kept. A draft is kept with probability
``alpha_i = sum_x min(p_i, q_i) = 1 - TV(p_i, q_i)``, so (chaining the positions)
``E[n + 1] = 1 + sum_i prod_{j <= i} alpha_j``, which is ``(1 - alpha^(gamma+1)) / (1 - alpha)``
when every ``alpha_i`` is the same.

Shapes: ``B`` sequences, ``gamma`` drafts, vocabulary ``V``. Probabilities, not logits.
"""

from __future__ import annotations

from typing import NamedTuple

import torch

from ..errors import ParameterError, check_int, check_real

SUM_TOL = 1e-4   # how far a row of probabilities may sum from 1 (float32 softmax is well inside)


class Verified(NamedTuple):
    tokens: torch.Tensor       # [B, gamma+1]: the n kept drafts, the next token, then -1 padding
    n_accepted: torch.Tensor   # [B]: drafts kept before the first rejection, 0..gamma


# --- input checks ---------------------------------------------------------------------------------

def check_probs(name: str, probs: torch.Tensor, rows: int | None = None) -> torch.Tensor:
    """``probs`` [B, rows, V]: non-negative, each row summing to 1."""
    if not isinstance(probs, torch.Tensor) or probs.dim() != 3 or not probs.is_floating_point():
        raise ParameterError(name, getattr(probs, "shape", probs), "a float tensor [batch, positions, vocab]")
    if rows is not None and probs.shape[1] != rows:
        raise ParameterError(name, tuple(probs.shape), f"{rows} positions along dim 1")
    sums = probs.sum(-1)
    if bool((probs < 0).any()) or not bool(torch.allclose(sums, torch.ones_like(sums), atol=SUM_TOL)):
        worst = (sums - 1).abs().max().item()
        raise ParameterError(name, f"rows summing to within {worst:.3g} of 1, or negative entries",
                             f"probabilities: non-negative, every row summing to 1 within {SUM_TOL}")
    return probs


def check_draft(draft: torch.Tensor, vocab: int) -> tuple[int, int]:
    """``draft`` [B, gamma] token ids with gamma >= 1; returns (B, gamma)."""
    if not isinstance(draft, torch.Tensor) or draft.dim() != 2 or draft.is_floating_point():
        raise ParameterError("draft", getattr(draft, "shape", draft), "an integer tensor [batch, gamma]")
    if draft.shape[1] < 1:
        raise ParameterError("draft", tuple(draft.shape), "a draft length gamma >= 1 (dim 1)")
    if bool((draft < 0).any()) or bool((draft >= vocab).any()):
        raise ParameterError("draft", "token ids outside the vocabulary", f"ids in [0, {vocab})")
    return draft.shape[0], draft.shape[1]


def _check_pair(draft, q, p) -> int:
    """The shapes verification needs; returns gamma."""
    if not isinstance(p, torch.Tensor) or p.dim() != 3:
        raise ParameterError("p", getattr(p, "shape", p), "a float tensor [batch, gamma+1, vocab]")
    batch, gamma = check_draft(draft, p.shape[-1])
    check_probs("p", p, gamma + 1)
    check_probs("q", q, gamma)
    if q.shape[-1] != p.shape[-1]:
        raise ParameterError("q", tuple(q.shape), f"the target's vocabulary ({p.shape[-1]}) along the last dim")
    if p.shape[0] != batch or q.shape[0] != batch:
        raise ParameterError("p", tuple(p.shape), f"batch {batch}, as the draft")
    return gamma


# --- verification ---------------------------------------------------------------------------------

def residual(p: torch.Tensor, q: torch.Tensor) -> torch.Tensor:
    """norm(max(0, p - q)) along the last dim; where p == q (nothing left) it returns p,
    which is never sampled then: a draft from q is always kept when p == q."""
    r = (p - q).clamp(min=0)
    total = r.sum(-1, keepdim=True)
    return torch.where(total > 0, r / total.clamp(min=torch.finfo(r.dtype).tiny), p)


def verify(draft: torch.Tensor, q: torch.Tensor, p: torch.Tensor,
           generator: torch.Generator | None = None) -> Verified:
    """Speculative sampling: ``draft`` [B, gamma] drawn from ``q`` [B, gamma, V], target ``p`` [B, gamma+1, V].

    Randomness is drawn as one uniform per draft, then one categorical sample per sequence.
    """
    gamma = _check_pair(draft, q, p)
    batch, rows = draft.shape[0], torch.arange(draft.shape[0], device=draft.device)
    p_x = p[:, :gamma].gather(-1, draft[..., None])[..., 0]         # [B, gamma]: p_i(x_i)
    q_x = q.gather(-1, draft[..., None])[..., 0]                    # [B, gamma]: q_i(x_i) > 0, x_i ~ q_i
    u = torch.rand(batch, gamma, generator=generator, device=p.device, dtype=p.dtype)
    kept = u <= p_x / q_x                                           # probability min(1, p/q)
    n = ((~kept).cumsum(-1) == 0).sum(-1)                           # [B]: kept before the first rejection
    # The next token: from the residual where a draft was rejected, from p_{gamma+1} where none was.
    p_n = p[rows, n]                                                # [B, V]
    q_n = q[rows, n.clamp(max=gamma - 1)]
    dist = torch.where((n < gamma)[:, None], residual(p_n, q_n), p_n)
    nxt = torch.multinomial(dist, 1, generator=generator)[:, 0]     # [B]
    return Verified(_assemble(draft, n, nxt), n)


def verify_greedy(draft: torch.Tensor, p: torch.Tensor) -> Verified:
    """Greedy verification: keep drafts while each equals argmax p_i, then emit the target's argmax.

    The output is the target's own greedy continuation, whatever the draft proposed.
    """
    if not isinstance(p, torch.Tensor) or p.dim() != 3:
        raise ParameterError("p", getattr(p, "shape", p), "a float tensor [batch, gamma+1, vocab]")
    batch, gamma = check_draft(draft, p.shape[-1])
    check_probs("p", p, gamma + 1)
    if p.shape[0] != batch:
        raise ParameterError("p", tuple(p.shape), f"batch {batch}, as the draft")
    best = p.argmax(-1)                                             # [B, gamma+1]
    n = ((draft != best[:, :gamma]).cumsum(-1) == 0).sum(-1)
    return Verified(_assemble(draft, n, best.gather(-1, n[:, None])[:, 0]), n)


def _assemble(draft: torch.Tensor, n: torch.Tensor, nxt: torch.Tensor) -> torch.Tensor:
    """[B, gamma+1]: the first n drafts, then ``nxt``, then -1."""
    batch, gamma = draft.shape
    pos = torch.arange(gamma + 1, device=draft.device)[None, :]
    padded = torch.cat([draft, torch.full_like(draft[:, :1], -1)], dim=1)
    out = torch.where(pos < n[:, None], padded, torch.full_like(padded, -1))
    return out.scatter(1, n[:, None], nxt[:, None])


# --- what to expect -------------------------------------------------------------------------------

def acceptance_rate(p: torch.Tensor, q: torch.Tensor) -> torch.Tensor:
    """alpha = sum_x min(p, q) along the last dim: the chance a draft sampled from q is kept."""
    if p.shape[-1] != q.shape[-1]:
        raise ParameterError("q", tuple(q.shape), f"the target's vocabulary ({p.shape[-1]}) along the last dim")
    return torch.minimum(p, q).sum(-1)


def _check_alpha(name: str, alpha) -> float:
    return check_real(name, float(alpha) if isinstance(alpha, torch.Tensor) else alpha, minimum=0, maximum=1)


def expected_tokens(alpha: float, gamma: int) -> float:
    """Tokens per target pass when each of ``gamma`` drafts is kept with the same chance ``alpha``:
    (1 - alpha^(gamma+1)) / (1 - alpha); gamma + 1 when alpha = 1."""
    alpha, gamma = _check_alpha("alpha", alpha), check_int("gamma", gamma, minimum=1)
    if alpha == 1.0:
        return float(gamma + 1)
    return (1 - alpha ** (gamma + 1)) / (1 - alpha)


def expected_tokens_positional(alphas) -> float:
    """Tokens per target pass when draft i is kept with chance ``alphas[i]`` given all before it
    were: 1 + sum_i prod_{j <= i} alpha_j."""
    alphas = [_check_alpha("alphas", a) for a in _as_list(alphas)]
    total, survive = 1.0, 1.0
    for a in alphas:
        survive *= a
        total += survive
    return total


def accepted_length_pmf(alphas) -> list[float]:
    """P(n = i) for i = 0..gamma drafts kept: prod_{j <= i} alpha_j * (1 - alpha_{i+1}), and the
    product of all alphas for n = gamma."""
    alphas = [_check_alpha("alphas", a) for a in _as_list(alphas)]
    pmf, survive = [], 1.0
    for a in alphas:
        pmf.append(survive * (1 - a))
        survive *= a
    return pmf + [survive]


def _as_list(alphas) -> list:
    if isinstance(alphas, torch.Tensor):
        alphas = alphas.tolist()
    if isinstance(alphas, (str, bytes)) or not hasattr(alphas, "__len__") or len(alphas) < 1:
        raise ParameterError("alphas", alphas, "a non-empty sequence of probabilities, one per draft position")
    return list(alphas)


def speedup(tokens_per_pass: float, gamma: int, cost_ratio: float, verify_ratio: float = 1.0) -> float:
    """Decode speed-up over one token per target pass: E / (gamma * c + v).

    ``cost_ratio`` c: one draft step's time over one ordinary target step's. ``verify_ratio`` v: a
    target pass over gamma + 1 tokens over one over a single token (1 while decode is bound by
    reading the same weights; more when the extra tokens read extra experts or add arithmetic to a
    compute-bound step). ``twopaths.calc.drafting`` gives both for the public configs.
    """
    tokens_per_pass = check_real("tokens_per_pass", tokens_per_pass, minimum=1)
    gamma = check_int("gamma", gamma, minimum=1)
    cost_ratio = check_real("cost_ratio", cost_ratio, minimum=0)
    verify_ratio = check_real("verify_ratio", verify_ratio, minimum=1)
    if tokens_per_pass > gamma + 1:
        raise ParameterError("tokens_per_pass", tokens_per_pass, f"at most gamma + 1 = {gamma + 1}")
    return tokens_per_pass / (gamma * cost_ratio + verify_ratio)


# --- the check that verification keeps the target's law ---------------------------------------------

def chi_square_pvalue(observed: torch.Tensor, probs: torch.Tensor) -> float:
    """p-value of Pearson's chi-square test of integer samples ``observed`` [N] against ``probs`` [K].

    Cells expected to hold fewer than 5 samples are pooled into one, as the test requires.
    """
    counts = torch.bincount(observed, minlength=probs.numel()).double()
    expected = probs.double().cpu() * counts.sum()
    small = expected < 5
    obs = torch.cat([counts[~small], counts[small].sum(0, keepdim=True)]) if small.any() else counts
    exp = torch.cat([expected[~small], expected[small].sum(0, keepdim=True)]) if small.any() else expected
    exp = exp * obs.sum() / exp.sum()
    stat = ((obs - exp) ** 2 / exp).sum()
    dof = obs.numel() - 1
    return torch.special.gammaincc(torch.tensor(dof / 2, dtype=torch.float64), stat / 2).item()


def target_law_pvalues(out: Verified, q: torch.Tensor, p: torch.Tensor) -> list[float]:
    """Chi-square p-values that verified output follows the target, over many runs of one case.

    ``out`` holds N runs with drafts sampled from ``q`` [gamma, V] and target rows ``p`` [gamma+1, V]
    that do not depend on the drafts. Token i, given tokens before it were kept drafts, must follow
    p_i (one p-value each, i = 0..gamma); the number of kept drafts must follow
    ``accepted_length_pmf`` (the last p-value).
    """
    gamma = q.shape[0]
    tokens, n = out.tokens.cpu(), out.n_accepted.cpu()
    pvalues = [chi_square_pvalue(tokens[n >= i, i], p[i]) for i in range(gamma + 1)]
    pmf = torch.tensor(accepted_length_pmf(acceptance_rate(p[:gamma], q)))
    return pvalues + [chi_square_pvalue(n, pmf)]

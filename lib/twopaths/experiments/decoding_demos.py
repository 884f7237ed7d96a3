"""The routing-and-decoding chapter's small experiments: the same logits through a sigmoid and a
sqrt-softplus router, and constructed draft/target pairs for checking speculative verification."""

from __future__ import annotations

from dataclasses import dataclass

import torch

from ..layers import routers
from ..layers import speculative as sp


@dataclass(frozen=True)
class ScoreComparison:
    agreement: float     # share of tokens whose top-k sets are the same under both score functions
    tied: float          # share of tokens with equal float32 sigmoid scores among their best k+1
    unexplained: int     # tokens whose sets differ without such a tie (0 if only ties separate them)
    weight_spread: dict  # score function -> mean largest/smallest chosen weight


def compare_score_functions(x: torch.Tensor, w: torch.Tensor, top_k: int) -> ScoreComparison:
    """Route tokens ``x`` [T, d] with logits from ``w`` [E, d] through a sigmoid and a sqrt-softplus
    top-``top_k`` router (no bias) and compare their choices and weights."""
    n_experts, width = w.shape
    r = {}
    for name in ("sigmoid", "sqrtsoftplus"):
        router = routers.TopKRouter(width, n_experts, top_k, name)
        with torch.no_grad():
            router.proj.weight.copy_(w)
        r[name] = router(x)
    same = (r["sigmoid"].indices.sort(-1).values == r["sqrtsoftplus"].indices.sort(-1).values).all(-1)
    # float32 rounds sigmoids of nearby large logits to the same value (1.0 above a logit of about
    # 17): equal scores among a token's best k+1 leave the top-k set to tie-breaking
    best = r["sigmoid"].scores.topk(top_k + 1, dim=-1).values
    tie = (best[:, 1:] == best[:, :-1]).any(-1)
    spread = {n: (r[n].weights.max(-1).values / r[n].weights.min(-1).values).mean().item() for n in r}
    return ScoreComparison(same.double().mean().item(), tie.double().mean().item(),
                           int((~same & ~tie).sum()), spread)


def constructed_case(vocab: int, gamma: int, spread: float, seed: int):
    """Fixed target rows p [gamma+1, vocab] and draft rows q [gamma, vocab]: q's logits are p's plus
    Gaussian noise of std ``spread``."""
    g = torch.Generator().manual_seed(seed)
    logits = 2.0 * torch.randn(gamma + 1, vocab, generator=g, dtype=torch.float64)
    p = logits.softmax(-1)
    q = (logits[:gamma] + spread * torch.randn(gamma, vocab, generator=g, dtype=torch.float64)).softmax(-1)
    return q, p


def run_case(q: torch.Tensor, p: torch.Tensor, n: int, seed: int) -> sp.Verified:
    """``n`` independent verifications of drafts sampled from ``q`` against ``p``."""
    g = torch.Generator().manual_seed(seed)
    qb, pb = q.expand(n, -1, -1).contiguous(), p.expand(n, -1, -1).contiguous()
    drafts = torch.multinomial(qb.reshape(-1, q.shape[-1]), 1, generator=g).view(n, -1)
    return sp.verify(drafts, qb, pb, g)

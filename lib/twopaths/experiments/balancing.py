"""The LatentMoE chapter's balancing race: no bias, DeepSeek-V3's auxiliary-loss-free sign rule, and
Quantile Balancing with exact quantiles or histograms, on the same batches of router scores."""

from __future__ import annotations

from collections.abc import Callable

import torch

from ..layers import quantile_balancing as qb
from ..layers import routers


def max_violation(scores: torch.Tensor, bias: torch.Tensor, top_k: int, sign: int = 1) -> float:
    """MaxVio of the top-``top_k`` choice on ``scores`` [T, E] with ``bias`` added (``sign`` -1:
    subtracted, the convention that selects on logit - bias)."""
    choice = (scores + sign * bias).topk(top_k).indices
    return routers.max_violation(routers.expert_load(choice, scores.shape[-1]))


def methods(bins: list[int]) -> list[str]:
    return ["no bias", "aux-free sign", "QB exact"] + [f"QB {b:,} bins" for b in bins]


def compare(batch: Callable[[torch.Generator], torch.Tensor], held_out: torch.Tensor, top_k: int,
            bins: list[int], steps: int, seed: int, rate: float = 1e-3):
    """MaxVio on ``held_out`` [T, E] before and after each of ``steps`` updates, per method of
    ``methods(bins)``; ``batch(generator)`` draws a fresh batch of scores and every method sees the
    same batches (one generator seeded ``seed`` each). ``rate`` is the sign rule's step
    (Megatron's default). Returns the MaxVio lists and the exact QB bias after the last update."""
    E, device = held_out.shape[-1], held_out.device
    zero = torch.zeros(E, device=device)
    names = methods(bins)
    vio = {m: [max_violation(held_out, zero, top_k)] for m in names}
    exact_bias = None
    for i, m in enumerate(names):
        gen = torch.Generator().manual_seed(seed)
        balancer = qb.QuantileBalancer(E, top_k, bins[i - 3] if i >= 3 else None, device=device)
        bias = zero.clone()
        for _ in range(steps):
            scores = batch(gen)
            if m == "aux-free sign":
                load = routers.expert_load((scores + bias).topk(top_k).indices, E)
                bias = routers.aux_free_update(bias, load, rate)
            elif m != "no bias":
                balancer.observe(scores)
                bias = balancer.step()
            vio[m].append(max_violation(held_out, bias, top_k))
        if m == "QB exact":
            exact_bias = bias
    return vio, exact_bias

"""Quantile Balancing (Kimi K3, report section 2.3.3): solve for the expert bias instead of nudging it.

A token chooses expert ``j`` when ``s_tj + b_j > alpha_t``, where the *admission cutoff* ``alpha_t`` is
the (k+1)-th largest of ``s_t + b``. Holding the cutoffs fixed, expert ``j`` admits exactly the tokens
whose residual ``x_tj = alpha_t - s_tj`` lies below ``b_j``. For every expert to admit the fair share
``k/E`` of the tokens, set

    b_j = Quantile_{k/E}( x_{:, j} ),   then subtract the mean (a common shift changes no choice).

Exact quantiles need every residual in one place. K3 (and Megatron-LM's ``quantile_balancing``) instead bin
each rank's residuals into a per-expert histogram of ``bins`` bins over ``bounds``: histograms of disjoint
token sets *add*, so one all-reduce of ``E x bins`` int32 counts replaces gathering ``T x E`` scores. The
quantile is read off the cumulative histogram, interpolating linearly inside its bin; the next bounds
are ``[min b - margin, max b + margin]``. With sigmoid scores (in (0, 1)) a margin of 1 holds every
residual, because ``x_tj = s_tm + b_m - s_tj`` for the expert ``m`` at the cutoff.

Sign trap: K3 and Megatron's global-batch scope choose on ``s + b``; Megatron's micro-batch scope and
vLLM's apertus2 choose on ``logits - beta``. A bias computed for one convention and applied in the other
pushes load the wrong way.
"""

from __future__ import annotations

import math

import torch

from ..errors import ParameterError, check_int, check_real
from .routers import check_top_k

INT32_BYTES = 4
FP32_BYTES = 4


def admission_cutoff(scores: torch.Tensor, bias: torch.Tensor, top_k: int) -> torch.Tensor:
    """alpha [T]: the (k+1)-th largest biased score of each token in ``scores`` [T, E]."""
    check_top_k(top_k, scores.shape[1], strict=True)
    return (scores + bias).topk(top_k + 1, dim=1).values[:, -1]


def residuals(scores: torch.Tensor, bias: torch.Tensor, top_k: int) -> torch.Tensor:
    """x [T, E] = alpha_t - s_tj: expert j admits token t iff x_tj < b_j."""
    return admission_cutoff(scores, bias, top_k)[:, None] - scores


def exact_bias(scores: torch.Tensor, bias: torch.Tensor, top_k: int) -> torch.Tensor:
    """The mean-centred per-expert k/E quantile of the residuals (the ceil(T k/E)-th smallest)."""
    T, E = scores.shape
    m = math.ceil(T * top_k / E)
    b = residuals(scores, bias, top_k).T.contiguous().kthvalue(m, dim=1).values    # rows are experts: faster
    return b - b.mean()


def check_bounds(bounds) -> tuple[float, float]:
    """Histogram bounds ``(lo, hi)``, finite, ``lo < hi``."""
    if len(bounds) != 2:
        raise ParameterError("bounds", bounds, "a pair (lo, hi)")
    lo, hi = (check_real("bounds", float(v)) for v in bounds)
    if not lo < hi:
        raise ParameterError("bounds", tuple(bounds), "(lo, hi) with lo < hi")
    return lo, hi


def histogram(scores: torch.Tensor, bias: torch.Tensor, top_k: int, bins: int, bounds,
              chunk: int = 4096) -> torch.Tensor:
    """Counts [E, bins] (int32) of the residuals binned as floor((x - lo) * bins / (hi - lo)), clamped
    to the edges.

    Tokens go ``chunk`` at a time, so the temporaries stay in cache; the chunks' histograms add, as
    ranks' do under an all-reduce.
    """
    bins = check_int("bins", bins, minimum=1)
    check_int("chunk", chunk, minimum=1)
    lo, hi = check_bounds(bounds)
    T, E = scores.shape
    scale = bins / (hi - lo)
    offsets = torch.arange(E, dtype=torch.int32, device=scores.device) * bins   # expert j owns cells [j*bins, (j+1)*bins)
    hist = torch.zeros(E * bins, dtype=torch.int32, device=scores.device)      # int32, as Megatron all-reduces it
    for start in range(0, T, chunk):
        s = scores[start:start + chunk]
        alpha = admission_cutoff(s, bias, top_k)
        # (alpha - s - lo) * scale in one pass; clamped to [0, bins - 1], truncation is the floor
        cell = torch.sub(((alpha - lo) * scale)[:, None], s, alpha=scale).clamp_(0, bins - 1).int()
        cell = (cell + offsets).view(-1)
        hist.index_add_(0, cell, torch.ones_like(cell))
    return hist.view(E, bins)


def bias_from_histogram(hist: torch.Tensor, bounds, top_k: int, margin: float = 1.0):
    """(bias [E], next bounds): the k/E quantile of each expert's histogram, mean-centred."""
    lo, hi = check_bounds(bounds)
    E, bins = hist.shape
    check_top_k(top_k, E, strict=True)
    cum = hist.long().cumsum(1)                                      # exact counts
    if (cum[:, -1] <= 0).any():
        raise ParameterError("hist", "an expert with no counts", "at least one count per expert")
    target = cum[:, -1:].double() * (top_k / E)                      # [E, 1], fractional
    i = torch.searchsorted(cum, target.ceil().long()).clamp_(max=bins - 1)   # first bin whose count reaches it
    count = hist.gather(1, i).double()
    frac = (target - (cum.gather(1, i).double() - count)) / count    # how far into that bin
    b = (lo + (i + frac) * (hi - lo) / bins).squeeze(1).float()
    b = b - b.mean()
    return b, (b.min().item() - margin, b.max().item() + margin)


class QuantileBalancer:
    """Accumulate micro-batches, then update the bias once: exact (``bins=None``) or by histogram.

    ``observe(scores)`` takes one micro-batch's unbiased scores [T, E]; ``step()`` sets and returns the
    new bias. Exact mode keeps every score (what gathering the scores would move); histogram mode
    keeps ``E x bins`` counts (what the all-reduce moves).
    """

    def __init__(self, n_experts: int, top_k: int, bins: int | None = None, bounds=(-1.0, 1.0),
                 margin: float = 1.0, device=None):
        check_top_k(top_k, n_experts, strict=True)
        self.top_k, self.bins = top_k, None if bins is None else check_int("bins", bins, minimum=1)
        self.bounds, self.margin = check_bounds(bounds), check_real("margin", margin, minimum=0)
        self.bias = torch.zeros(n_experts, device=device)
        self._scores, self._hist = [], None

    def observe(self, scores: torch.Tensor) -> None:
        if self.bins is None:
            self._scores.append(scores)
        else:
            h = histogram(scores, self.bias, self.top_k, self.bins, self.bounds)
            self._hist = h if self._hist is None else self._hist + h

    def step(self) -> torch.Tensor:
        if not self._scores and self._hist is None:
            raise RuntimeError("step() needs at least one observe() since the last step")
        if self.bins is None:
            self.bias = exact_bias(torch.cat(self._scores), self.bias, self.top_k)
        else:
            self.bias, self.bounds = bias_from_histogram(self._hist, self.bounds, self.top_k, self.margin)
        self._scores, self._hist = [], None
        return self.bias


# --- what crosses machines -------------------------------------------------------------------------

def allreduce_bytes(n_experts: int, bins: int, ranks: int, count_bytes: int = INT32_BYTES) -> float:
    """Bytes each rank sends in a ring all-reduce of the [E, bins] histogram: 2 (R-1)/R of its size."""
    check_int("bins", bins, minimum=1)
    check_int("ranks", ranks, minimum=1)
    return 2 * (ranks - 1) / ranks * n_experts * bins * count_bytes


def gather_bytes(tokens_per_rank: int, n_experts: int, ranks: int, score_bytes: int = FP32_BYTES) -> float:
    """Bytes each rank receives in an all-gather of every rank's [T, E] scores, for exact quantiles."""
    check_int("tokens_per_rank", tokens_per_rank, minimum=1)
    check_int("ranks", ranks, minimum=1)
    return (ranks - 1) * tokens_per_rank * n_experts * score_bytes

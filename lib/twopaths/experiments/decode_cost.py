"""What one KDA layer and one MLA layer hold and take per decoded token after a context of T
tokens (chapter 3). The MLA cache is filled with random latents, whose values do not change the
cost; the KDA state by running the context through the layer. Bytes come from the caches'
tensors; a time is the median of ``repeats`` decode steps, each on a fresh copy of the cache as
it stands after the context (one more step runs first, as a warm-up)."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import torch

from ..errors import check_int
from ..layers.kda import KDA, KDACache
from ..layers.mla import MLA, MLACache


@dataclass(frozen=True)
class DecodeCost:
    tokens: int           # the context before the decoded token
    kda_bytes: int        # the KDA layer's cache after the step
    mla_bytes: int
    kda_seconds: float    # median time of one decode step
    mla_seconds: float


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize()


def _median_step(step: Callable, make_cache: Callable, x: torch.Tensor, repeats: int):
    times = []
    for _ in range(repeats + 1):
        cache = make_cache()
        _sync(x.device)
        start = time.perf_counter()
        step(x, cache)
        _sync(x.device)
        times.append(time.perf_counter() - start)
    return statistics.median(times[1:]), cache


def decode_costs(kda: KDA, mla: MLA, contexts: Sequence[int], repeats: int,
                 device: torch.device) -> list[DecodeCost]:
    """One ``DecodeCost`` per context, for layers of the same width already on ``device``."""
    repeats = check_int("repeats", repeats, minimum=1)
    d, costs = mla.d_model, []
    x = torch.randn(1, 1, d, device=device)
    with torch.no_grad():
        for T in contexts:
            T = check_int("contexts", T, minimum=1)
            filled = kda.new_cache(1, device=device)
            kda(torch.randn(1, T, d, device=device), filled)
            t_kda, c_kda = _median_step(
                kda, lambda: KDACache(filled.conv.clone(), filled.state.clone()), x, repeats)
            gen = torch.Generator().manual_seed(T)
            latents = torch.randn(1, T, mla.rank, generator=gen).to(device)
            rope = torch.randn(1, T, mla.rope_dim, generator=gen).to(device)
            t_mla, c_mla = _median_step(lambda y, c: mla(y, c, absorbed=True),
                                        lambda: MLACache(latents, rope), x, repeats)
            costs.append(DecodeCost(T, c_kda.nbytes, c_mla.nbytes, t_kda, t_mla))
    return costs

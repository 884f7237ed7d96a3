"""KV offload by duty cycle: how many sessions need their cache on a GPU at once (part III, Step 5).

A session alternates decoding (``w_decode`` seconds a turn) and waiting for its user or tool
(``w_idle``). By Little's law the share of sessions decoding at any moment, and so the share whose
cache must be on a GPU, is the duty cycle ``rho = w_decode / (w_decode + w_idle)``; the rest can
wait in CPU memory or on SSD (HiCache's L2/L3).

- ``duty_cycle(w_decode, w_idle)``, ``decode_seconds(output_tokens, tokens_per_s)``
- ``resident_requests(concurrency, rho, rounding)``: the mean number resident, covered.
- ``peak_resident(concurrency, rho, quantile)``: sessions decoding at once are Binomial(N, rho) when
  they are independent; a fleet sized for the mean is short about half the time. Normal
  approximation, covered.
- ``scale_nodes(d_nodes, rho, rounding)``: the article's correction, decode nodes times rho (which
  need not be a whole number of deployment units).
- ``swap_in_rate(concurrency, rho, w_decode, request_bytes)``: bytes/s that must come back to the
  GPUs, since every turn of every session brings its cache back once.
"""

from __future__ import annotations

import math
from statistics import NormalDist

from ..errors import check_int, check_real
from .arrays import ints, reals
from .rounding import cover


def check_rho(rho):
    """rho in (0, 1], a number or an array."""
    return reals("rho", rho, minimum=0, maximum=1, open_min=True)


def duty_cycle(w_decode: float, w_idle: float) -> float:
    """The share of a session's life spent decoding: w_decode / (w_decode + w_idle)."""
    w_decode = check_real("w_decode", w_decode, minimum=0, open_min=True)
    w_idle = check_real("w_idle", w_idle, minimum=0)
    return w_decode / (w_decode + w_idle)


def decode_seconds(output_tokens: int, tokens_per_s: float) -> float:
    """Seconds a turn spends decoding: output tokens over per-request decode speed."""
    output_tokens = check_int("output_tokens", output_tokens, minimum=1)
    tokens_per_s = check_real("tokens_per_s", tokens_per_s, minimum=0, open_min=True)
    return output_tokens / tokens_per_s


def resident_requests(concurrency, rho, rounding: str = "strict"):
    """Sessions whose cache is on a GPU on average: concurrency x rho, covered."""
    concurrency = ints("concurrency", concurrency, minimum=1)
    return cover(concurrency * check_rho(rho), rounding)


def peak_resident(concurrency: int, rho: float, quantile: float = 0.999) -> int:
    """Sessions decoding at once that a fleet must hold to be short with probability 1 - quantile."""
    concurrency = check_int("concurrency", concurrency, minimum=1)
    rho = float(check_rho(rho))
    quantile = check_real("quantile", quantile, minimum=0, maximum=1, open_min=True)
    if quantile == 1 or rho == 1:
        return concurrency
    z = NormalDist().inv_cdf(quantile)
    return min(concurrency, cover(concurrency * rho + z * math.sqrt(concurrency * rho * (1 - rho))))


def scale_nodes(d_nodes, rho, rounding: str = "article"):
    """The article's correction: the decode nodes sized for every session, times rho."""
    return cover(reals("d_nodes", d_nodes, minimum=0) * check_rho(rho), rounding)


def swap_in_rate(concurrency: int, rho: float, w_decode: float, request_bytes: float) -> float:
    """Bytes/s the fleet must bring back to its GPUs: turns per second times one request's cache."""
    resident = check_int("concurrency", concurrency, minimum=1) * float(check_rho(rho))
    w_decode = check_real("w_decode", w_decode, minimum=0, open_min=True)
    return resident / w_decode * check_real("request_bytes", request_bytes, minimum=0)

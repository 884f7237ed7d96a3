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

For any model a reader names (chapter 12's scenario tables):

- ``check_quantile(quantile)``: a peak-sizing quantile, in [0.5, 1).
- ``peak_rho(concurrency, rho, quantile)``: the share of sessions a peak-sized fleet holds.
- ``plan_nodes(p)``, ``node_ratio(p, base)``: a plan's nodes, and over another's, None for a reason.
- ``swap(plan, w_decode, host_bytes_per_s)``: a plan's swap-in traffic and the caches it holds
  off the GPUs (``Swap``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from numbers import Real
from statistics import NormalDist

from ..errors import ParameterError, check_int, check_real
from .arrays import ints, reals
from .placement import request_share
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


def check_quantile(quantile) -> float:
    """A peak-sizing quantile in [0.5, 1): below the median sizes under the mean, and 1 would
    hold every session (no offload at all)."""
    if isinstance(quantile, bool) or not isinstance(quantile, Real) or not 0.5 <= quantile < 1:
        raise ParameterError("quantile", quantile, "a number in [0.5, 1) (below 0.5 sizes under the "
                             "mean; 1 would hold every session)")
    return float(quantile)


def peak_rho(concurrency: int, rho: float, quantile: float) -> float:
    """The share of sessions a fleet holds to hold every decoding one ``quantile`` of the time."""
    return peak_resident(concurrency, rho, quantile) / concurrency


def plan_nodes(plan) -> int | None:
    """A ``fleet.plan_or_reason`` result's nodes; None where it is the reason there is no plan."""
    return None if isinstance(plan, str) else plan.nodes


def node_ratio(plan, base) -> float | None:
    """``plan``'s nodes over ``base``'s (the model a table compares with); None if either has none."""
    a, b = plan_nodes(plan), plan_nodes(base)
    return None if a is None or b is None else a / b


@dataclass(frozen=True)
class Swap:
    rate: float             # bytes/s the whole decode fleet takes in
    per_gpu: float          # bytes/s each decode GPU takes in
    wait: float             # seconds a turn waits for its cache over one GPU's host link
    held: float             # bytes of caches waiting off the GPUs
    held_per_node: float    # the same for each decode node


def swap(plan, w_decode: float, host_bytes_per_s: float) -> Swap:
    """Swap-in traffic of ``plan`` (a ``calc.fleet.Plan`` at its duty cycle) when a turn decodes for
    ``w_decode`` s. Under attention TP every GPU of a group takes its share of a cache (latents in
    full without DCP, its stripe with it), so the fleet lands ``request_bytes x attention_tp`` a
    turn; off the GPUs each waiting session keeps one whole cache."""
    host = check_real("host_bytes_per_s", host_bytes_per_s, minimum=0, open_min=True)
    w, a = plan.work, plan.assumptions
    landed = plan.decode.request_bytes * plan.placement.attention_tp
    rate = swap_in_rate(w.concurrency, w.rho, w_decode, landed)
    held = (1 - w.rho) * w.concurrency * request_share(plan.model, w.context, 1, a)
    return Swap(rate, rate / (plan.d_nodes * a.gpus_per_node), plan.decode.request_bytes / host,
                held, held / plan.d_nodes)

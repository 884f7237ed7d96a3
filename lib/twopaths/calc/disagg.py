"""Prefill/decode disaggregation: handing a request's cache from prefill to decode, and how many
prefill nodes the decode nodes need (part III, Steps 3 and 4).

- ``link_bandwidth(gbit_per_s)``: a link rate in Gb/s as bytes/s (IB 400 Gb/s is 50 GB/s).
- ``transfer_time(n_bytes, bandwidth)``: seconds, at the full link rate (a lower bound).
- ``handoff(model, context, basis, rounding, bandwidth, ...)``: the bytes and seconds of the
  growing cache and of the fixed state (K3's KDA states) one request sends from P to D.
- ``prefill_nodes(d_nodes, pd_ratio, rounding)``: ``pd_ratio`` decode nodes per prefill node
  (the article's P:D = 1:2.5 is ``pd_ratio=2.5``).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import check_real
from ..specs.deployment import hardware
from .arrays import reals
from .request import request_bytes
from .rounding import cover


def link_bandwidth(gbit_per_s: float) -> float:
    """Bytes/s of a link quoted in Gb/s (bits)."""
    return check_real("gbit_per_s", gbit_per_s, minimum=0, open_min=True) * 1e9 / 8


def transfer_time(n_bytes, bandwidth):
    """Seconds to move ``n_bytes`` at ``bandwidth`` bytes/s."""
    return reals("n_bytes", n_bytes, minimum=0) / reals("bandwidth", bandwidth, minimum=0, open_min=True)


@dataclass(frozen=True)
class Handoff:
    kv_bytes: float          # grows with the context
    state_bytes: float       # fixed whatever the context (K3's KDA states)
    bandwidth: float

    @property
    def kv_seconds(self) -> float:
        return self.kv_bytes / self.bandwidth

    @property
    def state_seconds(self) -> float:
        return self.state_bytes / self.bandwidth

    @property
    def seconds(self) -> float:
        return self.kv_seconds + self.state_seconds


def handoff(model: str, context: int, basis: str = "stated", rounding: str = "strict", *,
            bandwidth: float | None = None, kv_dtype=None, state_dtype: str | None = None) -> Handoff:
    """What one request of ``context`` tokens sends from its prefill node to its decode node."""
    bandwidth = check_real("bandwidth", hardware().link_bandwidth if bandwidth is None else bandwidth,
                           minimum=0, open_min=True)
    kw = dict(kv_dtype=kv_dtype, state_dtype=state_dtype)
    state = request_bytes(model, 0, basis, **kw)
    return Handoff(request_bytes(model, context, basis, rounding, **kw) - state, state, bandwidth)


def check_pd_ratio(pd_ratio):
    """Decode nodes per prefill node: a positive number or array."""
    return reals("pd_ratio", pd_ratio, minimum=0, open_min=True)


def prefill_nodes(d_nodes, pd_ratio, rounding: str = "strict"):
    """Prefill nodes for ``d_nodes`` decode nodes at ``pd_ratio`` decode nodes per prefill node."""
    return cover(reals("d_nodes", d_nodes, minimum=0) / check_pd_ratio(pd_ratio), rounding)

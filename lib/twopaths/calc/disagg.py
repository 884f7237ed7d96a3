"""Prefill/decode disaggregation: handing a request's cache from prefill to decode, and how many
prefill nodes the decode nodes need (part III, Steps 3 and 4).

- ``link_bandwidth(gbit_per_s)``: a link rate in Gb/s as bytes/s (IB 400 Gb/s is 50 GB/s).
- ``transfer_time(n_bytes, bandwidth)``: seconds, at the full link rate (a lower bound).
- ``handoff(model, context, basis, rounding, bandwidth, ...)``: the bytes and seconds of the
  growing cache and of the fixed state (K3's KDA states) one request sends from P to D.
- ``prefill_nodes(d_nodes, pd_ratio, rounding)``: ``pd_ratio`` decode nodes per prefill node
  (the article's P:D = 1:2.5 is ``pd_ratio=2.5``).
- ``unplannable(model)``: why the planner cannot size a model at all (attention whose FLOPs it
  does not count), or None; ``plan_or_reason(model, gpu, a, work)``: the plan, or an ``Unplanned``
  that says why there is none and, where one exists, the change that makes one valid.
- ``plans_by_ep(model, gpu, a, work)``: the best valid plan at each EP size;
  ``ratios_by_ep(a, b)``: nodes of one model over another's at the EP sizes both have.
- ``by_format(models, gpu, a, work)``: ``plan_or_reason`` under each weight scenario and cache
  dtype, everything else as in ``a``.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import ParameterError, check_real
from ..specs.deployment import hardware
from ..specs.serving import Assumptions, weight_scenarios
from . import fleet
from .arrays import reals
from .attention_flops import attention_layers
from .placement import placements, whole_node_placements
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


@dataclass(frozen=True)
class Unplanned:
    """No plan for ``model`` on ``gpu``: ``reason`` says why, with the fix where there is one."""
    model: str
    gpu: str
    reason: str


def unplannable(model: str) -> str | None:
    """Why no plan can be made for ``model`` on any GPU, or None when the planner can size it."""
    try:
        attention_layers(model)    # prefill is sized by the attention it counts
    except ParameterError as err:
        return f"prefill not sized: the attention of {model} is not counted ({err.allowed})"
    return None


def plan_or_reason(model: str, gpu: str, a: Assumptions, work: fleet.Workload | None = None
                   ) -> fleet.Plan | Unplanned:
    """``fleet.plan``, or why there is none: the model cannot be sized, or no placement is valid
    (with ``NoValidPlan.fix``, the smallest change that makes one valid)."""
    why = unplannable(model)
    p = fleet.plan_or_reason(model, gpu, a, work) if why is None else why
    return p if isinstance(p, fleet.Plan) else Unplanned(model, gpu, p)


def plans_by_ep(model: str, gpu: str, a: Assumptions, work: fleet.Workload) -> dict[int, fleet.Plan]:
    """{EP size: the valid plan with the fewest nodes at that size}, smallest size first; empty
    when the model cannot be sized or nothing is valid."""
    if unplannable(model) is not None:
        return {}
    out = {}
    for pl in whole_node_placements(model, a):    # part III's EP sizes, in nodes
        if fleet.fits(model, gpu, a, work, pl):
            p = fleet.plan(model, gpu, a, work, placement=pl)
            if pl.ep not in out or p.nodes < out[pl.ep].nodes:
                out[pl.ep] = p
    return dict(sorted(out.items()))


def ratios_by_ep(plans: dict[int, fleet.Plan], base: dict[int, fleet.Plan]) -> dict[int, float]:
    """Nodes of ``plans`` over nodes of ``base`` at each EP size both have."""
    return {n: plans[n].nodes / base[n].nodes for n in sorted(set(plans) & set(base))}


CACHE_DTYPES = ("bf16", "fp8")


def by_format(models, gpu: str, a: Assumptions, work: fleet.Workload) -> dict[tuple, fleet.Plan | Unplanned]:
    """{(weight scenario, cache dtype, model): plan or reason}, everything else as in ``a``."""
    return {(w, c, m): plan_or_reason(m, gpu, a.but(weights=w, kv_dtype=c), work)
            for w in weight_scenarios() for c in CACHE_DTYPES for m in models}

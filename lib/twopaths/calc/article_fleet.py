"""The article's own fleet arithmetic (part III, Steps 4 and 5, and B300), reproduced so the audit
can check that its figures follow from its inputs. It is not a plan: the book never prices it.

The article pools a decode unit's cache room (EP x room per GPU, divided by one request), rounds
every count to the nearest, sizes the decode nodes for every session and then multiplies them by
rho, which need not leave whole units. Under attention data parallelism a request's cache sits on
one GPU, so pooled room is not a placement that exists; ``calc.fleet`` plans what does.

``article_plan(model, gpu, rho)`` returns an ``ArticlePlan`` with the figures the article prints.
``steps(model, gpu, rho)`` gives each count's need at its own step, before that step rounds it, twice:
from the counts the article printed before it (``carried``), and from earlier counts rounded as
capacity needs, requests per unit down and units up (``need``), so the audit can judge each count's
rounding direction where it is made and see what it carries.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cache

from ..specs import gpu as gpu_spec
from ..specs.deployment import deployment, hardware, workload
from .ep import EPRow, ep_row
from .offload import check_rho
from .request import request_bytes
from .rounding import cover, fit


@dataclass(frozen=True)
class ArticlePlan:
    model: str
    gpu: str
    rho: float
    layout: EPRow
    request_bytes: float
    requests_per_unit: int
    units: int               # units for every session, before rho
    d_nodes: int
    p_nodes: int

    @property
    def concurrency(self) -> int:
        return workload().concurrency

    @property
    def kv_per_gpu(self) -> float:
        return self.layout.kv_per_gpu

    @property
    def unit_kv(self) -> float:
        return self.layout.kv_per_gpu * self.layout.ep

    @property
    def nodes(self) -> int:
        return self.d_nodes + self.p_nodes

    @property
    def gpus(self) -> int:
        return self.nodes * self.layout.gpus_per_node


@cache
def article_plan(model: str, gpu: str = "h200", rho: float = 1.0) -> ArticlePlan:
    """The article's decode unit, units, decode and prefill nodes for its workload on ``gpu``."""
    rho = float(check_rho(rho))
    w, n = workload(), hardware().gpus_per_node
    layout = ep_row(model, gpu_spec(gpu), deployment(model).ep, "article")
    request = request_bytes(model, w.average_context, "stated", "article")
    per_unit = fit(layout.kv_per_gpu * layout.ep / request, "article")
    units = cover(w.concurrency / per_unit, "article")
    d_nodes = cover(cover(units * layout.ep / n) * rho, "article")
    p_nodes = cover(d_nodes / w.pd_ratio, "article")
    return ArticlePlan(model, gpu_spec(gpu).id, rho, layout, request, per_unit, units, d_nodes, p_nodes)


def article_gain(model: str, old: str = "h200", new: str = "b300") -> float:
    """The article's H200-to-B300 node ratio for one model."""
    return article_plan(model, old).nodes / article_plan(model, new).nodes


@dataclass(frozen=True)
class Step:
    carried: float     # this step from the article's own printed counts, before it rounds
    need: float        # this step with every earlier count rounded as capacity needs, before it rounds


COUNTS = ("requests_per_unit", "units", "d_nodes", "p_nodes", "nodes", "gpus")


@cache
def steps(model: str, gpu: str = "h200", rho: float = 1.0) -> dict[str, Step]:
    """Each count of ``article_plan`` as a ``Step``, by the article's own method: decode nodes for every
    session times ``rho`` (``whole_units`` says where that method is not a plan)."""
    plan, w, n = article_plan(model, gpu, rho), workload(), hardware().gpus_per_node
    ep = plan.layout.ep
    fits = plan.unit_kv / plan.request_bytes
    per_unit = math.floor(fits + 1e-9)
    units = w.concurrency / per_unit if per_unit else math.inf
    d_need = cover(cover(units) * ep / n) * plan.rho if math.isfinite(units) else math.inf
    p_need = cover(d_need) / w.pd_ratio if math.isfinite(d_need) else math.inf
    nodes = cover(d_need) + cover(p_need) if math.isfinite(d_need) else math.inf
    return {"requests_per_unit": Step(fits, fits),
            "units": Step(w.concurrency / plan.requests_per_unit, units),
            "d_nodes": Step(cover(plan.units * ep / n) * plan.rho, d_need),
            "p_nodes": Step(plan.d_nodes / w.pd_ratio, p_need),
            "nodes": Step(plan.nodes, nodes),
            "gpus": Step(plan.gpus, nodes * n)}


def whole_units(model: str, gpu: str = "h200", rho: float = 1.0) -> tuple[float, int, int]:
    """(the article's decode nodes at ``rho`` counted in units, the sessions its whole units hold at its
    own requests per unit, the whole units the resident sessions need at the requests that fit): where
    the first is not whole, or the second falls short of the resident sessions, scaling the upper bound
    by ``rho`` is not a plan."""
    plan, w = article_plan(model, gpu, rho), workload()
    units = plan.d_nodes * hardware().gpus_per_node / plan.layout.ep
    fits = math.floor(plan.unit_kv / plan.request_bytes + 1e-9)
    return units, math.floor(units + 1e-9) * plan.requests_per_unit, cover(w.concurrency * plan.rho / fits)

"""The article's own fleet arithmetic (part III, Steps 4 and 5, and B300), reproduced so the audit
can check that its figures follow from its inputs. It is not a plan: the book never prices it.

The article pools a decode unit's cache room (EP x room per GPU, divided by one request), rounds
every count to the nearest, sizes the decode nodes for every session and then multiplies them by
rho, which need not leave whole units. Under attention data parallelism a request's cache sits on
one GPU, so pooled room is not a placement that exists; ``calc.fleet`` plans what does.

``article_plan(model, gpu, rho)`` returns an ``ArticlePlan`` with the figures the article prints.
"""

from __future__ import annotations

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

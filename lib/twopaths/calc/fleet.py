"""Decode-unit concurrency and the node count for a fleet (part III, Steps 4 and 5, and B300).

A decode unit is one EP group: ``ep`` GPUs holding one copy of the weights, attention data-parallel.
Its KV room is ``kv_per_gpu`` on each GPU (``calc.ep``). For ``concurrency`` sessions of ``context``
tokens, of which a share ``rho`` decode at once (``calc.offload``):

    requests per unit  = fit(ep x kv_per_gpu / request)         packing "unit" (the article's)
                       = ep x fit(kv_per_gpu / request)         packing "gpu": a request's cache
                                                                 stays on one GPU under DP attention
    decode units       = cover(resident / requests per unit),   resident = cover(concurrency x rho)
    decode nodes       = cover(units x ep / gpus_per_node)
    prefill nodes      = cover(decode nodes / pd_ratio)          (``calc.disagg``)

With ``rounding="article"`` every count rounds to the nearest and rho scales the decode nodes sized
for every session (the article's method), which need not be whole units. ``counts(...)`` does the
arithmetic on numbers or numpy arrays without checks (``calc.sweep`` calls it); ``plan(model, gpu,
...)`` checks its parameters and returns a ``Plan``; ``gain(model, old, new, ...)`` is the node
ratio between two GPUs.

Defaults come from the article (``specs/deployment.yaml``): 10,000 sessions, 500K tokens, P:D 1:2.5,
the article's EP and overhead. ``basis`` picks the dimensions (``calc.request``): "stated" (its
printed figures), "article" (its assumptions recomputed) or "public" (the public configs, EP
sizing by ``calc.weights``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import ParameterError, check_choice, check_int
from ..specs import gpu as gpu_spec
from ..specs.deployment import deployment, hardware, workload
from .disagg import check_pd_ratio
from .ep import EPRow, ep_row, whole_node_eps
from .offload import check_rho
from .request import BASES, request_bytes
from .rounding import ROUNDINGS, cover, fit

PACKINGS = ("unit", "gpu")


def requests_per_unit(kv_per_gpu, request, ep, rounding: str = "strict", packing: str = "unit"):
    """Requests one decode unit holds (0 where none fits)."""
    if packing == "unit":
        return fit(np.maximum(kv_per_gpu, 0) * ep / request, rounding)
    return fit(np.maximum(kv_per_gpu, 0) / request, rounding) * ep


@dataclass(frozen=True)
class Counts:
    requests_per_unit: object
    units: object            # units for the resident sessions (article: for every session, before rho)
    d_nodes: object
    p_nodes: object

    @property
    def nodes(self):
        return self.d_nodes + self.p_nodes


def counts(kv_per_gpu, request, ep, concurrency, rho, pd_ratio, gpus_per_node: int = 8,
           rounding: str = "strict", packing: str = "unit") -> Counts:
    """The node count, elementwise over numbers or broadcastable arrays; ``inf`` where nothing fits."""
    per_unit = requests_per_unit(kv_per_gpu, request, ep, rounding, packing)
    # The same formulas as offload.resident_requests / scale_nodes and disagg.prefill_nodes, without
    # their checks, so that an infinite count (nothing fits) can flow through.
    with np.errstate(divide="ignore", invalid="ignore"):
        if rounding == "article":
            units = cover(np.divide(concurrency, per_unit), rounding)
            d_nodes = cover(cover(units * ep / gpus_per_node) * rho, rounding)
        else:
            units = cover(np.divide(cover(np.multiply(concurrency, rho)), per_unit))
            d_nodes = cover(units * ep / gpus_per_node)
        p_nodes = cover(d_nodes / pd_ratio, rounding)
    return Counts(per_unit, units, d_nodes, p_nodes)


@dataclass(frozen=True)
class Plan:
    model: str
    gpu: str
    basis: str
    rounding: str
    packing: str
    concurrency: int
    context: int
    rho: float
    pd_ratio: float
    layout: EPRow            # the decode unit's EP layout (calc.ep)
    request_bytes: float
    requests_per_unit: int
    units: float             # as in Counts
    d_nodes: int
    p_nodes: int

    @property
    def ep(self) -> int:
        return self.layout.ep

    @property
    def unit_kv(self) -> float:
        return self.layout.kv_per_gpu * self.layout.ep

    @property
    def nodes(self) -> int:
        return self.d_nodes + self.p_nodes

    @property
    def gpus(self) -> int:
        return self.nodes * self.layout.gpus_per_node


def plan(model: str, gpu: str = "h200", *, basis: str = "stated", rounding: str = "strict",
         packing: str = "unit", concurrency: int | None = None, context: int | None = None,
         rho: float = 1.0, pd_ratio: float | None = None, ep: int | None = None,
         overhead_bytes: float | None = None, usable_fraction: float | None = None,
         redundant_experts: int | None = None, formats: dict | None = None, kv_dtype=None,
         state_dtype: str | None = None, gpus_per_node: int | None = None) -> Plan:
    """Decode and prefill nodes for ``concurrency`` sessions of ``context`` tokens of ``model`` on
    ``gpu``. ``ep`` defaults to the article's (stated/article bases) or, under the public configs,
    the whole-node EP size with the fewest nodes for this workload (``fewest_nodes_ep``)."""
    check_choice("basis", basis, BASES)
    check_choice("rounding", rounding, ROUNDINGS)
    check_choice("packing", packing, PACKINGS)
    spec = gpu_spec(gpu)
    w = workload()
    concurrency = check_int("concurrency", w.concurrency if concurrency is None else concurrency, minimum=1)
    context = check_int("context", w.average_context if context is None else context, minimum=1)
    rho = float(check_rho(rho))
    pd_ratio = float(check_pd_ratio(w.pd_ratio if pd_ratio is None else pd_ratio))
    gpus_per_node = check_int("gpus_per_node", gpus_per_node or hardware().gpus_per_node, minimum=1)
    method = "public" if basis == "public" else "article"
    request = request_bytes(model, context, basis, rounding, kv_dtype=kv_dtype, state_dtype=state_dtype)
    layout_kw = dict(overhead_bytes=overhead_bytes, redundant_experts=redundant_experts,
                     usable_fraction=usable_fraction, formats=formats, gpus_per_node=gpus_per_node)
    if ep is None:
        ep = deployment(model).ep if method == "article" else fewest_nodes_ep(
            model, spec, request, concurrency, rho, pd_ratio, rounding=rounding, packing=packing, **layout_kw)
        if ep is None:
            raise ParameterError("gpu", gpu, f"a GPU on which some whole-node EP size leaves room for {model}'s KV")
    layout = ep_row(model, spec, check_int("ep", ep, minimum=1), method, rounding, **layout_kw)
    if not layout.feasible:
        raise ParameterError("ep", ep, f"an EP size that leaves HBM for KV on {spec.name}: {layout.weights_per_gpu / 1e9:.1f} GB "
                             f"of weights and {layout.overhead_bytes / 1e9:.1f} GB of overhead leave none")
    c = counts(layout.kv_per_gpu, request, layout.ep, concurrency, rho, pd_ratio, gpus_per_node, rounding, packing)
    if c.requests_per_unit < 1:
        room = layout.kv_per_gpu * (layout.ep if packing == "unit" else 1)
        raise ParameterError("context", context, f"a context whose cache ({request / 1e9:.1f} GB here) fits in the "
                             f"{room / 1e9:.1f} GB of KV room of one {'decode unit' if packing == 'unit' else 'GPU'}")
    return Plan(model, spec.id, basis, rounding, packing, concurrency, context, rho, pd_ratio, layout, request,
                c.requests_per_unit, c.units, c.d_nodes, c.p_nodes)


def fewest_nodes_ep(model: str, gpu, request: float, concurrency, rho, pd_ratio, *, rounding: str = "strict",
                    packing: str = "unit", gpus_per_node: int | None = None, **layout_kw) -> int | None:
    """The whole-node EP size (public config) that serves the workload with the fewest nodes; the
    smaller group on a tie; None if none holds a request. The smallest group that fits is rarely it:
    its GPUs are nearly full of weights, so it needs many units."""
    gpus_per_node = gpus_per_node or hardware().gpus_per_node
    best = None
    for e in whole_node_eps(model, "public", layout_kw.get("redundant_experts") or 0, gpus_per_node):
        row = ep_row(model, gpu, e, "public", rounding, gpus_per_node=gpus_per_node, **layout_kw)
        if not row.feasible:
            continue
        n = counts(row.kv_per_gpu, request, e, concurrency, rho, pd_ratio, gpus_per_node, rounding, packing).nodes
        if np.isfinite(n) and (best is None or n < best[0]):
            best = (n, e)
    return best[1] if best else None


def gain(model: str, old: str = "h200", new: str = "b300", **kw) -> float:
    """How many times fewer nodes ``new`` GPUs need than ``old`` ones, all else equal."""
    return plan(model, old, **kw).nodes / plan(model, new, **kw).nodes

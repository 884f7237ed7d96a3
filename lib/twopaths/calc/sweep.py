"""The node count over a grid of workloads at once (numpy), for plots and sensitivity.

``sweep(models, gpus, a, concurrency=..., context=..., rho=..., pd_ratio=None)`` crosses every axis
given as a list (a single value is an axis of one) under one ``Assumptions`` value and returns a
``Sweep``: ``axes`` (name -> values, in the order of ``AXES``) and arrays of that shape,
``requests_per_unit``, ``d_nodes``, ``p_nodes``, ``nodes`` and ``gpus``, each ``inf`` where no
placement is valid. It chooses what ``calc.fleet.plan`` chooses (the valid placement with the
fewest decode nodes, the smaller unit on a tie), doing the per-placement memory once per model,
GPU and context and the counting over the whole grid, aggregated serving and pipeline stages by
the same rules (``calc.fleet``); a test keeps the two equal.
``by_context(s, gpu)`` gives the lines a plot of nodes against context draws from it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import check_list
from ..specs import gpu_ids, model_ids
from ..specs.deployment import deployment_models, workload as article_workload
from ..specs.serving import Assumptions
from .arrays import ints
from .disagg import check_pd_ratio
from .fleet import prefill_rate, prefill_unit, session_speed, staged
from .offload import check_rho
from .placement import memory, placements

AXES = ("model", "gpu", "concurrency", "context", "rho", "pd_ratio")


@dataclass(frozen=True)
class Sweep:
    axes: dict
    requests_per_unit: np.ndarray
    d_nodes: np.ndarray
    p_nodes: np.ndarray
    gpus_per_node: int
    d_gpus: np.ndarray           # the decode units' GPUs (several small units share a node)

    @property
    def nodes(self) -> np.ndarray:
        return self.d_nodes + self.p_nodes

    @property
    def gpus(self) -> np.ndarray:
        """Decode GPUs plus the prefill nodes' GPUs, as ``calc.fleet.Plan.gpus``."""
        return self.d_gpus + self.p_nodes * self.gpus_per_node

    @property
    def size(self) -> int:
        return self.nodes.size

    def index(self, **where) -> tuple:
        """The index of one value along each named axis (the others left whole), e.g.
        ``s.nodes[s.index(model="kimi-k3")]``."""
        return tuple(list(self.axes[name]).index(where[name]) if name in where else slice(None) for name in AXES)


def _axis(values) -> list:
    return list(values) if np.ndim(values) else [values]


def _ceil(x):
    return np.ceil(np.round(x, 9))


def sweep(models, gpus, a: Assumptions, *, concurrency, context, rho=1.0, pd_ratio=None) -> Sweep:
    # public inputs read any registered config (corpus models too); the article's only its own two
    known = model_ids(include_reference=True) if a.inputs == "public" else deployment_models()
    models = check_list("models", _axis(models), sorted(set(known)))
    gpus = check_list("gpus", _axis(gpus), gpu_ids())
    conc = ints("concurrency", np.asarray(_axis(concurrency)), minimum=1).astype(float)
    ctx = [int(t) for t in ints("context", np.asarray(_axis(context)), minimum=1)]
    rhos = check_rho(np.asarray(_axis(rho), dtype=float))
    pds = check_pd_ratio(np.asarray(_axis(a.pd_ratio if pd_ratio is None else pd_ratio), dtype=float))
    n = a.gpus_per_node
    shape = (len(models), len(gpus), len(conc), len(ctx), len(rhos), len(pds))
    per_unit, d_nodes, p_nodes, d_gpus = (np.full(shape, np.inf) for _ in range(4))
    resident = _ceil(conc[:, None] * rhos[None, :])                       # (concurrency, rho)
    # prompt tokens/s at one token a second a session (fleet.prompt_demand); x each option's speed
    demand = resident * a.prompt_tokens_per_turn / article_workload().output_tokens
    for i, m in enumerate(models):
        for j, g in enumerate(gpus):
            for k, t in enumerate(ctx):
                options = staged(m, g, t, a, placements(m, a))
                best = _best(m, g, t, a, options, resident, demand, pds)
                if best is not None:
                    per_unit[i, j, :, k], d_gpus[i, j, :, k], d_nodes[i, j, :, k], p_nodes[i, j, :, k] = best
    axes = dict(zip(AXES, (models, gpus, [int(c) for c in conc], ctx, list(rhos), list(pds))))
    return Sweep(axes, per_unit, d_nodes, p_nodes, n, d_gpus)


def _held(m, g, t, a, options, role):
    """Requests a unit of each option holds in ``role`` (0 where none fits)."""
    return np.array([p.attention_groups * memory(m, g, p, t, a, role).requests for p in options], dtype=float)


def _best(m, g, t, a, options, resident, demand, pds):
    """(requests a unit, decode GPUs, decode nodes, prefill nodes) of the plan ``fleet.plan``
    chooses at each (concurrency, rho, P:D ratio), or None where no option is valid; the cheapest
    by GPUs, then nodes, the first option (fewest GPUs a unit) on a tie."""
    n = a.gpus_per_node
    units_p = {c: prefill_unit(m, g, t, a, c) for c in {p.dcp for p in options}}
    held = _held(m, g, t, a, options, "decode")
    held_d = np.where([units_p[p.dcp] is not None for p in options], held, 0.0)
    small = np.array([p.gpus <= a.aggregate_max_gpus for p in options])
    aggregated = [memory(m, g, p, t, a, "aggregated") if ok and h > 0 else None
                  for p, ok, h in zip(options, small, held)]
    held_a = np.array([p.attention_groups * x.requests if x else 0.0 for p, x in zip(options, aggregated)])
    if not ((held_d > 0) | (held_a > 0)).any():
        return None
    size = np.array([p.gpus for p in options], dtype=float)
    unit_nodes = _ceil(np.array([units_p[p.dcp].placement.gpus if units_p[p.dcp] else n for p in options]) / n)
    with np.errstate(divide="ignore", invalid="ignore"):
        dg = np.where(held_d > 0, _ceil(resident[..., None] / held_d) * size, np.inf)[..., None, :]   # (c, r, 1, pl)
        dn = _ceil(dg / n)
        pn = np.where(np.isinf(dn), np.inf, unit_nodes * _ceil(_ceil(dn / pds[:, None]) / unit_nodes))
        ga = np.where(held_a > 0, _ceil(resident[..., None] / held_a) * size, np.inf)     # (c, r, pl)
        if (held_a > 0).any():
            rate = prefill_rate(m, g, t, a)
            speed = np.array([session_speed(m, g, a, t, x) if x and x.valid else 0.0 for x in aggregated])
            ga = np.where((ga <= a.aggregate_max_gpus) & (demand[..., None] * speed <= ga * rate), ga, np.inf)
    co = np.broadcast_to(np.isfinite(ga)[..., None, :], pn.shape)
    gpus = np.where(co, ga[..., None, :], dg + pn * n)
    nodes = np.where(co, _ceil(ga[..., None, :] / n), dn + pn)
    best = np.argmin(np.where(np.isinf(gpus), np.inf, gpus * 1e7 + nodes), axis=-1)[..., None]
    pick = lambda x: np.take_along_axis(np.broadcast_to(x, gpus.shape), best, -1)[..., 0]   # noqa: E731
    per_unit = np.where(co, held_a, held_d)
    return (pick(per_unit), pick(np.where(co, ga[..., None, :], dg)), pick(np.where(co, nodes, dn)),
            pick(np.where(co, 0.0, pn)))


def by_context(s: Sweep, gpu: str) -> dict[tuple[str, int], np.ndarray]:
    """{(model, concurrency): nodes at each context} on ``gpu``, at the sweep's first rho and P:D
    ratio; NaN where no placement is valid, so a plotted line stops there."""
    at = dict(gpu=gpu, rho=s.axes["rho"][0], pd_ratio=s.axes["pd_ratio"][0])
    out = {}
    for m in s.axes["model"]:
        for c in s.axes["concurrency"]:
            y = s.nodes[s.index(model=m, concurrency=c, **at)]
            out[m, c] = np.where(np.isinf(y), np.nan, y)
    return out

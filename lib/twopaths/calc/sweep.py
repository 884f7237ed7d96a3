"""The node count over a grid of workloads at once (numpy), for plots and sensitivity.

``sweep(models, gpus, a, concurrency=..., context=..., rho=..., pd_ratio=None)`` crosses every axis
given as a list (a single value is an axis of one) under one ``Assumptions`` value and returns a
``Sweep``: ``axes`` (name -> values, in the order of ``AXES``) and arrays of that shape,
``requests_per_unit``, ``d_nodes``, ``p_nodes``, ``nodes`` and ``gpus``, each ``inf`` where no
placement is valid. It chooses what ``calc.fleet.plan`` chooses (the valid placement with the
fewest decode nodes, the smaller unit on a tie), doing the per-placement memory once per model,
GPU and context and the counting over the whole grid; a test keeps the two equal.
``by_context(s, gpu)`` gives the lines a plot of nodes against context draws from it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import check_list
from ..specs import gpu_ids, model_ids
from ..specs.deployment import deployment_models
from ..specs.serving import Assumptions
from .arrays import ints
from .disagg import check_pd_ratio
from .fleet import prefill_unit
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

    @property
    def nodes(self) -> np.ndarray:
        return self.d_nodes + self.p_nodes

    @property
    def gpus(self) -> np.ndarray:
        return self.nodes * self.gpus_per_node

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
    per_unit, d_nodes, p_nodes = (np.full(shape, np.inf) for _ in range(3))
    resident = _ceil(conc[:, None] * rhos[None, :])                       # (concurrency, rho)
    for i, m in enumerate(models):
        options = placements(m, a)
        for j, g in enumerate(gpus):
            for k, t in enumerate(ctx):
                mems = [memory(m, g, p, t, a) for p in options]
                units_p = {c: prefill_unit(m, g, t, a, c) for c in {p.dcp for p in options}}
                # a placement counts only with a prefill unit of its DCP size (fleet._plan)
                held = np.array([p.attention_groups * x.requests if units_p[p.dcp] else 0
                                 for p, x in zip(options, mems)], dtype=float)
                ep = np.array([p.ep for p in options], dtype=float)
                if not (held > 0).any():
                    continue
                unit_eps = np.array([units_p[p.dcp].placement.ep if units_p[p.dcp] else n for p in options])
                with np.errstate(divide="ignore", invalid="ignore"):
                    units = _ceil(resident[..., None] / held)                  # (conc, rho, placement)
                    d = np.where(held > 0, _ceil(units * ep / n), np.inf)[..., None, :]   # (conc, rho, 1, pl)
                    unit_nodes = _ceil(unit_eps / n)                           # each placement's prefill unit
                    p = unit_nodes * _ceil(_ceil(d / pds[:, None]) / unit_nodes)       # (conc, rho, pd, pl)
                    total = np.where(np.isinf(d), np.inf, d + p)
                best = np.argmin(total, axis=-1)[..., None]                    # first minimum: smaller unit
                per_unit[i, j, :, k] = held[best[..., 0]]
                d_nodes[i, j, :, k] = np.take_along_axis(np.broadcast_to(d, total.shape), best, -1)[..., 0]
                p_nodes[i, j, :, k] = np.take_along_axis(p, best, -1)[..., 0]
    axes = dict(zip(AXES, (models, gpus, [int(c) for c in conc], ctx, list(rhos), list(pds))))
    return Sweep(axes, per_unit, d_nodes, p_nodes, n)


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

"""The node count over a grid of configurations at once (numpy), for plots and sensitivity.

``sweep(models, gpus, concurrency=..., context=..., rho=..., pd_ratio=..., ep=None, basis=...,
rounding=..., packing=...)`` crosses every axis given as a list (a single value is an axis of one)
and returns a ``Sweep``: ``axes`` (name -> values, in order model, gpu, ep, concurrency, context,
rho, pd_ratio) and arrays of that shape, ``requests_per_unit``, ``d_nodes``, ``p_nodes``,
``nodes`` and ``gpus``, each ``inf`` where a request does not fit. It does the arithmetic of
``calc.fleet.counts`` once over the whole grid; the per-model parts (EP layout, bytes per request)
are computed once per model, GPU, EP size and context. ``ep=None`` takes, per model and GPU, the EP
size ``calc.fleet.plan`` would (its axis then holds a single placeholder value, 0).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import check_choice, check_int, check_list
from ..specs import BOOK_MODELS, gpu as gpu_spec, gpu_ids
from ..specs.deployment import deployment, deployment_models, hardware
from .arrays import ints
from .disagg import check_pd_ratio
from .ep import ep_row, min_viable_ep
from .fleet import PACKINGS, counts
from .offload import check_rho
from .request import BASES, request_bytes
from .rounding import ROUNDINGS

AXES = ("model", "gpu", "ep", "concurrency", "context", "rho", "pd_ratio")


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
        """The index of one value along each named axis (the others left whole), e.g. ``s.nodes[s.index(model="kimi-k3")]``."""
        out = []
        for name in AXES:
            values = list(self.axes[name])
            out.append(values.index(where[name]) if name in where else slice(None))
        return tuple(out)


def _axis(values) -> list:
    return list(values) if np.ndim(values) else [values]


def _shape(i: int) -> tuple:
    return tuple(-1 if j == i else 1 for j in range(len(AXES)))


def sweep(models, gpus, *, concurrency, context, rho=1.0, pd_ratio=2.5, ep=None, basis: str = "stated",
          rounding: str = "strict", packing: str = "unit", overhead_bytes: float | None = None,
          usable_fraction: float | None = None, kv_dtype=None, state_dtype: str | None = None,
          gpus_per_node: int | None = None) -> Sweep:
    check_choice("basis", basis, BASES)
    check_choice("rounding", rounding, ROUNDINGS)
    check_choice("packing", packing, PACKINGS)
    models = check_list("models", _axis(models), sorted(set(_all_models(basis))))
    gpus = check_list("gpus", _axis(gpus), gpu_ids())
    gpus_per_node = check_int("gpus_per_node", gpus_per_node or hardware().gpus_per_node, minimum=1)
    conc = ints("concurrency", np.asarray(_axis(concurrency)), minimum=1)
    ctx = ints("context", np.asarray(_axis(context)), minimum=1)
    rhos = check_rho(np.asarray(_axis(rho), dtype=float))
    pds = check_pd_ratio(np.asarray(_axis(pd_ratio), dtype=float))
    eps = [0] if ep is None else list(ints("ep", np.asarray(_axis(ep)), minimum=1))
    method = "public" if basis == "public" else "article"
    kw = dict(overhead_bytes=overhead_bytes, usable_fraction=usable_fraction, gpus_per_node=gpus_per_node)

    kv_room = np.empty((len(models), len(gpus), len(eps)))
    ep_used = np.empty_like(kv_room)
    for i, m in enumerate(models):
        for j, g in enumerate(gpus):
            spec = gpu_spec(g)
            for k, e in enumerate(eps):
                if e == 0:
                    e = deployment(m).ep if method == "article" else min_viable_ep(m, spec, method, rounding, **kw)
                row = ep_row(m, spec, e, method, rounding, **kw) if e else None
                kv_room[i, j, k] = row.kv_per_gpu if row else 0.0
                ep_used[i, j, k] = e or 1
    request = np.array([[request_bytes(m, int(t), basis, rounding, kv_dtype=kv_dtype, state_dtype=state_dtype)
                         for t in ctx] for m in models])

    c = counts(kv_room.reshape(kv_room.shape + (1, 1, 1, 1)),
               request.reshape(len(models), 1, 1, 1, len(ctx), 1, 1),
               ep_used.reshape(ep_used.shape + (1, 1, 1, 1)),
               conc.reshape(_shape(3)), rhos.reshape(_shape(5)), pds.reshape(_shape(6)),
               gpus_per_node, rounding, packing)
    shape = (len(models), len(gpus), len(eps), len(conc), len(ctx), len(rhos), len(pds))
    full = lambda a: np.broadcast_to(np.asarray(a, dtype=float), shape)  # noqa: E731
    axes = dict(zip(AXES, (models, gpus, eps, list(conc), list(ctx), list(rhos), list(pds))))
    return Sweep(axes, full(c.requests_per_unit), full(c.d_nodes), full(c.p_nodes), gpus_per_node)


def _all_models(basis: str) -> list[str]:
    return list(BOOK_MODELS) if basis == "public" else deployment_models()

"""The node count over a grid of configurations at once (numpy), for plots and sensitivity.

``sweep(models, gpus, concurrency=..., context=..., rho=..., pd_ratio=..., ep=None, basis=...,
rounding=..., packing=...)`` crosses every axis given as a list (a single value is an axis of one)
and returns a ``Sweep``: ``axes`` (name -> values, in order model, gpu, ep, concurrency, context,
rho, pd_ratio) and arrays of that shape, ``requests_per_unit``, ``d_nodes``, ``p_nodes``,
``nodes`` and ``gpus``, each ``inf`` where a request does not fit. It does the arithmetic of
``calc.fleet.counts`` once over the whole grid; the per-model parts (EP layout, bytes per request)
are computed once per model, GPU, EP size and context. ``ep=None`` takes, per model and GPU, the EP
size ``calc.fleet.plan`` would: the article's, or under the public configs the whole-node size with the
fewest nodes for each configuration (its axis then holds a single placeholder value, 0).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import check_choice, check_int, check_list
from ..specs import BOOK_MODELS, gpu as gpu_spec, gpu_ids
from ..specs.deployment import deployment, deployment_models, hardware
from .arrays import ints
from .disagg import check_pd_ratio
from .ep import ep_row, whole_node_eps
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

    # Candidate EP sizes per (model, gpu, ep): one, or every whole-node size when the public basis
    # chooses the fewest nodes; padded with empty layouts (no KV room: infinite nodes).
    choose = ep is None and method == "public"
    options = {m: whole_node_eps(m, "public", 0, gpus_per_node) if choose else [None] for m in models}
    width = max(len(o) for o in options.values())
    kv_room = np.zeros((len(models), len(gpus), len(eps), width))
    ep_used = np.ones_like(kv_room)
    for i, m in enumerate(models):
        for j, g in enumerate(gpus):
            spec = gpu_spec(g)
            for k, e in enumerate(eps):
                for n, option in enumerate(options[m]):
                    size = option or e or deployment(m).ep
                    row = ep_row(m, spec, size, method, rounding, **kw)
                    kv_room[i, j, k, n] = row.kv_per_gpu if row.feasible else 0.0
                    ep_used[i, j, k, n] = size
    request = np.array([[request_bytes(m, int(t), basis, rounding, kv_dtype=kv_dtype, state_dtype=state_dtype)
                         for t in ctx] for m in models])

    extra = (1, 1, 1, 1)
    c = counts(kv_room.reshape(kv_room.shape[:3] + extra + (width,)),
               request.reshape(len(models), 1, 1, 1, len(ctx), 1, 1, 1),
               ep_used.reshape(ep_used.shape[:3] + extra + (width,)),
               conc.reshape(_shape(3) + (1,)), rhos.reshape(_shape(5) + (1,)), pds.reshape(_shape(6) + (1,)),
               gpus_per_node, rounding, packing)
    nodes = np.broadcast_to(c.nodes, np.broadcast_shapes(*(np.shape(a) for a in (c.nodes, c.requests_per_unit))))
    pick = np.expand_dims(np.argmin(nodes, axis=-1), -1)   # first minimum: the smaller group on a tie
    take = lambda a: np.take_along_axis(np.broadcast_to(np.asarray(a, dtype=float), nodes.shape), pick, -1)[..., 0]  # noqa: E731
    shape = (len(models), len(gpus), len(eps), len(conc), len(ctx), len(rhos), len(pds))
    full = lambda a: np.broadcast_to(np.asarray(a, dtype=float), shape)  # noqa: E731
    axes = dict(zip(AXES, (models, gpus, eps, list(conc), list(ctx), list(rhos), list(pds))))
    return Sweep(axes, full(take(c.requests_per_unit)), full(take(c.d_nodes)), full(take(c.p_nodes)), gpus_per_node)


def _all_models(basis: str) -> list[str]:
    return list(BOOK_MODELS) if basis == "public" else deployment_models()

"""Expert-parallel sizing the article's way (part III, Step 2): experts and weight bytes per GPU,
and the HBM left for KV, per EP size.

Every routed expert weighs the same, namely what is left of the total once attention and embedding
are subtracted, shared among the experts the article divides by (K3: (2.78T - 0.5T - 0.1T) / 898,
V4-Pro: (1.6T - 0.3T) / 256), at one byte a parameter. A GPU holds its ``routed / EP`` experts;
everything else (attention, embedding, shared experts) is a stated per-GPU overhead (5 GB for K3,
3 GB for V4-Pro). KV gets HBM - weights - overhead. With ``rounding="article"`` the intermediate
figures are rounded as the article prints them (the MoE share to 0.1T, an expert to 0.05 GB: 2.45 GB
and 5.1 GB, weights per GPU to 1 GB). The same sizing from the public configs, with whole requests
on every GPU, is ``calc.placement``.

A layout is *feasible* when some HBM is left for KV, and *holds* a request when one GPU has room
for its cache. ``ep_row(model, gpu, ep, rounding, ...)`` sizes one EP size (``EPRow``); ``ep_table``
several; ``min_viable_ep`` the smallest whole-node size that holds a request of ``request_bytes``
(0: any room at all). Redundant experts (EPLB replicas) add slots per MoE layer.

``dispatch_fanout(experts, top_k, per_target)``: the expected share of GPUs (or nodes) holding
``per_target`` experts each that one token's ``top_k`` distinct experts land on; ``fanout(model,
ep)`` gives it for a model's unit of ``ep`` GPUs, over its GPUs and over its nodes (``Fanout``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..errors import check_int, check_real
from ..specs import GPUSpec, gpu as gpu_spec
from ..specs.deployment import deployment, hardware
from .moe import routed_experts, top_k
from .rounding import to_step
from .weights import experts_per_gpu, kv_space_per_gpu

# What the article prints at each step, and so carries on (see the module docstring).
PRINTED_MOE = 0.1e12
PRINTED_EXPERT = 0.05e9
PRINTED_WEIGHTS = 1e9


@dataclass(frozen=True)
class EPRow:
    ep: int
    gpus_per_node: int
    experts_per_gpu: int
    expert_bytes: float          # routed-expert weights on one GPU
    weights_per_gpu: float       # the routed experts on one GPU (the article counts no other weight)
    overhead_bytes: float
    kv_per_gpu: float            # HBM left for KV on one GPU (negative when it does not fit)

    @property
    def nodes(self) -> float:
        return self.ep / self.gpus_per_node

    @property
    def feasible(self) -> bool:
        return self.kv_per_gpu > 0

    def holds(self, request_bytes: float) -> bool:
        """Whether one GPU has room for a request of ``request_bytes`` (attention DP keeps each
        request's cache on one GPU)."""
        return self.feasible and self.kv_per_gpu >= request_bytes


def article_expert_bytes(model: str, rounding: str = "strict") -> float:
    """Bytes of one routed expert by the article's method: (total - excluded) / divisor x bytes/param."""
    d = deployment(model)
    moe = to_step(d.params_total - sum(d.excluded_params.values()), PRINTED_MOE, rounding)
    return to_step(moe / d.experts_in_divisor * d.bytes_per_param, PRINTED_EXPERT, rounding)


def _gpu(gpu) -> GPUSpec:
    return gpu_spec(gpu) if isinstance(gpu, str) else gpu


def ep_row(model: str, gpu, ep: int, rounding: str = "strict", *, overhead_bytes: float | None = None,
           redundant_experts: int | None = None, usable_fraction: float | None = None,
           gpus_per_node: int | None = None) -> EPRow:
    """One EP size for ``model`` on ``gpu`` by the article's method. Defaults: the article's
    overhead, no redundant experts, all of HBM usable."""
    g = _gpu(gpu)
    gpus_per_node = check_int("gpus_per_node", gpus_per_node or hardware().gpus_per_node, minimum=1)
    redundant = check_int("redundant_experts", redundant_experts or 0, minimum=0)
    d = deployment(model)
    overhead = check_real("overhead_bytes", d.overhead_bytes if overhead_bytes is None else overhead_bytes, minimum=0)
    usable = 1.0 if usable_fraction is None else usable_fraction     # kv_space_per_gpu checks it
    per_gpu = experts_per_gpu(d.routed_experts, ep, redundant)
    experts = to_step(per_gpu * article_expert_bytes(model, rounding), PRINTED_WEIGHTS, rounding)
    return EPRow(ep, gpus_per_node, per_gpu, experts, experts, overhead,
                 kv_space_per_gpu(experts, g, usable_fraction=usable, overhead_bytes=overhead))


def whole_node_eps(model: str, method: str = "article", redundant_experts: int = 0,
                   gpus_per_node: int | None = None, maximum: int = 512) -> list[int]:
    """EP sizes of whole nodes that spread the expert slots evenly, up to ``maximum`` GPUs."""
    n = gpus_per_node or hardware().gpus_per_node
    slots = routed_experts(model, method) + check_int("redundant_experts", redundant_experts, minimum=0)
    return [ep for ep in range(n, min(slots, maximum) + 1, n) if slots % ep == 0]


def ep_table(model: str, gpu, eps=None, rounding: str = "strict", **kw) -> list[EPRow]:
    """``ep_row`` for each EP size in ``eps`` (default: whole-node sizes up to 128 GPUs)."""
    eps = eps if eps is not None else whole_node_eps(model, "article", kw.get("redundant_experts") or 0, maximum=128)
    return [ep_row(model, gpu, ep, rounding, **kw) for ep in eps]


def min_viable_ep(model: str, gpu, rounding: str = "strict", *,
                  request_bytes: float = 0.0, **kw) -> int | None:
    """The smallest whole-node EP size whose GPUs hold a request of ``request_bytes`` (0: leave any
    HBM for KV), or None if none up to 512 GPUs does."""
    request_bytes = check_real("request_bytes", request_bytes, minimum=0)
    for ep in whole_node_eps(model, "article", kw.get("redundant_experts") or 0, kw.get("gpus_per_node")):
        if ep_row(model, gpu, ep, rounding, **kw).holds(request_bytes):
            return ep
    return None


def dispatch_fanout(experts: int, top_k: int, per_target: int) -> float:
    """Expected share of targets a token reaches: 1 - C(E - m, k) / C(E, k), experts drawn uniformly."""
    experts = check_int("experts", experts, minimum=1)
    top_k = check_int("top_k", top_k, minimum=1, maximum=experts)
    per_target = check_int("per_target", per_target, minimum=1, maximum=experts)
    return 1 - math.comb(experts - per_target, top_k) / math.comb(experts, top_k)


@dataclass(frozen=True)
class Fanout:
    """Where one token's dispatch lands in a unit of ``ep`` GPUs: the shares of its GPUs and of
    its nodes that hold at least one of the token's ``top_k`` experts (``dispatch_fanout``)."""
    ep: int
    experts: int                 # routed experts per MoE layer
    top_k: int
    experts_per_gpu: int
    gpus: float                  # expected share of the unit's GPUs reached
    nodes: float                 # expected share of the unit's nodes reached


def fanout(model: str, ep: int, method: str = "public", gpus_per_node: int | None = None) -> Fanout:
    """``model``'s dispatch over an EP group of ``ep`` GPUs, ``routed_experts(model, method)``
    experts spread evenly over whole nodes (replicas left out: a token picks distinct experts)."""
    n = check_int("gpus_per_node", gpus_per_node or hardware().gpus_per_node, minimum=1)
    experts = routed_experts(model, method)
    ep = check_int("ep", ep, minimum=1, maximum=experts)
    per_gpu, k = experts // ep, top_k(model)
    return Fanout(ep, experts, k, per_gpu, dispatch_fanout(experts, k, per_gpu),
                  dispatch_fanout(experts, k, min(per_gpu * n, experts)))

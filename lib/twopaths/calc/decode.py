"""Decode step time from the bytes a step reads over HBM bandwidth, and the throughput bound.

One decode step reads, on each GPU, the weights its tokens touch and the cache of every request it
serves. Compute, communication and kernel overheads only add to the time it takes to read them, so

    step   >= (weight bytes read + cache bytes read) / HBM bandwidth
    tokens/s per GPU <= tokens_per_step x batch / step

where ``tokens_per_step`` is 1, or up to 1 + the draft length with multi-token prediction.

- ``step_time(weight_bytes, kv_bytes, bandwidth)``: seconds (numbers or arrays).
- ``single_request_step(model, gpu, basis, context, ...)``: the article's decode latency (part III,
  "50ms TTFT"): one request alone reading all its activated weights and its own cache. It is a time
  per output token, not a time to first token (``calc.prefill`` bounds that).
- ``experts_touched(tokens, top_k, experts)``: the expected share of a layer's experts that
  ``tokens`` tokens routed uniformly at random touch.
- ``throughput_bound(batch, weight_bytes, request_bytes, bandwidth, tokens_per_step)``.
- ``deployment_bound(model, gpu, ep, context, ...)``: the bound for one GPU of an EP group under
  the public config, at ``batch`` requests per GPU or the largest batch whose caches fit.
- ``gpu_step(model, gpu, a, context, mem, batch)`` and ``plan_step(plan, batch=None, bandwidth=None)``:
  the same for one GPU of a unit or of a ``calc.fleet`` plan, under its basis (the article's
  overhead counted as the non-expert weights it stands for), with DCP's merge over NVLink and the
  EP all-to-all over the network (``calc.all_to_all``) added, and under pipeline parallelism the
  weights read once a micro-batch, the caches once (bubble-free: ``DecodeBound.step``); ``fastest_batch`` the most
  requests a GPU decodes at a given speed per request.
- ``batch_grid(most, points)`` and ``plan_steps(plan, batches, bandwidth)``: the step of one GPU of
  a plan at each batch of a grid, NaN past the batch the GPU holds; ``shared_steps(plans,
  bandwidths)`` puts several plans' curves on one x axis (what a figure draws and glues).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from ..errors import ParameterError, check_int, check_real
from ..specs import gpu as gpu_spec, model as model_spec
from ..specs.deployment import workload
from . import all_to_all
from .arrays import ints, reals
from .moe import routed_experts, top_k
from .placement import read_share
from .request import activated_weight_bytes, request_bytes
from .rounding import fit
from .weights import kv_space_per_gpu, weights_per_gpu


def step_time(weight_bytes, kv_bytes, bandwidth):
    """The least time one step takes: the bytes it reads over the bandwidth (bytes/s)."""
    return (reals("weight_bytes", weight_bytes, minimum=0) + reals("kv_bytes", kv_bytes, minimum=0)) \
        / reals("bandwidth", bandwidth, minimum=0, open_min=True)


def single_request_step(model: str, gpu: str = "h200", *, basis: str = "stated", rounding: str = "strict",
                        context: int | None = None, kv_dtype=None, state_dtype: str | None = None,
                        formats: dict | None = None) -> float:
    """One request decoding alone on one GPU: activated weights plus its cache, over HBM bandwidth."""
    context = workload().average_context if context is None else context
    request = request_bytes(model, context, basis, rounding, kv_dtype=kv_dtype, state_dtype=state_dtype)
    return step_time(activated_weight_bytes(model, basis, formats), request, gpu_spec(gpu).hbm_bandwidth)


def experts_touched(tokens, top_k: int, experts: int):
    """Expected share of ``experts`` that ``tokens`` tokens, each routed to ``top_k`` of them uniformly
    at random, touch: 1 - (1 - k/E)^tokens."""
    experts = check_int("experts", experts, minimum=1)
    top_k = check_int("top_k", top_k, minimum=1, maximum=experts)
    return 1 - (1 - top_k / experts) ** ints("tokens", tokens, minimum=0)


def throughput_bound(batch, weight_bytes, request_bytes_, bandwidth, tokens_per_step=1):
    """Tokens/s one GPU can emit at most: tokens_per_step x batch over the step's byte-read time."""
    batch = ints("batch", batch, minimum=1)
    tokens_per_step = reals("tokens_per_step", tokens_per_step, minimum=1)
    return tokens_per_step * batch / step_time(weight_bytes, batch * reals("request_bytes", request_bytes_, minimum=0), bandwidth)


@dataclass(frozen=True)
class DecodeBound:
    batch: int                   # requests per GPU
    weight_bytes: float          # weights read per step on one GPU
    kv_bytes: float              # caches read per step on one GPU
    bandwidth: float
    tokens_per_step: float
    link_bytes: float = 0.0      # bytes a GPU takes in over the node's links per step (DCP's merge)
    link_bandwidth: float = math.inf
    all_to_all: float = 0.0      # seconds of the EP dispatch and combine (calc.all_to_all)
    stages: int = 1              # pipeline stages: micro-batches in flight, weight_bytes read for each

    @property
    def step(self) -> float:
        """The time between a request's tokens. Under pipeline stages a GPU's batch runs as one
        micro-batch a stage (vLLM schedules as many batches as stages), so in that time the GPU
        reads its weights once a micro-batch (``weight_bytes``: what one micro-batch's tokens
        touch) and its share of every request's cache once; bubble-free, every stage busy, and
        the hop between nodes (one hidden vector a request) left out."""
        return ((self.stages * self.weight_bytes + self.kv_bytes) / self.bandwidth
                + self.link_bytes / self.link_bandwidth + self.all_to_all)

    @property
    def per_gpu(self) -> float:
        """Tokens/s per GPU, at most."""
        return self.tokens_per_step * self.batch / self.step


def deployment_bound(model: str, gpu: str, ep: int, context: int, *, batch: int | None = None,
                     kv_dtype=None, state_dtype: str | None = None, redundant_experts: int = 0,
                     tokens_per_step: float = 1.0, usable_fraction: float = 1.0, tp: int = 1,
                     formats: dict | None = None) -> DecodeBound:
    """The bound for one GPU of an EP group of ``ep`` GPUs serving ``batch`` requests of ``context``
    tokens each (default: as many as fit in ``usable_fraction`` of HBM beside the weights). Experts
    are touched as uniform routing of every token of the group would touch them."""
    g = gpu_spec(gpu)
    w = weights_per_gpu(model, ep, tp=tp, redundant_experts=redundant_experts, formats=formats)
    request = request_bytes(model, check_int("context", context, minimum=1), "public",
                            kv_dtype=kv_dtype, state_dtype=state_dtype)
    room = kv_space_per_gpu(w.total, g, usable_fraction=usable_fraction)
    most = fit(room / request) if room > 0 else 0
    if most < 1:
        raise ParameterError("context", context, f"a context whose cache fits beside the {w.total / 1e9:.1f} GB "
                             f"of weights on one {g.name}")
    batch = most if batch is None else check_int("batch", batch, minimum=1, maximum=most)
    experts = w.experts_per_gpu * ep - redundant_experts
    touched = float(experts_touched(batch * ep, top_k(model), experts))
    weights_read = w.other_bytes + w.expert_bytes * touched
    return DecodeBound(batch, weights_read, batch * request, g.hbm_bandwidth,
                       check_real("tokens_per_step", tokens_per_step, minimum=1))


def bandwidth_sweep(bound: DecodeBound, factors) -> np.ndarray:
    """Step times of ``bound``'s step with the bandwidth scaled by each of ``factors``."""
    return step_time(bound.weight_bytes, bound.kv_bytes, bound.bandwidth * reals("factors", factors, minimum=0, open_min=True))


def gpu_step(model: str, gpu: str, a, context: int, mem, batch: int, bandwidth: float | None = None) -> DecodeBound:
    """One decode step on one GPU ``mem`` (a ``calc.placement.GPUMemory``) of a unit decoding
    ``batch`` requests an attention group at ``context`` tokens: its non-expert weights (under the
    article's figures, its per-GPU allowance for attention and embedding), the experts that the
    unit's tokens routed uniformly touch, what this GPU's attention reads of each request's cache
    (``placement.read_share``: V4's sparse attention reads a fraction of what it keeps), DCP's merge
    over NVLink and the EP all-to-all (``calc.all_to_all``)."""
    p = mem.placement
    tokens = -(-batch * p.attention_groups // p.pp)   # requests of one micro-batch (of a step, unstaged)
    method = "public" if a.inputs == "public" else "article"
    touched = (float(experts_touched(tokens, top_k(model), routed_experts(model, method)))
               if p.routed else 0.0)          # a dense model reads its whole TP share every step
    g = gpu_spec(gpu)
    bandwidth = g.hbm_bandwidth if bandwidth is None else bandwidth
    part = mem.layer_share       # a pipeline stage reads, merges and dispatches for its layers only
    read = read_share(model, context, p.attention_tp, a, p.dcp) * part
    return DecodeBound(batch, mem.other_bytes + mem.expert_bytes * touched, batch * read,
                       check_real("bandwidth", bandwidth, minimum=0, open_min=True), 1.0,
                       batch * dcp_merge_bytes(model, p.attention_tp, p.dcp) * part, g.nvlink_bandwidth,
                       all_to_all.step_seconds(model, g, p, batch, a.gpus_per_node) * part, p.pp)


def plan_step(plan, batch: int | None = None, bandwidth: float | None = None) -> DecodeBound:
    """One decode step on one GPU of ``plan`` (a ``calc.fleet.Plan``) with ``batch`` requests
    (default: as many as the GPU holds); ``gpu_step``."""
    mem = plan.decode
    batch = mem.requests if batch is None else check_int("batch", batch, minimum=1, maximum=mem.requests)
    return gpu_step(plan.model, plan.gpu, plan.assumptions, plan.work.context, mem, batch, bandwidth)


def fastest_batch(model: str, gpu: str, a, context: int, mem, speed: float) -> int:
    """The most requests (at most ``mem.requests``) a GPU decodes while each still gets ``speed``
    tokens/s, one token a step; 0 when even one request cannot. A step grows with its batch, so
    the largest batch whose step fits in 1 / speed is found by bisection."""
    speed = check_real("speed", speed, minimum=0, open_min=True)
    ok = lambda b: gpu_step(model, gpu, a, context, mem, b).step <= 1 / speed    # noqa: E731
    lo, hi = 0, mem.requests
    while lo < hi:
        mid = (lo + hi + 1) // 2
        lo, hi = (mid, hi) if ok(mid) else (lo, mid - 1)
    return lo


def dcp_merge_bytes(model: str, attention_tp: int, dcp: int) -> float:
    """Bytes one GPU takes in per decoded request per step to merge decode context parallelism:
    in each MLA layer the ``dcp`` ranks all-gather the queries of their group's heads and
    reduce-scatter their partial outputs with one log-sum-exp each (vLLM's ``ag_rs`` backend), so a
    rank receives ``dcp - 1`` copies of its ``heads / attention_tp`` heads' queries (latent plus
    rope, BF16) and partial outputs (latent, BF16, plus an FP32 LSE). 0 without DCP."""
    if dcp == 1:
        return 0.0
    c = model_spec(model).config
    heads = c["num_attention_heads"] // attention_tp
    layers = sum(g.layers for g in model_spec(model).attention if g.kind == "mla")
    latent, rope = c["kv_lora_rank"], c["qk_rope_head_dim"]
    return float(layers * (dcp - 1) * heads * (2 * (latent + rope) + 2 * latent + 4))


def batch_grid(most: int, points: int = 200) -> np.ndarray:
    """Requests per GPU from 1 to ``most``: every one when there are at most ``points``, else about
    ``points`` spread evenly on a log scale (a figure's x axis; ``chapter.glue_figure`` records
    at most 1,000 points a series)."""
    most = check_int("most", most, minimum=1)
    points = check_int("points", points, minimum=2)
    if most <= points:
        return np.arange(1, most + 1)
    return np.unique(np.geomspace(1, most, points).round().astype(int))


def plan_steps(plan, batches, bandwidth: float | None = None) -> np.ndarray:
    """``plan_step(plan, b, bandwidth).step`` for each ``b`` of ``batches``; NaN where ``b`` exceeds
    the requests one GPU of the plan holds (no such step exists)."""
    batches = ints("batches", batches, minimum=1)
    return np.array([plan_step(plan, int(b), bandwidth).step if b <= plan.decode.requests else np.nan
                     for b in np.atleast_1d(batches)])


def shared_steps(plans: Mapping, bandwidths: Mapping) -> tuple[np.ndarray, dict]:
    """One batch grid for several plans (``{key: plan}``; a value that is no plan, such as the
    reason ``fleet.plan_or_reason`` gives, draws nothing) and each plan's steps on it, at
    ``bandwidths[key]`` (None: the GPU's own): ``(x, {key: steps})``. The grid holds each plan's
    full batch, so every curve ends where its GPU is full."""
    full = [p.decode.requests for p in plans.values() if hasattr(p, "decode")]
    x = np.union1d(batch_grid(max(full, default=1)), full).astype(int)
    return x, {k: plan_steps(p, x, bandwidths[k]) if hasattr(p, "decode") else np.full(len(x), np.nan)
               for k, p in plans.items()}

"""The expert-parallel all-to-all of one decode step: each MoE layer dispatches every token to its
top-k experts' GPUs and combines their outputs back (part III, "Low-Latency Dispatch").

Per MoE layer, one GPU sends and receives, for each of the ``tokens`` it dispatches,

    dispatch: top_k x (width + 4 x width / 128 + 16) bytes   FP8, one FP32 scale per 128 channels,
                                                               a 16-byte header (``fp8_dispatch``;
                                                               else BF16, 2 x width + 16)
    combine:  top_k x 2 x width bytes                        BF16

where ``width`` is what the experts take: the hidden size, or K3's LatentMoE latent (3,584, half of
7,168: "halving routing communication volume", the article's part III), padded to a width DeepEP's
kernels take, as vLLM pads it (4,096 for K3: the halving is 4,096 of 7,168). The time is those bytes
over the bandwidth DeepEP's low-latency kernels reach at the unit's EP size (``specs/kernels.yaml``:
measured at 128 tokens a GPU, where the bytes over that bandwidth give the latency the table
prints), scaled by the GPU's NIC against the H800's 400 Gb/s one. An EP size between two measured
rows takes the larger row's (slower) bandwidth, one past 256 the 256 row's. A unit within one node
moves its tokens over NVLink at the EP8 row's bandwidth, at most the GPU's own link between the
GPUs of a node (``nvlink_bandwidth``: an L40S node has PCIe alone, 32 GB/s a direction).

This is a bandwidth bound, like the rest of ``calc.decode``: at a few tokens a GPU the kernels'
fixed latency (tens of microseconds) dominates and is not in it, and an engine that overlaps the
all-to-all with compute (SGLang's two-batch overlap, vLLM's ``--enable-dbo``) hides part of it.
Neither overlap applies to the headline plans: SGLang's has no K3 or V4 decode path, vLLM's
refuses DCP and hybrid models (research notes, ``docs/engines``). Tokens a GPU dispatches: its
attention group's requests over the group's ranks, rounded up (each rank dispatches its slice of
the group's tokens, padded to a multiple of TP, as vLLM's sequence-parallel MoE does under TP with
DP and EP: models/kimi_k3/nvidia/model.py, sequence_parallel.py). K3 routes a token to 16 experts,
more than DeepEP's legacy low-latency kernels take (11), so it decodes on DeepEP V2
(``views.launch.backend``), for which no latency table is published: the legacy kernels'
bandwidth at the same EP size stands in.

A unit of one attention group (EP = attention TP, pipeline stages included) dispatches nothing:
its tokens are on every rank already, each rank runs its experts on them and the outputs are summed
over NVLink as a tensor-parallel layer's are (vLLM 0.33.0 takes all-to-all kernels only with
several DP ranks or sequence parallelism, ``fused_moe/config.py``, ``use_all2all_kernels``; the book
launches such a unit without an all-to-all backend on SGLang too, ``views.launch``). Like every
tensor-parallel reduction, that sum is left out of the bound (``dispatches``).

``layer_bytes(model)`` gives (dispatch, combine) bytes a token; ``step_seconds(model, gpu,
placement, requests, gpus_per_node)`` one GPU's all-to-all time over all MoE layers of a step.
"""

from __future__ import annotations

import bisect

from ..errors import check_int
from ..specs import GPUSpec, gpu as gpu_spec, model as model_spec
from ..specs.kernels import deepep_low_latency
from ..specs.params import param_counts
from .moe import top_k


def width(model: str) -> int:
    """The channels a token carries to its experts: LatentMoE's latent, else the hidden size, padded
    to the next width DeepEP's low-latency kernels take (K3: 3,584 to 4,096)."""
    c = model_spec(model).config
    w = int(c.get("routed_expert_hidden_size") or c["hidden_size"])
    return next((h for h in deepep_low_latency()["hidden_sizes"] if h >= w), w)


def fp8_dispatch(model: str) -> bool:
    """Whether an engine dispatches the model's tokens in FP8: only for a checkpoint quantised to
    FP8 in 128-wide blocks, whose experts take FP8 activations (vLLM 0.33.0, fused_moe
    all2all_utils.py); otherwise, K3's MXFP4 experts included, tokens travel in BF16."""
    c = model_spec(model).config
    return c.get("quantization_config.quant_method") == "fp8" and \
        list(c.get("quantization_config.weight_block_size") or []) == [128, 128]


def layer_bytes(model: str) -> tuple[float, float]:
    """(dispatch, combine) bytes one token moves in one MoE layer."""
    w, k = width(model), top_k(model)
    token = w + 4 * w // 128 if fp8_dispatch(model) else 2 * w
    return float(k * (token + 16)), float(k * 2 * w)


def bandwidths(ep: int, gpus_per_node: int, gpu: GPUSpec) -> tuple[float, float]:
    """(dispatch, combine) bytes/s of DeepEP's low-latency kernels at EP size ``ep``."""
    d = deepep_low_latency()
    sizes = sorted(d["rows"])
    if ep <= gpus_per_node:
        row = d["rows"][sizes[0]]
    else:
        row = d["rows"][sizes[min(bisect.bisect_left(sizes, ep), len(sizes) - 1)]]
    scale = gpu.scale_out_bandwidth / d["nic_bandwidth"]
    dispatch, combine = row[1] * 1e9 * scale, row[3] * 1e9 * scale
    if ep <= gpus_per_node:      # within a node no more than the link between its GPUs carries
        # (a PCIe-only node's 32 GB/s, specs.GPUSpec.scale_up; an NVLink or Infinity Fabric
        # node's link is faster than any row, so the cap leaves it as measured)
        dispatch, combine = min(dispatch, gpu.nvlink_bandwidth), min(combine, gpu.nvlink_bandwidth)
    return dispatch, combine


def moe_layers(model: str) -> int:
    return param_counts(model).component("routed experts").layers


def dispatches(placement) -> bool:
    """Whether ``placement``'s MoE layers move tokens between GPUs through all-to-all kernels: a
    routed unit of several GPUs and several attention groups."""
    return placement.routed and placement.ep > 1 and placement.attention_groups > 1


def step_seconds(model: str, gpu: GPUSpec | str, placement, requests: int, gpus_per_node: int) -> float:
    """One GPU's all-to-all time in one decode step of ``requests`` requests an attention group
    (one token each); 0 where it dispatches nothing (``dispatches``)."""
    requests = check_int("requests", requests, minimum=0)
    if not dispatches(placement):
        return 0.0
    g = gpu_spec(gpu) if isinstance(gpu, str) else gpu
    tokens = -(-requests // placement.attention_tp)     # vLLM pads a group's rows to a multiple of TP
    dispatch, combine = layer_bytes(model)
    bw_d, bw_c = bandwidths(placement.ep, gpus_per_node, g)
    return moe_layers(model) * tokens * (dispatch / bw_d + combine / bw_c)

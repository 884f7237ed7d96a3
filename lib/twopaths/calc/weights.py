"""Weight bytes by storage format, and weights per GPU for a parallel layout.

Formats (bits per weight plus the block scales that come with them):
- ``bf16``: 2 bytes, no scale.
- ``fp8``: e4m3 with one fp32 scale per 128x128 block, as DeepSeek's FP8 checkpoints ship
  (``weight_block_size: [128, 128]``; the V3 checkpoint stores ``weight_scale_inv`` in fp32).
- ``mxfp4``: e2m1 with one e8m0 (1-byte) scale per 32 weights (OCP MX), as K3's routed experts
  ship (``mxfp4-pack-quantized``, ``group_size: 32``, ``scale_dtype: uint8``).
- ``fp4``: NVFP4, e2m1 with one e4m3 scale per 16 weights, as ModelOpt's NVFP4 checkpoints ship
  (``group_size: 16``). Each tensor's fp32 ``weight_scale_2`` and ``input_scale`` (8 bytes a Linear,
  0.5 MB over K2.6's 61 layers of 384 experts) are not counted: the counts are per group, not per tensor.
- ``fp8-tensor``: e4m3 with one fp32 scale per tensor (ModelOpt's ``quant_algo: FP8``), not counted
  for the same reason.
- ``int4-g32``, ``int4-g128``: compressed-tensors ``pack-quantized`` symmetric INT4 (Kimi K2.5's
  experts) with one 16-bit scale per 32 or 128 weights, the checkpoint's dtype where the config gives
  no ``scale_dtype``; the per-tensor ``weight_shape`` (two int32) is not counted.

A checkpoint whose storage the book cannot price (``specs.from_config``: a quantisation it does not
read, or one group's modules in different formats) marks those groups ``unknown``: the cache is still
priced, but a weight number for them raises a ParameterError naming ``quantization_config``, unless
``formats`` gives those groups a format.

Layouts: attention ``tp=1`` is attention data-parallel (every non-expert weight on every GPU);
``tp>1`` splits the non-expert weights over ``tp`` GPUs (heads must divide), except those that belong
to no head, which every rank holds whole (``specs.params.tp_replicated``). Routed experts are
spread over ``ep`` GPUs, ``redundant_experts`` extra replicas per MoE layer included. The MTP
layers are not counted (they add at most 1.7% to V4-Pro's parameters, mostly experts).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import ParameterError, check_choice, check_int, check_real
from ..specs import GPUSpec, ModelSpec, gpu as gpu_spec, model
from ..specs.params import GROUPS, TP_REPLICATED_GROUPS, ParamCounts, param_counts, tp_replicated


@dataclass(frozen=True)
class WeightFormat:
    name: str
    bits: int           # per weight
    group: int          # weights per scale (0: no scale)
    scale_bytes: int

    def bytes(self, params: float) -> float:
        scales = -(-params // self.group) if self.group else 0
        return params * self.bits / 8 + scales * self.scale_bytes


WEIGHT_FORMATS = {
    "bf16": WeightFormat("bf16", 16, 0, 0),
    "fp8": WeightFormat("fp8", 8, 128 * 128, 4),
    "mxfp4": WeightFormat("mxfp4", 4, 32, 1),
    "fp4": WeightFormat("fp4", 4, 16, 1),
    "fp8-tensor": WeightFormat("fp8-tensor", 8, 0, 0),
    "int4-g32": WeightFormat("int4-g32", 4, 32, 2),
    "int4-g128": WeightFormat("int4-g128", 4, 128, 2),
}


def shipped_formats(spec: ModelSpec | str) -> dict[str, str]:
    """Each group's format as the checkpoint ships it (``specs.from_config`` reads the config's
    quantisation keys); groups it does not name are BF16."""
    spec = model(spec) if isinstance(spec, str) else spec
    return {**dict.fromkeys(GROUPS, "bf16"), **spec.raw.get("weight_formats", {})}


def _formats(spec: ModelSpec, formats: dict | None) -> dict[str, WeightFormat]:
    chosen = shipped_formats(spec)
    for group, fmt in (formats or {}).items():
        check_choice("format group", group, GROUPS)
        chosen[group] = check_choice(f"format of {group}", fmt, WEIGHT_FORMATS)
    unknown = sorted(g for g, f in chosen.items() if f not in WEIGHT_FORMATS)
    if unknown:
        raise ParameterError("quantization_config", spec.raw.get("weights_unknown"),
                             f"a storage the book prices (weights: unknown for {', '.join(unknown)} of {spec.id}; "
                             "formats= names theirs, as the plan's --formats fp8 does for the linear layers)")
    return {g: WEIGHT_FORMATS[f] for g, f in chosen.items()}


def weights_unknown(spec: ModelSpec | str) -> str | None:
    """Why the shipped weights cannot be priced (the groups ``specs.from_config`` marks unknown), or
    None where every group is priced."""
    spec = model(spec) if isinstance(spec, str) else spec
    return spec.raw.get("weights_unknown")


def weight_bytes(spec: ModelSpec | str, formats: dict | None = None, *, include_mtp: bool = False) -> dict[str, float]:
    """Bytes per group over the whole model (scales included); ``formats`` overrides groups."""
    spec = model(spec) if isinstance(spec, str) else spec
    fmts = _formats(spec, formats)
    return {g: fmts[g].bytes(n) for g, n in param_counts(spec).by_group(include_mtp=include_mtp).items()}


def moe_shape(counts: ParamCounts, spec: ModelSpec) -> tuple[int, int]:
    """(routed experts per MoE layer, MoE layers)."""
    c = spec.raw["config"]
    experts = c.get("n_routed_experts") or c.get("num_experts") or c.get("num_local_experts")
    return experts, counts.component("routed experts").layers


def _check_tp(spec: ModelSpec, tp: int) -> int:
    tp = check_int("tp", tp, minimum=1)
    c = spec.raw["config"]
    heads = [c["num_attention_heads"]] + ([c["linear_attn_config.num_heads"]] if "linear_attn_config.num_heads" in c else [])
    for h in heads:
        if h % tp:
            raise ParameterError("tp", tp, f"a divisor of the attention heads ({h}) of {spec.id}")
    return tp


def experts_per_gpu(experts: int, ep: int, redundant_experts: int = 0, *, uneven: bool = False) -> int:
    """Expert slots per GPU in each MoE layer; the slots must spread evenly, or, ``uneven``, the
    most one GPU holds when they do not (vLLM's expert map gives the first ``slots % ep`` ranks
    one more, ``fused_moe/expert_map_manager.py``)."""
    redundant_experts = check_int("redundant_experts", redundant_experts, minimum=0)
    slots = experts + redundant_experts
    ep = check_int("ep", ep, minimum=1, maximum=slots)
    if uneven:
        return -(-slots // ep)
    if slots % ep:
        raise ParameterError("ep", ep, f"a divisor of the {slots} expert slots per layer "
                             f"({experts} experts + {redundant_experts} redundant)")
    return slots // ep


@dataclass(frozen=True)
class GPUWeights:
    experts_per_gpu: int
    expert_bytes: float          # on one GPU
    other_bytes: float           # non-expert weights on one GPU
    by_group: dict               # bytes per group on one GPU

    @property
    def total(self) -> float:
        return self.expert_bytes + self.other_bytes


def weights_per_gpu(spec: ModelSpec | str, ep: int, *, tp: int = 1, redundant_experts: int = 0,
                    formats: dict | None = None, uneven: bool = False,
                    whole: tuple[str, ...] = TP_REPLICATED_GROUPS) -> GPUWeights:
    """Weight bytes on one GPU of an EP group of ``ep`` GPUs (attention DP when ``tp`` is 1), the
    one holding most experts where they do not spread evenly (``uneven``). A dense model has no
    experts to spread: each GPU holds its ``tp`` share of every weight. ``whole``: the groups a TP
    rank holds whole (``specs.params.tp_replicated``)."""
    spec = model(spec) if isinstance(spec, str) else spec
    tp = _check_tp(spec, tp)
    ep = check_int("ep", ep, minimum=1)
    total = weight_bytes(spec, formats)
    experts = per_gpu = 0
    if "routed_experts" in total:
        experts = moe_shape(param_counts(spec), spec)[0]
        per_gpu = experts_per_gpu(experts, ep, redundant_experts, uneven=uneven)
    fmts = _formats(spec, formats)
    kept = {g: fmts[g].bytes(n) for g, n in tp_replicated(spec, whole).items()} if tp > 1 else {}
    by_group = {g: (b * per_gpu / experts if g == "routed_experts" else kept.get(g, 0) + (b - kept.get(g, 0)) / tp)
                for g, b in total.items()}
    expert = by_group.get("routed_experts", 0.0)
    return GPUWeights(per_gpu, expert, sum(by_group.values()) - expert, by_group)


def kv_space_per_gpu(weights: float, gpu: GPUSpec | str, *, usable_fraction: float = 0.9,
                     overhead_bytes: float = 0.0) -> float:
    """HBM left for KV on one GPU: usable_fraction x HBM - weights - runtime overhead (may be < 0)."""
    gpu = gpu_spec(gpu) if isinstance(gpu, str) else gpu
    usable_fraction = check_real("usable_fraction", usable_fraction, minimum=0, maximum=1, open_min=True)
    overhead_bytes = check_real("overhead_bytes", overhead_bytes, minimum=0)
    return usable_fraction * gpu.hbm_bytes - weights - overhead_bytes


def ep_sizes(spec: ModelSpec | str, redundant_experts: int = 0, *, maximum: int | None = None) -> list[int]:
    """Every EP size that spreads the expert slots evenly, up to ``maximum`` GPUs."""
    spec = model(spec) if isinstance(spec, str) else spec
    experts, _ = moe_shape(param_counts(spec), spec)
    slots = experts + redundant_experts
    return [n for n in range(1, min(slots, maximum or slots) + 1) if slots % n == 0]

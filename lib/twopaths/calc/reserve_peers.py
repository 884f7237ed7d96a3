"""The runtime reserve as others size it, beside the book's (``calc.reserve``): SGLang's default rule
read literally, vLLM's default utilisation and AIConfigurator's memory estimate.

- **SGLang 0.5.23, literally** (``memory_hook.py``): the book's terms, but the parallel slack counts
  ``--tp-size`` (a DeepEP unit's every GPU), the DP-attention padding adds max_bs x DP size x 3 MiB
  (and half as much again above a max_bs of 300), and DeepEP gets a flat 2 GiB.
- **vLLM 0.33.0** (``--gpu-memory-utilization``, default 0.92): 8% of the device stays outside the
  engine (NCCL and DeepEP buffers come out of it); activations and CUDA graphs are profiled at start
  and taken from the other 92%, so only the 8% is known before a run.
- **AIConfigurator** (ai-dynamo/aiconfigurator 095f58a, ``sdk/backends/base_backend.py``
  ``_get_memory_usage``, ``vllm_backend.py``, ``systems/h200_sxm.yaml``): a fixed 3.5 GiB of "others",
  NCCL memory by TP size, and activations of 2 x tokens x hidden x a coefficient by model family and
  TP (DeepSeek families 22/13/10/10 at TP 1/2/4/8, others 5 at TP8; Kimi K3 is not in its table),
  plus an MoE workspace for the DeepSeek families, at least 70 MiB. It has no CUDA-graph or DeepEP
  term.

``peers(model, gpu, placement, role, tokens, a)`` gives ``{name: bytes}``.
"""

from __future__ import annotations

from ..errors import check_choice, check_int
from ..specs import GPUSpec, gpu as gpu_spec, model as model_spec
from ..specs.serving import Assumptions, reserve_models
from .moe import routed_experts, top_k
from .reserve import MIB, ROLES, defaults

VLLM_UTILIZATION = 0.92                  # vllm/config/cache.py default, 0.33.0
AIC_OTHERS = 3_758_096_384               # systems/*.yaml other_mem, 3.5 GiB
AIC_NCCL = {1: 0, 2: 358_612_992, 4: 411_041_792, 8: 411_041_792}
AIC_COEF_DEEPSEEK = {1: 22, 2: 13, 4: 10, 8: 10}     # trtllm_backend.py, reused by vLLM's
AIC_COEF_DEFAULT = {1: 10, 2: 6, 4: 5, 8: 5}
AIC_MIN_ACTIVATIONS = 70 * MIB
AIC_DEEPSEEK_FAMILIES = ("deepseek_v3", "deepseek_v32", "deepseek_v4", "mla", "mla+dsa")


def sglang_literal(model: str, gpu: GPUSpec | str, placement, role: str, a: Assumptions) -> float:
    """SGLang 0.5.23's own default reserve for this unit, every term as its code writes it."""
    r = reserve_models()["sglang-0.5.23"]
    g = gpu_spec(gpu) if isinstance(gpu, str) else gpu
    tp_size = placement.ep if placement.routed else placement.attention_tp
    chunk, max_bs = defaults(g, tp_size, a)
    dp = placement.attention_groups if placement.routed else 1
    tokens = max(chunk // dp, 1) if role == "prefill" else max_bs
    mib = r["base_mib"] + r["mib_per_activation_token"] * max(tokens, r["min_activation_tokens"])
    mib += r["mib_per_8_tp"] * tp_size / 8
    if role == "decode":
        mib += r["decode_graph_mib_per_bs"] * max_bs
        if dp > 1:
            mib += max_bs * dp * 3 + (max_bs * dp * 1.5 if max_bs > 300 else 0)
    else:
        mla = any(k.kind in ("mla", "dsa") for k in model_spec(model).attention)
        mib += r["mla_prefill_graph_mib"] if mla else 0
    if a.capacity_bytes(g) / MIB > r["floor_above_mib"]:
        mib = max(mib, r["floor_mib"])
    deepep = 2048 if role == "decode" and placement.routed and placement.ep > 1 else 0
    return (mib + deepep) * MIB


def vllm_outside(gpu: GPUSpec | str, a: Assumptions) -> float:
    """What vLLM's default utilisation leaves outside the engine: 8% of the device."""
    g = gpu_spec(gpu) if isinstance(gpu, str) else gpu
    return (1 - VLLM_UTILIZATION) * a.capacity_bytes(g)


def aiconfigurator(model: str, placement, tokens: int) -> float:
    """AIConfigurator's memory beside weights and cache for one GPU running ``tokens`` tokens a
    forward under vLLM: others, NCCL and activations."""
    tokens = check_int("tokens", tokens, minimum=1)
    spec = model_spec(model)
    c, family = spec.config, spec.raw.get("family")
    tp = min(placement.attention_tp, 8)
    coef = (AIC_COEF_DEEPSEEK if family in AIC_DEEPSEEK_FAMILIES else AIC_COEF_DEFAULT)[tp]
    h = c["hidden_size"]
    activations = 2 * tokens * h * coef
    if family in AIC_DEEPSEEK_FAMILIES and placement.routed:
        dp = placement.attention_groups
        activations += tokens * h * dp * routed_experts(model, "public") * top_k(model) / placement.ep / 128 * 4
    return AIC_OTHERS + AIC_NCCL[tp] + max(activations, AIC_MIN_ACTIVATIONS)


def peers(model: str, gpu: GPUSpec | str, placement, role: str, tokens: int, a: Assumptions) -> dict[str, float]:
    """The reserve of one GPU of ``placement`` (``role``, ``tokens`` a forward) by each peer."""
    check_choice("role", role, ROLES)
    return {"SGLang 0.5.23's default, literally": sglang_literal(model, gpu, placement, role, a),
            "vLLM 0.33.0's default, outside the engine": vllm_outside(gpu, a),
            "AIConfigurator (vLLM backend)": aiconfigurator(model, placement, tokens)}

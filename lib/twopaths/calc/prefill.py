"""Prefill: a lower bound on the time to first token, and what a prompt token costs.

Every prompt token passes through every activated weight once: ``2 x activated params`` FLOP a
token in matrix multiplies, before any attention. At the GPUs' peak dense rate that bounds
prefill from below; attention over a long context only adds.

- ``matmul_flops(activated_params, tokens)``: FLOP.
- ``time_bound(flops, gpus, flops_per_gpu, efficiency=1)``: seconds, at ``efficiency`` x peak.
- ``ttft_bound(model, gpu, tokens, gpus, basis, dtype)``: the time to first token of one prompt of
  ``tokens`` new tokens spread over ``gpus`` GPUs, at peak.
- ``plan_ttft(plan, tokens)``: the same on a ``calc.fleet`` plan's own prefill unit (its smallest
  valid placement, ``plan.prefill.unit.gpus`` GPUs, which differs between models and GPUs).
- ``cached_turn_ttft(plan, tokens)``: the first token of a turn of ``tokens`` new tokens after the
  plan's cached context, its attention included: the weights over the prefill unit's GPUs, the
  attention over the GPUs of one attention group (a request's attention runs there), at BF16 peak.
- ``prompt_flops_per_token(model, context, new_tokens=)`` and
  ``tokens_per_s_per_gpu(model, gpu, context, mfu=, new_tokens=)``: what one prompt token costs,
  weights and attention in prefill form, and the prompt tokens a second one GPU sustains
  (``calc.fleet`` sizes prefill by work with them, ``new_tokens`` being the assumptions'
  ``prompt_tokens_per_turn``).

A turn's ``new_tokens`` join a session at the end of a context of ``context`` tokens, in one prefill
pass past the cached prefix: what the pass spends once on the prefix (an MLA layer up-projecting its
cached latents, ``calc.attention_flops``) is shared by those tokens, so a token's cost depends on how
many a turn brings. A turn of more tokens than the context is the whole context, nothing cached.
"""

from __future__ import annotations

from ..errors import check_choice, check_int, check_real
from ..specs import gpu as gpu_spec, model as model_spec
from ..specs.deployment import deployment
from .attention_flops import attention_flops

DTYPES = ("fp8", "bf16")


def matmul_flops(activated_params: float, tokens: int) -> float:
    return 2.0 * check_real("activated_params", activated_params, minimum=0, open_min=True) \
        * check_int("tokens", tokens, minimum=0)


def time_bound(flops: float, gpus: int, flops_per_gpu: float, efficiency: float = 1.0) -> float:
    gpus = check_int("gpus", gpus, minimum=1)
    rate = check_real("flops_per_gpu", flops_per_gpu, minimum=0, open_min=True)
    efficiency = check_real("efficiency", efficiency, minimum=0, maximum=1, open_min=True)
    return check_real("flops", flops, minimum=0) / (gpus * rate * efficiency)


def _activated(model: str, basis: str) -> float:
    return deployment(model).activated_params if basis == "stated" else model_spec(model).params_active


def _rate(gpu: str, dtype: str) -> float:
    check_choice("dtype", dtype, DTYPES)
    return gpu_spec(gpu).flops(dtype)     # a format the GPU lacks (an A100's FP8) is refused by name


def ttft_bound(model: str, gpu: str, tokens: int, gpus: int, *, basis: str = "stated",
               dtype: str = "fp8", efficiency: float = 1.0) -> float:
    """Seconds before the first token of a prompt of ``tokens`` new tokens can exist, at best."""
    return time_bound(matmul_flops(_activated(model, basis), tokens), gpus, _rate(gpu, dtype), efficiency)


def plan_ttft(plan, tokens: int, *, dtype: str = "fp8", efficiency: float = 1.0) -> float:
    """``ttft_bound`` on the prefill unit of ``plan`` (a ``calc.fleet.Plan``), with the activated
    parameters of the plan's inputs (the public config's, or the article's stated figure), as
    ``calc.fleet`` sizes prefill."""
    basis = "public" if plan.assumptions.inputs == "public" else "stated"
    return ttft_bound(plan.model, plan.gpu, tokens, plan.prefill.unit.gpus, basis=basis, dtype=dtype,
                      efficiency=efficiency)


def prompt_flops_per_token(model: str, context: int, activated_params: float | None = None, *,
                           new_tokens: int) -> float:
    """FLOP one prompt token costs when a pass of ``new_tokens`` brings a session to ``context``
    tokens: 2 per activated parameter, plus attention over the context in prefill form
    (``calc.attention_flops``), with its share of what the pass spends on the cached prefix."""
    active = model_spec(model).params_active if activated_params is None else activated_params
    context = check_int("context", context, minimum=1)
    new = min(check_int("new_tokens", new_tokens, minimum=1), context)
    return matmul_flops(active, 1) + attention_flops(model, context, prefill=True, new_tokens=new)


def cached_turn_ttft(plan, tokens: int) -> float:
    """Seconds before the first token of a turn of ``tokens`` new tokens joining a cached context of
    the plan's length, at best: ``2 x activated params`` a token over the prefill unit's GPUs, its
    attention over the cached prefix (``calc.attention_flops``, prefill form) over the GPUs of the
    one attention group a request's attention runs on, both at BF16 peak."""
    tokens = check_int("tokens", tokens, minimum=1)
    unit, context = plan.prefill.unit, plan.work.context
    rate = gpu_spec(plan.gpu).bf16_flops
    new = min(tokens, context)
    weights = matmul_flops(model_spec(plan.model).params_active, new)
    attention = new * attention_flops(plan.model, context, prefill=True, new_tokens=new)
    return weights / (unit.gpus * rate) + attention / (unit.attention_tp * rate)


def tokens_per_s_per_gpu(model: str, gpu: str, context: int, *, mfu: float, new_tokens: int,
                         activated_params: float | None = None) -> float:
    """Prompt tokens a second one GPU sustains at ``mfu`` x its BF16 peak (attention math runs in
    BF16 whatever the weights), for passes of ``new_tokens`` (``prompt_flops_per_token``)."""
    mfu = check_real("mfu", mfu, minimum=0, maximum=1, open_min=True)
    flops = prompt_flops_per_token(model, context, activated_params, new_tokens=new_tokens)
    return mfu * gpu_spec(gpu).bf16_flops / flops

"""Unit cost: what one model costs per token relative to another, three ways.

- ``bandwidth_ratio(model_a, model_b, ...)``: the article's ratio (part III, "Unit Inference Cost"):
  bytes one request alone reads per decode step, activated weights plus its cache,
  (49 + 6.1) / (104 + 30.7) for V4-Pro over K3. It ignores batching, which shares the weights.
- ``batched_ratio(model_a, model_b, batch, ...)``: the same per token at ``batch`` requests
  reading the weights once per step.
- ``node_ratio(plan_a, plan_b)``: nodes per session served, from two ``calc.fleet`` plans: what a
  memory-bound fleet actually pays.
- ``usd_per_million_tokens(gpus, usd_per_gpu_hour, tokens_per_s)``.
"""

from __future__ import annotations

from ..errors import check_int, check_real
from ..specs.deployment import workload
from .request import activated_weight_bytes, request_bytes


def _step_bytes(model: str, batch: int, basis: str, rounding: str, context: int | None, **kw) -> float:
    context = workload().average_context if context is None else context
    return (activated_weight_bytes(model, basis, kw.pop("formats", None)) / batch
            + request_bytes(model, context, basis, rounding, **kw))


def batched_ratio(model_a: str, model_b: str, batch: int, *, basis: str = "stated", rounding: str = "strict",
                  context: int | None = None, **kw) -> float:
    """Decode bytes per token of ``model_a`` over ``model_b`` when ``batch`` requests share each
    step's weight reads (weights touched as if every activated weight were read once per step)."""
    batch = check_int("batch", batch, minimum=1)
    return _step_bytes(model_a, batch, basis, rounding, context, **kw) / _step_bytes(model_b, batch, basis, rounding, context, **kw)


def bandwidth_ratio(model_a: str, model_b: str, **kw) -> float:
    """The article's unit-cost ratio: one request alone, activated weights plus its cache."""
    return batched_ratio(model_a, model_b, 1, **kw)


def node_ratio(plan_a, plan_b) -> float:
    """Nodes per session of plan ``a`` over plan ``b``."""
    return (plan_a.nodes / plan_a.concurrency) / (plan_b.nodes / plan_b.concurrency)


def usd_per_million_tokens(gpus: int, usd_per_gpu_hour: float, tokens_per_s: float) -> float:
    gpus = check_int("gpus", gpus, minimum=1)
    price = check_real("usd_per_gpu_hour", usd_per_gpu_hour, minimum=0)
    rate = check_real("tokens_per_s", tokens_per_s, minimum=0, open_min=True)
    return gpus * price / 3600 / rate * 1e6

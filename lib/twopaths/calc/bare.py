"""The bare-memory GPU count: weights plus every session's cache over one GPU's HBM (part III,
"GPU requirements"), as if memory could be shared perfectly among GPUs.

``bare_gpus(weight_bytes, kv_bytes, hbm_bytes)`` covers the sum; its split says how many of those
GPUs the weights alone fill (covered) and leaves the rest to KV, which is how the article's
20 + 4,369 and 12 + 865 add up. ``bare(model, gpu, basis, rounding, concurrency, context, ...)``
takes the weights and per-request cache from ``calc.request``.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import check_int, check_real
from ..specs import gpu as gpu_spec
from ..specs.deployment import workload
from .request import model_weight_bytes, request_bytes
from .rounding import cover


@dataclass(frozen=True)
class BareCount:
    weight_bytes: float
    kv_bytes: float
    total: int
    weights_gpus: int

    @property
    def kv_gpus(self) -> int:
        return self.total - self.weights_gpus

    @property
    def weights_share(self) -> float:
        """The weights' share of all the bytes."""
        return self.weight_bytes / (self.weight_bytes + self.kv_bytes)


def bare_gpus(weight_bytes: float, kv_bytes: float, hbm_bytes: float) -> BareCount:
    weight_bytes = check_real("weight_bytes", weight_bytes, minimum=0)
    kv_bytes = check_real("kv_bytes", kv_bytes, minimum=0)
    hbm_bytes = check_real("hbm_bytes", hbm_bytes, minimum=0, open_min=True)
    return BareCount(weight_bytes, kv_bytes, cover((weight_bytes + kv_bytes) / hbm_bytes),
                     cover(weight_bytes / hbm_bytes))


def bare(model: str, gpu: str = "h200", *, basis: str = "stated", rounding: str = "strict",
         concurrency: int | None = None, context: int | None = None, kv_dtype=None,
         state_dtype: str | None = None, formats: dict | None = None,
         capacity_bytes: float | None = None) -> BareCount:
    """The bare count for ``concurrency`` requests of ``context`` tokens (default: the article's
    10,000 requests of 1M tokens), each GPU offering ``capacity_bytes`` (default: its nominal HBM;
    the serving chapters pass ``Assumptions.usable_bytes(gpu)``)."""
    w = workload()
    concurrency = check_int("concurrency", w.concurrency if concurrency is None else concurrency, minimum=1)
    context = check_int("context", w.bare_context if context is None else context, minimum=1)
    request = request_bytes(model, context, basis, rounding, kv_dtype=kv_dtype, state_dtype=state_dtype)
    capacity = gpu_spec(gpu).hbm_bytes if capacity_bytes is None else capacity_bytes
    return bare_gpus(model_weight_bytes(model, basis, formats), concurrency * request, capacity)

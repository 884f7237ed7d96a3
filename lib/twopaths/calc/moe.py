"""What a mixture of experts is made of, as the sizing modules (``ep``, ``decode``, ``placement``)
all read it: routed experts per MoE layer (the article's count or the public config's), the
experts each token picks, and whether a model has routed experts at all."""

from __future__ import annotations

from ..errors import check_choice
from ..specs import model as model_spec
from ..specs.deployment import deployment
from ..specs.params import param_counts
from .weights import moe_shape

METHODS = ("article", "public")


def routed_experts(model: str, method: str = "article") -> int:
    """Routed experts per MoE layer: the article's count, or the public config's."""
    check_choice("method", method, METHODS)
    if method == "article":
        return deployment(model).routed_experts
    return moe_shape(param_counts(model), model_spec(model))[0]


def top_k(model: str) -> int:
    """Routed experts each token picks, from the public config."""
    c = model_spec(model).raw["config"]
    return c.get("num_experts_per_tok", c.get("num_experts_per_token"))


def is_moe(model: str) -> bool:
    """Whether ``model`` has routed experts to spread over an EP group (else: a dense model)."""
    return bool(param_counts(model).by_group().get("routed_experts"))

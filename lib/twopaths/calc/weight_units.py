"""Weights per GPU for any model, as a reader re-runs chapter 10 for their own models and GPUs.

- An MoE model is weighed in EP groups (``calc.placement``): its routed experts spread over the
  group, attention data-parallel or tensor-parallel. ``layouts`` gives, for the EP sizes asked,
  attention DP and the widest attention TP the assumptions allow, and says why any size is left
  out (not whole nodes, or the expert slots do not spread evenly).
- A dense model has no experts to spread, so EP sizes do not apply: it is weighed in the
  planner's dense units (``placement.placements``), a node of tensor-parallel groups, TP1 being a
  whole copy on every GPU.
- ``smallest`` is a model's smallest valid unit on a GPU (``fleet.prefill_unit``), and ``fix`` the
  smallest change that makes one valid where none is (``fleet.smallest_change``).
- ``expert_format`` is the routed experts' format under a weight scenario. The tables and lines the
  chapter shows from these are ``views.weight_tables``.
"""

from __future__ import annotations

from collections.abc import Iterable

from ..errors import ParameterError, check_int
from ..specs.serving import Assumptions
from . import fleet, placement
from .moe import is_moe, routed_experts
from .placement import GPUMemory, Placement
from .weights import shipped_formats


def check_ep_sizes(ep_sizes) -> list[int]:
    """A non-empty list of distinct EP sizes, each a whole number of GPUs (at least 1)."""
    if isinstance(ep_sizes, (str, bytes)) or not isinstance(ep_sizes, (list, tuple)) or not ep_sizes:
        raise ParameterError("ep_sizes", ep_sizes, "a non-empty list of EP group sizes, e.g. [16, 32]")
    sizes = [check_int("ep_sizes", n, minimum=1) for n in ep_sizes]
    repeated = sorted({n for n in sizes if sizes.count(n) > 1})
    if repeated:
        raise ParameterError("ep_sizes", ep_sizes, f"each size once ({repeated[0]} is repeated)")
    return sizes


def layouts(model: str, ep_sizes: Iterable[int], a: Assumptions) -> tuple[list[Placement], dict[int, str]]:
    """The layouts to weigh ``model`` in, and each asked EP size left out with the reason. An MoE
    model: for each EP size the planner tries, attention DP and the widest attention TP; a dense
    model: every one-stage dense unit the planner tries, a TP group (``ep_sizes`` do not apply, none
    is left out; pipelined units are for weights no node holds)."""
    if not is_moe(model):
        return [p for p in placement.placements(model, a) if p.pp == 1], {}
    tried = placement.placements(model, a)
    slots = routed_experts(model, "public") + a.redundant_experts
    shown, left_out = [], {}
    for ep in ep_sizes:
        tps = [p.attention_tp for p in tried if p.ep == ep]
        if tps:
            shown += [Placement(ep, t) for t in sorted({1, max(tps)})]
        elif ep % a.gpus_per_node:
            left_out[ep] = f"not whole {a.gpus_per_node}-GPU nodes"
        elif ep > a.max_ep:
            left_out[ep] = f"above max_ep ({a.max_ep})"
        else:
            left_out[ep] = f"does not divide the {slots} expert slots of a layer"
    return shown, left_out


def smallest(model: str, gpu: str, context: int, a: Assumptions) -> GPUMemory | None:
    """The smallest valid unit (fewest GPUs, then narrowest attention TP); None if none holds a
    request of ``context`` tokens beside the weights on every GPU."""
    return fleet.prefill_unit(model, gpu, context, a)


def fix(model: str, gpu: str, context: int, a: Assumptions) -> str:
    """The smallest change that gives ``model`` a valid unit on ``gpu`` (for one request)."""
    if is_moe(model) and not placement.placements(model, a):
        slots = routed_experts(model, "public") + a.redundant_experts
        return f"an EP size of whole {a.gpus_per_node}-GPU nodes that divides its {slots} expert slots"
    return fleet.smallest_change(model, gpu, a, fleet.Workload(1, context))


def expert_format(model: str, a: Assumptions) -> str:
    """The routed experts' format under ``a``'s weight scenario ("dense" for a dense model)."""
    if not is_moe(model):
        return "dense"
    return {**shipped_formats(model), **a.formats()}["routed_experts"]

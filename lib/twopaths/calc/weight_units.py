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
- ``ep_table`` and ``scenario_table`` are the ``report.Table`` values the chapter shows, titled
  with the models, GPUs and request length that produced them.
"""

from __future__ import annotations

from collections.abc import Iterable

from ..views import scenario
from ..errors import ParameterError, check_int
from ..machinery.report import Column, Table, table
from ..specs.serving import Assumptions, weight_scenarios
from . import fleet, placement
from .moe import is_moe, routed_experts
from .placement import GPUMemory, Placement
from .weights import shipped_formats, weight_bytes

GB = 1e9
BF16_NOTE = "A config without a quantization_config is priced in BF16, as it would load."


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
    model: every dense unit the planner tries (``ep_sizes`` do not apply, none is left out)."""
    if not is_moe(model):
        return list(placement.placements(model, a)), {}
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


def unit_text(model: str, u: GPUMemory | None, gpu: str, context: int, a: Assumptions) -> str:
    return u.placement.name if u is not None else "none: needs " + fix(model, gpu, context, a)


def expert_format(model: str, a: Assumptions) -> str:
    """The routed experts' format under ``a``'s weight scenario ("dense" for a dense model)."""
    if not is_moe(model):
        return "dense"
    return {**shipped_formats(model), **a.formats()}["routed_experts"]


def ep_table(models: list[str], gpus: list[str], ep_sizes: list[int], context: int,
             a: Assumptions) -> tuple[Table, dict[tuple, GPUMemory]]:
    """One GPU of each layout (``layouts``) on each GPU: experts, non-expert weights, KV room, one
    request's cache and whole requests; with the memory behind each row, by (model, layout, gpu)."""
    rows, units, notes = [], {}, []
    for m in models:
        shown, left_out = layouts(m, ep_sizes, a)
        for p in shown:
            for g in gpus:
                u = units[m, p, g] = placement.memory(m, g, p, context, a)
                rows.append([scenario.model_name(m), p.name, scenario.gpu_name(g), u.expert_bytes / GB,
                             u.other_bytes / GB, u.kv_room / GB, u.request_bytes / GB, u.requests])
        if not is_moe(m):
            notes.append(f"{scenario.model_name(m)} is dense: no experts to spread, so its rows are "
                         "TP groups inside a node (TP1 holds a whole copy)")
        notes += [f"{scenario.model_name(m)} leaves out EP{ep}: {why}" for ep, why in left_out.items()]
    gb = "{:,.1f} GB"
    title = scenario.title("Weights and KV room per GPU", models, gpus,
                           f"{context:,}-token requests, weights {weight_scenarios()[a.weights]['label']}")
    return table(title, ["model", "unit", "GPU", Column("experts", "GB", gb), Column("non-expert", "GB", gb),
                         Column("KV room", "GB", gb), Column("one request", "GB", "{:.2f} GB"),
                         Column("requests / GPU", "requests", "{:,}")], rows, note="; ".join(notes)), units


def scenario_table(models: list[str], gpus: list[str], context: int, a: Assumptions) -> Table:
    """The three weight scenarios for each model on each GPU: the weights in total, the routed
    experts' format, the smallest valid unit with its weights, KV room and whole requests per GPU,
    and the smallest unit with attention DP only. Everything else as in ``a``."""
    rows = []
    for s, spec in weight_scenarios().items():
        b = a.but(weights=s)
        for m in models:
            total = sum(weight_bytes(m, b.formats()).values()) / GB
            for g in gpus:
                u, dp = smallest(m, g, context, b), smallest(m, g, context, b.but(max_attention_tp=1))
                rows.append([spec["label"], scenario.model_name(m), scenario.gpu_name(g), total,
                             expert_format(m, b), unit_text(m, u, g, context, b),
                             *((u.weights / GB, u.kv_room / GB, u.requests) if u else (None,) * 3),
                             unit_text(m, dp, g, context, b.but(max_attention_tp=1))])
    title = scenario.title("Three ways to store the weights", models, gpus, f"{context:,}-token requests")
    gb = "{:,.1f} GB"
    return table(title, ["weights", "model", "GPU", Column("checkpoint", "GB", "{:,.0f} GB"), "experts in",
                         "smallest unit", Column("weights / GPU", "GB", gb), Column("KV room / GPU", "GB", gb),
                         Column("requests / GPU", "requests", "{:,}"), "smallest DP unit"], rows,
                 note=BF16_NOTE)


def room_lines(units: dict[tuple, GPUMemory]) -> dict[str, dict[str, list[tuple[int, float]]]]:
    """``ep_table``'s memory as lines to draw, by model then line ("NVIDIA H200 SXM, attention
    DP"): (GPUs in the unit, KV room per GPU in GB) points, one per EP size (TP size if dense)."""
    out: dict[str, dict[str, list]] = {}
    for (m, p, g), u in units.items():
        layout = (("attention DP" if p.attention_tp == 1 else f"attention TP{p.attention_tp}")
                  if is_moe(m) else "TP groups")
        size = p.ep if is_moe(m) else p.attention_tp     # a dense unit's node repeats its TP group
        out.setdefault(m, {}).setdefault(f"{scenario.gpu_name(g)}, {layout}", []).append((size, u.kv_room / GB))
    return out


def figure_series(lines: dict[str, dict[str, list]]) -> tuple[list[int], dict[str, list]]:
    """``room_lines`` as ``chapter.glue_figure`` takes them: the unit sizes drawn, and each line's
    KV room at those sizes (None where the line has no point), labelled with its model."""
    x = sorted({n for per_model in lines.values() for pts in per_model.values() for n, _ in pts})
    series = {}
    for m, per_model in lines.items():
        for name, pts in per_model.items():
            at = dict(pts)
            series[f"{scenario.model_name(m)}, {name}"] = [at.get(n) for n in x]
    return x, series

"""Chapter 10's tables and lines for any model: one GPU of each layout of ``calc.weight_units``,
the three weight scenarios, and the KV room each unit size leaves, titled with the models, GPUs
and request length that produced them.
"""

from __future__ import annotations

from ..calc import placement
from ..calc.moe import is_moe
from ..calc.placement import GPUMemory
from ..calc.weight_units import expert_format, fix, layouts, smallest
from ..calc.weights import weight_bytes
from ..machinery.report import Column, Table, table
from ..specs.serving import Assumptions, weight_scenarios
from . import scenario

GB = 1e9
BF16_NOTE = "A config without a quantization_config is priced in BF16, as it would load."


def unit_text(model: str, u: GPUMemory | None, gpu: str, context: int, a: Assumptions) -> str:
    return u.placement.name if u is not None else "none: needs " + fix(model, gpu, context, a)


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
                 note=BF16_NOTE, split=True)


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

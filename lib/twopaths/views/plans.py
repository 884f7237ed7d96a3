"""What the serving chapters (01, 09-14) show of a plan, done once so every page shows and glues
the same thing the same way.

- ``serving_assumptions(changes)``: the book's ``Assumptions`` with a chapter's ``serving``
  parameter applied (a dict of field changes), refused with the field named when one is bad.
- ``assumptions_box(a)``: the assumptions as a table, each with its source, for the box every
  serving page prints.
- ``plan_table(plans)`` and ``memory_table(plan)``: the plans with their layouts, and one decode
  GPU's memory, line by line, as ``report.Table`` values that ``chapter.show`` displays and records.
- ``glue_plan(name, plan)``: a plan's figures under ``name_...``. Headline plans are glued under the
  same names on every page that shows them; ``tests/test_pages_agree.py`` fails when two pages glue
  different values under one name.
- ``headline(a)``: the book's headline grid, K3 and V4-Pro on H200 and B300 at rho 0.1, 0.25, 0.5
  and 1 (every session resident); ``glue_headline`` glues it, the K3 : V4-Pro ratios and the
  H200-to-B300 gains.
- ``scenario_rho(name)``: the duty cycle of one of the article's scenarios (agent, api, batch);
  ``workload_factor(a)``: K3's nodes for agents over its nodes for batch work.
"""

from __future__ import annotations

from dataclasses import fields

from IPython.display import Markdown

from ..calc import fleet
from ..calc.offload import decode_seconds, duty_cycle
from ..errors import ParameterError, check_choice
from ..machinery.chapter import glue
from ..machinery.report import Column, Table, markdown_table, table
from ..specs import model as model_spec
from ..specs.deployment import scenarios, workload
from ..specs.serving import Assumptions, assumptions, reserve_models, source, weight_scenarios
from . import context_limit, launch

K3, V4 = "kimi-k3", "deepseek-v4-pro"
HEADLINE_GPUS = ("h200", "b300")
HEADLINE_RHOS = (0.1, 0.25, 0.5, 1.0)       # 1.0: every session resident (the article's Step 4)
GB = 1e9
TAG = {K3: "k3", V4: "v4"}
PLAN_NOTE = (f"A session's speed is one token a step on a full decode GPU, a bound; the duty cycles "
              f"assume {workload().decode_tokens_per_s:g} tokens/s, which a plan below it cannot meet "
              "(fleet.plan(..., speed=) gives the cheapest plan that does). Prefill by work is sized for the "
              "prompt tokens the sessions bring when they decode at the plan's own speed. Used / GPU counts the runtime "
              "reserve (activations, CUDA graphs, DeepEP's buffer: calc.reserve) beside weights and caches.")


def serving_assumptions(changes: dict | None = None, preset: str = "book", own: tuple[str, ...] = ()) -> Assumptions:
    """The chapter's assumptions: ``preset`` with ``changes`` (its ``serving`` parameter) applied.
    ``own``: fields the chapter sets through parameters of their own names; ``serving`` naming
    one is refused, since one of the two would be silently ignored."""
    if changes is None:
        changes = {}
    if not isinstance(changes, dict):
        raise ParameterError("serving", changes, "a mapping of assumption fields to values, e.g. "
                             "{'kv_dtype': 'fp8', 'usable_fraction': 0.85}")
    if clash := sorted(set(changes) & set(own)):
        raise ParameterError("serving", changes, f"fields other than {', '.join(clash)}: this chapter sets "
                             f"{'them' if len(clash) > 1 else 'it'} with its own parameter of that name")
    return assumptions(preset, **changes)


def _shown(name: str, value) -> str:
    if name == "overhead_bytes":
        return f"{value / GB:g} GB per GPU"
    if name == "usable_fraction":
        return f"{100 * value:g}% of capacity"
    if name == "weights":
        return weight_scenarios()[value]["label"]
    if name == "reserve":
        return reserve_models()[value]["label"]
    if name == "capacity":
        return {"device": "as the driver exposes it", "nominal": "datasheet (nominal)"}[value]
    return f"{value:g}" if isinstance(value, float) else str(value)


def assumptions_box(a: Assumptions) -> Markdown:
    """Every field of ``a`` with its value and where its default comes from; a field the page's
    ``serving`` parameter changed says so, with the preset's value beside it."""
    preset = assumptions(a.preset)
    changed = [f.name for f in fields(a) if f.name not in ("label", "preset")
               and getattr(a, f.name) != getattr(preset, f.name)]

    def where(name):
        if name in changed:
            return f"changed on this page (the preset's: {_shown(name, getattr(preset, name))})"
        return source(name, a.preset) or "specs/serving.yaml"

    rows = [[f.name, _shown(f.name, getattr(a, f.name)), where(f.name)]
            for f in fields(a) if f.name not in ("label", "preset")]
    title = f"{a.label[:1].upper()}{a.label[1:]}" + (f", {len(changed)} of them changed" if changed else "")
    return Markdown(f"**{title}**, which this page's plans are made under\n\n"
                    + markdown_table(["assumption", "value", "source"], rows).data)


def model_name(model: str) -> str:
    """``Kimi K3`` for ``kimi-k3``: what a table a reader sees calls a model."""
    return model_spec(model).name


# The answer first: nodes, then how they split, then what one GPU holds, so that a column too
# narrow for all sixteen still shows the plan.
PLAN_COLUMNS = [Column("model"), Column("GPU"), Column("decode unit"), Column("nodes", "nodes", "{:,}"),
                Column("decode nodes", "nodes", "{:,}"), Column("prefill nodes (P:D)", "nodes", "{:,}"),
                Column("prefill nodes (work)", "nodes", "{:,}"), Column("units", "units", "{:,}"),
                Column("requests / unit", "requests", "{:,}"),
                Column("tokens/s a session (bound)", "tokens/s", "{:,.1f}"),
                Column("weights / GPU", "GB", "{:.1f} GB"), Column("requests / GPU", "requests"),
                Column("cache / request", "GB", "{:.2f} GB"), Column("used / GPU", "GB", "{:.1f} GB"),
                Column("usable / GPU", "GB", "{:.1f} GB"), Column("spare / GPU", "GB", "{:.2f} GB")]


def plan_row(p: fleet.Plan) -> list:
    m = p.decode
    return [model_name(p.model), p.gpu.upper(), p.placement.name, p.nodes, p.d_nodes, p.p_nodes, p.prefill.by_work,
            p.units, p.requests_per_unit, p.session_speed, m.weights / GB, m.requests, m.request_bytes / GB,
            m.used / GB, m.usable / GB, m.spare / GB]


def plan_table(plans: list[fleet.Plan], title: str = "") -> Table:
    """One row per plan: its layout, one decode GPU's memory, the node counts and the speed a session
    decodes at on a full decode GPU (a bound); a note flags a context past a model's limit
    (``views.context_limit``) and says what the speed means."""
    return table(title, PLAN_COLUMNS, [plan_row(p) for p in plans], note=table_note(plans))


def table_note(plans) -> str:
    """The note under a table of plans: the context flag, if any, and what the speed column means."""
    return " ".join(n for n in (context_limit.plans_note(plans), PLAN_NOTE) if n)


def launch_table(plans: list[fleet.Plan], title: str = "") -> Table:
    """One row per plan and engine that launches it (``views.launch``): the engine, the nodes of a
    decode unit and the command of its first node, which the others run with their own rank. The
    command is set as code, so a page keeps its ``--`` and straight quotes and it pastes as it is."""
    rows = [[model_name(p.model), p.gpu.upper(), p.placement.name, cmd.engine, cmd.decode_nodes_per_unit,
             f"`{cmd.decode}`"]
            for p in plans for cmd in launch.commands(p).values()]
    return table(title, ["model", "GPU", "decode unit", "engine", Column("nodes a unit", "nodes", "{:,}"),
                         "first decode node's command"], rows)


def memory_table(p: fleet.Plan, title: str = "") -> Table:
    """One decode GPU of ``p``, line by line, against what it offers."""
    m = p.decode
    r = m.reserve
    reserve = [["runtime reserve: activations", r.activations / GB],
               ["runtime reserve: CUDA graphs", r.cuda_graphs / GB],
               ["runtime reserve: runtime and parallel slack", r.runtime / GB],
               ["runtime reserve: the engine's floor tops up", r.floor_top_up / GB],
               ["runtime reserve: EP all-to-all buffers", r.all_to_all / GB]] if r.total else []
    rows = [["routed experts", m.expert_bytes / GB],
            ["non-expert weights", m.other_bytes / GB],
            *reserve,
            *([["further runtime overhead", m.overhead_bytes / GB]] if m.overhead_bytes else []),
            [f"caches ({m.requests} requests)", m.cache_bytes / GB],
            ["used", m.used / GB],
            ["spare", m.spare / GB],
            [f"usable ({100 * p.assumptions.usable_fraction:g}% of {m.capacity / GB:.1f} GB)", m.usable / GB]]
    head = f"{model_name(p.model)} on {p.gpu.upper()}, {p.placement.name}"
    return table(title, [head, Column("bytes", "GB", "{:.2f} GB")], rows)


def glue_plan(name: str, p: fleet.Plan) -> None:
    """Glue a plan's layout, one decode GPU's memory and its node counts under ``name_...``."""
    m = p.decode
    glue(f"{name}_layout", p.placement.name, "text")
    glue(f"{name}_ep", p.ep, "GPUs")
    glue(f"{name}_requests_per_gpu", m.requests, "requests")
    glue(f"{name}_weights_GB", m.weights / GB, "GB")
    glue(f"{name}_used_GB", m.used / GB, "GB")
    glue(f"{name}_usable_GB", m.usable / GB, "GB")
    glue(f"{name}_speed", p.session_speed, "tokens/s")
    glue(f"{name}_spare_GB", m.spare / GB, "GB")
    glue(f"{name}_d_nodes", p.d_nodes, "nodes")
    glue(f"{name}_p_nodes", p.p_nodes, "nodes")
    glue(f"{name}_p_nodes_work", p.prefill.by_work, "nodes")
    glue(f"{name}_nodes", p.nodes, "nodes")
    glue(f"{name}_nodes_work", p.nodes_by_work, "nodes")


def workload_label(w: fleet.Workload | None = None) -> str:
    """``"10,000 sessions of 500K tokens"``: a workload as table titles name it (the article's by
    default)."""
    w = fleet.workload() if w is None else w
    return f"{w.concurrency:,} sessions of {w.context / 1e3:,g}K tokens"


def headline(a: Assumptions, work: fleet.Workload | None = None) -> dict[tuple, fleet.Plan]:
    """{(model, gpu, rho): plan} for K3 and V4-Pro on H200 and B300 at rho 0.1, 0.25 and 0.5."""
    base = fleet.workload() if work is None else work
    return {(m, g, r): fleet.plan(m, g, a, fleet.Workload(base.concurrency, base.context, r))
            for m in (K3, V4) for g in HEADLINE_GPUS for r in HEADLINE_RHOS}


def headline_name(gpu: str, rho: float, model: str | None = None) -> str:
    """``plan_k3_h200_rho25`` for a plan, ``ratio_h200_rho25`` for the K3 : V4-Pro ratio."""
    tag = f"{gpu}_rho{round(100 * rho)}"
    return f"plan_{TAG[model]}_{tag}" if model else f"ratio_{tag}"


def glue_headline(plans: dict[tuple, fleet.Plan]) -> None:
    """Glue every headline plan, each K3 : V4-Pro node ratio and each model's H200-to-B300 gain
    (``b300_gain_k3_rho25``) under its shared name."""
    for (m, g, r), p in plans.items():
        glue_plan(headline_name(g, r, m), p)
    for r in HEADLINE_RHOS:
        for g in HEADLINE_GPUS:
            k, v = plans[K3, g, r], plans[V4, g, r]
            glue(headline_name(g, r), k.nodes / v.nodes, "x")
            glue(headline_name(g, r) + "_work", k.nodes_by_work / v.nodes_by_work, "x")
        for m in (K3, V4):
            glue(f"b300_gain_{TAG[m]}_rho{round(100 * r)}", plans[m, "h200", r].nodes / plans[m, "b300", r].nodes, "x")


def scenario_rho(name: str) -> float:
    """A scenario's duty cycle: the article's 1,000 output tokens at 200 tokens/s over a turn."""
    check_choice("scenario", name, list(scenarios()))
    w = workload()
    return duty_cycle(decode_seconds(w.output_tokens, w.decode_tokens_per_s), scenarios()[name].w_idle)


def workload_factor(a: Assumptions, model: str = K3, gpu: str = "h200") -> float:
    """Nodes for high-interaction agents over nodes for low-frequency batch work, one model."""
    base = fleet.workload()
    nodes = {s: fleet.plan(model, gpu, a, fleet.Workload(base.concurrency, base.context, scenario_rho(s))).nodes
             for s in ("agent", "batch")}
    return nodes["agent"] / nodes["batch"]


def ratio_table(plans: dict[tuple, fleet.Plan], title: str = "") -> Table:
    """K3 : V4-Pro nodes per GPU and duty cycle, with the layout each plan chose."""
    rows = []
    for g in HEADLINE_GPUS:
        for r in HEADLINE_RHOS:
            k, v = plans[K3, g, r], plans[V4, g, r]
            rows.append([g.upper(), 100 * r, k.nodes, k.placement.name, v.nodes, v.placement.name,
                         k.nodes / v.nodes, k.nodes_by_work, v.nodes_by_work, k.nodes_by_work / v.nodes_by_work])
    return table(title, ["GPU", Column("rho", "%", "{:g}%"), Column("K3 nodes", "nodes", "{:,}"),
                         "K3 decode unit", Column("V4-Pro nodes", "nodes", "{:,}"), "V4-Pro decode unit",
                         Column("K3 : V4-Pro (prefill at P:D)", "x", "{:.2f}x"),
                         Column("K3 nodes (prefill by work)", "nodes", "{:,}"),
                         Column("V4-Pro nodes (prefill by work)", "nodes", "{:,}"),
                         Column("K3 : V4-Pro (prefill by work)", "x", "{:.2f}x")], rows,
                 note=context_limit.plans_note(plans.values()))


# EP sizing (part III, Step 2), shown by chapters 9, 10 and 11 under shared names. Sized on the
# H200, the article's hardware, whatever GPU a chapter otherwise uses.
EP_GPU = "h200"


def article_unit(model: str) -> "fleet.Placement":
    """The article's minimum viable decode unit with attention DP: EP=32 for K3, EP=16 for V4-Pro."""
    from ..specs.deployment import deployment
    return fleet.Placement(deployment(model).ep)


def smallest_units(a: Assumptions, context: int) -> dict[str, "fleet.GPUMemory | None"]:
    """Each model's smallest valid placement on the H200 for ``context`` (``fleet.prefill_unit``):
    attention TP allowed up to ``a.max_attention_tp`` (``smallest_unit_k3``) and attention DP only
    (``smallest_dp_unit_k3``); None where no placement holds a request."""
    out = {}
    for m in (K3, V4):
        out[f"smallest_unit_{TAG[m]}"] = fleet.prefill_unit(m, EP_GPU, context, a)
        out[f"smallest_dp_unit_{TAG[m]}"] = fleet.prefill_unit(m, EP_GPU, context, a.but(max_attention_tp=1))
    return out


def unit_name(u: "fleet.GPUMemory | None") -> str:
    return u.placement.name if u is not None else "none"


def glue_ep_sizing(a: Assumptions, context: int) -> None:
    """Glue one H200 GPU at the article's EP sizes with attention DP: its KV room
    (``k3_ep32_dp_kv_room_GB``, ``v4_ep16_dp_kv_room_GB``; negative when the weights do not fit),
    runtime reserve (``_reserve_GB``), weights, non-expert weights, one request's cache, whole requests per GPU and per unit
    (``k3_ep32_dp_weights_GB``, ``_other_GB``, ``_request_GB``, ``_requests``,
    ``_requests_per_unit``); and each smallest unit as text (``smallest_unit_k3``: "EP224,
    attention DP", or "none") with its EP size (``smallest_unit_k3_ep``: GPUs, or "none")."""
    from ..calc.placement import memory
    for m in (K3, V4):
        p = article_unit(m)
        g, name = memory(m, EP_GPU, p, context, a), f"{TAG[m]}_ep{p.ep}_dp"
        glue(f"{name}_kv_room_GB", g.kv_room / GB, "GB")
        glue(f"{name}_reserve_GB", g.reserve.total / GB, "GB")
        glue(f"{name}_weights_GB", g.weights / GB, "GB")
        glue(f"{name}_other_GB", g.other_bytes / GB, "GB")
        glue(f"{name}_request_GB", g.request_bytes / GB, "GB")
        glue(f"{name}_requests", g.requests, "requests")
        glue(f"{name}_requests_per_unit", g.requests * p.attention_groups, "requests")
    for name, u in smallest_units(a, context).items():
        glue(name, unit_name(u), "text")
        glue(f"{name}_ep", u.placement.ep if u is not None else "none", "GPUs")


def weight_scenario_table(a: Assumptions, context: int, title: str = "") -> Table:
    """The three weight scenarios side by side on the H200, everything else as in ``a``: each
    model's weights, one GPU at the article's EP size with attention DP, and the smallest valid
    units. The last scenario is the article's simplification."""
    from ..calc.placement import memory
    from ..calc.weights import weight_bytes
    rows = []
    for s, spec in weight_scenarios().items():
        b = a.but(weights=s)
        units = smallest_units(b, context)
        for m in (K3, V4):
            g = memory(m, EP_GPU, article_unit(m), context, b)
            rows.append([spec["label"], model_name(m), sum(weight_bytes(m, b.formats()).values()) / GB,
                         g.placement.name, g.weights / GB, g.kv_room / GB, g.requests,
                         unit_name(units[f"smallest_unit_{TAG[m]}"]),
                         unit_name(units[f"smallest_dp_unit_{TAG[m]}"])])
    return table(title, ["weights", "model", Column("checkpoint", "GB", "{:,.0f} GB"), "article's unit",
                         Column("weights / GPU", "GB", "{:.1f} GB"), Column("KV room / GPU", "GB", "{:.1f} GB"),
                         Column("requests / GPU", "requests"), "smallest unit", "smallest DP unit"], rows,
                 split=True)

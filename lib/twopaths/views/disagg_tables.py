"""The tables of chapter 11 (prefill, decode and the node count), for any models and GPU.

Each function takes what ``calc.bare``, ``calc.disagg``, ``calc.article_fleet`` and ``calc.fleet``
computed and returns a ``report.Table`` of raw values in its columns' units, which
``chapter.show`` displays and records. A model with no plan (``calc.disagg.Unplanned``) is a row
that says why, never a missing row.
"""

from __future__ import annotations

from ..calc import fleet
from ..calc.bare import bare
from ..calc.disagg import Unplanned, handoff
from ..calc.placement import memory
from ..calc.reserve_peers import peers
from ..machinery.report import Column, Table, table
from ..specs.deployment import workload
from ..specs.serving import weight_scenarios
from .context_limit import plans_note, sentence
from .plans import PLAN_COLUMNS, plan_row, table_note
from .scenario import model_name

GB, TB, MB = 1e9, 1e12, 1e6
NODES = Column("nodes", "nodes", "{:,}")


def bare_table(models, gpu: str, cases, concurrency: int | None, title: str) -> Table:
    """The bare count of each model under each ``(label, keywords of calc.bare.bare)`` case."""
    rows, at = [], []
    for label, kw in cases:
        for m in models:
            b = bare(m, gpu, concurrency=concurrency, **kw)
            rows.append([label, model_name(m), b.weight_bytes / TB, b.kv_bytes / TB, b.weights_gpus,
                         b.kv_gpus, b.total])
            at.append((m, kw.get("context") or workload().bare_context))
    return table(title, ["inputs", "model", Column("weights", "TB", "{:,.2f} TB"),
                         Column("KV", "TB", "{:,.1f} TB"), Column("GPUs for weights", "GPUs", "{:,}"),
                         Column("GPUs for KV", "GPUs", "{:,}"), Column("bare GPUs", "GPUs", "{:,}")], rows,
                 note=sentence(at))


def handoff_table(models, context: int, cases, bandwidth: float, title: str) -> Table:
    """What one request sends from prefill to decode, for each model under each ``(label,
    positional arguments, keywords of calc.disagg.handoff)`` case."""
    rows = []
    for label, args, kw in cases:
        for m in models:
            h = handoff(m, context, *args, bandwidth=bandwidth, **kw)
            rows.append([label, model_name(m), h.state_bytes / MB, 1e3 * h.state_seconds, h.kv_bytes / GB,
                         h.kv_seconds, h.seconds])
    return table(title, ["inputs", "model", Column("fixed state", "MB", "{:,.0f} MB"),
                         Column("state transfer", "ms", "{:,.1f} ms"), Column("growing cache", "GB", "{:,.2f} GB"),
                         Column("cache transfer", "s", "{:,.3f} s"), Column("whole request", "s", "{:,.3f} s")],
                 rows, note=sentence((m, context) for m in models))


def article_table(plans: dict, title: str) -> Table:
    """The article's pooled arithmetic (``calc.article_fleet.article_plan``), one row a model."""
    rows = [[model_name(m), f"EP{p.layout.ep}", p.kv_per_gpu / GB, p.unit_kv / GB, p.request_bytes / GB,
             p.requests_per_unit, p.units, p.d_nodes, p.p_nodes, p.nodes] for m, p in plans.items()]
    return table(title, ["model", "unit", Column("KV room / GPU", "GB", "{:,.0f} GB"),
                         Column("pooled room / unit", "GB", "{:,.0f} GB"), Column("per request", "GB", "{:,.1f} GB"),
                         Column("requests / unit", "requests", "{:,}"), Column("units", "units", "{:,}"),
                         Column("D nodes", "nodes", "{:,}"), Column("P nodes", "nodes", "{:,}"), NODES], rows)


def _why(u: Unplanned, width: int, at: int = 2) -> list:
    """A row of ``width`` cells for a model without a plan: its name, GPU and reason at ``at``."""
    row = [model_name(u.model), u.gpu.upper()] + [None] * (width - 2)
    row[at] = u.reason
    return row


def plan_table(results, title: str) -> Table:
    """``plans.plan_table`` with a row saying why for each model that has no plan."""
    return table(title, list(PLAN_COLUMNS), [plan_row(p) if isinstance(p, fleet.Plan)
                                             else _why(p, len(PLAN_COLUMNS)) for p in results],
                 note=table_note(results))


def format_table(grid: dict, models, title: str) -> Table:
    """``calc.disagg.by_format``'s grid: nodes and decode unit of each model under each weight
    scenario and cache dtype, and the first model's nodes over its nodes (the article's K3 : V4-Pro
    when the first is K3)."""
    first, rows = models[0], []
    for (w, c, m), p in grid.items():
        base = grid[w, c, first]
        ok = isinstance(p, fleet.Plan)
        ratio = base.nodes / p.nodes if ok and isinstance(base, fleet.Plan) else None
        rows.append([weight_scenarios()[w]["label"], c, model_name(m), p.nodes if ok else p.reason,
                     p.placement.name if ok else None, ratio])
    return table(title, ["weights", "cache", "model", NODES, "decode unit",
                         Column(f"{model_name(first)} : this model", "x", "{:.2f}x")], rows,
                 note=plans_note(grid.values()))


PREFILL_COLUMNS = ["model", "GPU", Column("prompt tokens/s (fleet)", "M tokens/s", "{:,.2f} M"),
                   Column("tokens/s per GPU", "tokens/s", "{:,.0f}"), "prefill unit",
                   Column("unit nodes", "nodes", "{:,}"), Column("prefill nodes by work", "nodes", "{:,}"),
                   Column("prefill nodes at P:D", "nodes", "{:,}")]


def prefill_table(results, title: str) -> Table:
    """Prefill sized by work and by the P:D ratio, one row a model (why, where there is no plan)."""
    rows = []
    for p in results:
        if isinstance(p, Unplanned):
            rows.append(_why(p, len(PREFILL_COLUMNS)))
            continue
        f = p.prefill
        rows.append([model_name(p.model), p.gpu.upper(), f.tokens_per_s / 1e6, f.tokens_per_s_per_gpu,
                     f.unit.name, f.unit_nodes, f.by_work, f.by_ratio])
    return table(title, PREFILL_COLUMNS, rows, note=plans_note(results))


def prompt_table(grid: dict, title: str) -> Table:
    """{(prompt tokens a turn, model): plan or reason}: prefill nodes by work at each prompt size."""
    rows = [[t, model_name(m), p.prefill.by_work if isinstance(p, fleet.Plan) else p.reason]
            for (t, m), p in grid.items()]
    return table(title, [Column("prompt tokens a turn", "tokens", "{:,}"), "model",
                         Column("prefill nodes by work", "nodes", "{:,}")], rows,
                 note=plans_note(grid.values()))


def reserve_table(results, title: str) -> Table:
    """One decode and one prefill GPU of each plan: the book's runtime reserve term by term
    (``calc.reserve``) beside SGLang's default rule read literally, vLLM's default and
    AIConfigurator's estimate (``calc.reserve_peers``)."""
    rows = []
    for p in (r for r in results if isinstance(r, fleet.Plan)):
        pre = memory(p.model, p.gpu, p.prefill.unit, p.work.context, p.assumptions, "prefill")
        for role, m, tokens in (("decode", p.decode, p.decode.requests), ("prefill", pre, pre.reserve.chunk_tokens)):
            r = m.reserve
            other = peers(p.model, p.gpu, m.placement, role, max(tokens, 1), p.assumptions)
            rows.append([model_name(p.model), f"{role}: {m.placement.name}", r.activations / GB,
                         r.cuda_graphs / GB, (r.runtime + r.floor_top_up) / GB, r.all_to_all / GB,
                         r.total / GB, *(v / GB for v in other.values())])
    gb = "{:,.1f} GB"
    return table(title, ["model", "GPU", Column("activations", "GB", gb), Column("CUDA graphs", "GB", gb),
                         Column("runtime and floor", "GB", gb), Column("all-to-all buffer", "GB", gb),
                         Column("the book's reserve", "GB", gb),
                         Column("SGLang's rule, literally", "GB", gb),
                         Column("vLLM, outside 92%", "GB", gb), Column("AIConfigurator", "GB", gb)], rows)

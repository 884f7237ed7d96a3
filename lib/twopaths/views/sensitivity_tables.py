"""How the fleet's one-at-a-time sensitivity reads (``calc.sensitivity``): each setting's name and
values as a tornado chart and a table show them, the two models' table and one model's widest bars.
"""

from __future__ import annotations

from ..calc.sensitivity import Bar, Count, Setting, bars, ranked, ratio
from ..errors import ParameterError
from ..machinery.report import Column, Table, table as make_table
from ..specs.serving import Assumptions
from .context_limit import sentence


SHOW = {   # each setting's name and how its values read
    "usable_fraction": ("usable share of HBM", lambda v: f"{100 * v:g}%"),
    "capacity": ("HBM figure", {"nominal": "datasheet", "device": "driver"}.get),
    "kv_dtype": ("KV cache format", str.upper),
    "weights": ("weight formats", {"shipped": "as shipped", "fp8": "all FP8",
                                   "fp8-non-expert": "FP8 non-expert"}.get),
    "overhead_bytes": ("runtime overhead", lambda v: f"{v / 1e9:g} GB/GPU"),
    "rho": ("sessions resident", lambda v: f"{100 * v:g}%"),
    "context": ("context", lambda v: f"{v / 1e3:,.0f}K tokens"),
    "concurrency": ("concurrent sessions", lambda v: f"{v:,}"),
    "pd_ratio": ("decode per prefill node", lambda v: f"{v:g}"),
    "gpu": ("GPU", str.upper)}


def what(name: str) -> str:
    """``"usable share of HBM"`` for ``usable_fraction``."""
    return SHOW[name][0]


def value(name: str, v) -> str:
    """One setting's value as it reads: ``"80%"``, ``"250K tokens"``."""
    return SHOW[name][1](v)


def label(s: Bar | Setting) -> str:
    """``"context (250K tokens / 1,000K tokens)"``: a bar's name on the chart."""
    return f"{what(s.assumption)} ({value(s.assumption, s.low)} / {value(s.assumption, s.high)})"


def table(names: tuple[str, str], base: tuple[Count, Count], moved: list[Setting],
          a: Assumptions, title: str, models: tuple[str, str] = ()) -> Table:
    """Two models' ``settings`` under ``a``, ``ranked``, one row per setting's end after the
    base: each model's nodes (or why it has no plan, with the fix) and the first : second ratio.
    With the two ``models``' ids, a context the table moves to past a model's limit is flagged in
    its note (``views.context_limit``)."""
    rows = [["the parameters above", "base", base[0].shown, base[1].shown, ratio(*base)]]
    for s in ranked(moved):
        for end, v in enumerate((s.low, s.high)):
            rows.append([what(s.assumption), f"{value(s.assumption, v)} ({('low', 'high')[end]})",
                         s.counts[0][end].shown, s.counts[1][end].shown, s.ratio(end)])
    one, two = names
    return make_table(title, ["setting", "value", Column(f"{one} nodes", "nodes", "{:,}"),
                              Column(f"{two} nodes", "nodes", "{:,}"),
                              Column(f"{one} : {two}", "x", "{:.2f}x")], rows,
                      note=" ".join(filter(None, (
                          f"Nodes count decode and prefill, {a.gpus_per_node} GPUs a node; the ratio is "
                          "n/a where a model has no plan.",
                          sentence((m, v) for s in moved if s.assumption == "context"
                                   for v in (s.low, s.high) for m in models)))))


def tornado_table(base: tuple[Count, ...], moved: list[Setting], which: int, title: str,
                  top: int | None = None) -> Table:
    """Model ``which``'s widest ``top`` bars: each setting's nodes at its low and high value, or
    why there is no plan."""
    by = {s.assumption: s for s in moved}
    rows = [[label(b), *(c.shown for c in by[b.assumption].counts[which])]
            for b in bars(base, moved, which)[:top]]
    return make_table(title, ["setting (low / high)", Column("nodes, low", "nodes", "{:,}"),
                              Column("nodes, high", "nodes", "{:,}")], rows)


def pair(models: list[str]) -> tuple[str, str]:
    """The two models a comparison takes, the first compared with the second."""
    if len(models) != 2:
        raise ParameterError("models", models, "exactly two models in `models` and `configs` "
                             "together: the first is compared with the second")
    return tuple(models)

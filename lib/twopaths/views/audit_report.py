"""The audit as a reader sees it: its rows grouped by what went wrong, in tables that fit a page
(a few short ones shown, the rest folded in dropdowns), every figure with its unit."""

from __future__ import annotations

import math
from collections import defaultdict

from IPython.display import Markdown

from ..calc.units import quantity, with_unit
from ..claims.audit import Row
from ..machinery.report import markdown_table


SIZES = ("B", "kB", "MB", "GB", "TB")          # memory figures: below zero, it does not fit
MACHINES = ("units", "nodes", "GPUs")           # machine counts: infinite, no plan exists
CAPACITY = "requests"                           # what a unit holds: none, it does not fit
CONTEXT = "M tokens"                            # a context past which a claim holds: infinite, at none
# Claims whose figure is the share of a time budget left over: below zero, none is left, and the
# figure reads as how many times the budget the time takes ("-3,184 %" is 32.8x the budget).
HEADROOM = ("k3-ttft-headroom",)


def ordinal(n: int) -> str:
    """``1st``, ``2nd``, ``3rd``, ``11th``."""
    n = int(n)
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def fails_to_fit(value, unit: str) -> bool:
    """Whether the figure stands for a placement that holds no request: room below zero, no plan
    (an infinite count), no request held."""
    return value is not None and ((unit in SIZES and value < 0) or (unit in MACHINES and math.isinf(value))
                                  or (unit == CAPACITY and value == 0))


def fmt(value, unit: str) -> str:
    """A figure with its unit ("2,560 B", "11.5 %", a rank as "2nd"); a dash where there is none; in
    words where it is not a size: "does not fit (68.21 GB short)", "no valid plan", "none fit"."""
    if value is None:
        return "-"
    if unit == "rank" and float(value).is_integer():
        return ordinal(value)
    if unit == "statement":          # a claim without a figure: 1 is true, 0 false
        return {1: "true", 0: "false"}[int(value)]
    if unit == CONTEXT and math.isinf(value):
        return "no crossover at any context"
    if fails_to_fit(value, unit):
        if unit in SIZES:
            return f"does not fit ({fmt(-value, unit)} short)"
        return "no valid plan" if unit in MACHINES else "none fit (0 requests)"
    return quantity(value, unit)


def figure(r: Row, value) -> str:
    """One of ``r``'s figures (recomputed, from the released configs) as ``fmt`` gives it, or, for a
    budget's headroom below zero, in words."""
    if r.id in HEADROOM and value is not None and value < 0:
        return f"none: it takes {1 - value / 100:,.1f}x the budget"
    return fmt(value, r.unit)


def printed(r: Row) -> str:
    """The article's figure as it prints it (its digits kept: "3.0 MB"), with its unit; a rank as
    an ordinal."""
    if r.unit == "rank" and r.stated.isdigit():
        return ordinal(int(r.stated))
    if r.unit == "statement":
        return fmt(float(r.stated), r.unit)
    sign = "-" if r.stated.startswith("-") else ""
    whole, _, frac = r.stated.lstrip("-").partition(".")
    return with_unit(f"{sign}{int(whole):,}{'.' + frac if frac else ''}", r.unit)


def inputs_wrong(rows: list[Row]) -> list[Row]:
    """Claims whose inputs the released configs contradict, the furthest moved first."""
    hit = [r for r in rows if r.inputs is not None and r.inputs.status == "fails"]
    return sorted(hit, key=lambda r: (-r.moves, r.id))


def reasoning_wrong(rows: list[Row]) -> list[Row]:
    return [r for r in rows if r.reasoning is not None and r.reasoning.status == "fails"]


def arithmetic_off(rows: list[Row]) -> list[Row]:
    """Claims whose arithmetic slips (a unit, a rounding) or fails, whatever their inputs."""
    return [r for r in rows if r.arithmetic is not None and r.arithmetic.status in ("slip", "fails")]


def moved(r: Row) -> str:
    """How far the released configs move the figure; where they leave no room, that in words."""
    if fails_to_fit(r.public_config, r.unit):
        return "no ratio: it does not fit"
    if r.unit == "rank" and r.public_config is not None:     # an order, not a quantity to divide
        return "same rank" if float(r.stated) == r.public_config else f"{printed(r)} to {figure(r, r.public_config)}"
    return "∞ (a zero or a sign change)" if math.isinf(r.moves) else f"{r.moves:,.2f}x"


def why(j) -> str:
    """A judgment's reason without the audit's own prefix."""
    return j.reason.split(": ", 1)[1] if j.reason.split(": ", 1)[0] in (
        "unit slip", "rounding", "rounding direction", "wrong term", "arithmetic",
        "inconsistent assumption") else j.reason


COLUMNS = {
    "inputs": (["claim", "article", "article's inputs", "released configs", "moved by", "verdict"],
               lambda r: [r.claim, printed(r), figure(r, r.recomputed),
                          figure(r, r.public_config), moved(r), r.overall]),
    "reasoning": (["claim", "article", "what is unsound", "verdict"],
                  lambda r: [r.claim, printed(r), why(r.reasoning), r.overall]),
    "arithmetic": (["claim", "article", "recomputed from its inputs", "what slipped", "verdict"],
                   lambda r: [r.claim, printed(r), figure(r, r.recomputed),
                              why(r.arithmetic), r.overall]),
    "holds": (["claim", "article", "recomputed", "released configs"],
              lambda r: [r.claim, printed(r), figure(r, r.recomputed),
                         figure(r, r.public_config)]),
    "unchecked": (["claim", "article", "why it cannot be checked"],
                  lambda r: [r.claim, printed(r), r.note]),
}


def table(rows: list[Row], kind: str) -> Markdown:
    headers, cells = COLUMNS[kind]
    return markdown_table(headers, [cells(r) for r in rows])


def folded(title: str, rows: list[Row], kind: str) -> Markdown:
    """One table in a closed dropdown titled ``title`` (n)."""
    body = table(rows, kind).data
    return Markdown(f"````{{admonition}} {title} ({len(rows)})\n:class: dropdown\n\n{body}\n````")


def depends(rows: list[Row]) -> Markdown:
    """The claims whose verdict turns on an uncertain fact, with the figure under each option."""
    return markdown_table(
        ["claim", "article", "verdict", "under each option"],
        [[r.claim, printed(r), r.overall,
          "; ".join(f"{o}: {fmt(v, r.unit)}" + ("" if ok else " (fails)") for o, v, ok in r.alternatives)]
         for r in rows])


def by_section(rows: list[Row]) -> dict[str, list[Row]]:
    """Rows grouped by the article section they come from, in the order they first appear."""
    out = defaultdict(list)
    for r in rows:
        out[r.section].append(r)
    return dict(out)


def by_topic(rows: list[Row]) -> dict[str, list[Row]]:
    """Rows grouped by claims topic (``kv_cache``, ``serving``, ...), in the topics' order."""
    from ..claims import claims, topics
    topic_of = {cid: t for t in topics() for cid in claims(t)}
    out = defaultdict(list)
    for r in rows:
        out[topic_of[r.id]].append(r)
    return {t: out[t] for t in topics() if out[t]}

"""The audit's verdict tables as this chapter shows them, with the figures that are not sizes said
in words: a memory figure below zero is a placement that does not fit (with how much it lacks), an
infinite machine count is no valid plan, a capacity of no request says none fit, and a rank reads
"1st", not "1 rank".

The rows, their grouping and every other figure come from ``twopaths.claims.report`` unchanged;
only the cells above are worded here (``figure``, ``printed``, ``moved``).
"""

from __future__ import annotations

import math

from IPython.display import Markdown

from .claims import report as claims_report
from .claims.audit import Row
from .report import markdown_table

SIZES = ("B", "kB", "MB", "GB", "TB")          # memory figures: below zero, it does not fit
MACHINES = ("units", "nodes", "GPUs")           # machine counts: infinite, no plan exists
CAPACITY = "requests"                           # what a unit holds: none, it does not fit


def ordinal(n: int) -> str:
    """``1st``, ``2nd``, ``3rd``, ``11th``."""
    n = int(n)
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def figure(value, unit: str) -> str:
    """A recomputed figure with its unit, as ``claims.report.fmt``, but in words where it is not
    a size: "does not fit (68.21 GB short)", "no valid plan", a rank as "2nd"."""
    if value is not None and unit == "rank":
        return ordinal(value)
    if value is not None and unit in SIZES and value < 0:
        return f"does not fit ({claims_report.fmt(-value, unit)} short)"
    if value is not None and unit in MACHINES and math.isinf(value):
        return "no valid plan"
    if value == 0 and unit == CAPACITY:
        return "none fit (0 requests)"
    return claims_report.fmt(value, unit)


def fails_to_fit(value, unit: str) -> bool:
    """Whether the figure stands for a placement that holds no request."""
    return value is not None and ((unit in SIZES and value < 0) or (unit in MACHINES and math.isinf(value))
                                  or (unit == CAPACITY and value == 0))


def printed(r: Row) -> str:
    """The article's figure as it prints it; a rank as an ordinal."""
    return ordinal(int(r.stated)) if r.unit == "rank" else claims_report.printed(r)


def moved(r: Row) -> str:
    """How far the released configs move the figure; where they leave no room, that in words."""
    if fails_to_fit(r.public_config, r.unit):
        return "no ratio: it does not fit"
    return claims_report.moved(r)


COLUMNS = {   # the headers of claims.report, these cells
    "inputs": lambda r: [r.claim, printed(r), figure(r.recomputed, r.unit),
                         figure(r.public_config, r.unit), moved(r), r.overall],
    "reasoning": lambda r: [r.claim, printed(r), claims_report.why(r.reasoning), r.overall],
    "arithmetic": lambda r: [r.claim, printed(r), figure(r.recomputed, r.unit),
                             claims_report.why(r.arithmetic), r.overall],
    "holds": lambda r: [r.claim, printed(r), figure(r.recomputed, r.unit),
                        figure(r.public_config, r.unit)],
    "unchecked": lambda r: [r.claim, printed(r), r.note],
}


def table(rows: list[Row], kind: str) -> Markdown:
    return markdown_table(claims_report.COLUMNS[kind][0], [COLUMNS[kind](r) for r in rows])


def folded(title: str, rows: list[Row], kind: str) -> Markdown:
    """One table in a closed dropdown titled ``title`` (n)."""
    body = table(rows, kind).data
    return Markdown(f"````{{admonition}} {title} ({len(rows)})\n:class: dropdown\n\n{body}\n````")


def depends(rows: list[Row]) -> Markdown:
    """The claims whose verdict turns on an uncertain fact, with the figure under each option."""
    return markdown_table(
        ["claim", "article", "verdict", "under each option"],
        [[r.claim, printed(r), r.overall,
          "; ".join(f"{o}: {figure(v, r.unit)}" + ("" if ok else " (fails)")
                    for o, v, ok in r.alternatives)] for r in rows])

"""The audit as a reader sees it: its rows grouped by what went wrong, in tables that fit a page
(a few short ones shown, the rest folded in dropdowns), every figure with its unit."""

from __future__ import annotations

import math
from collections import defaultdict

from IPython.display import Markdown

from ..report import markdown_table
from .audit import Row


def fmt(value, unit: str) -> str:
    """A figure with its unit ("2,560 B", "11.5 %", "rank 2"); a dash where there is none."""
    if value is None:
        return "-"
    if unit == "rank" and float(value).is_integer():
        return f"rank {int(value)}"
    if isinstance(value, float) and math.isinf(value):
        return f"{'-' if value < 0 else ''}∞ {unit}"
    return f"{value:,.0f} {unit}" if abs(value) >= 1e4 else f"{value:,.4g} {unit}"


def printed(r: Row) -> str:
    """The article's figure as it prints it (its digits kept: "3.0 MB"), with its unit."""
    if r.unit == "rank" and r.stated.isdigit():
        return f"rank {r.stated}"
    sign = "-" if r.stated.startswith("-") else ""
    whole, _, frac = r.stated.lstrip("-").partition(".")
    return f"{sign}{int(whole):,}{'.' + frac if frac else ''} {r.unit}"


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
    return "∞ (a zero or a sign change)" if math.isinf(r.moves) else f"{r.moves:,.2f}x"


def why(j) -> str:
    """A judgment's reason without the audit's own prefix."""
    return j.reason.split(": ", 1)[1] if j.reason.split(": ", 1)[0] in (
        "unit slip", "rounding", "rounding direction", "wrong term", "arithmetic",
        "inconsistent assumption") else j.reason


COLUMNS = {
    "inputs": (["claim", "article", "article's inputs", "released configs", "moved by", "verdict"],
               lambda r: [r.claim, printed(r), fmt(r.recomputed, r.unit),
                          fmt(r.public_config, r.unit), moved(r), r.overall]),
    "reasoning": (["claim", "article", "what is unsound", "verdict"],
                  lambda r: [r.claim, printed(r), why(r.reasoning), r.overall]),
    "arithmetic": (["claim", "article", "recomputed from its inputs", "what slipped", "verdict"],
                   lambda r: [r.claim, printed(r), fmt(r.recomputed, r.unit),
                              why(r.arithmetic), r.overall]),
    "holds": (["claim", "article", "recomputed", "released configs"],
              lambda r: [r.claim, printed(r), fmt(r.recomputed, r.unit),
                         fmt(r.public_config, r.unit)]),
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


def by_section(rows: list[Row]) -> dict[str, list[Row]]:
    """Rows grouped by the article section they come from, in the order they first appear."""
    out = defaultdict(list)
    for r in rows:
        out[r.section].append(r)
    return dict(out)


def by_topic(rows: list[Row]) -> dict[str, list[Row]]:
    """Rows grouped by claims topic (``kv_cache``, ``serving``, ...), in the topics' order."""
    from . import claims, topics
    topic_of = {cid: t for t in topics() for cid in claims(t)}
    out = defaultdict(list)
    for r in rows:
        out[topic_of[r.id]].append(r)
    return {t: out[t] for t in topics() if out[t]}

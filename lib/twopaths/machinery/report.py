"""Tables a chapter displays, and the values behind them.

``markdown_table`` formats rows the caller has already turned into text. ``Table`` keeps each
cell's value beside the column's unit and format, so ``chapter.show`` can display the table and
record every number in it for the results file (a re-run's ``results.json`` then holds what its
tables show, not only what the prose glues).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from IPython.display import Markdown

NA = "n/a"   # how a missing value (None) is shown
# A table of more columns than this and at most SIDEWAYS_ROWS rows is shown on its side (one row a
# column, one column a row), so that it fits the text column: 16 columns of a plan side by side
# run to twice its width, and the answer, nodes, went off screen.
SIDEWAYS_COLUMNS = 8
SIDEWAYS_ROWS = 5


def markdown_table(headers: list[str], rows: list[list]) -> Markdown:
    """A Markdown table; floats are printed by the caller, so the units stay visible in the text."""
    if any(len(r) != len(headers) for r in rows):
        raise ValueError("rows: every row needs one cell per header")
    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return Markdown("\n".join(lines))


@dataclass(frozen=True)
class Column:
    """A column: its header, the unit of its values ("text" for words) and how a value is shown
    (a format string such as ``"{:,.1f} GB"`` or a function). Values are recorded as given, so
    give them in ``unit`` (GB for a column shown in GB)."""
    header: str
    unit: str = "text"
    fmt: str | Callable[[object], str] = "{}"

    def shown(self, value) -> str:
        if value is None:
            return NA
        if isinstance(value, str):   # words, or a value that has no number ("no valid plan")
            return value
        return self.fmt(value) if callable(self.fmt) else self.fmt.format(value)


def column(spec: Column | str) -> Column:
    return spec if isinstance(spec, Column) else Column(spec)


@dataclass(frozen=True)
class Table:
    """A titled table of values; ``markdown()`` shows it, ``cells()`` lists what it records."""
    title: str
    columns: tuple[Column, ...]
    rows: tuple[tuple, ...]
    note: str = ""   # a line under the table (what a missing row means, say)
    # Shown as one table per value of the first column (a weights scenario, say), each under
    # that value: for a table too wide to show whole that has too many rows to turn on its side.
    split: bool = False

    def __post_init__(self):
        if any(len(r) != len(self.columns) for r in self.rows):
            raise ValueError(f"{self.title}: every row needs one cell per column ({len(self.columns)})")

    @property
    def sideways(self) -> bool:
        """Shown turned on its side: many columns, few rows."""
        return len(self.columns) > SIDEWAYS_COLUMNS and len(self.rows) <= SIDEWAYS_ROWS

    def _lines(self) -> tuple[list[str], list[list[str]]]:
        """Headers and rows as shown. On its side, each row of values becomes a column headed by
        its leading text cells (model, GPU, decode unit: what names it), and each other column
        becomes a row headed by the column's header, in the columns' order."""
        shown = [[c.shown(v) for c, v in zip(self.columns, r)] for r in self.rows]
        if not self.sideways:
            return [c.header for c in self.columns], shown
        lead = next((i for i, c in enumerate(self.columns) if c.unit != "text"), len(self.columns))
        lead = min(max(lead, 1), len(self.columns) - 1)
        headers = [""] + [", ".join(r[:lead]) for r in shown]
        return headers, [[c.header] + [r[j] for r in shown] for j, c in enumerate(self.columns) if j >= lead]

    def markdown(self, anchor: str = "") -> Markdown:
        """The table in Markdown under its title in bold; ``anchor`` (a page's name for it) rides
        before the title as an empty ``<a id="tbl-...">``, which the site turns into a label prose
        can cite (``machinery.sphinx_ext.caption_tables``) and Jupyter does not show. A split
        table is one titled table per value of its first column, the anchor on the first."""
        slug = re.sub(r"[^a-z0-9]+", "-", anchor.lower()).strip("-")
        mark = f'<a id="tbl-{slug}"></a>' if slug and self.title else ""
        if self.split and len(self.columns) > 1:
            head, groups = self.columns[0], {}
            for r in self.rows:
                groups.setdefault(head.shown(r[0]), []).append(r[1:])
            parts = [(f"{self.title} ({head.header}: {key})" if self.title else "",
                      Table("", self.columns[1:], tuple(rows))) for key, rows in groups.items()]
        else:
            parts = [(self.title, self)]
        text = "\n\n".join((f"{mark if i == 0 else ''}**{title}**\n\n" if title else "")
                           + markdown_table(*part._lines()).data for i, (title, part) in enumerate(parts))
        return Markdown(text + (f"\n\n{self.note}" if self.note else ""))

    def cells(self):
        """``(row, header, value, unit)`` for every cell; a text cell in a numeric column (a value
        that has none) is recorded as text."""
        for i, r in enumerate(self.rows):
            for c, v in zip(self.columns, r):
                yield i, c.header, v, (c.unit if isinstance(v, (int, float)) else "text")


def table(title: str, columns: list[Column | str], rows: list[list], note: str = "", split: bool = False) -> Table:
    return Table(title, tuple(column(c) for c in columns), tuple(tuple(r) for r in rows), note, split)

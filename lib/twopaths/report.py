"""Small helpers that turn computed rows into tables a chapter displays."""

from __future__ import annotations

from IPython.display import Markdown


def markdown_table(headers: list[str], rows: list[list]) -> Markdown:
    """A Markdown table; floats are printed by the caller, so the units stay visible in the text."""
    if any(len(r) != len(headers) for r in rows):
        raise ValueError("rows: every row needs one cell per header")
    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return Markdown("\n".join(lines))

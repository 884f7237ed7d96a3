"""Uncertain facts kept as alternatives (``alternatives.yaml``): each option with its source.

The registry applies one option of each (``used``); nothing else is chosen silently, because the
audit evaluates every claim that depends on such a fact under each option and reports "depends on"
with the values where the options disagree.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from pathlib import Path

import yaml

from ..errors import check_choice

HERE = Path(__file__).parent


@dataclass(frozen=True)
class Option:
    id: str
    label: str
    source: str
    settings: dict


@dataclass(frozen=True)
class Alternative:
    id: str
    fact: str
    used: str
    why: str
    options: tuple[Option, ...]

    def option(self, option_id: str) -> Option:
        check_choice("option", option_id, [o.id for o in self.options])
        return next(o for o in self.options if o.id == option_id)


@cache
def alternatives() -> dict[str, Alternative]:
    """Every uncertain fact, by id; ``used`` must name one of its options."""
    out = {}
    for item in yaml.safe_load((HERE / "alternatives.yaml").read_text()):
        options = tuple(Option(**o) for o in item.pop("options"))
        alt = Alternative(options=options, **item)
        check_choice(f"{alt.id}.used", alt.used, [o.id for o in options])
        out[alt.id] = alt
    return out


def alternative(fact_id: str) -> Alternative:
    """One uncertain fact, by id."""
    check_choice("fact", fact_id, list(alternatives()))
    return alternatives()[fact_id]

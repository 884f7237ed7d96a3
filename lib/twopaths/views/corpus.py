"""Which configs of AIConfigurator's bundled corpus ``specs.from_config`` reads, family by family,
and why it refuses the others: the table chapter 16 shows, and the count ``tests/test_peer_corpus.py``
checks against AIConfigurator's own figures."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from .. import specs
from ..errors import ParameterError
from ..specs import lookup
from ..specs.from_config import load


@dataclass(frozen=True)
class Reading:
    """One corpus config: the book's family for it, or the reason it is refused."""
    name: str
    model_type: str
    family: str | None
    reason: str | None


def read(name: str) -> Reading:
    path = lookup.corpus_path(name)
    model_type = str(load(path).get("model_type"))
    try:
        return Reading(name, model_type, specs.from_config(path).raw["family"], None)
    except ParameterError as e:     # a refusal names the key and what it got
        return Reading(name, model_type, None, f"{e.name}: got {e.got!r}")


def readings() -> list[Reading]:
    """Every corpus config, read; empty when AIConfigurator is not installed."""
    return [read(n) for n in lookup.corpus_names()]


def by_family(rs: list[Reading]) -> list[list]:
    """Rows of (family, model types, configs, one example, why not read): the families read, most
    configs first, then the refused, one row a reason."""
    groups = defaultdict(list)
    for r in rs:
        groups[r.family, r.reason].append(r)
    order = sorted(groups, key=lambda k: (k[0] is None, -len(groups[k]), k[0] or k[1]))
    return [[family or "not read", ", ".join(sorted({r.model_type for r in groups[family, reason]})),
             len(groups[family, reason]), groups[family, reason][0].name, reason or ""]
            for family, reason in order]

"""What inference engines can launch (``engines.yaml``): per engine, its version, its command and,
per feature the book's planner uses, the flag, its constraint, the model families it applies to
and its source.

- ``engines()``: every ``Engine``, in the table's order (the first that can launch a plan is the
  one a plan names); ``engine(id)``: one.
- ``Engine.feature(name)``: a ``Feature``, or None where the engine has none by that name;
  ``Engine.supports(name, family)``: whether it has the feature for a model family.

Which engine can launch which placement is decided from these facts by ``calc.placement``; the
command lines are ``views.launch``'s.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

import yaml

from ..errors import check_choice

HERE = Path(__file__).parent


@dataclass(frozen=True)
class Feature:
    flag: str
    source: str
    constraint: str = ""
    families: tuple[str, ...] | None = None    # None: every family
    stripes: tuple[str, ...] = ()              # cache kinds decode context parallelism stripes
    values: dict = field(default_factory=dict)  # the book's names to the engine's
    extra: tuple[str, ...] = ()                # flags that go with this one
    with_attention_dp: bool = True             # whether it combines with attention DP
    with_expert_parallel: bool = False         # pipeline stages: whether a stage may be an EP group
    uneven: bool = False                       # expert parallelism: whether experts may split unevenly
    whole: tuple[str, ...] = ()                # tensor parallelism: groups a rank holds whole (DP attention)
    per_rank: bool = False                     # a count per data-parallel rank, not per unit
    family_values: dict = field(default_factory=dict)   # a family's allowed subset of ``values``


@dataclass(frozen=True)
class Engine:
    id: str
    name: str
    version: str
    command: str
    source: str
    features: dict = field(default_factory=dict, compare=False)

    def feature(self, name: str) -> Feature | None:
        return self.features.get(name)

    def supports(self, name: str, family: str | None = None) -> bool:
        f = self.feature(name)
        return f is not None and (f.families is None or family in f.families)

    @property
    def label(self) -> str:
        return f"{self.name} {self.version}"


def _feature(d: dict) -> Feature:
    return Feature(flag=d["flag"], source=d["source"], constraint=d.get("constraint", ""),
                   families=tuple(d["families"]) if "families" in d else None,
                   stripes=tuple(d.get("stripes", ())), values=dict(d.get("values", {})),
                   extra=tuple(d.get("extra", ())), with_attention_dp=d.get("with_attention_dp", True),
                   with_expert_parallel=d.get("with_expert_parallel", False), uneven=d.get("uneven", False),
                   whole=tuple(d.get("whole", ())), per_rank=d.get("per_rank", False),
                   family_values={k: tuple(v) for k, v in d.get("family_values", {}).items()})


@cache
def engines() -> tuple[Engine, ...]:
    data = yaml.safe_load((HERE / "engines.yaml").read_text())["engines"]
    return tuple(Engine(eid, d["name"], str(d["version"]), d["command"], d["source"],
                        {k: _feature(v) for k, v in d["features"].items()}) for eid, d in data.items())


def engine(engine_id: str) -> Engine:
    check_choice("engine", engine_id, [e.id for e in engines()])
    return next(e for e in engines() if e.id == engine_id)

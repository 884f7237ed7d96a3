"""One-at-a-time sensitivity of the fleet's node count (the data behind a tornado chart).

``tornado(model, gpu, a, work, ranges)`` plans the fleet once under assumptions ``a`` and workload
``work``, then again with each setting moved to its low and its high value, the others held. A
setting is a field of ``Assumptions`` (``usable_fraction``, ``capacity``, ``kv_dtype``, ...), of
``Workload`` (``concurrency``, ``context``, ``rho``) or ``gpu``. A setting under which no plan is
valid counts as an infinite number of nodes, so the chart shows the wall rather than hiding it.

``settings(models, ...)`` moves the same settings for several models; ``ranked`` orders them by
how far they move the first model's node count over the second's. Where a model has no plan at
one end, its ``Count`` says why and names the fix instead of a number. How they read in a table
or on a chart is ``views.sensitivity_tables``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields, replace

from ..errors import ParameterError
from ..specs.serving import Assumptions
from .fleet import Workload, plan_or_reason

WORK_FIELDS = tuple(f.name for f in fields(Workload))


@dataclass(frozen=True)
class Bar:
    assumption: str
    low: object              # the setting's low and high values
    high: object
    low_nodes: float         # total nodes (decode + prefill) at each
    high_nodes: float
    base_nodes: float

    @property
    def span(self) -> float:
        """How far the count moves across the range (inf when one end does not fit)."""
        return abs(self.high_nodes - self.low_nodes)


@dataclass(frozen=True)
class Count:
    """Total nodes of one plan, or why there is none (``fleet.NoValidPlan.fix``, or what the book
    cannot size for the model)."""
    nodes: int | None
    why: str = ""

    @property
    def shown(self) -> int | str:
        """The count, or the reason in words: what a table cell holds."""
        return self.nodes if self.nodes is not None else self.why

    @property
    def infinite(self) -> float:
        """The count as a chart draws it: inf where there is no plan."""
        return math.inf if self.nodes is None else float(self.nodes)


def count(model: str, gpu: str, a: Assumptions, work: Workload) -> Count:
    """The node count of ``model``'s plan; where none exists, why, with the smallest fix."""
    p = plan_or_reason(model, gpu, a, work)
    return Count(None, p) if isinstance(p, str) else Count(p.nodes)


def ratio(first: Count, second: Count) -> float | None:
    """``first``'s nodes over ``second``'s; None where either has no plan."""
    return first.nodes / second.nodes if first.nodes is not None and second.nodes is not None else None


def nodes(model: str, gpu: str, a: Assumptions, work: Workload) -> float:
    """Total nodes of the plan; inf where none is valid."""
    return count(model, gpu, a, work).infinite


def _moved(gpu: str, a: Assumptions, work: Workload, name: str, value):
    if name == "gpu":
        return value, a, work
    if name in WORK_FIELDS:
        return gpu, a, replace(work, **{name: value})
    try:
        return gpu, a.but(**{name: value}), work
    except ParameterError as e:
        if e.name == "assumption":
            raise ParameterError("ranges", name, "fields of Assumptions or Workload, or 'gpu'") from None
        raise


@dataclass(frozen=True)
class Setting:
    """One setting moved to its low and its high value, the others held: ``counts[i]`` is model
    i's count at each end, low first."""
    assumption: str
    low: object
    high: object
    counts: tuple[tuple[Count, Count], ...]

    def ratio(self, end: int) -> float | None:
        """The first model's nodes over the second's at one end (0 low, 1 high)."""
        return ratio(self.counts[0][end], self.counts[1][end])

    @property
    def moves(self) -> float:
        """How far the first : second ratio moves across the range; inf where an end has none."""
        lo, hi = self.ratio(0), self.ratio(1)
        return math.inf if lo is None or hi is None else abs(hi - lo)


def settings(models: list[str], gpu: str, a: Assumptions, work: Workload,
             ranges: dict[str, tuple]) -> tuple[tuple[Count, ...], list[Setting]]:
    """Each model's base count, then every setting of ``ranges`` ({name: (low, high)}) in order."""
    out = []
    for name, (lo, hi) in ranges.items():
        ends = [_moved(gpu, a, work, name, v) for v in (lo, hi)]
        out.append(Setting(name, lo, hi, tuple(tuple(count(m, *e) for e in ends) for m in models)))
    return tuple(count(m, gpu, a, work) for m in models), out


def bars(base: tuple[Count, ...], moved: list[Setting], which: int = 0) -> list[Bar]:
    """Model ``which``'s tornado bars from ``settings``, widest first."""
    out = [Bar(s.assumption, s.low, s.high, s.counts[which][0].infinite, s.counts[which][1].infinite,
               base[which].infinite) for s in moved]
    return sorted(out, key=lambda b: -b.span)


def tornado(model: str, gpu: str, a: Assumptions, work: Workload, ranges: dict[str, tuple]) -> list[Bar]:
    """Bars for every setting in ``ranges`` ({name: (low, high)}), widest first."""
    return bars(*settings([model], gpu, a, work, ranges))


def ranked(moved: list[Setting]) -> list[Setting]:
    """The settings, the one that moves the first : second node ratio furthest first (one that
    leaves a model without a plan first of all)."""
    return sorted(moved, key=lambda s: -s.moves)

"""One-at-a-time sensitivity of the fleet's node count (the data behind a tornado chart).

``tornado(model, gpu, a, work, ranges)`` plans the fleet once under assumptions ``a`` and workload
``work``, then again with each setting moved to its low and its high value, the others held. A
setting is a field of ``Assumptions`` (``usable_fraction``, ``capacity``, ``kv_dtype``, ...), of
``Workload`` (``concurrency``, ``context``, ``rho``) or ``gpu``. A setting under which no plan is
valid counts as an infinite number of nodes, so the chart shows the wall rather than hiding it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields, replace

from ..errors import ParameterError
from ..specs.serving import Assumptions
from .fleet import NoValidPlan, Workload, plan

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


def nodes(model: str, gpu: str, a: Assumptions, work: Workload) -> float:
    """Total nodes of the plan; inf where none is valid."""
    try:
        return float(plan(model, gpu, a, work).nodes)
    except NoValidPlan:
        return math.inf


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


def tornado(model: str, gpu: str, a: Assumptions, work: Workload, ranges: dict[str, tuple]) -> list[Bar]:
    """Bars for every setting in ``ranges`` ({name: (low, high)}), widest first."""
    base = nodes(model, gpu, a, work)
    bars = [Bar(name, lo, hi, nodes(model, *_moved(gpu, a, work, name, lo)),
                nodes(model, *_moved(gpu, a, work, name, hi)), base) for name, (lo, hi) in ranges.items()]
    return sorted(bars, key=lambda b: -b.span)

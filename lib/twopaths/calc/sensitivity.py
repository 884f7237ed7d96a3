"""One-at-a-time sensitivity of the fleet's node count (the data behind a tornado chart).

``tornado(model, base, ranges)`` plans the fleet once with ``base`` (keyword arguments of
``calc.fleet.plan``), then again with each assumption moved to its low and its high value, the
others held at ``base``. A setting under which nothing fits (``plan`` refuses it) counts as an
infinite number of nodes, so the chart shows the wall rather than hiding it.

Under the public basis, where no EP size is given, ``plan`` gives each setting the whole-node EP
size with the fewest nodes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..errors import ParameterError
from .fleet import plan


@dataclass(frozen=True)
class Bar:
    assumption: str
    low: object              # the assumption's low and high settings
    high: object
    low_nodes: float         # total nodes (decode + prefill) at each
    high_nodes: float
    base_nodes: float

    @property
    def span(self) -> float:
        """How far the count moves across the range (inf when one end does not fit)."""
        return abs(self.high_nodes - self.low_nodes)


def nodes(model: str, **kw) -> float:
    """Total nodes for ``plan(model, **kw)``; inf where no layout or request fits."""
    try:
        return float(plan(model, **kw).nodes)
    except ParameterError as e:
        if e.name in ("gpu", "ep", "context"):   # the refusals that mean "it does not fit"
            return math.inf
        raise


def tornado(model: str, base: dict, ranges: dict[str, tuple]) -> list[Bar]:
    """Bars for every assumption in ``ranges`` ({plan keyword: (low, high)}), widest first."""
    base_nodes = nodes(model, **base)
    bars = [Bar(name, lo, hi, nodes(model, **{**base, name: lo}), nodes(model, **{**base, name: hi}), base_nodes)
            for name, (lo, hi) in ranges.items()]
    return sorted(bars, key=lambda b: -b.span)

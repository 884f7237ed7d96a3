"""One error type for bad input, and the small checks that raise it.

Every message names the parameter, what it got and what is allowed, so a notebook
re-run with a bad parameter stops in its first cells with a sentence a reader can act on.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from numbers import Integral, Real


class ParameterError(ValueError):
    """A parameter is outside what the function accepts."""

    def __init__(self, name: str, got, allowed: str):
        self.name, self.got, self.allowed = name, got, allowed
        super().__init__(f"{name}: got {got!r}; allowed: {allowed}")


def check_choice(name: str, value, allowed: Iterable):
    allowed = list(allowed)
    if value not in allowed:
        raise ParameterError(name, value, "one of " + ", ".join(map(repr, allowed)))
    return value


def check_int(name: str, value, *, minimum: int | None = None, maximum: int | None = None) -> int:
    """An integer (bools refused) within [minimum, maximum]."""
    if isinstance(value, bool) or not isinstance(value, Integral):
        raise ParameterError(name, value, _range_text("an integer", minimum, maximum))
    if (minimum is not None and value < minimum) or (maximum is not None and value > maximum):
        raise ParameterError(name, value, _range_text("an integer", minimum, maximum))
    return int(value)


def check_real(name: str, value, *, minimum: float | None = None, maximum: float | None = None,
               open_min: bool = False) -> float:
    """A finite real number within [minimum, maximum] (or (minimum, maximum] if open_min)."""
    if isinstance(value, bool) or not isinstance(value, Real) or not math.isfinite(value):
        raise ParameterError(name, value, _range_text("a finite number", minimum, maximum, open_min))
    below = minimum is not None and (value <= minimum if open_min else value < minimum)
    if below or (maximum is not None and value > maximum):
        raise ParameterError(name, value, _range_text("a finite number", minimum, maximum, open_min))
    return float(value)


def check_list(name: str, values, allowed: Iterable) -> list:
    """A non-empty list of distinct items, all from ``allowed``."""
    allowed = list(allowed)
    if isinstance(values, str) or not isinstance(values, Iterable):
        raise ParameterError(name, values, "a non-empty list drawn from " + ", ".join(map(repr, allowed)))
    values = list(values)
    if not values:
        raise ParameterError(name, values, "a non-empty list drawn from " + ", ".join(map(repr, allowed)))
    for v in values:
        if v not in allowed:
            raise ParameterError(name, values, f"items drawn from {', '.join(map(repr, allowed))} ({v!r} is not)")
    repeated = sorted({v for v in values if values.count(v) > 1}, key=values.index)
    if repeated:   # a repeated model or GPU would print every one of its rows twice
        raise ParameterError(name, values, f"each item once ({', '.join(map(repr, repeated))} repeated)")
    return values


def _range_text(kind: str, lo, hi, open_min: bool = False) -> str:
    if lo is not None and hi is not None:
        return f"{kind} in {'(' if open_min else '['}{lo}, {hi}]"
    if lo is not None:
        return f"{kind} {'>' if open_min else '>='} {lo}"
    if hi is not None:
        return f"{kind} <= {hi}"
    return kind

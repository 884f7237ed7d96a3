"""Rounding, named: how a demand becomes a whole number of GPUs, units or requests.

Two rules, chosen by a ``rounding`` argument everywhere in the deployment calculators:

- ``"strict"`` (the default): a capacity that must cover a demand rounds up (GPUs, nodes, units,
  resident requests); a count of what fits rounds down (requests per unit). A plan made this way
  never falls short. Intermediate figures are carried unrounded.
- ``"article"``: what the article does, so its figures can be matched and the difference shown:
  every count to the nearest whole number, halves up (146.9 requests per unit print as 147, 68.03
  units as 68, 9.5 decode nodes as ~10), and intermediate figures rounded to the precision it
  prints before they are carried on (``to_step``, ``to_figures``).

``cover`` and ``fit`` take a number or a numpy array. A number gives an ``int``; an array gives a
float array of whole numbers, in which an infinite demand (nothing fits) stays ``inf``.
"""

from __future__ import annotations

import numpy as np

from ..errors import check_choice

ROUNDINGS = ("strict", "article")
# A quotient such as 10,000 x 0.25 / 2,500 may land a hair off a whole number in floating point;
# rounding to 9 decimals first keeps it whole, far below any figure the book prints.
_DECIMALS = 9


def _whole(values):
    return int(values) if np.ndim(values) == 0 and np.isfinite(values) else values


def _nearest(x):
    return np.floor(x + 0.5)          # halves up, as the article rounds (Python's round() goes to even)


def cover(x, rounding: str = "strict"):
    """How many whole things cover a demand of ``x`` of them: up (strict) or nearest (article)."""
    check_choice("rounding", rounding, ROUNDINGS)
    x = np.round(np.asarray(x, dtype=float), _DECIMALS)
    return _whole(np.ceil(x) if rounding == "strict" else _nearest(x))


def fit(x, rounding: str = "strict"):
    """How many whole things fit where ``x`` of them would: down (strict) or nearest (article)."""
    check_choice("rounding", rounding, ROUNDINGS)
    x = np.round(np.asarray(x, dtype=float), _DECIMALS)
    return _whole(np.floor(x) if rounding == "strict" else _nearest(x))


def to_figures(x: float, figures: int, rounding: str = "strict") -> float:
    """An intermediate figure as carried on: unchanged (strict), or to ``figures`` significant
    figures (article)."""
    check_choice("rounding", rounding, ROUNDINGS)
    if rounding == "strict" or x == 0:
        return x
    return to_step(x, 10.0 ** (np.floor(np.log10(abs(x))) - figures + 1), rounding)


def to_step(x, step: float, rounding: str = "strict"):
    """An intermediate figure as carried on: unchanged (strict), or to the nearest ``step`` (article)."""
    check_choice("rounding", rounding, ROUNDINGS)
    if rounding == "strict":
        return x
    out = step * _nearest(np.round(np.asarray(x, dtype=float) / step, _DECIMALS))
    return float(out) if np.ndim(out) == 0 else out

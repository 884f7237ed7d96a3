"""The checks of ``twopaths.errors`` over a number or a numpy array, for calculators a sweep calls.

Each returns what it was given (a Python number for a number, a numpy array for an array) or raises
the same ``ParameterError`` the scalar check would raise for the first offending element.
"""

from __future__ import annotations

import numpy as np

from ..errors import ParameterError, check_int, check_real


def reals(name: str, values, *, minimum: float | None = None, maximum: float | None = None,
          open_min: bool = False):
    """Finite reals in [minimum, maximum] (or (minimum, maximum] with ``open_min``)."""
    if np.ndim(values) == 0:
        return check_real(name, values.item() if isinstance(values, np.generic) else values,
                          minimum=minimum, maximum=maximum, open_min=open_min)
    arr = np.asarray(values)
    if arr.dtype.kind not in "iuf" or arr.size == 0:
        raise ParameterError(name, values, "a non-empty array of numbers")
    arr = arr.astype(float)
    bad = ~np.isfinite(arr)
    if minimum is not None:
        bad |= (arr <= minimum) if open_min else (arr < minimum)
    if maximum is not None:
        bad |= arr > maximum
    if bad.any():
        check_real(name, arr[bad].flat[0].item(), minimum=minimum, maximum=maximum, open_min=open_min)
    return arr


def ints(name: str, values, *, minimum: int | None = None, maximum: int | None = None):
    """Integers in [minimum, maximum] (bools refused)."""
    if np.ndim(values) == 0:
        return check_int(name, values.item() if isinstance(values, np.integer) else values,
                         minimum=minimum, maximum=maximum)
    arr = np.asarray(values)
    if arr.dtype.kind not in "iu" or arr.size == 0:
        raise ParameterError(name, values, "a non-empty array of integers")
    bad = np.zeros(arr.shape, bool)
    if minimum is not None:
        bad |= arr < minimum
    if maximum is not None:
        bad |= arr > maximum
    if bad.any():
        check_int(name, arr[bad].flat[0].item(), minimum=minimum, maximum=maximum)
    return arr.astype(np.int64)

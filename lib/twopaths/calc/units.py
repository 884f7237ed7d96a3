"""Byte units, named explicitly: decimal (kB, MB, GB, TB) and binary (KiB, MiB, GiB, TiB).

The article mixes the two; the book never does. Every formatted figure says which one it uses.
"""

from __future__ import annotations

import math

from ..errors import check_choice

UNITS = {
    "B": 1, "kB": 1e3, "MB": 1e6, "GB": 1e9, "TB": 1e12, "PB": 1e15,
    "KiB": 2**10, "MiB": 2**20, "GiB": 2**30, "TiB": 2**40,
}


def to_unit(n_bytes: float, unit: str) -> float:
    """``n_bytes`` expressed in ``unit`` (one of UNITS)."""
    check_choice("unit", unit, UNITS)
    return n_bytes / UNITS[unit]


def fmt_bytes(n_bytes: float, unit: str, digits: int = 1) -> str:
    """``n_bytes`` as text in the named unit, e.g. ``fmt_bytes(61_440, "kB") == "61.4 kB"``."""
    return f"{to_unit(n_bytes, unit):,.{digits}f} {unit}"


def fmt_amount(value: float, unit: str, digits: int = 2) -> str:
    """``value``, already in ``unit``, with ``digits`` decimals, or three significant digits when it
    is below one (a short context in GB, a small fleet in TB), so it never prints as 0.00."""
    if value and abs(value) < 1:
        digits = max(digits, 2 - math.floor(math.log10(abs(value))))
    return f"{value:,.{digits}f} {unit}"

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


# units that only say "a number of things": the number alone reads better ("4", not "4 count")
BARE = ("count", "number")
# count nouns written in the plural: one of them is singular ("1 expert", "1 entry")
SINGULAR = {"experts": "expert", "layers": "layer", "nodes": "node", "GPUs": "GPU", "dims": "dim",
            "entries": "entry", "requests": "request", "heads": "head", "units": "unit",
            "tokens": "token", "points": "point", "K entries": "K entry"}


def quantity(value: float, unit: str) -> str:
    """A figure with its unit as prose prints it: thousands separated at and past 10,000 (32,489,
    never 3.249e+04), four significant digits below and never in e-notation (0.0000123), a count
    noun singular for one, and no unit word for a bare count."""
    value = float(value)
    if math.isinf(value):
        number = f"{'-' if value < 0 else ''}∞"
    elif abs(value) >= 1e4 or value == 0:
        number = f"{value:,.0f}"
    else:
        number = f"{value:,.4g}"
        if "e" in number:        # below 1e-4: as many decimals as four significant digits need
            number = f"{value:,.{3 - math.floor(math.log10(abs(value)))}f}"
    return with_unit(number, unit)


def with_unit(number: str, unit: str) -> str:
    """A number already written out, with its unit: singular for one, none for a bare count."""
    if unit in BARE:
        return number
    return f"{number} {SINGULAR.get(unit, unit) if number == '1' else unit}"

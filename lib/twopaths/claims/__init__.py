"""The article's numeric claims as data, and the comparison of a stated figure with a recomputed one.

Verdicts, in the order they are tried:
- ``matches``: the recomputed value rounds to the stated one at the precision the article printed
  (so a figure printed with one significant digit, like "5x", is only checked to that digit);
- ``unit slip``: it matches only when the article's decimal unit is read as its binary counterpart
  (MB as MiB, ...);
- ``rounding``: it is within one unit of the last printed digit and within 1% (truncated, or
  rounded from an already rounded figure);
- ``differs``: none of the above.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from functools import cache
from pathlib import Path

import yaml

from ..calc.units import UNITS
from ..errors import check_choice

HERE = Path(__file__).parent
BINARY_OF = {"kB": "KiB", "MB": "MiB", "GB": "GiB", "TB": "TiB"}
CLAIM_UNITS = set(UNITS) | {"%", "x"}   # bytes in a named unit, a percentage, or a plain ratio


@dataclass(frozen=True)
class Claim:
    id: str
    section: str
    paraphrase: str
    stated: str
    unit: str

    def __post_init__(self):
        if self.unit not in CLAIM_UNITS:
            raise ValueError(f"claim {self.id}: unit {self.unit!r} is not one of {sorted(CLAIM_UNITS)}")
        float(self.stated)   # a stated value must be a number as printed

    @property
    def value(self) -> float:
        return float(self.stated)


@cache
def claims(topic: str = "kv_cache") -> dict[str, Claim]:
    """The claims of one topic file (``<topic>.yaml`` beside this module), by id."""
    topics = sorted(p.stem for p in HERE.glob("*.yaml"))
    check_choice("topic", topic, topics)
    items = yaml.safe_load((HERE / f"{topic}.yaml").read_text())
    return {c["id"]: Claim(**c) for c in items}


def last_digit(stated: str) -> float:
    """The value of one unit in the last digit ``stated`` prints: 0.1 for "61.4", 1 for "616"."""
    return 10.0 ** -max(-Decimal(stated).as_tuple().exponent, 0)


def rounds_to(stated: str, value: float) -> bool:
    """True when ``value`` printed at ``stated``'s precision gives ``stated``."""
    return abs(value - float(stated)) <= 0.5 * last_digit(stated) + 1e-12


@dataclass(frozen=True)
class Verdict:
    claim: Claim
    recomputed: float      # in the claim's unit
    verdict: str           # "matches", "rounding", "unit slip" or "differs"
    note: str


def judge(claim: Claim, recomputed_si: float) -> Verdict:
    """Compare a claim with a value recomputed in SI (bytes for byte units, a plain ratio otherwise)."""
    unit = claim.unit
    if unit == "%":
        value = 100 * recomputed_si
    elif unit in UNITS:
        value = recomputed_si / UNITS[unit]
    else:
        value = recomputed_si
    if rounds_to(claim.stated, value):
        return Verdict(claim, value, "matches", "")
    binary = BINARY_OF.get(unit)
    if binary and rounds_to(claim.stated, recomputed_si / UNITS[binary]):
        return Verdict(claim, value, "unit slip",
                       f"{claim.stated} is the value in {binary}; in {unit} it is {value:,.4g}")
    if abs(value - claim.value) < last_digit(claim.stated) and abs(value - claim.value) <= 0.01 * abs(value):
        return Verdict(claim, value, "rounding", f"recomputed {value:,.4g} {unit}, within one unit of the last digit")
    return Verdict(claim, value, "differs", f"recomputed {value:,.4g} {unit}")

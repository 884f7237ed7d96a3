"""The article's numeric claims as data, and the comparison of a stated figure with a recomputed one.

Verdicts, from best to worst:
- ``matches``: the recomputed value rounds to the stated one at the precision the article printed;
- ``rounding``: it is within one unit of the last printed digit (truncated, or rounded twice);
- ``unit slip``: it matches only when the article's decimal unit is read as its binary counterpart
  (MB as MiB, ...);
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


@dataclass(frozen=True)
class Claim:
    id: str
    section: str
    paraphrase: str
    stated: str
    unit: str

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
    if abs(value - claim.value) < last_digit(claim.stated):
        return Verdict(claim, value, "rounding", f"recomputed {value:,.4g} {unit}, within one unit of the last digit")
    binary = BINARY_OF.get(unit)
    if binary and rounds_to(claim.stated, recomputed_si / UNITS[binary]):
        return Verdict(claim, value, "unit slip",
                       f"{claim.stated} is the value in {binary}; in {unit} it is {value:,.4g}")
    return Verdict(claim, value, "differs", f"recomputed {value:,.4g} {unit}")

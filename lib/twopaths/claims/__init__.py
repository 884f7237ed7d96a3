"""The article's numeric claims as data, and the comparison of a stated figure with a recomputed one.

The precision policy, applied to every figure (the audit page states it once, from here):

- a figure is judged to the significant digits it prints, and "≈", "~" and "about" allow exactly
  those: "61.4" is read to the tenth, "616" to the unit, and a whole number's trailing zeros are not
  significant, so "40%" is read to the tens (40.9% holds), "10%" to the tens (11.4% holds) and "2x"
  to the unit (1.67x holds), while "25%" is read to the unit (25.8% does not round to it);
- "N x", "1/N" and "N:1" are figures like any other, judged to the digits printed ("3:1" holds for
  2.875; "1/16" for 1/16.67 is a rounding slip, as two digits give 17);
- structural counts (layers, heads, dims, experts, entries, ranks) are exact: "256 experts" is 256;
- counts of machines (GPUs, nodes, units) and of capacity (requests a unit holds) are exact integers
  too, every printed digit significant, and each has a direction: a machine count must be the need
  rounded up ("866 GPUs" for a need of 865.25; "865" is rounded the wrong way), a capacity the fit
  rounded down ("146 requests" where 146.9 fit; "147" is rounded the wrong way); a count one unit
  on the safe side ("4,390 GPUs" for a need of 4,389) is a rounding slip, and a count further off,
  however round ("20 GPUs" for a need of 12), differs;
- a figure derived from figures that hold only to their printed digits is as precise as they are:
  against the configs it holds within the sum of their relative half-units ("3:1" holds for 2.875,
  so "75%" and "25%" from it hold for 74.2% and 25.8%; the inputs judgment says so);
- a figure that is the value truncated at its printed digits is a rounding slip ("0.3%" for 0.352%,
  "25%" for 25.8%), and so is one within one unit of its last digit and 1% of the value (rounded from
  an already rounded figure); further off it differs ("0.1T" for 0.0023T).

Verdicts of ``judge``, in the order they are tried:
- ``matches``: the recomputed value satisfies the policy above;
- ``wrong direction``: a machine count or a capacity rounded the way capacity cannot use;
- ``unit slip``: it matches only when the article's decimal unit is read as its binary counterpart
  (MB as MiB, ...);
- ``rounding``: truncated, or within one unit of the last printed digit and 1% (a count: one unit on
  the safe side);
- ``differs``: none of the above.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from decimal import Decimal
from functools import cache
from pathlib import Path

import yaml

from ..calc.units import UNITS, quantity
from ..errors import check_choice

HERE = Path(__file__).parent
BINARY_OF = {"kB": "KiB", "MB": "MiB", "GB": "GiB", "TB": "TiB"}
# Units that are not bytes, and the SI value of one of them: parameters and tokens as plain counts,
# seconds, bytes/s (Gb/s counts bits, so one is 1e9/8 bytes/s), and a price per token.
SCALED_UNITS = {
    "M params": 1e6, "B params": 1e9, "T params": 1e12,
    "tokens": 1, "K tokens": 1e3, "M tokens": 1e6, "K entries": 1e3,
    "s": 1, "ms": 1e-3, "h": 3600,
    "GB/s": 1e9, "TB/s": 1e12, "Gb/s": 1e9 / 8, "tokens/s": 1,
    "USD/M tokens": 1e-6, "CNY/M tokens": 1e-6,
}
# Plain counts, compared as they are ("number": a dimensionless value that is not a ratio, e.g. a bound).
COUNT_UNITS = {"layers", "heads", "dims", "experts", "entries", "GPUs", "nodes", "units", "requests",
               "count", "rank", "points", "number", "statement"}
# Structural counts, and "statement": a claim with no figure (a comparison, an attribution) is stated
# as 1, true, and a check returns 1 where its source bears it out and 0 where it does not.
EXACT_UNITS = {"layers", "heads", "dims", "experts", "entries", "count", "rank", "statement"}
MACHINE_UNITS = {"GPUs", "nodes", "units"}    # what capacity needs: rounded up
CAPACITY_UNITS = {"requests"}                 # what a unit holds: rounded down
SCALE = UNITS | SCALED_UNITS   # the SI value of one of each unit that has a scale
CLAIM_UNITS = set(SCALE) | COUNT_UNITS | {"%", "x"}
VERSIONS = ("en", "zh")   # the article's English version and its Chinese original
# Why a claim cannot be recomputed: a claim left unchecked says which of these it is ("kind" or
# "kind: detail"). Scores, prices, the future and opinions are no recomputation's to give; the article's
# own scenario is a choice, a measurement or a design detail someone reports is theirs, and a source
# the project cannot hold (a config not published where it can read it) is named as such.
UNCHECKABLE = ("benchmark score", "price", "future event", "opinion", "scenario assumption",
               "reported measurement", "quoted design detail", "bibliographic detail", "no source in the project")


@dataclass(frozen=True)
class Claim:
    id: str
    section: str
    paraphrase: str
    stated: str
    unit: str
    versions: tuple[str, ...] = VERSIONS     # where the claim is printed: "en", "zh" or both
    inputs: tuple[str, ...] = ()             # the article's stated assumptions behind the figure
    derived_from: tuple[str, ...] = ()       # ids of the claims the article computes it from
    differs_from: str | None = None          # the id of the same claim as the other version prints it
    checkable: bool | str = True             # True, or why no recomputation can check it
    note: str = ""
    printed: tuple[str, ...] = ()            # the figures its sentence prints, where ``stated`` is none of them

    def __post_init__(self):
        if self.unit not in CLAIM_UNITS:
            raise ValueError(f"claim {self.id}: unit {self.unit!r} is not one of {sorted(CLAIM_UNITS)}")
        float(self.stated)   # a stated value must be a number as printed
        for name in ("versions", "inputs", "derived_from", "printed"):   # YAML lists; a frozen claim keeps tuples
            object.__setattr__(self, name, tuple(getattr(self, name)))
        if not self.versions or len(set(self.versions)) < len(self.versions) or not set(self.versions) <= set(VERSIONS):
            raise ValueError(f"claim {self.id}: versions {self.versions!r} must name one or both of {VERSIONS}")
        if self.checkable is not True and not (isinstance(self.checkable, str) and self.checkable):
            raise ValueError(f"claim {self.id}: checkable must be true or a reason, got {self.checkable!r}")
        if isinstance(self.checkable, str) and self.checkable.split(":")[0] not in UNCHECKABLE:
            raise ValueError(f"claim {self.id}: checkable {self.checkable!r} must start with one of "
                             f"{UNCHECKABLE} (\"kind\" or \"kind: detail\")")
        if self.id == self.differs_from or self.id in self.derived_from:
            raise ValueError(f"claim {self.id}: refers to itself")

    @property
    def value(self) -> float:
        return float(self.stated)


def policy() -> str:
    """The precision policy as this module's docstring states it, its bullets as Markdown: the audit
    page shows it from here, so the page and the code cannot drift apart."""
    doc = __doc__.split("The precision policy", 1)[1].split("Verdicts of", 1)[0]
    bullets = doc.split(":\n", 1)[1].strip()
    return "\n".join(line.strip() if line.startswith("- ") else "  " + line.strip()
                     for line in bullets.splitlines())


def topics() -> list[str]:
    """The topic files beside this module (``kv_cache``, ``serving``, ...), sorted."""
    return sorted(p.stem for p in HERE.glob("*.yaml"))


@cache
def claims(topic: str = "kv_cache") -> dict[str, Claim]:
    """The claims of one topic file (``<topic>.yaml`` beside this module), by id."""
    check_choice("topic", topic, topics())
    items = yaml.load((HERE / f"{topic}.yaml").read_text(), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    return {c["id"]: Claim(**c) for c in items}


def all_claims() -> dict[str, Claim]:
    """Every topic's claims in one mapping by id; an id used twice is an error."""
    merged: dict[str, Claim] = {}
    for topic in topics():
        for cid, claim in claims(topic).items():
            if cid in merged:
                raise ValueError(f"claim id {cid!r} is used twice (again in {topic}.yaml)")
            merged[cid] = claim
    return merged


def last_digit(stated: str, exact: bool = False) -> float:
    """The value of one unit in the last significant digit ``stated`` prints: 0.1 for "61.4", 1 for
    "616", 10 for "40" and "4390" (a whole number's trailing zeros are not significant) unless
    ``exact`` (a structural count, whose every digit counts)."""
    sign, digits, exponent = Decimal(stated).as_tuple()
    if exponent < 0 or exact:
        return 10.0 ** min(exponent, 0)
    zeros = len(digits) - len("".join(map(str, digits)).rstrip("0"))
    return 10.0 ** min(zeros, len(digits) - 1)


def significant(stated: str, exact: bool = False) -> int | None:
    """The significant digits of a whole number as printed ("40" has 1, "4390" 3, "616" 3), or
    None for a figure with a decimal point or an ``exact`` count (judged to its last digit)."""
    sign, digits, exponent = Decimal(stated).as_tuple()
    if exponent < 0 or exact:
        return None
    return max(len("".join(map(str, digits)).rstrip("0")), 1)


def to_step(value: float, step: float, mode: str = "nearest") -> float:
    """``value`` rounded to a multiple of ``step``: to the nearest (half up), ``up`` or ``down``."""
    q, eps = value / step, 1e-9
    whole = {"nearest": math.floor(q + 0.5 + eps), "up": math.ceil(q - eps), "down": math.floor(q + eps)}[mode]
    return whole * step


def to_digits(value: float, n: int, mode: str = "nearest") -> float:
    """``value`` rounded to ``n`` significant digits: to the nearest, ``up`` or ``down``."""
    if value == 0:
        return 0.0
    return to_step(value, 10.0 ** (math.floor(math.log10(abs(value))) - n + 1), mode)


def rounds_to(stated: str, value: float, exact: bool = False, mode: str = "nearest") -> bool:
    """True when ``value`` printed to ``stated``'s significant digits (rounded to the nearest, or
    ``up`` or ``down``) gives ``stated``."""
    if not math.isfinite(value):
        return False
    n = significant(stated, exact)
    got = to_step(value, last_digit(stated, True), mode) if n is None else to_digits(value, n, mode)
    return abs(got - float(stated)) <= 1e-9 * max(1.0, abs(float(stated)))


def needed(claim: "Claim", value: float) -> int:
    """The whole count a machine or capacity claim must print for ``value``: the need rounded up
    (machines) or the fit rounded down (capacity)."""
    need, _ = _directions(claim)
    return int(to_step(value, 1, need))


def _directions(claim: "Claim") -> tuple[str, str]:
    """(the rounding a count needs, the rounding capacity cannot use)."""
    return ("up", "down") if claim.unit in MACHINE_UNITS else ("down", "up")


def within_policy(claim: "Claim", value: float) -> str:
    """"matches", "wrong direction" or "differs": ``value`` (in the claim's unit) against the claim
    under the precision policy of this module."""
    if claim.unit in MACHINE_UNITS | CAPACITY_UNITS:
        if not math.isfinite(value):
            return "differs"
        _, wrong = _directions(claim)
        if float(claim.stated) == needed(claim, value):
            return "matches"
        return "wrong direction" if float(claim.stated) == to_step(value, 1, wrong) else "differs"
    return "matches" if rounds_to(claim.stated, value, claim.unit in EXACT_UNITS) else "differs"


def one_safe_unit(claim: "Claim", value: float) -> bool:
    """True for a count one unit on the safe side of what it needs: a machine more, a request fewer."""
    if claim.unit not in MACHINE_UNITS | CAPACITY_UNITS or not math.isfinite(value):
        return False
    over = float(claim.stated) - needed(claim, value)
    return over == (1 if claim.unit in MACHINE_UNITS else -1)


def rounding_slip(claim: "Claim", value: float) -> bool:
    """True where ``value`` (in the claim's unit) misses the claim by a rounding slip: a figure
    truncated at its printed digits ("1/16" for 1/16.67), or within one unit of its last digit and 1%
    of the value (rounded from an already rounded figure); a count one unit on the safe side. A
    structural count never slips."""
    if claim.unit in MACHINE_UNITS | CAPACITY_UNITS:
        return one_safe_unit(claim, value)
    if claim.unit in EXACT_UNITS or not math.isfinite(value) or value == 0:
        return False
    near = abs(value - claim.value) < last_digit(claim.stated) and abs(value - claim.value) <= 0.01 * abs(value)
    return _truncates(claim, value) or near


def _truncates(claim: "Claim", value: float) -> bool:
    """True where the claim prints ``value`` cut toward zero at its printed digits."""
    same_sign = (value < 0) == (claim.value < 0)
    return same_sign and rounds_to(claim.stated.lstrip("-"), abs(value), mode="down")


@dataclass(frozen=True)
class Verdict:
    claim: Claim
    recomputed: float      # in the claim's unit
    verdict: str           # "matches", "wrong direction", "rounding", "unit slip" or "differs"
    note: str


def judge(claim: Claim, recomputed_si: float) -> Verdict:
    """Compare a claim with a value recomputed in SI: bytes for byte units, the SI quantity of a
    scaled unit (a count of parameters or tokens, seconds, bytes/s, a price per token), a plain
    ratio for "%" and "x", the count itself for a count unit."""
    unit = claim.unit
    if unit == "%":
        value = 100 * recomputed_si
    elif unit in SCALE:
        value = recomputed_si / SCALE[unit]
    else:
        value = recomputed_si
    found = within_policy(claim, value)
    if found == "matches":
        return Verdict(claim, value, "matches", "")
    if found == "wrong direction":
        need, _ = _directions(claim)
        return Verdict(claim, value, found, f"recomputed {quantity(value, unit)}: a count capacity needs "
                                            f"rounded {need}, to {needed(claim, value):,}")
    if one_safe_unit(claim, value):
        return Verdict(claim, value, "rounding", f"recomputed {quantity(value, unit)}: the count needed is "
                                                 f"{needed(claim, value):,}, one fewer than printed"
                       if unit in MACHINE_UNITS else f"recomputed {quantity(value, unit)}: {needed(claim, value):,} "
                                                     f"fit, one more than printed")
    binary = BINARY_OF.get(unit)
    if binary and rounds_to(claim.stated, recomputed_si / UNITS[binary]):
        return Verdict(claim, value, "unit slip",
                       f"{claim.stated} is the value in {binary}; in {unit} it is {quantity(value, 'number')}")
    if rounding_slip(claim, value):
        how = "which it truncates" if _truncates(claim, value) else "within one unit of its last digit and 1%"
        return Verdict(claim, value, "rounding", f"recomputed {quantity(value, unit)}, {how}")
    return Verdict(claim, value, "differs", f"recomputed {quantity(value, unit)}")

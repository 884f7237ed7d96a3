"""The audit: every claim recomputed from named assumptions and judged.

A check is a function registered for one claim id (``@check("id", ...)`` in ``claims/checks/``) that
returns the claim's quantity in SI under the article's own assumptions; ``public`` optionally gives
the same quantity under the models' public configs. The verdict is mechanical (``judge``):

- ``matches``: the recomputed value rounds to the printed one;
- ``differs``: it does not; the note says why, starting with one of ``REASONS``. "unit slip" and
  "rounding" are found by ``judge``; any other difference must be explained by the check itself
  (``reason`` and ``explain``), and a check that explains a difference that is not there is a bug;
- ``not checkable``: the claim data says why (an external benchmark, a price, a quotation).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Callable

from . import Claim, all_claims, judge

REASONS = ("unit slip", "rounding", "inconsistent assumption", "wrong term", "arithmetic")
EXPLAINED = REASONS[2:]     # the reasons only a check can give


@dataclass(frozen=True)
class Check:
    claim_id: str
    article: Callable[[], float]
    public: Callable[[], float] | None = None
    reason: str = ""
    explain: str = ""


CHECKS: dict[str, Check] = {}


def check(claim_id: str, *, public: Callable[[], float] | None = None, reason: str = "", explain: str = ""):
    """Register the decorated function as the article-assumption recomputation of ``claim_id``."""
    if reason and reason not in EXPLAINED:
        raise ValueError(f"check {claim_id}: reason {reason!r} is not one of {EXPLAINED}")
    if reason and not explain:
        raise ValueError(f"check {claim_id}: a reason needs an explanation")

    def register(fn: Callable[[], float]):
        if claim_id in CHECKS:
            raise ValueError(f"check {claim_id} is registered twice")
        CHECKS[claim_id] = Check(claim_id, fn, public, reason, explain)
        return fn
    return register


@dataclass(frozen=True)
class Row:
    id: str
    section: str
    claim: str
    stated: str
    recomputed: float | None
    public_config: float | None
    unit: str
    verdict: str      # "matches", "differs" or "not checkable"
    note: str


def _in_unit(claim: Claim, si: float) -> float:
    return judge(claim, si).recomputed


def audit_row(claim: Claim) -> Row:
    """One claim's row of the audit."""
    base = dict(id=claim.id, section=claim.section, claim=claim.paraphrase, stated=claim.stated, unit=claim.unit)
    if claim.checkable is not True:
        return Row(recomputed=None, public_config=None, verdict="not checkable", note=claim.checkable, **base)
    c = _checks().get(claim.id)
    if c is None:
        raise LookupError(f"claim {claim.id} is checkable but no check is registered for it")
    v = judge(claim, c.article())
    public = _in_unit(claim, c.public()) if c.public else None
    if v.verdict == "matches":
        if c.reason:
            raise ValueError(f"check {claim.id} explains a difference ({c.reason}) but the claim matches: {v.recomputed:,.6g}")
        return Row(recomputed=v.recomputed, public_config=public, verdict="matches", note=c.explain, **base)
    if v.verdict in ("unit slip", "rounding"):
        note = f"{v.verdict}: {v.note}" + (f"; {c.explain}" if c.explain else "")
    elif c.reason:
        note = f"{c.reason}: {c.explain} ({v.note})"
    else:
        note = f"unexplained: {v.note}"
    return Row(recomputed=v.recomputed, public_config=public, verdict="differs", note=note, **base)


def _checks() -> dict[str, Check]:
    from . import checks  # noqa: F401  (registers every topic's checks)
    return CHECKS


def audit(topics: list[str] | None = None) -> list[Row]:
    """Rows for every claim (of ``topics``, if given), in the order the claim files list them."""
    from . import claims
    ids = [cid for t in topics for cid in claims(t)] if topics else list(all_claims())
    every = all_claims()
    return [audit_row(every[cid]) for cid in ids]


def as_dicts(rows: list[Row]) -> list[dict]:
    """Rows as JSON-ready dicts (NaN and infinities become null)."""
    out = []
    for r in rows:
        d = asdict(r)
        for k in ("recomputed", "public_config"):
            if isinstance(d[k], float) and not math.isfinite(d[k]):
                d[k] = None
        out.append(d)
    return out

"""The audit: every claim recomputed from named assumptions and judged three ways.

A check is a function registered for one claim id (``@check("id", ...)`` in ``claims/checks/``) that
returns the claim's quantity in SI under the article's own assumptions; ``public`` optionally gives
the same quantity under the models' released configs (and the book's serving assumptions for a
serving plan). Each claim gets three judgments, each with its reason:

- **arithmetic**: does the stated figure follow from the article's stated inputs, under the precision
  policy of ``twopaths.claims`` (printed significant digits; machine counts rounded up, capacities
  down)? ``holds``, ``slip`` (a unit slip or a rounding) or ``fails``; ``not judged`` where the
  recomputation prices another quantity than the article computed (see the other two);
- **inputs**: are those inputs true of the released models and hardware? The public-config value,
  judged by the same policy, with its source: ``holds``, ``slip`` (a rounding slip of the configs'
  value), ``fails``, ``depends`` (an uncertain fact of
  ``specs/alternatives.yaml`` whose options disagree) or ``not compared`` (no config or spec sheet
  gives the quantity: a scenario, a price, a quotation). Where the configs give exactly what the
  article's inputs give and only the arithmetic slipped or failed, the inputs hold: a fault is
  judged once, where it is made;
- **reasoning**: is the quantity the one the argument needs (term, unit, denominator, rounding
  direction, method)? ``holds`` unless the check names the fault.

The overall verdict follows from the three (``overall``): ``wrong: <failed judgments>`` where the
arithmetic or the reasoning fails; ``holds only under the article's inputs`` where only the inputs
fail and the figure is derived from them, ``wrong: inputs`` where the figure states the input itself
or also slips; ``depends on <fact>``; ``slip (unit)`` or ``slip (rounding)``; ``consistent, not
verified`` where the arithmetic holds but rests on figures no source checks (a benchmark score, a
price, the article's own scenario): internal consistency is not verification; ``holds``. No claim
whose inputs the configs contradict is ``holds``.

The legacy ``verdict`` (``matches``, ``differs``, ``not checkable``: the article's arithmetic alone)
and ``note`` are kept, with the note starting with one of ``REASONS`` where the claim differs. "unit
slip", "rounding" and "rounding direction" are found by ``judge``; any other difference must be
explained by the check (``reason`` and ``explain``), and a check that explains a difference that is
not there is a bug.
"""

from __future__ import annotations

import dataclasses
import math
import re
from dataclasses import asdict, dataclass
from typing import Callable

from ..calc.units import quantity
from . import (CAPACITY_UNITS, EXACT_UNITS, MACHINE_UNITS, Claim, all_claims, judge, last_digit, needed, rounding_slip,
               within_policy)

REASONS = ("unit slip", "rounding", "rounding direction", "carried rounding", "inconsistent assumption",
           "wrong term", "arithmetic", "misattribution")
EXPLAINED = REASONS[4:] + ("unit slip",)    # the reasons a check may give
JUDGMENTS = ("arithmetic", "inputs", "reasoning")
# The judgment an explained reason belongs to; "inconsistent assumption" names its own (``fails``).
REASON_FAILS = {"wrong term": "reasoning", "arithmetic": "arithmetic", "unit slip": "arithmetic",
                "misattribution": "inputs"}
CATEGORIES = ("wrong", "holds only under the article's inputs", "depends", "slip", "holds",
              "consistent, not verified", "not checkable")


@dataclass(frozen=True)
class Check:
    claim_id: str
    article: Callable[[], float]
    public: Callable[[], float] | None = None
    reason: str = ""
    explain: str = ""
    fails: str = ""          # the judgment an explained difference belongs to
    reasoning: str = ""      # why the method is unsound, where the arithmetic may hold
    depends: tuple | None = None   # (fact id, option id -> public value in SI)
    basis: str = "the article's inputs"   # what the article-assumption value is computed from
    serving: bool = False    # the public value takes the book's serving assumptions (usable memory ...)
    carried: Callable[[], float] | None = None   # a count's step from the article's own printed counts
    fact: bool = False       # the configs judge the stated value itself, not the check's quantity
    cite: str = ""           # the public value's source, where the claim's names do not lead to it


CHECKS: dict[str, Check] = {}


def check(claim_id: str, *, public: Callable[[], float] | None = None, reason: str = "",
          explain: str = "", fails: str = "", reasoning: str = "", depends: tuple | None = None,
          basis: str = "the article's inputs", serving: bool = False,
          carried: Callable[[], float] | None = None, fact: bool = False, cite: str = ""):
    """Register the decorated function as the article-assumption recomputation of ``claim_id``;
    ``serving``: its public value is computed under the book's serving assumptions, which its
    sources then name (serving-topic claims always are). A count's recomputation is the need at its
    own step with every count before it rounded as capacity needs; ``carried`` gives the same step
    from the counts the article printed, so a count that only carries an earlier wrong rounding ("carried
    rounding") is told apart from one that makes its own ("rounding direction"). ``fact``: the stated value is a figure of the released
    model, so the configs judge it directly. ``cite``: the public value's source, where the models and
    GPUs the claim names do not lead to it."""
    if reason and reason not in EXPLAINED:
        raise ValueError(f"check {claim_id}: reason {reason!r} is not one of {EXPLAINED}")
    if reason and not explain:
        raise ValueError(f"check {claim_id}: a reason needs an explanation")
    fails = fails or REASON_FAILS.get(reason, "")
    if reason and fails not in JUDGMENTS:
        raise ValueError(f"check {claim_id}: reason {reason!r} must name the judgment it fails "
                         f"(fails=one of {JUDGMENTS})")

    def register(fn: Callable[[], float]):
        if claim_id in CHECKS:
            raise ValueError(f"check {claim_id} is registered twice")
        CHECKS[claim_id] = Check(claim_id, fn, public, reason, explain, fails, reasoning, depends,
                                 basis, serving, carried, fact, cite)
        return fn
    return register


@dataclass(frozen=True)
class Judgment:
    status: str     # "holds", "slip", "fails", "depends", "not judged" or "not compared"
    reason: str


@dataclass(frozen=True)
class Row:
    id: str
    section: str
    claim: str
    stated: str
    recomputed: float | None
    public_config: float | None
    unit: str
    verdict: str      # the article's arithmetic alone: "matches", "differs" or "not checkable"
    note: str
    arithmetic: Judgment | None = None
    inputs: Judgment | None = None
    reasoning: Judgment | None = None
    overall: str = "not checkable"
    source: str = ""               # where the public value comes from
    alternatives: tuple = ()       # (option id, value in the claim's unit, holds?) per option

    @property
    def category(self) -> str:
        """The overall verdict without its detail: one of ``CATEGORIES``."""
        return next(c for c in CATEGORIES if self.overall.startswith(c))

    @property
    def failed(self) -> tuple[str, ...]:
        """The judgments that fail or slip."""
        return tuple(j for j in JUDGMENTS
                     if getattr(self, j) and getattr(self, j).status in ("fails", "slip"))

    @property
    def slip(self) -> str:
        """"unit slip" or "rounding" where the arithmetic slips, else ""."""
        a = self.arithmetic
        return a.reason.split(":")[0] if a is not None and a.status == "slip" else ""

    @property
    def moves(self) -> float:
        """How far the released configs move the figure: the larger of public/stated and its
        inverse (1 where there is no public value; inf where one is zero or the signs differ)."""
        s, p = float(self.stated), self.public_config
        if p is None or not math.isfinite(p) or p == s:
            return 1.0 if p is None or p == s else math.inf
        if s == 0 or p == 0 or (s < 0) != (p < 0):
            return math.inf
        return max(p / s, s / p)


def _in_unit(claim: Claim, si: float) -> float:
    return judge(claim, si).recomputed


# The names a paraphrase uses for a model or a card, and the spec whose source backs its value.
NAMES = (("kimi-k3", r"\bK3\b|Kimi"), ("deepseek-v4-flash", r"Flash"),
         ("deepseek-v4-pro", r"V4|DSV4|DeepSeek's|Pro\b"), ("deepseek-v3.2", r"V3\.2"),
         ("deepseek-v3", r"\bV3\b(?!\.)"))
GPUS = (("h200", r"H200"), ("b300", r"B300"), ("h100", r"H100"), ("b200", r"B200"))


def sources(claim: Claim, serving: bool = False) -> str:
    """The sources of the specs a claim names (models' configs, GPUs' datasheets), ``; ``-joined."""
    from ..specs import gpu, model
    text = f"{claim.id} {claim.paraphrase}".replace("k3-", "K3 ").replace("v4-", "V4 ")
    found = [model(m).source for m, pat in NAMES if re.search(pat, text)]
    found += [gpu(g).source for g, pat in GPUS if re.search(pat, text)]
    if serving:
        from ..specs.serving import assumptions, reserve_models
        a = assumptions("book")
        offered = "the memory its driver exposes" if a.capacity == "device" else "its datasheet HBM"
        found.append(f"the book's serving assumptions (specs/serving.yaml: a GPU gives "
                     f"{100 * a.usable_fraction:g}% of {offered}, less a runtime reserve by "
                     f"{reserve_models()[a.reserve]['label']})")
    return "; ".join(dict.fromkeys(found)) or "the models' public configs (specs/models)"


def _arithmetic(claim: Claim, c: Check, found) -> Judgment:
    if found.verdict == "matches":
        return Judgment("holds", f"recomputed {quantity(found.recomputed, claim.unit)} from {c.basis}")
    if found.verdict == "rounding" and c.reason == "unit slip":
        found = _as_differs(found)      # the check knows the cause: the unit, not the rounding
    if found.verdict in ("unit slip", "rounding"):
        return Judgment("slip", f"{found.verdict}: {found.note}, from {c.basis}")
    upstream = _carried(claim, c, found)
    if upstream:
        return Judgment("fails", upstream)
    if found.verdict == "wrong direction":
        return Judgment("fails", f"rounding direction: {found.note}")
    if c.reason and c.fails == "arithmetic":
        status = "slip" if c.reason == "unit slip" else "fails"
        return Judgment(status, f"{c.reason}: {c.explain} ({found.note})")
    if c.reason:
        return Judgment("not judged", f"the recomputation prices what the claim names; see "
                                      f"{c.fails}")
    return Judgment("fails", f"unexplained: {found.note}")


def _as_differs(found):
    """A verdict judged "rounding" where the check names the cause: a plain difference."""
    return dataclasses.replace(found, verdict="differs",
                               note=f"recomputed {quantity(found.recomputed, found.claim.unit)}")


def _carried(claim: Claim, c: Check, found) -> str:
    """Why a count differs from its need when the article's own earlier counts explain it ("" when
    they do not): it follows from them, or this step rounds them the wrong way again."""
    if c.carried is None:
        return ""
    own = judge(claim, c.carried())
    if own.verdict not in ("matches", "wrong direction") or own.recomputed == found.recomputed:
        return ""
    need = needed(claim, found.recomputed)
    before = (f"with the counts before it rounded as capacity needs (rounded the wrong way before it: "
              f"{_wrongly_rounded(claim)}), the need is {need:,} {claim.unit}")
    if own.verdict == "matches":      # this step's own arithmetic is exact: it only carries the error
        return (f"carried rounding: from the article's own earlier counts this step gives "
                f"{quantity(own.recomputed, claim.unit)} exactly; {before}")
    return (f"rounding direction: from the article's own earlier counts this step needs "
            f"{quantity(own.recomputed, claim.unit)}, which it rounds the wrong way; {before}")


def _wrongly_rounded(claim: Claim) -> str:
    """The earlier counts of ``claim`` whose own arithmetic rounds the wrong way, named."""
    every = all_claims()
    named = [every[i] for i in _ancestors(claim.id) if every[i].unit in MACHINE_UNITS | CAPACITY_UNITS]
    def own(reason: str) -> bool:      # a count that makes an error of its own, not one it only carries
        return reason.startswith("rounding direction")
    wrong = [f"{a.id}, {a.stated} {a.unit}" for a in named
             if (r := audit_row(a)).arithmetic is not None and own(r.arithmetic.reason)]
    return "; ".join(wrong) or "none"


def _ancestors(claim_id: str) -> list[str]:
    every, seen, todo = all_claims(), [], list(all_claims()[claim_id].derived_from)
    while todo:
        i = todo.pop(0)
        if i not in seen:
            seen.append(i)
            todo += every[i].derived_from
    return seen


def _inputs(claim: Claim, c: Check, public: float | None, recomputed: float,
            serving: bool) -> tuple[Judgment, tuple]:
    src = c.cite or sources(claim, serving)
    # Where the configs give exactly what the article's own inputs give, the inputs hold, however far
    # the stated figure is from both: that distance is the arithmetic's, judged there, not twice.
    # (Only where the arithmetic is judged: a check that names its cause elsewhere prices the claim's
    # own quantity with the configs on both sides.)
    def same_as_inputs(v: float) -> bool:
        judged = not (c.reason and c.fails != "arithmetic")
        return judged and within_policy(claim, recomputed) != "matches" and math.isclose(v, recomputed, rel_tol=1e-9)

    if c.depends:
        fact_id, fn = c.depends
        alt = _fact(fact_id)
        values = tuple((o.id, v, within_policy(claim, v) == "matches" or same_as_inputs(v))
                       for o in alt.options for v in [_in_unit(claim, fn(o.id))])
        said = "; ".join(f"{quantity(v, claim.unit)} with {o.label} ({o.source})"
                         for (_, v, _), o in zip(values, alt.options))
        held = {ok for _, _, ok in values}
        status = "depends" if len(held) == 2 else ("holds" if held == {True} else "fails")
        return Judgment(status, f"{alt.fact}: {said}"), values
    if public is None:
        return Judgment("not compared", "no released config or spec sheet gives this quantity: it "
                                        "rests on the article's own scenario or on a quoted source"), ()
    if c.reason and c.fails == "reasoning" and not c.fact:
        # the recomputation is the quantity the claim names: its inputs hold if the configs give it too
        same = abs(public - recomputed) <= 0.5 * last_digit(claim.stated) or public == recomputed
        verb = "holds" if same else "fails"
        return Judgment(verb, f"for the quantity the claim names the article's inputs give "
                              f"{quantity(recomputed, claim.unit)} and the released configs {quantity(public, claim.unit)} "
                              f"({src})"), ()
    if claim.unit == "statement":      # a claim without a figure: its source bears it out or not
        verb = "holds" if public == claim.value else "fails"
        return Judgment(verb, f"its source {'bears it out' if verb == 'holds' else 'does not bear it out'} "
                              f"({src})"), ()
    if within_policy(claim, public) == "matches":
        return Judgment("holds", f"the released configs give {quantity(public, claim.unit)} ({src})"), ()
    if same_as_inputs(public):
        return Judgment("holds", f"the released configs give {quantity(public, claim.unit)}, what the article's own "
                                 f"inputs give: what separates {claim.stated} from it is the arithmetic's ({src})"), ()
    spread = _input_precision(claim)
    if spread is not None and abs(public - claim.value) <= spread * abs(claim.value):
        return Judgment("holds", f"the released configs give {quantity(public, claim.unit)}, within the "
                                 f"{100 * spread:.3g}% its inputs carry: each holds to the digits it "
                                 f"prints, and the figure follows from them ({src})"), ()
    if rounding_slip(claim, public):
        return Judgment("slip", f"rounding: the released configs give {quantity(public, claim.unit)}, "
                                f"which {claim.stated} truncates or rounds twice ({src})"), ()
    return Judgment("fails", f"the released configs give {quantity(public, claim.unit)}, not "
                             f"{claim.stated} ({src})"), ()


def _input_precision(claim: Claim) -> float | None:
    """How precise a derived figure can be, relative to it, where every figure it is derived from holds
    and some hold only to their printed digits (a "3:1" for 69:24): the sum of their relative
    half-units, the first-order spread of a product or quotient of them; None otherwise."""
    every, spread, rounded = all_claims(), 0.0, False
    for d in claim.derived_from:
        source = every[d]
        row = audit_row(source)
        if row.category != "holds":
            return None
        if source.unit in EXACT_UNITS or source.value == 0:
            continue
        rounded = rounded or (row.public_config is not None and row.public_config != source.value)
        spread += 0.5 * last_digit(source.stated) / abs(source.value)
    return spread if rounded else None


def _fact(fact_id: str):
    from ..specs.alternatives import alternative
    return alternative(fact_id)


def _reasoning(c: Check) -> Judgment:
    if c.reasoning:
        return Judgment("fails", c.reasoning)
    if c.reason and c.fails == "reasoning":
        return Judgment("fails", f"{c.reason}: {c.explain}")
    return Judgment("holds", "the check finds no other term, unit, denominator or method at fault")


def overall(claim: Claim, arithmetic: Judgment, inputs: Judgment, reasoning: Judgment,
            fact: str = "") -> str:
    """The overall verdict that follows from the three judgments (module docstring)."""
    wrong = [n for n, j in zip(JUDGMENTS, (arithmetic, inputs, reasoning)) if j.status == "fails"]
    if "arithmetic" in wrong or "reasoning" in wrong:
        return "wrong: " + ", ".join(wrong)
    if wrong:
        derived = claim.derived_from and arithmetic.status == "holds"
        return "holds only under the article's inputs" if derived else "wrong: inputs"
    if inputs.status == "depends":
        return f"depends on {fact}"
    if arithmetic.status == "slip":
        return f"slip ({'unit' if arithmetic.reason.startswith('unit') else 'rounding'})"
    if inputs.status == "slip":
        return "slip (rounding)"
    if inputs.status == "not compared" and not all(all_claims()[d].checkable is True for d in claim.derived_from):
        return "consistent, not verified"
    return "holds"


def _legacy_note(c: Check, found) -> tuple[str, str]:
    """The verdict and note the audit gave before the three judgments (kept for the JSON)."""
    if found.verdict == "matches":
        if c.reason:
            raise ValueError(f"check {c.claim_id} explains a difference ({c.reason}) but the claim "
                             f"matches: {found.recomputed:,.6g}")
        return "matches", c.explain
    if found.verdict == "rounding" and c.reason == "unit slip":
        found = _as_differs(found)      # as in _arithmetic
    if found.verdict in ("unit slip", "rounding"):
        return "differs", f"{found.verdict}: {found.note}" + (f"; {c.explain}" if c.explain else "")
    upstream = _carried(all_claims()[c.claim_id], c, found)
    if upstream:
        return "differs", upstream
    if found.verdict == "wrong direction":
        return "differs", f"rounding direction: {found.note}"
    if c.reason:
        return "differs", f"{c.reason}: {c.explain} ({found.note})"
    return "differs", f"unexplained: {found.note}"


def audit_row(claim: Claim) -> Row:
    """One claim's row of the audit."""
    base = dict(id=claim.id, section=claim.section, claim=claim.paraphrase, stated=claim.stated,
                unit=claim.unit)
    if claim.checkable is not True:
        return Row(recomputed=None, public_config=None, verdict="not checkable", note=claim.checkable,
                   **base)
    c = _checks().get(claim.id)
    if c is None:
        raise LookupError(f"claim {claim.id} is checkable but no check is registered for it")
    found = judge(claim, c.article())
    public = _in_unit(claim, c.public()) if c.public else None
    verdict, note = _legacy_note(c, found)
    serving = claim.id in _serving_ids() or c.serving
    a, (i, alts), r = _arithmetic(claim, c, found), _inputs(claim, c, public, found.recomputed, serving), _reasoning(c)
    fact = _fact(c.depends[0]).fact if c.depends else ""
    return Row(recomputed=found.recomputed, public_config=public, verdict=verdict, note=note,
               arithmetic=a, inputs=i, reasoning=r, overall=overall(claim, a, i, r, fact),
               source=(c.cite or sources(claim, serving)) if public is not None or c.depends else "",
               alternatives=alts, **base)


def _serving_ids() -> set[str]:
    from . import claims
    return set(claims("serving"))


def _checks() -> dict[str, Check]:
    from . import checks  # noqa: F401  (registers every topic's checks)
    return CHECKS


def audit(topics: list[str] | None = None) -> list[Row]:
    """Rows for every claim (of ``topics``, if given), in the order the claim files list them."""
    from . import claims
    ids = [cid for t in topics for cid in claims(t)] if topics else list(all_claims())
    every = all_claims()
    return [audit_row(every[cid]) for cid in ids]


def by_id(topics: list[str] | None = None) -> dict[str, Row]:
    """The audit's rows by claim id: what a page reads a verdict from."""
    return {r.id: r for r in audit(topics)}


def as_dicts(rows: list[Row]) -> list[dict]:
    """Rows as JSON-ready dicts (NaN and infinities become null); the legacy keys come first."""
    def finite(x):
        return None if isinstance(x, float) and not math.isfinite(x) else x
    out = []
    for r in rows:
        d = asdict(r)
        for k in ("recomputed", "public_config"):
            d[k] = finite(d[k])
        d["alternatives"] = [dict(option=o, value=finite(v), holds=ok) for o, v, ok in r.alternatives]
        d["category"] = r.category
        out.append(d)
    return out


# ---- what a page glues: one verdict per claim, read from here (tests/test_verdicts_agree.py) ----

GLUED = {"verdict": lambda r: r.overall,
         "arithmetic": lambda r: r.arithmetic.status if r.arithmetic else "not checkable",
         "stated": lambda r: float(r.stated), "recomputed": lambda r: r.recomputed,
         "public": lambda r: r.public_config}


def glue_name(claim_id: str, field: str = "verdict") -> str:
    """The glue name a page uses for one field of one claim's row: ``claim_<id>_<field>``."""
    if field not in GLUED:
        raise ValueError(f"field {field!r} is not one of {sorted(GLUED)}")
    return f"claim_{claim_id.replace('-', '_').replace('.', '_')}_{field}"


def glue_claim(glue: Callable, row: Row, *fields: str) -> None:
    """Glue ``fields`` (the verdict by default) of ``row`` with ``glue`` (``chapter.glue``); a
    missing or infinite figure is not glued (the results file keeps finite numbers only)."""
    for field in fields or ("verdict",):
        value = GLUED[field](row)
        if value is None or (isinstance(value, float) and not math.isfinite(value)):
            continue
        glue(glue_name(row.id, field), value, "verdict" if isinstance(value, str) else row.unit)

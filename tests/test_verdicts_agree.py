"""One verdict per claim, everywhere: a page that states the audit's verdict or one of its figures for
an article claim glues it as ``claim_<id>_<field>`` (``claims.audit.glue_claim``), and the value each
page rendered (results/<profile>.json) must be the audit's today."""

import json
import math
import re
from pathlib import Path

import pytest

from twopaths.claims.audit import GLUED, audit, glue_name

RESULTS = Path(__file__).resolve().parents[1] / "results"
# The pages that state verdicts on article claims; each must glue them from the audit.
VERDICT_PAGES = ("01-kv-wall", "04-latent-moe", "05-csa-hca", "06-residual-streams", "07-routing-decoding",
                 "14-audit", "15-architecture-trends", "findings")
NAME = re.compile(r"^claim_(\w+?)_(" + "|".join(GLUED) + r")$")


def glued_claims(notebooks: dict) -> dict[str, dict[str, object]]:
    """page -> {glue name: value} for every ``claim_<id>_<field>`` name a page glued."""
    return {page: {k: v["value"] for k, v in d["values"].items() if NAME.match(k)}
            for page, d in notebooks.items()}


def disagreements(notebooks: dict) -> list[tuple]:
    """(page, name, page value, audit value) wherever a page's claim figure is not the audit's."""
    rows = {glue_name(r.id, f): fn(r) for r in audit() for f, fn in GLUED.items()}
    out = []
    for page, names in glued_claims(notebooks).items():
        for name, value in names.items():
            want = rows.get(name, "no such claim")
            same = (value == want or (isinstance(want, float) and isinstance(value, (int, float))
                    and (math.isclose(value, want, rel_tol=1e-12) or math.isinf(want) and value is None)))
            if not same:
                out.append((page, name, value, want))
    return out


def _notebooks(profile: str) -> dict:
    return json.loads((RESULTS / f"{profile}.json").read_text())["notebooks"]


@pytest.mark.parametrize("profile", ["default", "smoke"])
def test_every_page_s_claim_figures_are_the_audit_s(profile):
    assert not disagreements(_notebooks(profile))


@pytest.mark.parametrize("profile", ["default", "smoke"])
def test_the_pages_that_judge_claims_glue_their_verdicts(profile):
    glued = glued_claims(_notebooks(profile))
    for page in VERDICT_PAGES:
        chapter = next((c for c in glued if c.endswith(page)), None)
        assert chapter and any(n.endswith("_verdict") for n in glued[chapter]), page


def test_a_changed_verdict_is_caught():
    r = next(r for r in audit(["kv_cache"]) if r.id == "v4-request-1m")
    page = {"values": {glue_name(r.id): {"value": "holds"}, glue_name(r.id, "stated"): {"value": 12.2}}}
    assert disagreements({"01-kv-wall": page}) == [("01-kv-wall", glue_name(r.id), "holds", r.overall)]

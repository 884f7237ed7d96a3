"""The audit: every checkable claim has a recomputation, every difference a reason, and the command
line gives the table and the JSON the README promises."""

import json
import subprocess
import sys

import pytest

from twopaths.claims import all_claims, claims
from twopaths.claims.audit import CHECKS, EXPLAINED, REASONS, Check, audit, audit_row, check


@pytest.fixture(scope="module")
def rows():
    return audit()


def test_every_claim_has_a_row_and_every_checkable_one_a_check(rows):
    assert [r.id for r in rows] == list(all_claims())
    checkable = {cid for cid, c in all_claims().items() if c.checkable is True}
    assert checkable <= set(CHECKS)
    assert set(CHECKS) <= set(all_claims()), "a check for a claim that does not exist"


def test_every_difference_has_a_reason(rows):
    for r in rows:
        assert r.verdict in ("matches", "differs", "not checkable"), r
        if r.verdict == "differs":
            assert r.note.split(":")[0] in REASONS, r
        if r.verdict != "not checkable":
            assert r.recomputed is not None, r


def test_a_stale_explanation_is_refused():
    claim = claims("kv_cache")["k3-mla-per-token-layer"]
    stale = Check(claim.id, lambda: 2560.0, reason="arithmetic", explain="no longer true")
    CHECKS_backup = CHECKS[claim.id]
    CHECKS[claim.id] = stale
    try:
        with pytest.raises(ValueError, match="explains a difference"):
            audit_row(claim)
    finally:
        CHECKS[claim.id] = CHECKS_backup


def test_an_unexplained_difference_is_reported_as_such():
    claim = claims("kv_cache")["k3-mla-per-token-layer"]
    backup = CHECKS[claim.id]
    CHECKS[claim.id] = Check(claim.id, lambda: 1152.0)
    try:
        assert audit_row(claim).note.startswith("unexplained")
    finally:
        CHECKS[claim.id] = backup


def test_registering_badly_is_refused():
    with pytest.raises(ValueError, match="not one of"):
        check("x", reason="typo", explain="y")
    with pytest.raises(ValueError, match="needs an explanation"):
        check("x", reason=EXPLAINED[0])
    with pytest.raises(ValueError, match="twice"):
        check("kda-state-total")(lambda: 0.0)


def test_the_kv_figures_the_first_chapter_discusses(rows):
    by_id = {r.id: r for r in rows}
    assert by_id["k3-mla-per-token-layer"].verdict == "matches"
    assert by_id["k3-mla-per-token-layer"].public_config == 1152          # 512 + 64 BF16 values
    assert by_id["kda-state-total"].note.startswith("unit slip")
    assert by_id["v4-request-1m"].note.startswith("inconsistent assumption")


def test_command_line_json():
    out = subprocess.run([sys.executable, "-m", "twopaths.audit", "--format", "json"], capture_output=True,
                         text=True, check=True).stdout
    data = json.loads(out)
    assert len(data) == len(all_claims())
    assert all(list(d) == ["id", "section", "claim", "stated", "recomputed", "public_config", "unit", "verdict", "note"]
               for d in data)


def test_command_line_refuses_an_unknown_topic():
    r = subprocess.run([sys.executable, "-m", "twopaths.audit", "--topic", "nope"], capture_output=True, text=True)
    assert r.returncode == 2 and r.stderr.startswith("error: topic: got")

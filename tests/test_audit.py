"""The audit: every checkable claim has a recomputation, every difference a reason, and the command
line gives the table and the JSON the README promises."""

import json
import subprocess
import sys

import pytest

from twopaths.claims import all_claims, claims
from twopaths.claims.audit import (CATEGORIES, CHECKS, EXPLAINED, JUDGMENTS, REASONS, Check, Judgment,
                                   audit, audit_row, check, overall)


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
    assert by_id["v4-request-1m"].note.startswith("unit slip")     # a KiB figure read as kB, carried


def test_every_checkable_claim_has_three_judgments_each_with_a_reason(rows):
    for r in rows:
        if r.verdict == "not checkable":
            assert r.arithmetic is None and r.overall == "not checkable"
            continue
        for name in JUDGMENTS:
            j = getattr(r, name)
            assert j.status in ("holds", "slip", "fails", "depends", "not judged", "not compared"), r
            assert j.reason, (r.id, name)
        assert r.category in CATEGORIES


def test_no_claim_the_configs_contradict_holds(rows):
    for r in rows:
        if r.inputs is not None and r.inputs.status == "fails":
            assert r.category in ("wrong", "holds only under the article's inputs"), r.id
            assert r.inputs.reason and r.source, r.id        # the true value and where it comes from
        if r.category == "holds":
            assert r.failed == () and r.inputs.status in ("holds", "not compared"), r.id


def test_the_overall_verdict_follows_from_the_three():
    claim = claims("kv_cache")["k3-mla-per-token-layer"]      # derived from the 640-dim latent
    ok, bad, slip = Judgment("holds", "."), Judgment("fails", "."), Judgment("slip", "unit slip: .")
    assert overall(claim, ok, ok, ok) == "holds"
    assert overall(claim, ok, bad, ok) == "holds only under the article's inputs"
    assert overall(claim, slip, bad, ok) == "wrong: inputs"       # slipped and contradicted
    assert overall(claim, slip, ok, ok) == "slip (unit)"
    assert overall(claim, ok, bad, bad) == "wrong: inputs, reasoning"
    assert overall(claim, bad, Judgment("not compared", "."), ok) == "wrong: arithmetic"
    stated_input = claims("architecture")["v32-per-token-layer"]   # the input itself, not derived
    assert not stated_input.derived_from
    assert overall(stated_input, ok, bad, ok) == "wrong: inputs"


def test_the_article_s_biggest_error_shows_as_one(rows):
    by_id = {r.id: r for r in rows}
    for cid in ("k3-mla-per-token-layer", "k3-mla-per-token", "k3-mla-request-1m"):
        assert by_id[cid].arithmetic.status == "holds" and by_id[cid].inputs.status == "fails", cid
        assert by_id[cid].category == "holds only under the article's inputs"
    assert by_id["v32-per-token-layer"].overall == "wrong: inputs"
    assert "1,152" in by_id["v32-per-token-layer"].inputs.reason
    assert by_id["k3-mla-per-token-layer"].moves == pytest.approx(2560 / 1152)


def test_dsv4_routing_is_judged_against_v4_pro_s_config(rows):
    by_id = {r.id: r for r in rows}
    routed, top_k = by_id["v4-routed-experts"], by_id["v4-experts-per-token"]
    assert (routed.public_config, top_k.public_config) == (384, 6)
    assert routed.overall == top_k.overall == "wrong: inputs"
    assert "DeepSeek-V4-Pro" in routed.source
    rate = by_id["v4-expert-activation-rate"]
    assert rate.recomputed == pytest.approx(100 * 8 / 256) and rate.public_config == pytest.approx(100 * 6 / 384)
    assert rate.category == "holds only under the article's inputs"


def test_k3_s_extreme_sparsity_is_flagged(rows):
    r = {x.id: x for x in rows}["k3-sparsest"]
    assert r.recomputed == 1 and r.public_config == 2          # V4-Pro is sparser by its config
    assert r.overall == "wrong: inputs, reasoning"


def test_uncertain_facts_are_evaluated_under_each_option(rows):
    by_id = {r.id: r for r in rows}
    share = by_id["v4-kv-share-of-v32"]
    values = {o: v for o, v, _ in share.alternatives}
    assert set(values) == {"fp8", "fp4"} and values["fp4"] < values["fp8"]
    assert share.inputs.status == "holds"                      # both round to "10%"
    assert "FP4" in share.inputs.reason and "FP8" in share.inputs.reason   # both values, both sources
    # 141 GB is the datasheet's figure, which the claim names: no option bears on it...
    hbm = by_id["h200-hbm"]
    assert hbm.category == "holds" and not hbm.alternatives and "datasheet" in hbm.source
    # ...while what an engine is given of it moves every figure divided by it
    unit = by_id["v4-requests-per-unit"]
    assert {o for o, _, _ in unit.alternatives} == {"nominal", "device"}
    flops = by_id["v4-flops-share-of-v32"]
    assert flops.category == "depends" and "1,048,576" in flops.inputs.reason


def test_a_reasoning_fault_shows_even_where_the_arithmetic_holds(rows):
    by_id = {r.id: r for r in rows}
    for cid in ("k3-requests-per-unit", "k3-d-units", "k3-active-share-h200", "k3-ep32-weights-per-gpu"):
        assert by_id[cid].arithmetic.status == "holds" and by_id[cid].reasoning.status == "fails", cid
        assert "reasoning" in by_id[cid].overall


def test_command_line_json():
    out = subprocess.run([sys.executable, "-m", "twopaths.audit", "--format", "json"], capture_output=True,
                         text=True, check=True).stdout
    data = json.loads(out)
    assert len(data) == len(all_claims())
    legacy = ["id", "section", "claim", "stated", "recomputed", "public_config", "unit", "verdict", "note"]
    added = ["arithmetic", "inputs", "reasoning", "overall", "source", "alternatives", "category"]
    assert all(list(d) == legacy + added for d in data)


def _cli(*args):
    return subprocess.run([sys.executable, "-m", "twopaths.audit", *args], capture_output=True, text=True,
                          check=True, env={**__import__("os").environ, "COLUMNS": "80"}).stdout


def test_command_line_filters_by_verdict_and_by_failed_judgment(rows):
    data = json.loads(_cli("--format", "json", "--verdict", "wrong", "--failed", "reasoning"))
    expected = [r.id for r in rows if r.category == "wrong" and "reasoning" in r.failed]
    assert [d["id"] for d in data] == expected and expected
    inputs = json.loads(_cli("--format", "json", "--failed", "inputs"))
    assert {d["inputs"]["status"] for d in inputs} <= {"fails", "slip"} and inputs


def test_command_line_table_prints_the_claim_in_lines_that_fit():
    out = _cli("--topic", "kv_cache")
    assert all(len(line) <= 80 for line in out.splitlines())
    assert "A K3 Gated MLA layer caches 2,560 bytes" in out.replace("\n    ", " ")


def test_command_line_refuses_an_unknown_topic():
    r = subprocess.run([sys.executable, "-m", "twopaths.audit", "--topic", "nope"], capture_output=True, text=True)
    assert r.returncode == 2 and r.stderr.startswith("error: topic: got")


def test_a_cause_the_check_names_outranks_a_truncation():
    # 0.352% printed as 0.3% is also a truncation, but the check knows why: 207 MiB read as MB
    from twopaths.claims.audit import by_id
    r = by_id(["kv_cache"])["k3-kda-share-1m"]
    assert r.slip == "unit slip" and "which it truncates" not in r.arithmetic.reason

"""The audit's verdict tables (views.audit_report) say in words what is not a size: a placement that does not fit, a
count with no plan, a rank."""

import math

import pytest

from twopaths.views import audit_report as shown
from twopaths.claims.audit import audit


@pytest.fixture(scope="module")
def rows():
    return {r.id: r for r in audit(["parallelism", "serving", "architecture", "benchmarks"])}


@pytest.mark.parametrize("n, text", [(1, "1st"), (2, "2nd"), (3, "3rd"), (4, "4th"), (11, "11th"),
                                     (12, "12th"), (13, "13th"), (21, "21st"), (22, "22nd"),
                                     (111, "111th")])
def test_ordinal(n, text):
    assert shown.ordinal(n) == text


def test_figures_that_are_not_sizes_are_words():
    assert shown.fmt(-68.21, "GB") == "does not fit (68.21 GB short)"
    assert shown.fmt(math.inf, "units") == "no valid plan"
    assert shown.fmt(2, "rank") == "2nd"
    assert shown.fmt(1.0, "statement") == "true" and shown.fmt(0.0, "statement") == "false"
    assert shown.fmt(0, "requests") == "none fit (0 requests)"
    assert shown.fmt(67.0, "GB") == "67 GB" and shown.fmt(145, "units") == "145 units"
    assert shown.fmt(-5.0, "number") == "-5" and shown.fmt(math.inf, "M tokens") == "no crossover at any context"
    assert shown.fmt(None, "GB") == "-"


def test_a_headroom_below_zero_says_how_many_budgets_the_time_takes(rows):
    r = rows["k3-ttft-headroom"]
    assert r.public_config < 0                      # the released configs' first token is past 50 ms
    times = 1 - r.public_config / 100               # headroom h = 1 - time / budget
    assert shown.figure(r, r.public_config) == f"none: it takes {times:,.1f}x the budget"
    assert shown.figure(r, 44.0) == "44 %" and shown.figure(r, None) == "-"   # above zero: the share
    assert shown.figure(rows["k3-ep16-free-per-gpu"], -68.21) == "does not fit (68.21 GB short)"


def test_the_findings_table_has_no_sign_or_infinity_for_a_reader_to_decode(rows):
    from twopaths.views import findings

    text = findings.headline_table(findings.headline_rows()).data
    assert "∞" not in text and "-3,184" not in text
    assert "no crossover at any context" in text and "x the budget" in text


def test_the_inputs_table_says_where_a_placement_does_not_fit(rows):
    ep16, units = rows["k3-ep16-free-per-gpu"], rows["k3-d-units"]
    held = rows["k3-requests-per-unit"]
    assert ep16.public_config < 0 and math.isinf(units.public_config)   # what the words stand for
    assert held.public_config == 0
    text = shown.table([ep16, units, held], "inputs").data
    assert f"does not fit ({shown.fmt(-ep16.public_config, 'GB')} short)" in text
    assert "no valid plan" in text and "∞" not in text and "-68" not in text
    assert shown.moved(ep16) == shown.moved(held) == "no ratio: it does not fit"


def test_no_table_reads_a_rank_as_a_unit(rows):
    ranks = [r for r in rows.values() if r.unit == "rank"]
    assert ranks
    for kind in ("inputs", "holds", "unchecked"):
        assert " rank |" not in shown.table(ranks, kind).data
    assert shown.printed(rows["k3-sparsest"]) == "1st"


def test_a_change_of_rank_is_not_a_ratio(rows):
    sparsest = rows["k3-sparsest"]
    assert shown.moved(sparsest) == "1st to 2nd"

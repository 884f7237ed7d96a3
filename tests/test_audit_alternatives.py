"""Uncertain facts are kept as alternatives, each option with its source, and the audit's report
orders and formats what it shows."""

import math

import pytest

from twopaths.views import audit_report as report
from twopaths.claims.audit import audit
from twopaths.claims.checks.architecture import indexer_format, kv_share_with
from twopaths.errors import ParameterError
from twopaths.specs.alternatives import alternative, alternatives


def test_every_fact_names_its_options_their_sources_and_the_one_used():
    for alt in alternatives().values():
        assert len(alt.options) >= 2 and alt.used in [o.id for o in alt.options]
        assert all(o.source and o.label and o.settings for o in alt.options), alt.id


def test_an_unknown_fact_or_option_is_refused_by_name():
    with pytest.raises(ParameterError, match="fact"):
        alternative("v5-anything")
    with pytest.raises(ParameterError, match="option"):
        alternative("v4-indexer-keys").option("fp2")


def test_indexer_key_formats_and_what_they_give():
    assert indexer_format("fp8").name == "fp8-indexer"          # the registry's: V3.2's 132 B
    fp4 = indexer_format("fp4")
    assert 128 * fp4.value_bytes == 64                           # AIConfigurator's 64 B per entry
    pro_fp8, pro_fp4 = kv_share_with("fp8"), kv_share_with("fp4")
    assert 0.10 < pro_fp4 < pro_fp8 < 0.12                       # both "about 10%"


def test_inputs_wrong_come_furthest_moved_first_and_figures_carry_units():
    rows = report.inputs_wrong(audit(["kv_cache", "architecture"]))
    moves = [r.moves for r in rows]
    assert moves == sorted(moves, reverse=True) and all(m > 1 for m in moves)
    assert report.fmt(2560.0, "B") == "2,560 B" and report.fmt(math.inf, "x") == "∞ x"
    r = next(r for r in rows if r.id == "kda-state-per-layer")
    assert report.printed(r) == "3.0 MB"                         # the article's digits, kept


def test_a_rank_reads_as_a_rank_not_a_quantity():
    sparsest = next(r for r in audit(["architecture"]) if r.id == "k3-sparsest")
    assert report.printed(sparsest) == "1st" and report.fmt(2.0, "rank") == "2nd"

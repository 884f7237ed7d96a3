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
    r = next(r for r in rows if r.id == "kda-state-total")
    assert report.printed(r) == "207 MB"                         # the article's digits, kept
    # one layer's recurrent state: under BF16 the configs give the article's own 3,145,728 B, so only
    # the unit slipped; it is not among the inputs that fail
    assert "kda-state-per-layer" not in {r.id for r in rows}


def test_a_rank_reads_as_a_rank_not_a_quantity():
    sparsest = next(r for r in audit(["architecture"]) if r.id == "k3-sparsest")
    assert report.printed(sparsest) == "1st" and report.fmt(2.0, "rank") == "2nd"


def test_an_arithmetic_slip_is_not_judged_again_as_the_inputs():
    """K3's config gives one KDA layer 96 x 128 x 128 BF16 values, 3,145,728 B, exactly what the
    article's inputs give; it prints 3.0 MB (the MiB figure). The slip is the arithmetic's: the inputs
    hold with a BF16 state and fail only with an FP32 one (6,291,456 B), so the claim depends on it."""
    rows = {r.id: r for r in audit(["kv_cache", "architecture"])}
    exact = rows["kda-state-per-layer-bytes"]
    assert exact.public_config == 96 * 128 * 128 * 2 == 3_145_728 and exact.inputs.status == "holds"
    r = rows["kda-state-per-layer"]
    assert r.arithmetic.status == "slip" and r.inputs.status == "depends"
    assert "3.146 MB with BF16" in r.inputs.reason and "6.291 MB with FP32" in r.inputs.reason
    # the total is the fixed memory, states and their convolution tails (69 x 221,184 B more)
    assert rows["kda-state-total"].public_config * 1e6 == pytest.approx(69 * (3_145_728 + 3 * 96 * 3 * 128 * 2),
                                                                        rel=1e-12)

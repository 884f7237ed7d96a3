"""How glued values may vary: each kind's check, the seed spread, the bound, and bad input."""

import math
from pathlib import Path

import numpy as np
import pytest

import need
from twopaths.machinery import variation as V


def test_exact_values_must_not_move():
    assert V.EXACT.agrees(61440, 61440) and not V.EXACT.agrees(61440, 61441)
    assert V.EXACT.agrees(0.1 + 0.2, 0.3)              # float64 reordering: last bits only
    assert not V.EXACT.agrees(1.0, 1.0 + 1e-9)          # a float32 wobble is not exact
    assert V.EXACT.agrees("none", "none") and not V.EXACT.agrees("none", "224")
    assert not V.EXACT.agrees(True, 1)


def test_rounding_uses_relative_and_absolute_tolerance():
    assert V.FLOAT32.agrees(1.0, 1.0 + 9e-6) and not V.FLOAT32.agrees(1.0, 1.0 + 2e-5)
    near_zero = V.rounding(1e-5, atol=1e-6)
    assert near_zero.agrees(0.0, 5e-7) and not near_zero.agrees(0.0, 2e-6)
    assert V.FLOAT32_DEEP.agrees(25.0, 25.02) and not V.FLOAT32_DEEP.agrees(25.0, 25.1)


def test_machine_figures_are_never_compared():
    assert V.MACHINE.agrees(0.01, 100.0)


def test_spread_mean_sd_and_tolerance():
    s = V.Spread((0.50, 0.54, 0.58))
    assert s.mean == pytest.approx(0.54) and s.sd == pytest.approx(0.04)
    assert s.sem == pytest.approx(0.04 / math.sqrt(3))
    tol = s.variation()
    # Student's t at 2 degrees of freedom, two-sided 0.999, has the closed form sqrt(2 c^2 / (1 - c^2))
    k = math.sqrt(2 * 0.999**2 / (1 - 0.999**2))
    assert tol.kind == "spread" and tol.atol == pytest.approx(k * 0.04 * math.sqrt(2 / 3), rel=1e-9)
    assert tol.agrees(0.54, 0.54 + 0.9 * tol.atol) and not tol.agrees(0.54, 0.54 + 1.1 * tol.atol)
    assert V.Spread((0.7, 0.7), floor=0.01).variation().atol == 0.01   # identical seeds: the resolution


def test_t_quantile_is_students():
    stats = need.module("scipy.stats")
    for df in (1, 2, 3, 4, 5, 8, 29):
        for c in (0.5, 0.9, 0.99, 0.999):
            assert V.t_quantile(c, df) == pytest.approx(stats.t.ppf(0.5 + c / 2, df), rel=1e-9), (df, c)


def test_honest_reruns_pass_the_spread_tolerance_at_its_confidence():
    """Draw a reference and a re-run of n seeds each from one normal outcome (the fresh draws other
    kernels make): about RERUN_CONFIDENCE of the re-runs agree, at every n. The rule it replaced,
    three sd * sqrt(2 / n), fails 9.5% of them at three seeds."""
    rng = np.random.default_rng(8)
    for n in (3, 5):
        ref, rerun = rng.normal(0.5, 0.01, (200_000, n)), rng.normal(0.5, 0.01, (200_000, n))
        sd, gap = ref.std(axis=1, ddof=1), np.abs(ref.mean(axis=1) - rerun.mean(axis=1))
        k = V.t_quantile(V.RERUN_CONFIDENCE, n - 1)
        assert np.mean(gap > k * sd * math.sqrt(2 / n)) == pytest.approx(1 - V.RERUN_CONFIDENCE, abs=4e-4)
        if n == 3:
            assert np.mean(gap > 3 * sd * math.sqrt(2 / n)) == pytest.approx(1 - 3 / math.sqrt(11), abs=3e-3)
    s = V.Spread((0.50, 0.51, 0.52))
    assert s.variation().agrees(0.51, 0.51 + 10 * 0.01) and not s.variation().agrees(0.51, 0.51 + 0.3)


def test_a_rerun_is_judged_against_both_runs_spreads():
    """Two runs of n seeds each: the pooled sd over 2 (n - 1) degrees of freedom, a two-sample t."""
    ref = V.Spread((0.50, 0.51, 0.52)).variation()
    assert (ref.sd, ref.seeds) == (pytest.approx(0.01), 3)
    rerun = V.Spread((0.50, 0.53, 0.56), floor=0.001).variation()
    tol = ref.against(rerun)
    pooled = math.sqrt((0.01**2 + 0.03**2) / 2)
    k = V.t_quantile(V.RERUN_CONFIDENCE, 4)
    assert tol.atol == pytest.approx(k * pooled * math.sqrt(2 / 3), rel=1e-9) and tol.atol < ref.atol
    # identical seeds in both runs: the resolution
    same = V.Spread((0.7, 0.7), floor=0.01).variation()
    assert same.against(same).atol == 0.01
    # without both measurements, the reference's own tolerance
    old = V.Variation("spread", atol=0.05)
    assert old.against(rerun) == old and ref.against(old) == ref and ref.against(V.EXACT) == ref
    # another seed count: n + m - 2 degrees of freedom, sqrt(1/n + 1/m)
    two = V.Spread((0.50, 0.52)).variation()
    sp = math.sqrt((2 * 0.01**2 + 1 * two.sd**2) / 3)
    assert ref.against(two).atol == pytest.approx(V.t_quantile(V.RERUN_CONFIDENCE, 3) * sp * math.sqrt(1 / 3 + 1 / 2))
    # the larger resolution of the two, and no overflow at absurd spreads
    assert ref.against(V.Spread((0.5, 0.5, 0.5), floor=0.9).variation()).atol == 0.9
    huge = V.Variation("spread", atol=1.0, sd=1e200, seeds=3)
    assert math.isfinite(huge.against(huge).atol)
    assert V.FLOAT32.against(V.FLOAT32) == V.FLOAT32


def test_pooled_reruns_pass_at_their_confidence():
    rng = np.random.default_rng(9)
    n = 3
    ref, rerun = rng.normal(0.5, 0.01, (200_000, n)), rng.normal(0.5, 0.01, (200_000, n))
    pooled = np.sqrt((ref.var(axis=1, ddof=1) + rerun.var(axis=1, ddof=1)) / 2)
    gap = np.abs(ref.mean(axis=1) - rerun.mean(axis=1))
    k = V.t_quantile(V.RERUN_CONFIDENCE, 2 * (n - 1))
    assert np.mean(gap > k * pooled * math.sqrt(2 / n)) == pytest.approx(1 - V.RERUN_CONFIDENCE, abs=4e-4)


def test_a_difference_counts_only_beyond_the_spread():
    a = V.Spread((0.50, 0.52, 0.54))
    assert V.Spread((0.80, 0.82, 0.84)).differs_from(a)
    assert not V.Spread((0.53, 0.55, 0.57)).differs_from(a)        # closer than one sd: a tie
    assert not V.Spread((0.40, 0.60, 0.80)).differs_from(a)        # a wide spread swallows the gap


def test_bound_text_and_variation_round_trip():
    assert V.bound_text(1e-5) == "1e-5" and V.bound_text(2e-2) == "2e-2"
    b = V.bound(1e-5)
    assert V.Variation.from_dict(b.as_dict()) == b and b.describe() == "bound (below 1e-05)"
    for v in (V.EXACT, V.FLOAT32, V.MACHINE, V.Spread((1.0, 2.0)).variation()):
        assert V.Variation.from_dict(v.as_dict()) == v


@pytest.mark.parametrize("make, name", [
    (lambda: V.Variation("fuzzy"), "kind"),
    (lambda: V.rounding(-1e-5), "rtol"),
    (lambda: V.rounding(1e-5, atol=float("nan")), "atol"),
    (lambda: V.bound(0), "limit"),
    (lambda: V.Spread((0.5,)), "values"),
    (lambda: V.Spread((0.5, float("nan"))), "values"),
    (lambda: V.t_quantile(1.0, 2), "confidence"),
    (lambda: V.t_quantile(0.9, 0), "df"),
    (lambda: V.t_quantile(0.9, True), "df"),
    (lambda: V.t_central(-1.0, 2), "t"),
    (lambda: V.Variation("spread", atol=0.1, sd=0.01, seeds=1), "seeds"),
    (lambda: V.Variation("spread", atol=0.1, sd=0.01, seeds=2.0), "seeds"),
    (lambda: V.Variation("spread", atol=0.1, sd=0.01, seeds=True), "seeds"),
    (lambda: V.Variation("spread", atol=0.1, sd=0.01), "seeds"),
    (lambda: V.Variation("spread", atol=0.1, seeds=3), "seeds"),
    (lambda: V.Variation("spread", atol=0.1, sd=float("nan"), seeds=3), "sd"),
])
def test_bad_input_names_the_parameter(raises_param, make, name):
    raises_param(name, make)


def test_versus_says_tie_within_the_spread():
    low, high = V.Spread((0.50, 0.52, 0.54)), V.Spread((0.80, 0.82, 0.84))
    assert high.versus(low, "above", "below", "level with") == "above"
    assert low.versus(high, "above", "below", "level with") == "below"
    assert low.versus(V.Spread((0.51, 0.53, 0.55)), "above", "below", "level with") == "level with"
    assert low.text() == "0.520 ± 0.02" and V.Spread((0.5, 0.5001)).text() == "0.500 ± 7.1e-05"


def test_a_change_counts_only_beyond_its_spread():
    assert V.Spread((0.10, 0.12, 0.11)).beyond_zero()
    assert not V.Spread((-0.02, 0.03, 0.01)).beyond_zero()


def test_a_singular_value_is_as_accurate_as_the_largest_allows():
    tol = V.singular_value(50.0)
    assert tol.agrees(2.5e-6, 6.3e-6) and tol.agrees(2.5e-6, 4e-4) and not tol.agrees(2.5e-6, 6e-4)


def test_above_and_below_a_threshold_count_only_beyond_the_spread():
    s = V.Spread((0.65, 0.91, 0.94))
    assert s.above(0.5) and not s.above(0.8) and not s.below(0.9)
    assert V.Spread((0.10, 0.11, 0.12)).below(0.2) and not V.Spread((0.10, 0.30, 0.50)).below(0.35)


def test_the_drift_check_judges_a_spread_against_both_runs():
    """A reference of three seeds with sd 0.03 and a re-run with sd 0.01: the check takes the
    pooled two-sample tolerance (8.61 x 0.0224 x 0.816 = 0.157 here), not the reference's alone (0.774)."""
    from twopaths.machinery import drift

    def results(values):
        s = V.Spread(values)
        return {"notebooks": {"x": {"values": {"acc": {"value": s.mean, "unit": "1",
                                                       "vary": s.variation().as_dict()}}}}}

    ref = results((0.50, 0.53, 0.56))
    near, far = results((0.62, 0.63, 0.64)), results((0.70, 0.71, 0.72))
    assert V.Variation.from_dict(ref["notebooks"]["x"]["values"]["acc"]["vary"]).sd == pytest.approx(0.03)
    assert drift.compare(ref, near).chapters[0].matched == 1
    moved = drift.compare(ref, far).chapters[0]
    assert moved.matched == 0 and moved.moved[0].name == "acc" and "±0.157" in moved.moved[0].variation


def test_how_to_use_states_the_confidence_the_check_uses():
    page = (Path(__file__).resolve().parents[1] / "book" / "how-to-use.md").read_text()
    assert f"{V.RERUN_CONFIDENCE:.1%} of honest re-runs" in page


def test_a_bad_seed_count_in_a_results_file_names_the_value():
    from twopaths.machinery import drift

    ref = {"notebooks": {"x": {"values": {"acc": {"value": 0.5, "unit": "1", "vary": {
        "kind": "spread", "atol": 0.1, "sd": 0.01, "seeds": "3"}}}}}}
    with pytest.raises(drift.ReferenceError, match=r"value 'x.acc' has an unreadable tolerance"):
        drift.compare(ref, ref)

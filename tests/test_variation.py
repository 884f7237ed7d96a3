"""How glued values may vary: each kind's check, the seed spread, the bound, and bad input."""

import math

import pytest

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
    assert tol.kind == "spread" and tol.atol == pytest.approx(3 * 0.04 * math.sqrt(2 / 3))
    assert tol.agrees(0.54, 0.54 + 0.9 * tol.atol) and not tol.agrees(0.54, 0.54 + 1.1 * tol.atol)
    assert V.Spread((0.7, 0.7), floor=0.01).variation().atol == 0.01   # identical seeds: the resolution


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

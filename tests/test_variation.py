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
    """Three seeds of sd 0.02 each: Welch's t at 4 degrees of freedom is 2.776 at 95%, and the
    standard error of the gap is 0.02 sqrt(2/3) = 0.01633, so a gap counts past 0.0453."""
    a = V.Spread((0.50, 0.52, 0.54))
    assert V.Spread((0.80, 0.82, 0.84)).differs_from(a)
    assert V.Spread((0.55, 0.57, 0.59)).differs_from(a)           # t = 0.05 / 0.01633 = 3.06
    assert not V.Spread((0.54, 0.56, 0.58)).differs_from(a)       # two sds apart, t = 2.45: a tie
    assert not V.Spread((0.53, 0.55, 0.57)).differs_from(a)       # closer than one sd: a tie
    assert not V.Spread((0.40, 0.60, 0.80)).differs_from(a)       # a wide spread swallows the gap


def test_many_seeds_still_need_a_gap_past_one_sd():
    """Fifty seeds make a gap of half an sd significant (t = 2.5), but not larger than a seed's
    own scatter: the pages call that a tie."""
    wide = tuple(0.5 + 0.1 * (-1) ** i for i in range(50))
    shifted = tuple(v + 0.05 for v in wide)
    t = 0.05 / math.hypot(V.Spread(wide).sem, V.Spread(shifted).sem)
    assert t > V.t_quantile(V.DIFFERENCE_CONFIDENCE, 98)            # the premise: significant
    assert not V.Spread(shifted).differs_from(V.Spread(wide))
    assert V.Spread(tuple(v + 0.2 for v in wide)).differs_from(V.Spread(wide))


def test_every_seed_above_is_a_description_of_these_seeds():
    low, lead = V.Spread((0.10, 0.11, 0.12)), V.Spread((0.13, 0.40, 0.60))
    assert lead.every_seed_above(low) and not lead.differs_from(low)    # a tie at 95%, t = 1.96
    assert not V.Spread((0.12, 0.40, 0.60)).every_seed_above(low)     # its worst only ties their best
    assert lead.every_seed_above(0.125) and not lead.every_seed_above(0.13)


def test_outcomes_that_repeat_exactly_differ_past_their_resolution():
    assert V.Spread((0.5, 0.5), floor=0.01).differs_from(V.Spread((0.52, 0.52)))
    assert not V.Spread((0.5, 0.5), floor=0.01).differs_from(V.Spread((0.505, 0.505)))


def test_the_difference_rule_is_welchs_test():
    """scipy's Welch test as the oracle: with equal seed counts and sds the degrees of freedom are
    whole (2(n - 1)) and the verdicts agree exactly; otherwise ours rounds them down, so it never
    calls a difference scipy's test does not. Against a constant it is the one-sample test."""
    stats = need.module("scipy.stats")
    rng = np.random.default_rng(7)
    agree = strict = 0
    for _ in range(3000):
        n, m = int(rng.integers(2, 7)), int(rng.integers(2, 7))
        x, y = rng.normal(0, 1, n), rng.normal(rng.uniform(0, 4), rng.uniform(0.2, 2), m)
        ours = V.Spread(tuple(x)).differs_from(V.Spread(tuple(y)))
        past_sd = abs(x.mean() - y.mean()) > max(x.std(ddof=1), y.std(ddof=1))
        welch = stats.ttest_ind(x, y, equal_var=False).pvalue < 1 - V.DIFFERENCE_CONFIDENCE
        assert not ours or welch, (x, y)
        strict += welch and past_sd and not ours
        agree += ours == (welch and past_sd)
    assert agree / 3000 > 0.95 and 0.02 < strict / 3000 < 0.05   # rounding down: 3.4% of calls
    for n in (2, 3, 5):
        base = rng.normal(0, 1, n)
        for shift in np.linspace(0.5, 8, 31):
            x, y = base, base + shift * base.std(ddof=1)   # equal sds: 2(n - 1) whole df
            ours = V.Spread(tuple(y)).differs_from(V.Spread(tuple(x)))
            welch = stats.ttest_ind(x, y, equal_var=False).pvalue < 1 - V.DIFFERENCE_CONFIDENCE
            assert ours == (welch and shift > 1), (n, shift)
            one = stats.ttest_1samp(y, 0.0).pvalue < 1 - V.DIFFERENCE_CONFIDENCE
            assert V.Spread(tuple(y)).above(0.0) == (one and y.mean() > y.std(ddof=1)), (n, shift)


def test_same_outcome_twice_is_called_different_rarely():
    """Honest runs of three seeds from one distribution: Welch's test at 95% calls two of them
    different in about 2% of cases, and
    a change of nothing beyond zero in about 5% (the one-sample test is exact for normal data);
    the one-sd rule it replaced did so in 12% and 17%. Welch's test is itself conservative at
    three seeds against three (3.5%); rounding its degrees of freedom down takes it to 2.4%."""
    rng = np.random.default_rng(3)
    x, y = rng.normal(0.5, 0.01, (4000, 3)), rng.normal(0.5, 0.01, (4000, 3))
    calls = np.mean([V.Spread(tuple(a)).differs_from(V.Spread(tuple(b))) for a, b in zip(x, y)])
    assert 0.01 < calls < 0.035, calls
    changes = np.mean([V.Spread(tuple(a - b)).beyond_zero() for a, b in zip(x, y)])
    assert 0.04 < changes < 0.06, changes


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
    """One-sample t at 2 degrees of freedom is 4.303 at 95%: (0.85, 0.91, 0.94) has mean 0.9 and
    standard error 0.0265, so it is above 0.78 and not above 0.8 (t = 3.78)."""
    s = V.Spread((0.85, 0.91, 0.94))
    assert s.above(0.78) and not s.above(0.8) and not s.below(0.95)
    assert not V.Spread((0.65, 0.91, 0.94)).above(0.5)          # t = 3.6, though every seed
    assert V.Spread((0.65, 0.91, 0.94)).every_seed_above(0.5)    # lies above it
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


def test_pages_state_the_confidence_the_difference_rule_uses():
    """The experiment pages and how-to-use name the rule's confidence in words; each mention must
    be DIFFERENCE_CONFIDENCE, so changing it cannot leave a page describing the old test."""
    import json
    import re

    root = Path(__file__).resolve().parents[1]
    pages = [root / "book" / "how-to-use.md"] + [root / "notebooks" / f"{n}.ipynb" for n in (
        "03-hybrid", "06-residual-streams", "08-what-each-gives-up")]
    def text(p):
        if p.suffix != ".ipynb":
            return p.read_text()
        return "\n".join("".join(c["source"]) for c in json.loads(p.read_text())["cells"])

    rule = r"(\d+(?:\.\d+)?)% test|(?:finds it|different)\s+at (\d+(?:\.\d+)?)%"
    stated = {p.name: re.findall(rule, text(p)) for p in pages}
    assert len(stated["03-hybrid.ipynb"]) == 2 and len(stated["08-what-each-gives-up.ipynb"]) == 3
    assert all(stated.values()), stated
    assert {a or b for found in stated.values() for a, b in found} == {f"{100 * V.DIFFERENCE_CONFIDENCE:g}"}


def test_every_seed_above_happens_by_chance_as_often_as_the_pages_say():
    """Identical distributions: three seeds above three others one time in twenty (1 / C(6, 3)),
    three seeds above their own median one time in eight, as how-to-use states."""
    rng = np.random.default_rng(11)
    x, y = rng.normal(0, 1, (20000, 3)), rng.normal(0, 1, (20000, 3))
    pairs = np.mean([V.Spread(tuple(a)).every_seed_above(V.Spread(tuple(b))) for a, b in zip(x, y)])
    assert abs(pairs - 1 / math.comb(6, 3)) < 0.006, pairs
    median = np.mean([V.Spread(tuple(a)).every_seed_above(0.0) for a in x])
    assert abs(median - 1 / 2 ** 3) < 0.008, median

"""calc.rounding: the two rules, on values whose right answer is plain arithmetic."""

import numpy as np

from twopaths.calc.rounding import cover, fit, to_figures


def test_article_rounds_halves_up():
    # halves up: 2.5 -> 3 and 0.5 -> 1 (Python's round and numpy's would give 2 and 0)
    assert cover(2.5, "article") == 3
    assert fit(0.5, "article") == 1


def test_strict_fit_rounds_down_and_cover_up():
    assert fit(146.9) == 146
    assert cover(146.1) == 147
    assert np.array_equal(fit(np.array([1.9, 2.0])), [1.0, 2.0])


def test_cover_of_a_quotient_a_hair_off_whole():
    # 10,000 x 0.07 / 7 is 100 exactly, but in floating point it is 100.00000000000001
    assert 10_000 * 0.07 / 7 != 100
    assert cover(10_000 * 0.07 / 7) == 100


def test_to_figures_article():
    # 30.87 to three significant figures is 30.9; strict carries it unchanged
    assert to_figures(30_870.0, 3, "article") == 30_900.0
    assert to_figures(30_870.0, 3) == 30_870.0

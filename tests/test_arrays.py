"""calc.arrays: the array checks refuse exactly what the scalar checks refuse."""

import numpy as np
import pytest

from twopaths.calc.arrays import ints, reals
from twopaths.errors import ParameterError


def test_reals_closed_and_open_minimum():
    assert reals("x", np.array([0.0, 1.0]), minimum=0).tolist() == [0.0, 1.0]
    with pytest.raises(ParameterError):
        reals("x", np.array([0.0, 1.0]), minimum=0, open_min=True)


def test_reals_refuse_non_finite():
    with pytest.raises(ParameterError):
        reals("x", np.array([1.0, np.nan]))


def test_ints_minimum():
    assert ints("n", np.array([1, 2]), minimum=1).tolist() == [1, 2]
    with pytest.raises(ParameterError):
        ints("n", np.array([0, 2]), minimum=1)

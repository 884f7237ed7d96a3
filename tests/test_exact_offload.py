"""calc.offload's peak sizing against figures worked by hand: the sessions decoding at once are
Binomial(N, rho), sized by its normal approximation at a quantile and never past N."""

import pytest

from twopaths.calc import offload

Z999 = 3.090232306167813            # the standard normal's 0.999 quantile


def test_the_peak_is_the_binomials_spread_above_the_mean():
    # N = 10,000, rho = 0.25: mean 2,500, sd sqrt(10,000 x 0.25 x 0.75) = sqrt(1,875) = 43.30;
    # 2,500 + 3.0902 x 43.30 = 2,633.8, covered: 2,634 (a Poisson spread, sd 50, would give 2,655)
    assert 2500 + Z999 * 1875 ** 0.5 == pytest.approx(2633.81, abs=0.01)
    assert offload.peak_resident(10_000, 0.25, 0.999) == 2634
    assert offload.peak_rho(10_000, 0.25, 0.999) == pytest.approx(0.2634)


def test_the_peak_never_exceeds_the_sessions_there_are():
    # N = 10, rho = 0.9: 9 + 3.0902 x sqrt(0.9) = 11.93 would cover 12 sessions of 10
    assert offload.peak_resident(10, 0.9, 0.999) == 10
    assert offload.peak_rho(10, 0.9, 0.999) == 1.0


def test_the_duty_cycle_is_decode_over_a_whole_turn():
    # 5 s decoding and 15 s idle: a quarter of a session's life
    assert offload.duty_cycle(5.0, 15.0) == 0.25

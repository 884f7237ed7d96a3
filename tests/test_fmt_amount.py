"""``units.fmt_amount``: a re-run's small figures (a short context in GB, a few requests in TB) keep
their digits instead of printing as 0.00."""

import pytest

from twopaths.calc.units import fmt_amount


@pytest.mark.parametrize("value, digits, text", [
    (27.876, 2, "27.88 GB"), (1249.34, 1, "1,249.3 GB"), (0.53, 2, "0.530 GB"),
    (0.0256, 2, "0.0256 GB"), (0.0000123, 1, "0.0000123 GB"), (0, 2, "0.00 GB"), (-0.04, 2, "-0.0400 GB"),
])
def test_decimals_above_one_three_significant_digits_below(value, digits, text):
    assert fmt_amount(value, "GB", digits) == text


def test_fmt_bytes_decimal_and_binary():
    # 61,440 bytes = 61.44 kB (decimal) = 60 KiB (61,440 / 1,024); digits is honoured
    from twopaths.calc.units import fmt_bytes
    assert fmt_bytes(61_440, "kB") == "61.4 kB"
    assert fmt_bytes(61_440, "kB", 2) == "61.44 kB"
    assert fmt_bytes(61_440, "KiB", 2) == "60.00 KiB"


@pytest.mark.parametrize("value, unit, text", [
    (32_489, "count", "32,489"), (4, "number", "4"),              # a bare count has no unit word
    (1, "experts", "1 expert"), (1.0, "entries", "1 entry"), (2, "experts", "2 experts"),
    (32_489.4, "GB", "32,489 GB"), (1234.5, "x", "1,234 x"), (12.345, "%", "12.35 %"),
    (0.0000123, "GB", "0.00001230 GB"), (0, "s", "0 s"), (float("inf"), "M tokens", "∞ M tokens"),
    (-3184.2, "%", "-3,184 %"),
])
def test_a_quantity_reads_as_prose_never_in_e_notation(value, unit, text):
    from twopaths.calc.units import quantity
    assert quantity(value, unit) == text

import pytest

from twopaths import claims


def test_claims_load_with_ids_and_units():
    c = claims.claims("kv_cache")
    assert len(c) >= 10
    for claim in c.values():
        assert claim.section and claim.paraphrase and claim.unit
        float(claim.stated)


def test_rounding_precision_follows_the_printed_digits():
    assert claims.rounds_to("61.4", 61.44) and not claims.rounds_to("61.4", 61.46)
    assert claims.rounds_to("616", 616.4) and not claims.rounds_to("616", 616.6)
    assert claims.last_digit("0.3") == 0.1 and claims.last_digit("2560") == 10
    assert claims.last_digit("2560", exact=True) == 1 and claims.last_digit("616") == 1


@pytest.mark.parametrize("stated, unit, value, verdict", [
    ("40", "%", 0.409, "matches"),          # "about 40%" for 40.9%: one significant digit
    ("40", "%", 0.46, "differs"),
    ("866", "GPUs", 865.25, "matches"),     # a machine count: the need rounded up
    ("865", "GPUs", 865.25, "wrong direction"),  # ...rounded down leaves a GPU short
    ("4390", "GPUs", 4389, "differs"),      # a count is exact: every printed digit counts
    ("4390", "GPUs", 4391, "differs"),      # a whole GPU short is no rounding at all
    ("20", "GPUs", 12, "differs"),          # a round two-digit count is not read to one digit
    ("2", "x", 1.67, "matches"),            # "2x" for 1.67x: judged to the digit printed
    ("2", "x", 2.6, "differs"),
    ("16", "x", 16.67, "differs"),          # two digits printed: 17
    ("10", "%", 0.114, "matches"),          # DeepSeek's "10%" for 11.4%: read to the tens
    ("25", "%", 0.258, "differs"),          # "25%" is read to the unit: 26
    ("3", "x", 2.875, "matches"),           # "3:1" for 69:24
    ("68", "units", 68.03, "wrong direction"),   # whole units cover a need rounded up: 69
    ("10", "nodes", 8, "differs"),          # 8 nodes print as 8, not 10
    ("145", "nodes", 144.2, "matches"),
    ("147", "requests", 146.2, "wrong direction"),   # a capacity rounded up: one fewer fits
    ("146", "requests", 146.9, "matches"),
    ("256", "experts", 255, "differs"),     # a structural count is exact
    ("3.0", "%", 0.0306, "differs"),        # a printed zero after the point is significant
])
def test_the_precision_policy_at_its_borders(stated, unit, value, verdict):
    assert claims.within_policy(_claim(stated, unit), value * (100 if unit == "%" else 1)) == verdict


def _claim(stated, unit):
    return claims.Claim(id="x", section="s", paraphrase="p", stated=stated, unit=unit)


def test_verdicts():
    assert claims.judge(_claim("61.4", "kB"), 61_440).verdict == "matches"
    assert claims.judge(_claim("616", "TB"), 616.6e12).verdict == "rounding"
    assert claims.judge(_claim("0.3", "%"), 0.00352).verdict == "rounding"   # truncated: 0.35 prints 0.4
    assert claims.judge(_claim("0.3", "%"), 0.0041).verdict == "differs"     # past one unit of its digit
    assert claims.judge(_claim("0.1", "T params"), 2.3e9).verdict == "differs"   # 0.0023T: 40x off
    assert claims.judge(_claim("3.2", "%"), 0.0311).verdict == "differs"      # neither truncated nor 1%
    assert claims.judge(_claim("-81", "number"), -81.6).verdict == "rounding"   # truncated toward zero
    assert claims.judge(_claim("-81", "number"), 81.2).verdict == "differs"
    assert claims.judge(_claim("16", "x"), 16.67).verdict == "rounding"      # "1/16" for 1/16.67: truncated
    assert claims.judge(_claim("25", "%"), 0.258).verdict == "rounding"
    slip = claims.judge(_claim("207", "MB"), 69 * 3 * 2**20)
    assert slip.verdict == "unit slip" and "MiB" in slip.note
    assert claims.judge(_claim("12.2", "GB"), 12.49e9).verdict == "differs"
    assert claims.judge(_claim("0.3", "%"), 0.0033).verdict == "matches"
    assert claims.judge(_claim("5", "x"), 2.8).verdict == "differs"


def test_unknown_topic(raises_param):
    raises_param("topic", claims.claims, "gossip")


def test_a_claim_needs_a_known_unit_and_a_number():
    import pytest

    with pytest.raises(ValueError, match="unit 'Gb'"):
        _claim("1", "Gb")
    with pytest.raises(ValueError):
        _claim("about 5", "x")


def test_scaled_units_compare_in_their_own_unit():
    assert claims.judge(_claim("28", "ms"), (104e9 + 30.72e9) / 4.8e12).verdict == "matches"
    assert claims.judge(_claim("400", "Gb/s"), 50e9).verdict == "matches"            # bits, not bytes
    assert claims.judge(_claim("2.45", "B params"), 2.2e12 / 898).verdict == "matches"
    assert claims.judge(_claim("2.45", "T params"), 2.2e12 / 898).verdict == "differs"
    assert claims.judge(_claim("500", "K tokens"), 500_000).verdict == "matches"
    assert claims.judge(_claim("15.00", "USD/M tokens"), 15e-6).verdict == "matches"
    assert claims.judge(_claim("0.12", "s"), 6.1e9 / 50e9).verdict == "matches"


def test_a_count_one_unit_on_the_safe_side_is_a_rounding_slip():
    over = claims.judge(_claim("4390", "GPUs"), 4388.6)     # the need is 4,389: one GPU to spare
    assert over.verdict == "rounding" and "4,389" in over.note
    assert claims.judge(_claim("4391", "GPUs"), 4388.6).verdict == "differs"
    assert claims.judge(_claim("145", "requests"), 146.9).verdict == "rounding"   # 146 fit: one fewer
    assert claims.judge(_claim("147", "requests"), 146.9).verdict == "wrong direction"
    assert claims.judge(_claim("136", "nodes"), 138).verdict == "differs"   # two short: not rounding
    assert claims.judge(_claim("20", "GPUs"), 12).verdict == "differs"
    short = claims.judge(_claim("865", "GPUs"), 865.25)
    assert short.verdict == "wrong direction" and "866" in short.note
    assert claims.needed(_claim("1", "nodes"), 3.0000000001) == 3      # float noise is not a node


def test_counts_are_compared_as_they_are():
    assert claims.judge(_claim("69", "requests"), 2144 / 30.9).verdict == "matches"
    assert claims.judge(_claim("147", "requests"), 146.2).verdict == "wrong direction"
    assert claims.judge(_claim("580", "nodes"), 4 * 148).verdict == "differs"
    assert claims.judge(_claim("616", "TB"), 616.6e12).verdict == "rounding"   # not a count: a slip
    assert claims.judge(_claim("-80", "number"), 16 * -5).verdict == "matches"


def test_optional_fields_default_and_become_tuples():
    plain = _claim("1", "x")
    assert plain.versions == ("en", "zh") and plain.checkable is True and plain.differs_from is None
    c = claims.Claim(id="y", section="s", paraphrase="p", stated="1", unit="x", versions=["zh"],
                     inputs=["context 1M tokens"], derived_from=["x"], checkable="price")
    assert c.versions == ("zh",) and c.derived_from == ("x",) and hash(c)


def test_optional_fields_are_checked():
    import pytest

    def make(**kw):
        return claims.Claim(id="y", section="s", paraphrase="p", stated="1", unit="x", **kw)

    with pytest.raises(ValueError, match="versions"):
        make(versions=["fr"])
    with pytest.raises(ValueError, match="versions"):
        make(versions=[])
    with pytest.raises(ValueError, match="checkable"):
        make(checkable=False)
    with pytest.raises(ValueError, match="checkable"):
        make(checkable="")
    with pytest.raises(ValueError, match="must start with one of"):
        make(checkable="assumption")             # a reason outside the fixed kinds
    assert make(checkable="price: an API's list price").checkable.startswith("price")
    with pytest.raises(ValueError, match="itself"):
        make(derived_from=["y"])
    with pytest.raises(ValueError, match="itself"):
        make(differs_from="y")


def test_topics_lists_the_files():
    assert "kv_cache" in claims.topics() and claims.topics() == sorted(claims.topics())

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
    assert claims.last_digit("0.3") == 0.1 and claims.last_digit("2560") == 1


def _claim(stated, unit):
    return claims.Claim(id="x", section="s", paraphrase="p", stated=stated, unit=unit)


def test_verdicts():
    assert claims.judge(_claim("61.4", "kB"), 61_440).verdict == "matches"
    assert claims.judge(_claim("616", "TB"), 616.6e12).verdict == "rounding"
    assert claims.judge(_claim("0.3", "%"), 0.00352).verdict == "differs"    # 17% off is not rounding
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

"""The coverage of the article's numeric sentences by the claims registry (twopaths.claims.coverage):
the sentence splitter, what counts as a figure, the matching rule of ``covers``, the exemptions'
data and the report's arithmetic."""

from decimal import Decimal

import pytest

import need
from twopaths.claims import Claim, all_claims
from twopaths.claims import coverage as cv


@pytest.fixture(scope="module")
def article():
    """The texts live outside the repository (../shared/article); without them, skip (or fail in CI)."""
    if not all((cv.ARTICLE / name).is_file() for name in cv.TEXTS.values()):
        need.missing(f"the article's text in {cv.ARTICLE}", "set TWOPATHS_ARTICLE to its folder")


def claim(stated, unit, section="III. GPU requirements", versions=("en", "zh"), cid="t"):
    return Claim(id=cid, section=section, paraphrase="", stated=stated, unit=unit, versions=versions)


def sentence(text, section="III. GPU requirements", version="en"):
    return cv.Sentence(version, 1, section, text)


# The splitter

def test_english_split_keeps_decimals_ratios_and_abbreviations():
    line = ("K3 has 2.8T parameters, 3.0 MB/layer at a 3:1 ratio (e.g. a 1.5x case). Next: "
            'arXiv:2602.21548 says "a → b." Done?')
    assert cv.split(line) == ["K3 has 2.8T parameters, 3.0 MB/layer at a 3:1 ratio (e.g. a 1.5x case).",
                              "Next:", 'arXiv:2602.21548 says "a → b."', "Done?"]


def test_english_split_cuts_a_list_marker_and_a_semicolon():
    assert cv.split("1. KV Compressor: Every 4 tokens; then 1 entry.") == [
        "1.", "KV Compressor:", "Every 4 tokens;", "then 1 entry."]


def test_chinese_split_on_chinese_punctuation_only():
    line = "每 4 个合成 1 个（4:1）。甲 k=1024；乙：k=512！对吗？V3.2 不变"
    assert cv.split(line, "zh") == ["每 4 个合成 1 个（4:1）。", "甲 k=1024；", "乙：", "k=512！", "对吗？",
                                    "V3.2 不变"]
    # a closing quote stays with the sentence it closes; an opening one goes with the next
    assert cv.split('他说："还不知道。"然后', "zh") == ["他说：", '"还不知道。"', "然后"]


def test_chinese_table_row_is_one_sentence():
    row = "| 8 | 1 | 112 | 274 GB | 不够: 是。否 | ❌ |"
    assert cv.split(row, "zh") == [row]
    assert cv.split(row, "en") != [row]      # English has no tables: the colon cuts it


# Figures and numeric

@pytest.mark.parametrize("text", [
    "K3 and DSV4 beat V3.2 and V4-Pro on H200, H100s, B300 and GB300.",
    "FP8, BF16, FP4, MXFP4 and NVFP4 weights; HBM3e over NVLink 4.",
    "GPT-5.6 Sol, Qwen3.5, GLM-5.2, Step 3.5 Flash, Opus 4.8 and Fable 5.",
    "KV moves from L1 to L2/L3 in mHC and Flash 0731 (Table 1, AA v4.1, arXiv:2602.21548).",
    "1.", "Step 4:", "- ", "two paths, no figure",
])
def test_names_and_list_markers_are_not_figures(text):
    assert not cv.numeric(text), cv.figures(text)


@pytest.mark.parametrize("text, value, kind, scale", [
    ("4,390 cards", Decimal(4390), "", 1),
    ("~2.0% of experts", Decimal("2.0"), "%", 1),
    ("a 4.3× ratio", Decimal("4.3"), "x", 1),
    ("2.5x efficiency", Decimal("2.5"), "x", 1),
    ("约 5 倍", Decimal(5), "x", 1),
    ("500K tokens", Decimal(500), "scale", 1000),
    ("2.8T total", Decimal("2.8"), "scale", 10**12),
    ("80 万 token", Decimal(80), "scale", 10**4),
    ("万并发", Decimal(1), "scale", 10**4),
    ("one-million-token context", Decimal(1), "scale", 10**6),
    ("g_min = -5", Decimal(5), "", 1),
    ("K3 has 96 heads", Decimal(96), "", 1),
])
def test_a_figure_is_read_with_its_scale_or_sign(text, value, kind, scale):
    (fig,) = cv.figures(text)
    assert (fig.value, fig.kind, fig.scale) == (value, kind, scale)


def test_what_a_figure_counts_comes_from_the_word_after_it():
    fams = [(f.text, f.family, f.unit) for f in cv.figures(
        "24 MLA layers, 580 D nodes, 96 个注意力头, 61.4 KB/token, 4.8 TB/s, 28ms, 96 H100s, 5.0x GPU")]
    assert fams == [("24", "layers", None), ("580", "nodes", None), ("96", "heads", None),
                    ("61.4", "bytes", "kB"), ("4.8", "bandwidth", "TB/s"), ("28", "time", "ms"),
                    ("96", None, None), ("5.0x", None, None)]


def test_dates_are_figures_that_match_nothing():
    figs = cv.figures("official pricing (2026-07), data as of August 6, 2026; 2026 年 8 月")
    assert figs and {f.kind for f in figs} == {"date"}
    assert not cv.covers(claim("7", "count", section="S"), sentence("pricing (2026-07).", "S"))


# covers

def test_thousands_separator_and_trailing_zeros():
    assert cv.covers(claim("4390", "GPUs"), sentence("4,390 vs 877."))
    assert cv.covers(claim("3.00", "USD/M tokens"), sentence("API input $3 a million"))
    assert cv.covers(claim("2.0", "%"), sentence("a total activation rate of ~2%."))


def test_a_claim_in_another_section_or_version_does_not_cover():
    s = sentence("4,390 vs 877.")
    assert not cv.covers(claim("4390", "GPUs", section="III. Deployment on B300"), s)
    assert not cv.covers(claim("4390", "GPUs", versions=("zh",)), s)
    assert cv.covers(claim("4390", "GPUs", versions=("zh",)), sentence("4,390 vs 877。", version="zh"))


def test_the_companion_note_has_its_own_claims():
    note = claim("128", "heads", section="Trends note: appendix table", versions=("zh",))
    article = claim("128", "heads", section="Trends note: appendix table", versions=("zh",), cid="u")
    object.__setattr__(article, "section", "II. CSA + HCA")
    row = sentence("| 128 头 |", section="Trends note: appendix table", version="trends")
    assert cv.covers(note, row)
    assert not cv.covers(note, sentence("| 128 头 |", section="Trends note: appendix table", version="zh"))
    assert not cv.covers(article, sentence("| 128 头 |", section="II. CSA + HCA", version="trends"))


def test_a_scaled_unit_needs_its_scale_printed():
    c = claim("500", "K tokens")
    assert cv.covers(c, sentence("At average context 500K tokens:"))
    assert not cv.covers(c, sentence("the 500 left"))
    assert not cv.covers(claim("1", "M tokens"), sentence("from 1 to 4 channels"))
    assert cv.covers(claim("7.8", "K entries"), sentence("small (~7,800 entries for 1M context)"))
    assert cv.covers(claim("10000", "requests"), sentence("万并发：K3 约 616 TB", version="zh"))
    assert cv.covers(claim("2.8", "TB"), sentence("2.8T vs 1.6T"))
    assert not cv.covers(claim("2.8", "GB"), sentence("2.8T vs 1.6T"))


def test_a_figure_that_counts_something_else_does_not_cover():
    assert not cv.covers(claim("24", "h"), sentence("24 MLA layers suffice"))
    assert cv.covers(claim("24", "h"), sentence("a 24-hour kernel optimisation"))
    assert not cv.covers(claim("122", "TB"), sentence("~122 KB per token"))
    assert not cv.covers(claim("2", "x"), sentence("requires only 2 nodes/unit"))
    assert cv.covers(claim("3", "x"), sentence("1 layer after every 3 KDA layers"))
    assert not cv.covers(claim("75", "layers"), sentence("75% of layers"))
    assert cv.covers(claim("5.0", "x"), sentence("The 5.0x GPU gap (4,390/877)"))


# The texts, the section map and the exemptions

def test_every_header_opens_exactly_one_line(article):
    for version, headers in cv.HEADERS.items():
        lines = cv.text(version).splitlines()
        for start in headers:
            assert sum(line.startswith(start) for line in lines) == 1, (version, start)


def test_every_claim_section_is_a_section_of_its_text(article):
    for c in all_claims().values():
        for version in cv.TEXT_VERSIONS:
            if cv.in_version(c, version):
                assert c.section in set(cv.sections(version)), (c.id, version, c.section)


def test_sections_follow_the_headers(article):
    tags = cv.sections("en")
    lines = cv.text("en").splitlines()
    assert tags[0] == "Introduction"
    assert tags[lines.index(next(x for x in lines if x.startswith("Step 4:")))] == \
        "III. Deployment step 4: D-node concurrency"
    zh, zh_lines = cv.sections("zh"), cv.text("zh").splitlines()
    step4 = zh_lines.index(next(x for x in zh_lines if x.startswith("第四步：")))
    assert zh[step4] == zh[step4 + 1] == "III. Deployment step 4: D-node concurrency" != zh[step4 - 1]
    assert zh[-1] == "Data sources" and zh[0] == "Introduction"


def test_every_exemption_is_a_numeric_sentence_at_its_line(article):
    ex = cv.exemptions()
    assert ex
    for e in ex:
        line = cv.text(e.version).splitlines()[e.line - 1]
        assert e.locator in line, e
        assert e.reason in cv.REASONS
        s = cv.exempt_sentence(e)
        assert s.line == e.line and s.text.startswith(e.locator) and cv.numeric(s)
        assert len(e.locator) < len(s.text) or len(s.text) <= 30, f"{e}: the locator is the whole sentence"


def test_exemption_reasons_hold(article):
    claims = all_claims()
    for e in cv.exemptions():
        s = cv.exempt_sentence(e)
        figs = cv.figures(s)
        if e.reason == "date":
            assert all(f.kind == "date" or (f.kind == "" and 1900 <= f.value <= 2100) for f in figs), e
        elif e.reason in cv.REPEATS:
            assert not [f for f in cv.unregistered(s, claims) if f.kind != "date"], e
        elif e.reason == "question":
            assert s.text.rstrip().endswith(("?", "？")), e


@pytest.mark.parametrize("data, message", [
    ({"en": {"looks fine": [[5, "In 2026, two"]]}}, "reason"),
    ({"fr": {"date": [[5, "In 2026, two"]]}}, "version"),
    ({"en": {"date": [[5, "In 2026, two of China's most technically deep AI teams"]]}}, "locator"),
    ({"en": {"date": [[9, "But the technical paths"]]}}, "numeric"),
    ({"en": {"date": [[5, "In 2026"], [5, "In 2026, two"]]}}, "twice"),
    ({"en": {"date": [[6, "In 2026"]]}}, "names 0 sentences"),
    ({"en": {"date": [[89, None]]}}, "whole sentence"),      # None: the whole sentence, read at run time
    ({"en": {"date": [5, "In 2026"]}}, "not \\[line"),
])
def test_bad_exemptions_are_refused(article, data, message):
    rows = data.get("en", {}).get("date", [])
    if rows and isinstance(rows[0], list) and rows[0][1] is None:
        rows[0][1] = next(s.text for s in cv.sentences("en") if s.line == rows[0][0] and cv.numeric(s))
    with pytest.raises(ValueError, match=message):
        cv.check_exemptions(cv.load_exemptions(data))


# The report

def test_the_report_adds_up(article):
    cov = cv.report()
    assert [v.version for v in cov.versions] == list(cv.TEXT_VERSIONS)
    exempt = cv.exemptions()
    for v in cov.versions:
        assert v.numeric == sum(map(cv.numeric, cv.sentences(v.version)))
        assert v.numeric == v.covered + v.exempt_total + len(v.uncovered)
        assert v.exempt_total == sum(e.version == v.version for e in exempt) - len(v.stale)
        assert not v.stale, f"{v.version}: exemptions of sentences a claim now covers: {v.stale}"
        assert v.coverage == pytest.approx(v.covered / (v.numeric - v.exempt_total))
        assert v.coverage_all == pytest.approx(v.covered / v.numeric)
        assert {r for r, _ in v.exempt} <= set(cv.REASONS)
        # a broken section map would leave dozens of claims unfound; printed in words, a few are
        assert len(v.unfound) < 0.05 * sum(cv.in_version(c, v.version) for c in all_claims().values())


def test_an_exemption_of_a_covered_sentence_is_stale(article):
    claims = all_claims()
    s = next(x for x in cv.sentences("en") if x.text == "4,390 vs 877.")
    stale = cv.Exemption("en", s.line, "4,390 vs", "repeat of a registered figure")
    v = cv.version_coverage("en", claims, (stale,))
    assert v.stale == (stale,) and v.exempt_total == 0
    assert v.numeric == v.covered + len(v.uncovered)


@pytest.mark.parametrize("version, start, cid", [
    ("en", "4,390 vs 877.", "k3-gpus-bare"),
    ("en", "At average context 500K tokens:", "avg-context"),
    ("en", "K3's solution", None),                      # a fragment with no figure
    ("en", "replace 69 of the 93 layers", "k3-kda-layers"),
    ("zh", "K3 单请求的 KV Cache 是 DSV4 的约 5 倍", "k3-over-v4-request"),
    ("zh", "万并发：", "concurrency-target"),
    ("trends", "| 词表 |", "trends-k3-vocab"),
])
def test_hand_checked_sentences(article, version, start, cid):
    s = next(x for x in cv.sentences(version) if x.text.startswith(start))
    claims = all_claims()
    if cid is None:
        assert not cv.numeric(s)
    else:
        assert cv.covers(claims[cid], s)


def test_the_cli_prints_the_report(article, capsys):
    from twopaths.audit import main

    assert main(["--coverage"]) == 0
    out = capsys.readouterr().out
    for v in cv.report().versions:
        assert f"{v.version}: {v.numeric} numeric sentences, {v.covered} covered" in out
        assert all(f"line {u.line:>3}" in out for u in v.uncovered)

"""Real-browser checks: the built site, and the checker itself on tiny fixture pages."""

from __future__ import annotations

import base64
import importlib.metadata
import json
import os
import re
import sys
import warnings
from pathlib import Path

import pytest

import need

sys.path.insert(0, str(Path(__file__).resolve().parent))
import browser_check  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
# Rules the built site is checked against but does not yet fail on: the chapters that break them
# are being fixed on other branches. Once those are merged, make the check strict by emptying this
# set (PENDING_RULES = frozenset()); TWOPATHS_BROWSER_STRICT=1 enforces every rule meanwhile.
PENDING_RULES = frozenset()
# One pytest worker runs every browser check (make test: --dist loadgroup): two Chromiums at once on
# a two-core machine only slow each other, and the fixture site is built once.
pytestmark = pytest.mark.xdist_group("browser")
NO_CHROMIUM = "browser check SKIPPED: no chromium found (apt-get install chromium); .ci/run installs it"


def require_chromium() -> None:
    if browser_check.find_chromium() is None:
        if not need.ci():
            warnings.warn(NO_CHROMIUM)  # shows in pytest's default summary, unlike a bare skip
        need.missing("chromium", "apt-get install chromium; .ci/run installs it")


@pytest.mark.site
def test_built_site_in_browser():
    html_dir = ROOT / "_build" / "html"
    if not (html_dir / "index.html").is_file():
        if os.environ.get("TWOPATHS_SKIP_SITE") == "1":
            need.missing("the built site (TWOPATHS_SKIP_SITE=1)", "run `make book` first")
        pytest.fail(f"no built site at {html_dir}: run `make book` first (or set TWOPATHS_SKIP_SITE=1)")
    notebooks = ROOT / "_build" / "src" / "notebooks"
    assert notebooks.is_dir(), f"no executed notebook sources at {notebooks}: run `make book` first"
    require_chromium()

    problems = browser_check.check_site(
        html_dir, ROOT / "_build" / "screenshots", browser_check.expected_glue_from_sources(notebooks)
    )
    report = ROOT / "_build" / "browser-check.txt"
    report.write_text(browser_check.summary(problems) + "\n\n" + "\n".join(f"[{p.rule}] {p}" for p in problems) + "\n")
    pending = set() if os.environ.get("TWOPATHS_BROWSER_STRICT") == "1" else PENDING_RULES
    failing = [str(p) for p in problems if p.rule not in pending]
    if waived := [p for p in problems if p.rule in pending]:
        counts = ", ".join(f"{rule} {sum(p.rule == rule for p in waived)}" for rule in sorted(pending))
        warnings.warn(f"browser check, rules not yet enforced: {counts} problem(s); see {report}")
    assert not failing, "browser check found problems:\n" + "\n".join(failing)


# --- the checker on fixture pages ---------------------------------------------

# A 1x1 PNG, inline so the clean page needs no file and no network.
PIXEL = "data:image/png;base64," + base64.b64encode(
    bytes.fromhex(
        "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
        "1f15c4890000000d49444154789c63f8ffff3f0005fe02fea7d605ee0000000049454e44ae426082"
    )
).decode()

HASH = "de531fd46ea5cc2e4035af3aedb92679a3ca82879537f03fc45a01ef0510f3b3"
LONG_LINE = "total = " + " + ".join(f"term_{i}" for i in range(40))
# A text column 400 px wide inside 20 px of padding on each side, as the theme's article pads its
# own, and a table of a set width: the check measures tables against the column's content box.
COLUMN = '<article class="bd-article" style="width: 440px; padding: 0 20px; box-sizing: border-box">{}</article>'
TABLE = '<table style="width: {width}px"><tr><th>nodes</th><th>unit</th></tr><tr><td>314</td><td>EP64</td></tr></table>'


def output(html: str) -> str:
    return f'<div class="cell_output">{html}</div>'


def figure(alt: str, caption: str = "") -> str:
    figcaption = f"<figcaption><p>{caption}</p></figcaption>" if caption else ""
    return f'<figure><img alt="{alt}" src="{PIXEL}">{figcaption}</figure>'


FIXTURE_PAGES = {
    "network.html": '<p>Chart:</p><img src="https://example.invalid/x.png">',
    "tex.html": "<p>Energy is $$x^2$$ here.</p>",
    "untypeset.html": '<div class="math notranslate nohighlight">\\[x^2\\]</div>',
    "traceback.html": (
        '<div class="cell_output"><pre>Traceback (most recent call last):\n'
        '  File "x.py", line 1\nZeroDivisionError: division by zero</pre></div>'
    ),
    "glue.html": '<p>Ratio <span class="pasted-text">3.14</span> and <span class="pasted-text"> </span>.</p>',
    "console.html": "<script>const THEBE = 1;</script><script>const THEBE = 2;</script>",
    "console-call.html": "<script>console.error('boom')</script><script>console.log('fine')</script>",
    "wide-code.html": f'<div class="cell_input"><pre style="width: 300px; overflow: auto">{LONG_LINE}</pre></div>',
    "figure-caption.html": output(figure("Cache per request against context")),
    "figure-alt.html": output(figure(f"../_images/{HASH}.png", "Figure 1.1: the cache.")),
    "figure-bare.html": output(f'<img alt="../_images/{HASH}.png" src="{PIXEL}">'),
    "repr.html": "".join(output(f"<pre>{r}</pre>") for r in (
        "np.float64(74.83)", "torch.Size([1, 2, 16])", "Setup(profile='smoke')", "tensor([0.5, 1.5])")),
    "glue-repr.html": '<p>Weights: <span class="pasted-text">np.float64(74.83)</span> GB.</p>',
    "shown-setup.html": (
        '<div class="cell tag_parameters"><div class="cell_input"><pre>profile = "default"</pre></div></div>'
        '<div class="cell"><div class="cell_input"><pre>run = chapter.setup(profile)</pre></div></div>'),
    # one table wider than the column in view, one in a closed fold: both are a reader's to scroll
    "wide-table.html": COLUMN.format(
        output(f"<p><strong>Plans by node</strong></p>{TABLE.format(width=800)}")
        + f"<details><summary>All plans</summary>{output(TABLE.format(width=420))}</details>"),
    "notebooks/clean.html": (
        '<p>Ratio <span class="pasted-text">3.14</span>, count <span class="output text_plain">42</span>.</p>'
        # TeX and error-looking text inside code is fine.
        "<pre>$$\\frac{a}{b}$$</pre><code>\\begin{x}</code>"
        + output('<div class="output text_plain">7</div>' + figure("One pixel", "Figure 1.1: a pixel."))
    ),
    # What a reader may see: a captioned figure with alt text, code that fits, reprs only in code,
    # a wide output (only code is held to the column), a wide code cell folded away.
    "notebooks/clean-cells.html": (
        '<div class="cell_input"><pre style="width: 300px; overflow: auto">x = np.float64(1.5)</pre></div>'
        + output(figure("Cache per request against context", "Figure 1.1: the cache."))
        + output(f'<pre style="width: 300px; overflow: auto">The tensor shapes agree. {LONG_LINE}</pre>')
        + f'<details><summary>Show code</summary><pre style="width: 300px; overflow: auto">{LONG_LINE}</pre></details>'
        + "<script>console.log('not an error'); console.warn('nor this');</script>"
        # setup folded away, and tables that fit the column, folded or not
        + '<details><summary>Show code</summary><div class="cell tag_parameters"><div class="cell_input">'
        '<pre>profile = "default"\nrun = chapter.setup(profile)</pre></div></div></details>'
        + COLUMN.format(output(TABLE.format(width=380)) + f"<details>{output(TABLE.format(width=390))}</details>")
    ),
    # Not content pages: never opened, so their problems must not be reported.
    "search.html": "<p>$$x$$</p>",
    "_static/junk.html": "<p>$$x$$</p>",
}


# Marked `site`: they need Chromium, and run in `make test`'s browser stage (a few seconds).
@pytest.fixture(scope="module")
def fixture_site(tmp_path_factory):
    """Build the fixture site once and check it once; tests look at their own page."""
    require_chromium()
    root = tmp_path_factory.mktemp("site")
    html_dir = root / "html"
    for rel, body in FIXTURE_PAGES.items():
        (html_dir / rel).parent.mkdir(parents=True, exist_ok=True)
        (html_dir / rel).write_text(f"<!DOCTYPE html><html><head><title>t</title></head><body>{body}</body></html>")
    # Jupyter Book's index.html is only a redirect; this one points nowhere.
    (html_dir / "index.html").write_text('<meta http-equiv="Refresh" content="0; url=gone.html" />')
    expected_glue = {"glue.html": 2, "notebooks/clean.html": 2, "notebooks/never-built.html": 1}
    problems = browser_check.check_site(html_dir, root / "shots", expected_glue)
    return root, problems


def problems_of(fixture_site, page: str) -> list[str]:
    return [str(p) for p in fixture_site[1] if p.page == page]


@pytest.mark.site
def test_flags_network_request_and_broken_image(fixture_site):
    problems = problems_of(fixture_site, "network.html")
    assert "network.html: network request: https://example.invalid/x.png" in problems
    assert "network.html: image did not load: https://example.invalid/x.png" in problems


@pytest.mark.site
def test_flags_raw_tex(fixture_site):
    assert any("raw TeX visible" in p and "$$x^2$$" in p for p in problems_of(fixture_site, "tex.html"))


@pytest.mark.site
def test_flags_math_not_typeset(fixture_site):
    problems = problems_of(fixture_site, "untypeset.html")
    assert "untypeset.html: 1 of 1 math elements not typeset by MathJax" in problems
    assert any("raw TeX visible" in p for p in problems)


@pytest.mark.site
def test_flags_traceback(fixture_site):
    problems = problems_of(fixture_site, "traceback.html")
    assert "traceback.html: error output: page text contains 'Traceback (most recent call last)'" in problems


@pytest.mark.site
def test_flags_missing_and_empty_glue(fixture_site):
    problems = problems_of(fixture_site, "glue.html")
    assert "glue.html: 1 glued values are empty" in problems
    assert problems_of(fixture_site, "notebooks/never-built.html") == [
        "notebooks/never-built.html: page missing from the built site"
    ]


@pytest.mark.site
def test_flags_redirect_to_missing_page(fixture_site):
    assert problems_of(fixture_site, "index.html") == ["index.html: redirects to missing page gone.html"]


@pytest.mark.site
def test_flags_console_errors(fixture_site):
    assert problems_of(fixture_site, "console.html") == [
        "console.html: console error: uncaught SyntaxError: Identifier 'THEBE' has already been declared"
    ]
    assert problems_of(fixture_site, "console-call.html") == ["console-call.html: console error: boom"]


@pytest.mark.site
def test_flags_code_wider_than_its_column(fixture_site):
    (problem,) = problems_of(fixture_site, "wide-code.html")
    assert problem.startswith("wide-code.html: code block ") and "px too wide: total = term_0 + term_1" in problem


@pytest.mark.site
def test_flags_figures_without_caption_or_real_alt_text(fixture_site):
    assert problems_of(fixture_site, "figure-caption.html") == [
        "figure-caption.html: figure #1 (inline image) without a caption"
    ]
    assert problems_of(fixture_site, "figure-alt.html") == [
        "figure-alt.html: figure #1 (inline image) with a file hash as alt text"
    ]
    assert len(problems_of(fixture_site, "figure-bare.html")) == 2


@pytest.mark.site
def test_flags_raw_reprs_in_outputs(fixture_site):
    assert problems_of(fixture_site, "repr.html") == [
        f"repr.html: raw repr in output: {r}"
        for r in ("np.float64(74.83)", "torch.Size([1, 2, 16])", "Setup(profile='smoke')", "tensor([0.5, 1.5])")
    ]
    assert problems_of(fixture_site, "glue-repr.html") == ["glue-repr.html: raw repr in output: np.float64(74.83)"]


@pytest.mark.site
def test_flags_setup_cells_shown_unfolded(fixture_site):
    assert problems_of(fixture_site, "shown-setup.html") == [
        'shown-setup.html: setup cell shown unfolded: profile = "default"',
        "shown-setup.html: setup cell shown unfolded: run = chapter.setup(profile)"]


@pytest.mark.site
def test_flags_tables_wider_than_the_column_folded_or_not(fixture_site):
    # 400 px of room: the padding is not the reader's (the folded 420 px table fits in 440)
    assert problems_of(fixture_site, "wide-table.html") == [
        "wide-table.html: table 800 px in a 400 px column: Plans by node",
        "wide-table.html: table 420 px in a 400 px column: nodes | unit"]


@pytest.mark.site
def test_problems_carry_their_rule(fixture_site):
    rules = {p.page: p.rule for p in fixture_site[1]}
    assert rules["console.html"] == "console" and rules["repr.html"] == "repr"
    assert rules["wide-code.html"] == "wide-code" and rules["figure-alt.html"] == "figure"
    assert rules["wide-table.html"] == "wide-table" and rules["shown-setup.html"] == "shown-setup"
    assert set(rules.values()) <= set(browser_check.RULES)
    text = browser_check.summary(fixture_site[1])
    assert "repr             5 problem(s) on   2 page(s)" in text


@pytest.mark.site
def test_clean_page_passes_and_is_screenshotted(fixture_site):
    root, problems = fixture_site
    assert problems_of(fixture_site, "notebooks/clean.html") == []
    assert problems_of(fixture_site, "notebooks/clean-cells.html") == []
    assert (root / "shots" / "notebooks__clean.png").stat().st_size > 0
    assert not [p for p in problems if p.page.startswith(("search.html", "_static/"))]


def local_mathjax() -> Path | None:
    """tex-chtml.js from the sphinx-mathjax-offline package, if it is installed."""
    try:
        files = importlib.metadata.files("sphinx-mathjax-offline") or []
    except importlib.metadata.PackageNotFoundError:
        return None
    return next((Path(f.locate()) for f in files if str(f).endswith("mathjax/tex-chtml.js")), None)


MATH = ('<p>Inline <span class="math notranslate nohighlight">\\(e^{i\\pi}\\)</span></p>'
        '<div class="math notranslate nohighlight">\\[\\frac{a}{b}\\]</div>')


def math_page(path: Path, body: str = "") -> Path:
    """A page at ``path`` with two formulas for the installed MathJax to typeset, then ``body``."""
    mathjax = local_mathjax()
    if mathjax is None:
        need.missing("sphinx-mathjax-offline (a local MathJax to render with)", "pip install -r requirements.txt")
    require_chromium()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f'<html><head><script defer src="{mathjax.resolve().as_uri()}"></script></head>'
                    f"<body>{MATH}{body}</body></html>")
    return path


@pytest.mark.site
def test_math_typeset_by_local_mathjax_passes(tmp_path):
    page = math_page(tmp_path / "html" / "math.html")
    assert browser_check.check_site(page.parent, tmp_path / "shots") == []


def test_expected_glue_from_sources(tmp_path):
    markdown = (
        "A {glue:text}`a:.2f`, {glue}`b`, {glue:}`c`, {glue:any}`d`, {glue:math}`e`, not {glue:md}`f`.\n\n"
        "```{glue} g\n```\n\n:::{glue:figure} h\n:::\n\n````{glue:math} i\n````\n"
    )
    cells = [
        {"cell_type": "markdown", "metadata": {}, "source": markdown.splitlines(keepends=True)},
        {"cell_type": "code", "metadata": {}, "source": "glue('a', 1)  # {glue}`not-markdown`",
         "outputs": [], "execution_count": None},
    ]
    nb = {"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    (tmp_path / "01-x.ipynb").write_text(json.dumps(nb))
    (tmp_path / "02-empty.ipynb").write_text(json.dumps({**nb, "cells": []}))
    assert browser_check.expected_glue_from_sources(tmp_path) == {
        "notebooks/01-x.html": 8,
        "notebooks/02-empty.html": 0,
    }


# --- the PDF: printed by the same Chromium -------------------------------------


@pytest.mark.site
def test_pdf_holds_typeset_math_tables_and_images(tmp_path):
    from twopaths.machinery.browser import print_pdf

    table = "<table><tr><th>a</th></tr><tr><td>1</td></tr></table>"
    page = math_page(tmp_path / "book.html", table + figure("One pixel", "Figure 1.1: a pixel."))
    printed = print_pdf(page, tmp_path / "out" / "book.pdf")
    assert printed.path.read_bytes().startswith(b"%PDF-")
    assert printed.content == {"math": 2, "untypesetMath": 0, "typesetMath": 2, "images": 1, "brokenImages": 0,
                               "figures": 1, "tables": 1, "clippedTables": [], "contents": 0, "retitled": 0,
                               "unpaged": [], "moved": [], "pastPlaceholder": []}
    assert printed.problems() == []


@pytest.mark.site
def test_pdf_with_a_missing_image_or_untypeset_math_is_refused(tmp_path):
    from twopaths.machinery.browser import print_pdf

    require_chromium()
    page = tmp_path / "book.html"
    page.write_text('<p><img src="https://example.invalid/x.png"></p>'
                    '<div class="math notranslate nohighlight">\\[x^2\\]</div>')
    assert print_pdf(page, tmp_path / "book.pdf").problems() == [
        "1 of 1 math elements not typeset by MathJax", "1 of 1 images did not load"]


@pytest.mark.site
def test_pdf_leaves_bookkeeping_and_folded_tables_off_paper_and_prints_solutions(tmp_path):
    """On paper a hidden code cell is left out, a folded table leaves its title and a pointer to
    the site, and an exercise solution (also a dropdown) prints whole."""
    from pypdf import PdfReader

    from twopaths.machinery.browser import FOLDED_NOTE, print_pdf

    require_chromium()
    page = tmp_path / "book.html"
    page.write_text(
        "<p>Argument.</p>"
        '<div class="cell tag_hide-input"><details class="hide above-input"><summary>Show code cell source</summary>'
        '<div class="cell_input"><pre>hidden_bookkeeping()</pre></div></details>'
        '<div class="cell_output"><p>Shown result.</p></div></div>'
        '<div class="dropdown admonition"><p class="admonition-title">Serving: holds (54)</p>'
        "<table><tr><td>folded claim row</td></tr></table></div>"
        '<div class="solution dropdown admonition"><p class="admonition-title">Solution to Exercise 1.1</p>'
        "<p>Solution text.</p></div>")
    printed = print_pdf(page, tmp_path / "book.pdf")
    text = " ".join(" ".join(p.extract_text().split()) for p in PdfReader(printed.path).pages)
    assert "Argument." in text and "Shown result." in text and "Solution text." in text
    assert "hidden_bookkeeping" not in text and "Show code cell source" not in text
    assert "folded claim row" not in text and f"Serving: holds (54){FOLDED_NOTE}" in text


WRAPPING = ("A heading long enough to wrap onto a second line of an A4 page, and then a third one, "
            "as the longest headings of the book do")


def test_bookmarks_take_their_headings_text(tmp_path):
    """Chromium's bookmark titles, as it printed them, matched to the page's headings in order: a
    doubled title and one that lost the space at a line break take the heading's text; one that
    matches no heading keeps its own; a heading matched once is not matched again."""
    from pypdf import PdfReader, PdfWriter

    from twopaths.machinery.browser import outline_titles, retitle_outline

    writer = PdfWriter()
    writer.add_blank_page(100, 100)
    top = writer.add_outline_item(title="ChaptersChapters", page_number=0)
    writer.add_outline_item(title="your ownparameters", page_number=0, parent=top)
    writer.add_outline_item(title="Not a heading", page_number=0)
    writer.add_outline_item(title="Glossary", page_number=0)
    pdf = tmp_path / "b.pdf"
    with open(pdf, "wb") as f:
        writer.write(f)
    headings = ["Chapters", "your own parameters", "Glossary", "Glossary"]
    assert retitle_outline(pdf, headings) == 2
    assert outline_titles(pdf) == ["Chapters", "your own parameters", "Not a heading", "Glossary"]
    assert len(PdfReader(pdf).pages) == 1
    assert retitle_outline(pdf, headings) == 0      # nothing left to change: the file is kept


@pytest.mark.site
def test_pdf_has_bookmarks_and_a_contents_page_with_the_pages_its_sections_land_on(tmp_path):
    """Three sections forced onto pages 2, 3 and 5 (the last after a page of filler), with a
    subsection under the first: the contents page lists the chapters and the subsection, and each
    entry ends in the page that pypdf finds its heading's text on, an oracle that does not read
    the named destinations the numbers came from; the outline lists every heading."""
    from pypdf import PdfReader

    from twopaths.machinery.browser import outline_titles, print_pdf

    require_chromium()
    page = tmp_path / "book.html"
    sections = "".join(
        f'<section id="s{i}"><h1 style="break-before: page">Section {i}<a class="headerlink">#</a>'
        f"</h1><p>Body {i}.</p>"
        + ('<p style="break-before: page">Filler.</p>' if i == 2 else "")
        + ('<section id="s1-a"><h2>Part 1a</h2><p>Body 1a.</p></section>' if i == 1 else "")
        + "</section>" for i in (1, 2, 3))
    page.write_text(f"<html><body>{sections}<h3>Not listed</h3><h3>{WRAPPING}</h3></body></html>")
    printed = print_pdf(page, tmp_path / "book.pdf", contents="h1, h2")
    assert printed.problems() == [] and printed.content["contents"] == 4
    # the wrapped heading's bookmark keeps its spaces (Chromium drops the one at each line break)
    assert printed.content["retitled"] == 1
    assert outline_titles(printed.path) == ["Contents", "Section 1", "Part 1a", "Section 2",
                                            "Section 3", "Not listed", WRAPPING]
    text = [p.extract_text(extraction_mode="layout") for p in PdfReader(printed.path).pages]
    on_page = {t: next(n for n, page in enumerate(text, 1) if t in page and f"Body {t[-2:].strip()}" in page)
               for t in ("Section 1", "Part 1a", "Section 2", "Section 3")}
    assert on_page == {"Section 1": 2, "Part 1a": 2, "Section 2": 3, "Section 3": 5}
    for title, n in on_page.items():   # one line each: the entry, then its page
        assert re.search(rf"^\s*{title} +{n}$", text[0], re.M), text[0]
    assert "Not listed" not in text[0] and "#" not in text[0]


@pytest.mark.site
def test_pdf_contents_entry_whose_anchor_is_missing_is_a_problem(tmp_path):
    from twopaths.machinery.browser import print_pdf

    require_chromium()
    page = tmp_path / "book.html"
    page.write_text('<html><body><section id="s"><h1>Here</h1></section>'
                    '<h1 id="late" style="display: none">Hidden</h1></body></html>')
    assert print_pdf(page, tmp_path / "book.pdf", contents="h1").problems() == [
        "1 contents entries whose anchor has no page: late"]


@pytest.mark.site
def test_pdf_table_too_wide_for_paper_is_a_problem_and_a_wide_one_that_wraps_is_not(tmp_path):
    """Twelve columns of long words wrap to the printed column; an image wider than the page in a
    cell cannot, and paper would cut it."""
    from twopaths.machinery.browser import PAGE_WIDTH_PX, print_pdf

    require_chromium()
    wide = "<table><tr>" + "<td>supercalifragilistic_expialidocious</td>" * 12 + "</tr></table>"
    page = tmp_path / "ok.html"
    page.write_text(f"<html><body><main>{wide}</main></body></html>")
    assert print_pdf(page, tmp_path / "ok.pdf").problems() == []
    page = tmp_path / "cut.html"
    page.write_text(f'<html><body><main><table><caption>Table 1.1: too wide</caption><tr><td>'
                    f'<img src="{PIXEL}" style="width: {PAGE_WIDTH_PX + 200}px; height: 4px">'
                    f"</td></tr></table></main></body></html>")
    assert print_pdf(page, tmp_path / "cut.pdf").problems() == [
        "1 tables wider than the printed page: Table 1.1: too wide"]

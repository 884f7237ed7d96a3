"""Real-browser checks: the built site, and the checker itself on tiny fixture pages."""

from __future__ import annotations

import base64
import importlib.metadata
import json
import os
import sys
import warnings
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
import browser_check  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
NO_CHROMIUM = "browser check SKIPPED: no chromium found (apt-get install chromium); .ci/run installs it"


def require_chromium() -> None:
    if browser_check.find_chromium() is None:
        if os.environ.get("CI"):   # CI installs chromium first: a missing browser there is a failure
            pytest.fail("no chromium found under CI; .ci/run installs it with apt-get")
        warnings.warn(NO_CHROMIUM)  # shows in pytest's default summary, unlike a bare skip
        pytest.skip(NO_CHROMIUM)


@pytest.mark.site
def test_built_site_in_browser():
    html_dir = ROOT / "_build" / "html"
    if not (html_dir / "index.html").is_file():
        if os.environ.get("TWOPATHS_SKIP_SITE") == "1":
            pytest.skip("TWOPATHS_SKIP_SITE=1: built site not checked")
        pytest.fail(f"no built site at {html_dir}: run `make book` first (or set TWOPATHS_SKIP_SITE=1)")
    notebooks = ROOT / "_build" / "src" / "notebooks"
    assert notebooks.is_dir(), f"no executed notebook sources at {notebooks}: run `make book` first"
    require_chromium()

    problems = browser_check.check_site(
        html_dir, ROOT / "_build" / "screenshots", browser_check.expected_glue_from_sources(notebooks)
    )
    assert not problems, "browser check found problems:\n" + "\n".join(problems)


# --- the checker on fixture pages ---------------------------------------------

# A 1x1 PNG, inline so the clean page needs no file and no network.
PIXEL = "data:image/png;base64," + base64.b64encode(
    bytes.fromhex(
        "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
        "1f15c4890000000d49444154789c63f8ffff3f0005fe02fea7d605ee0000000049454e44ae426082"
    )
).decode()

FIXTURE_PAGES = {
    "network.html": '<p>Chart:</p><img src="https://example.invalid/x.png">',
    "tex.html": "<p>Energy is $$x^2$$ here.</p>",
    "untypeset.html": '<div class="math notranslate nohighlight">\\[x^2\\]</div>',
    "traceback.html": (
        '<div class="cell_output"><pre>Traceback (most recent call last):\n'
        '  File "x.py", line 1\nZeroDivisionError: division by zero</pre></div>'
    ),
    "glue.html": '<p>Ratio <span class="pasted-text">3.14</span> and <span class="pasted-text"> </span>.</p>',
    "notebooks/clean.html": (
        '<p>Ratio <span class="pasted-text">3.14</span>, count <span class="output text_plain">42</span>.</p>'
        # TeX and error-looking text inside code is fine.
        "<pre>$$\\frac{a}{b}$$</pre><code>\\begin{x}</code>"
        f'<div class="cell_output"><div class="output text_plain">7</div><img src="{PIXEL}"></div>'
    ),
    # Not content pages: never opened, so their problems must not be reported.
    "genindex.html": "<p>$$x$$</p>",
    "_static/junk.html": "<p>$$x$$</p>",
}


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
    return [p for p in fixture_site[1] if p.startswith(page + ": ")]


def test_flags_network_request_and_broken_image(fixture_site):
    problems = problems_of(fixture_site, "network.html")
    assert "network.html: network request: https://example.invalid/x.png" in problems
    assert "network.html: image did not load: https://example.invalid/x.png" in problems


def test_flags_raw_tex(fixture_site):
    assert any("raw TeX visible" in p and "$$x^2$$" in p for p in problems_of(fixture_site, "tex.html"))


def test_flags_math_not_typeset(fixture_site):
    problems = problems_of(fixture_site, "untypeset.html")
    assert "untypeset.html: 1 of 1 math elements not typeset by MathJax" in problems
    assert any("raw TeX visible" in p for p in problems)


def test_flags_traceback(fixture_site):
    problems = problems_of(fixture_site, "traceback.html")
    assert "traceback.html: error output: page text contains 'Traceback (most recent call last)'" in problems


def test_flags_missing_and_empty_glue(fixture_site):
    problems = problems_of(fixture_site, "glue.html")
    assert "glue.html: 1 glued values are empty" in problems
    assert problems_of(fixture_site, "notebooks/never-built.html") == [
        "notebooks/never-built.html: page missing from the built site"
    ]


def test_flags_redirect_to_missing_page(fixture_site):
    assert problems_of(fixture_site, "index.html") == ["index.html: redirects to missing page gone.html"]


def test_clean_page_passes_and_is_screenshotted(fixture_site):
    root, problems = fixture_site
    assert problems_of(fixture_site, "notebooks/clean.html") == []
    assert (root / "shots" / "notebooks__clean.png").stat().st_size > 0
    assert not [p for p in problems if p.startswith(("genindex.html", "_static/"))]


def local_mathjax() -> Path | None:
    """tex-chtml.js from the sphinx-mathjax-offline package, if it is installed."""
    try:
        files = importlib.metadata.files("sphinx-mathjax-offline") or []
    except importlib.metadata.PackageNotFoundError:
        return None
    return next((Path(f.locate()) for f in files if str(f).endswith("mathjax/tex-chtml.js")), None)


def test_math_typeset_by_local_mathjax_passes(tmp_path):
    mathjax = local_mathjax()
    if mathjax is None:
        pytest.skip("sphinx-mathjax-offline not installed: no local MathJax to render with")
    require_chromium()
    page = tmp_path / "html" / "math.html"
    page.parent.mkdir()
    page.write_text(
        f'<html><head><script defer src="{mathjax.resolve().as_uri()}"></script></head><body>'
        '<p>Inline <span class="math notranslate nohighlight">\\(e^{i\\pi}\\)</span></p>'
        '<div class="math notranslate nohighlight">\\[\\frac{a}{b}\\]</div></body></html>'
    )
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

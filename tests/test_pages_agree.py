"""One fact, one place: a name glued on two pages holds the same value on both, and the headline
plans the serving pages glue are the ones the calculators give today.

The values are the chapters' rendered results (results/<profile>.json, which `make test` and
`make book` check against a fresh run of every chapter)."""

import json
from collections import defaultdict
from pathlib import Path

import pytest

from twopaths.views import plans

RESULTS = Path(__file__).resolve().parents[1] / "results"
# Pages that state the K3 : V4-Pro fleet conclusion glue the whole headline grid.
HEADLINE_PAGES = ("11-prefill-decode", "12-offload-duty-cycle", "13-hardware-cost", "14-audit")


def shown_cell(name: str) -> bool:
    """A table cell or figure point (``chapter.show``, ``glue_figure``): named within its page, so
    two pages may each have a table called ``plans``; the facts they show are glued by name too."""
    return "[" in name or name.endswith((".title", ".x"))


def _values(profile: str) -> dict[str, dict]:
    notebooks = json.loads((RESULTS / f"{profile}.json").read_text())["notebooks"]
    return {chapter: {k: v["value"] for k, v in d["values"].items()} for chapter, d in notebooks.items()}


@pytest.mark.parametrize("profile", ["default", "smoke"])
def test_a_name_on_two_pages_has_one_value(profile):
    where = defaultdict(dict)
    for chapter, values in _values(profile).items():
        for name, value in values.items():
            if not shown_cell(name):
                where[name][chapter] = value
    clashes = {n: pages for n, pages in where.items() if len(pages) > 1 and len({repr(v) for v in pages.values()}) > 1}
    assert not clashes, f"names glued with different values on different pages: {clashes}"


@pytest.mark.parametrize("profile", ["default", "smoke"])
def test_every_headline_page_glues_the_headline_grid_as_computed(profile):
    a = plans.serving_assumptions()
    grid = plans.headline(a)
    values = _values(profile)
    for page in HEADLINE_PAGES:
        chapter = next(c for c in values if c.endswith(page.split("-", 1)[1]))
        for (m, g, r), p in grid.items():
            name = plans.headline_name(g, r, m)
            assert values[chapter][f"{name}_nodes"] == p.nodes, (chapter, name)
            assert values[chapter][f"{name}_layout"] == p.placement.name, (chapter, name)
        for g in plans.HEADLINE_GPUS:
            for r in plans.HEADLINE_RHOS:
                ratio = grid[plans.K3, g, r].nodes / grid[plans.V4, g, r].nodes
                assert values[chapter][plans.headline_name(g, r)] == pytest.approx(ratio, rel=1e-12)


def test_headline_plans_fit_every_gpu():
    for p in plans.headline(plans.serving_assumptions()).values():
        assert p.decode.valid and p.decode.used <= p.decode.usable


# One quantity under two names on two pages (a percent on one, a share on the other): (page, name,
# scale to a common unit) pairs that must agree. A reader who meets the figure twice meets it once.
SAME_QUANTITY = [
    (("04-latent-moe", "k3_rate_parameters_pct", 0.01), ("15-architecture-trends", "k3_share_params", 1)),
    (("04-latent-moe", "pro_rate_parameters_pct", 0.01), ("15-architecture-trends", "pro_share_params", 1)),
]


@pytest.mark.parametrize("profile", ["default", "smoke"])
@pytest.mark.parametrize("one, other", SAME_QUANTITY, ids=lambda p: f"{p[0]}:{p[1]}")
def test_one_quantity_under_two_names_agrees(profile, one, other):
    values = _values(profile)
    (page_a, name_a, scale_a), (page_b, name_b, scale_b) = one, other
    assert values[page_a][name_a] * scale_a == pytest.approx(values[page_b][name_b] * scale_b, rel=1e-12)

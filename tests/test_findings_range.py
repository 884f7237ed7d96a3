"""The findings page's range of K3 : V4-Pro (views.findings.ratio_grid): each cell is the two
models' headline plans under one setting, so a grid that mixed up the settings, dropped DCP from
the wrong model or read caches "as shipped" as one dtype for both would differ from the plans
recomputed here."""

import pytest

from twopaths.calc import fleet
from twopaths.specs.lookup import shipped_kv_dtype
from twopaths.views import findings, plans

A = plans.serving_assumptions()
WHOLE = fleet.workload(rho=1.0)


@pytest.fixture(scope="module")
def grid():
    return findings.ratio_grid(A, 1.0)


def _ratio(a_k3, a_v4, gpu):
    return fleet.plan(plans.K3, gpu, a_k3, WHOLE).nodes / fleet.plan(plans.V4, gpu, a_v4, WHOLE).nodes


def test_every_setting_and_gpu_is_a_cell(grid):
    assert len(grid) == 2 * 3 * 2 * len(plans.HEADLINE_GPUS)
    assert grid[A.weights, A.kv_dtype, True, "h200"] == _ratio(A, A, "h200")


def test_cells_are_the_plans_of_their_setting(grid):
    nodcp = A.but(weights="fp8-non-expert", max_dcp=1, kv_dtype="fp8")
    assert grid["fp8-non-expert", "fp8", False, "b300"] == _ratio(nodcp, nodcp, "b300")
    k3, v4 = (A.but(kv_dtype=shipped_kv_dtype(m)) for m in (plans.K3, plans.V4))
    assert shipped_kv_dtype(plans.K3) != shipped_kv_dtype(plans.V4)     # so the test can tell
    assert grid["shipped", "shipped", True, "h200"] == _ratio(k3, v4, "h200")


def test_the_table_has_a_line_a_setting_and_a_column_a_gpu(grid):
    text = findings.range_table(grid).data.splitlines()
    assert len(text) == 2 + 12 and text[0].count("K3 : V4-Pro on") == len(plans.HEADLINE_GPUS)
    first = text[2].split(" | ")
    assert first[-2] == f"{grid['shipped', 'bf16', True, 'h200']:.2f}"
    assert findings.setting("shipped", "shipped", False, "b300") == (
        "weights as shipped, caches as shipped (K3 BF16, V4-Pro FP8), without DCP, on B300s")

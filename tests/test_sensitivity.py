"""The tornado data: one setting at a time, walls shown as infinity, the placement chosen well."""

import math

from twopaths.calc import fleet
from twopaths.calc.placement import placements
from twopaths.calc.sensitivity import nodes, tornado
from twopaths.specs.serving import assumptions

BOOK = assumptions()
WORK = fleet.workload(rho=0.25)


def test_bars_bracket_the_base_for_monotone_settings():
    bars = {b.assumption: b for b in tornado("kimi-k3", "h200", BOOK, WORK,
                                             {"concurrency": (5_000, 20_000), "rho": (0.1, 0.5)})}
    for b in bars.values():
        assert b.low_nodes <= b.base_nodes <= b.high_nodes
    assert bars["concurrency"].base_nodes == fleet.plan("kimi-k3", "h200", BOOK, WORK).nodes


def test_widest_first():
    bars = tornado("deepseek-v4-pro", "h200", BOOK, WORK, {"pd_ratio": (2.0, 3.0), "context": (100_000, 1_000_000)})
    assert [b.assumption for b in bars] == ["context", "pd_ratio"]


def test_a_setting_that_does_not_fit_is_infinite():
    a = BOOK.but(capacity="nominal", max_attention_tp=1)
    assert nodes("kimi-k3", "h200", a, WORK) == math.inf
    bar, = tornado("kimi-k3", "h200", a, WORK, {"weights": ("shipped", "fp8-non-expert")})
    assert math.isinf(bar.low_nodes) and math.isfinite(bar.high_nodes) and math.isinf(bar.span)


def test_the_plan_takes_the_placement_with_fewest_nodes():
    chosen = fleet.plan("kimi-k3", "h200", BOOK, WORK)
    for p in fleet.staged("kimi-k3", "h200", WORK.context, BOOK, placements("kimi-k3", BOOK)):
        if fleet.fits("kimi-k3", "h200", BOOK, WORK, p):
            assert chosen.d_nodes <= fleet.plan("kimi-k3", "h200", BOOK, WORK, placement=p).d_nodes


def test_unknown_setting_is_refused(raises_param):
    raises_param("ranges", tornado, "kimi-k3", "h200", BOOK, WORK, {"packing": ("unit", "gpu")})

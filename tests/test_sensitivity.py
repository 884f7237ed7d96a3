"""The tornado data: one assumption at a time, walls shown as infinity, the public EP chosen well."""

import math

from twopaths.calc import ep, fleet
from twopaths.calc.sensitivity import nodes, tornado

BASE = dict(basis="article", rho=0.25, gpu="h200")


def test_bars_bracket_the_base_for_monotone_assumptions():
    bars = {b.assumption: b for b in tornado("kimi-k3", BASE, {"concurrency": (5_000, 20_000), "rho": (0.1, 0.5)})}
    for b in bars.values():
        assert b.low_nodes <= b.base_nodes <= b.high_nodes
    assert bars["concurrency"].base_nodes == fleet.plan("kimi-k3", **BASE).nodes


def test_widest_first():
    bars = tornado("deepseek-v4-pro", BASE, {"pd_ratio": (2.0, 3.0), "context": (100_000, 1_000_000)})
    assert [b.assumption for b in bars] == ["context", "pd_ratio"]


def test_a_setting_that_does_not_fit_is_infinite():
    assert nodes("kimi-k3", basis="public", gpu="h200", usable_fraction=0.8) == math.inf


def test_public_basis_takes_the_ep_with_fewest_nodes():
    chosen = fleet.plan("kimi-k3", basis="public", gpu="h200", rho=0.25)
    smallest_fitting = ep.min_viable_ep("kimi-k3", "h200", "public")
    assert chosen.nodes < fleet.plan("kimi-k3", basis="public", gpu="h200", rho=0.25, ep=smallest_fitting).nodes
    for size in ep.whole_node_eps("kimi-k3", "public"):
        assert chosen.nodes <= nodes("kimi-k3", basis="public", gpu="h200", rho=0.25, ep=size)

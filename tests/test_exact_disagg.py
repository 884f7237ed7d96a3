"""calc.disagg's handoff time and its best plan at each EP size, checked by hand."""

from types import SimpleNamespace

import pytest

from twopaths.calc import disagg, fleet
from twopaths.calc.placement import Placement
from twopaths.specs.serving import assumptions


def test_a_handoff_sends_the_cache_and_the_state():
    # 2 GB of cache and 0.5 GB of fixed state over 50 GB/s: 40 ms + 10 ms
    h = disagg.Handoff(2e9, 0.5e9, 50e9)
    assert (h.kv_seconds, h.state_seconds) == pytest.approx((0.04, 0.01))
    assert h.seconds == pytest.approx(0.05)
    assert disagg.link_bandwidth(400) == 50e9               # 400 Gb/s = 50 GB/s


def test_each_ep_size_keeps_its_fewest_nodes_whatever_the_order(monkeypatch):
    # three placements at EP8 found in the order 30, 20, 25 nodes, one at EP16: 20 is EP8's best
    found = [(Placement(8, 1), 30), (Placement(8, 2), 20), (Placement(8, 4), 25), (Placement(16, 1), 12)]
    nodes = dict(found)
    monkeypatch.setattr(disagg, "whole_node_placements", lambda model, a: [p for p, _ in found])
    monkeypatch.setattr(fleet, "fits", lambda *args: True)
    monkeypatch.setattr(fleet, "plan", lambda *args, placement: SimpleNamespace(
        placement=placement, ep=placement.ep, nodes=nodes[placement]))
    by_ep = disagg.plans_by_ep("deepseek-v4-pro", "h200", assumptions("book"), None)
    assert list(by_ep) == [8, 16]
    assert (by_ep[8].placement, by_ep[8].nodes) == (Placement(8, 2), 20)
    assert by_ep[16].nodes == 12

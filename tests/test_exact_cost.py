"""calc.cost's per-session node ratio, checked against figures worked by hand: two plans that
serve different numbers of sessions compare per session, not node for node."""

from types import SimpleNamespace

import pytest

from twopaths.calc import cost


def test_node_ratio_compares_nodes_per_session():
    # a: 10 nodes for 1,000 sessions = 0.01 a session; b: 4 nodes for 200 = 0.02 a session
    a = SimpleNamespace(nodes=10, concurrency=1000)
    b = SimpleNamespace(nodes=4, concurrency=200)
    assert cost.node_ratio(a, b) == pytest.approx(0.01 / 0.02)          # 0.5, not 10 / 4
    assert cost.node_ratio(b, a) == pytest.approx(2.0)


def test_a_million_tokens_price_the_whole_fleet():
    # 8 GPUs at $2 an hour = $16 an hour; 1,000 tokens/s = 3.6 M tokens an hour: $16 / 3.6
    assert cost.usd_per_million_tokens(8, 2.0, 1000.0) == pytest.approx(16 / 3.6, rel=1e-12)

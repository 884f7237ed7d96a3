"""Weights per GPU for any model (calc.weight_units, and calc.weights for dense models): the
layouts a model is weighed in at the asked EP sizes, why a size is left out, dense models in TP
groups, the smallest unit and the fix where none holds a request, and the tables' rows."""

import pytest

from twopaths.calc import fleet, placement, weight_units as wu, weights
from twopaths.views import weight_tables as wt
from twopaths.calc.placement import Placement
from twopaths.errors import ParameterError
from twopaths.specs.serving import assumptions, weight_scenarios

K3, V4, QWEN72 = "kimi-k3", "deepseek-v4-pro", "qwen-2.5-72b"
BOOK = assumptions()


def test_a_dense_model_spreads_no_experts_and_splits_the_rest_by_tp():
    total = sum(weights.weight_bytes(QWEN72).values())
    whole = weights.weights_per_gpu(QWEN72, 1)
    assert (whole.experts_per_gpu, whole.expert_bytes) == (0, 0.0)
    assert whole.other_bytes == pytest.approx(total, rel=1e-12)
    # the EP size names the unit only: nothing of a dense model depends on it
    assert weights.weights_per_gpu(QWEN72, 8).total == whole.total
    tp8 = weights.weights_per_gpu(QWEN72, 8, tp=8)
    # plain TP: only the norms stay whole, the vocabulary-parallel embedding splits like the rest
    replicated = weights.weight_bytes(QWEN72)["norms"]
    assert tp8.other_bytes == pytest.approx(replicated + (total - replicated) / 8, rel=1e-12)


def test_moe_layouts_follow_the_asked_ep_sizes_and_say_why_one_is_left_out():
    shown, left_out = wu.layouts(K3, [12, 32, 896 * 2, 96, 1796], BOOK)
    widest = max(p.attention_tp for p in placement.placements(K3, BOOK) if p.ep == 32)
    assert shown == [Placement(32, 1), Placement(32, widest)]     # 96 does not divide 896
    assert left_out[12] == "not whole 8-GPU nodes"
    assert left_out[96] == "does not divide the 896 expert slots of a layer"
    assert left_out[1792] == "above max_ep (320)"
    assert left_out[1796] == "not whole 8-GPU nodes"                # 1796 = 8 x 224.5, and above 320 too


def test_a_dense_model_is_weighed_in_the_planners_tp_groups_whatever_the_ep_sizes():
    shown, left_out = wu.layouts(QWEN72, [32], BOOK)
    assert shown == [p for p in placement.placements(QWEN72, BOOK) if p.pp == 1] and left_out == {}
    assert [p.attention_tp for p in shown] == [1, 2, 4, 8]          # one TP group a unit
    assert shown[2].name == "dense, TP4" and Placement(32).name == "EP32, attention DP"


def test_smallest_unit_is_the_planners_and_the_narrowest_valid_tp_if_dense():
    assert wu.smallest(V4, "h200", 500_000, BOOK) == fleet.prefill_unit(V4, "h200", 500_000, BOOK)
    u = wu.smallest(QWEN72, "h200", 500_000, BOOK)
    tp = u.placement.attention_tp
    narrower = placement.memory(QWEN72, "h200", Placement(8, tp // 2, routed=False), 500_000, BOOK)
    assert u.valid and not narrower.valid


def test_where_no_unit_holds_a_request_the_row_names_the_fix():
    dp = BOOK.but(max_attention_tp=1)
    assert wu.smallest(QWEN72, "h200", 500_000, dp) is None
    text = wt.unit_text(QWEN72, None, "h200", 500_000, dp)
    assert text == "none: needs " + fleet.smallest_change(QWEN72, "h200", dp, fleet.Workload(1, 500_000))
    # a dense model no node holds beside a 1M request is pipelined: TP8 over two nodes
    u = wu.smallest("llama-3.1-405b", "h200", 1_000_000, BOOK)
    assert u.placement == Placement(8, 8, routed=False, pp=2)
    assert not placement.memory("llama-3.1-405b", "h200", Placement(8, 8, routed=False), 1_000_000, BOOK).valid
    work = fleet.Workload(1, 10_000_000)
    assert wu.fix(K3, "h200", 10_000_000, BOOK) == fleet.smallest_change(K3, "h200", BOOK, work)


def test_expert_format_follows_the_scenario():
    assert wu.expert_format(K3, BOOK) == "mxfp4"
    assert wu.expert_format(K3, BOOK.but(weights="fp8")) == "fp8"
    assert wu.expert_format(QWEN72, BOOK) == "dense"


@pytest.mark.parametrize("given", ["32", [], [0], [16, 16], [8.5]])
def test_bad_ep_sizes_are_refused_by_name(given):
    with pytest.raises(ParameterError, match="ep_sizes"):
        wu.check_ep_sizes(given)


def test_the_tables_hold_one_row_per_model_layout_gpu_and_scenario():
    t, units = wt.ep_table([K3, QWEN72], ["h200", "b300"], [32, 64], 500_000, BOOK)
    assert len(t.rows) == len(units) == (4 + 4) * 2
    assert "Qwen-2.5-72B is dense" in t.note
    u = units[K3, Placement(32), "h200"]
    assert u == placement.memory(K3, "h200", Placement(32), 500_000, BOOK)
    s = wt.scenario_table([K3, QWEN72], ["h200"], 500_000, BOOK)
    assert len(s.rows) == len(weight_scenarios()) * 2
    assert "Kimi K3" in s.title and "Qwen-2.5-72B" in s.title and "H200" in s.title


def test_figure_series_align_each_line_on_the_unit_sizes():
    _, units = wt.ep_table([K3, QWEN72], ["h200"], [32, 64], 500_000, BOOK)
    x, series = wt.figure_series(wt.room_lines(units))
    assert x == [1, 2, 4, 8, 32, 64]
    dp = series["Kimi K3, NVIDIA H200 SXM, attention DP"]
    assert dp[:4] == [None] * 4 and dp[4] == pytest.approx(units[K3, Placement(32), "h200"].kv_room / 1e9)
    assert series["Qwen-2.5-72B, NVIDIA H200 SXM, TP groups"][4:] == [None, None]

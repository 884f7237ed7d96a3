"""Plans for any model (calc.disagg.plan_or_reason and friends) and chapter 11's tables of them."""

import numpy as np

from twopaths.views import disagg_tables, plans, scenario
from twopaths.calc import disagg, fleet, sweep
from twopaths.errors import ParameterError

K3, V4 = "kimi-k3", "deepseek-v4-pro"
QWEN = "Qwen--Qwen3-235B-A22B"
A = plans.serving_assumptions({})
WORK = fleet.workload()


def _qwen():
    return scenario.models([], [QWEN])[0]


def test_a_plannable_model_gets_the_fleet_plan():
    assert disagg.unplannable(K3) is None
    assert disagg.plan_or_reason(K3, "h200", A, WORK) == fleet.plan(K3, "h200", A, WORK)


def test_a_dense_model_is_planned_in_one_node_units():
    p = disagg.plan_or_reason("qwen-2.5-72b", "h200", A, WORK)
    assert p == fleet.plan("qwen-2.5-72b", "h200", A, WORK) and not p.placement.routed
    assert disagg.plans_by_ep("qwen-2.5-72b", "h200", A, WORK) == {A.gpus_per_node: p}


def test_attention_the_book_does_not_count_is_a_reason(monkeypatch):
    def refuse(model):
        raise ParameterError("model", model, "a model of the counted families")
    monkeypatch.setattr(disagg, "attention_layers", refuse)
    assert "prefill not sized" in disagg.plan_or_reason(K3, "h200", A, WORK).reason


def test_no_valid_plan_gives_the_fix():
    work = fleet.workload(10_000, 500_000_000)      # past what DCP8 x PP8 split onto an H200
    u = disagg.plan_or_reason(K3, "h200", A, work)
    with_fix = None
    try:
        fleet.plan(K3, "h200", A, work)
    except fleet.NoValidPlan as err:
        with_fix = err.fix
    assert isinstance(u, disagg.Unplanned) and with_fix and u.reason.endswith(with_fix)


def test_plans_by_ep_hold_the_plan_and_each_size_is_its_best():
    by_ep = disagg.plans_by_ep(V4, "h200", A, WORK)
    best = fleet.plan(V4, "h200", A, WORK)
    assert best.ep in by_ep and min(p.nodes for p in by_ep.values()) <= best.nodes
    assert all(p.ep == n for n, p in by_ep.items()) and list(by_ep) == sorted(by_ep)
    k3 = disagg.plans_by_ep(K3, "h200", A, WORK)
    r = disagg.ratios_by_ep(k3, by_ep)
    assert set(r) == set(k3) & set(by_ep) and all(r[n] == k3[n].nodes / by_ep[n].nodes for n in r)


def test_by_format_is_the_plan_under_each_scenario():
    grid = disagg.by_format([K3, V4], "b300", A, WORK)
    assert len(grid) == 3 * 2 * 2
    assert grid["shipped", "fp8", V4] == fleet.plan(V4, "b300", A.but(kv_dtype="fp8"), WORK)


def test_the_sweep_takes_a_corpus_model_and_agrees_with_the_plan():
    m = _qwen()
    s = sweep.sweep([m], ["h200"], A, concurrency=[1_000, 10_000], context=[100_000, 500_000])
    for c in (1_000, 10_000):
        for t in (100_000, 500_000):
            got = s.nodes[s.index(model=m, gpu="h200", concurrency=c, context=t)].ravel()
            assert np.array_equal(got, [fleet.plan(m, "h200", A, fleet.workload(c, t)).nodes])


def test_tables_say_why_and_compare_with_the_first_model():
    long, longest = fleet.workload(context=1_000_000), fleet.workload(context=500_000_000)
    results = [disagg.plan_or_reason(K3, "h200", A, w) for w in (long, longest)]
    t = disagg_tables.plan_table(results, "plans")
    assert t.rows[0] == tuple(plans.plan_row(results[0]))
    assert isinstance(results[1], disagg.Unplanned)       # 500M tokens: past what DCP8 x PP8 split onto a GPU
    assert t.rows[1][:3] == ("Kimi K3", "H200", results[1].reason) and set(t.rows[1][3:]) == {None}
    grid = disagg.by_format([V4, K3], "h200", A, WORK)
    f = disagg_tables.format_table(grid, [V4, K3], "formats")
    ratio = {(r[0], r[1], r[2]): r[-1] for r in f.rows}
    label = next(iter(grid))[0]
    k3, v4 = grid[label, "bf16", K3], grid[label, "bf16", V4]
    assert f.columns[-1].header == "DeepSeek-V4-Pro : this model"
    got = ratio[disagg_tables.weight_scenarios()[label]["label"], "bf16", "Kimi K3"]
    assert got == v4.nodes / k3.nodes
    p = disagg_tables.prefill_table(results, "prefill")
    assert p.rows[0][6] == results[0].prefill.by_work and p.rows[1][2] == results[1].reason


def test_by_context_draws_the_sweep_and_stops_where_nothing_is_valid():
    s = sweep.sweep([K3], ["h200"], A, concurrency=[1_000], context=[500_000, 500_000_000])
    y = sweep.by_context(s, "h200")[K3, 1_000]
    assert y[0] == fleet.plan(K3, "h200", A, fleet.workload(1_000, 500_000)).nodes and np.isnan(y[1])

"""Deployment calculators: every figure of the article's part III reproduced under its own
assumptions and rounding (``calc.article_fleet``), and the arithmetic the plans share. The plans
that fit are tested in test_fleet.py."""

import math

import pytest

from twopaths.calc import bare, cost, decode, disagg, ep, offload
from twopaths.calc.article_fleet import article_gain, article_plan
from twopaths.calc.rounding import cover, fit, to_figures, to_step
from twopaths.specs import gpu
from twopaths.specs.deployment import deployment, scenarios, workload

K3, V4 = "kimi-k3", "deepseek-v4-pro"
ART = dict(basis="stated", rounding="article")
GB = 1e9


# --- rounding ------------------------------------------------------------------------------------

def test_rounding_rules():
    assert (cover(144.93), cover(144.93, "article"), cover(68.03), cover(68.03, "article")) == (145, 145, 69, 68)
    assert (fit(146.89), fit(146.89, "article"), fit(69.39, "article")) == (146, 147, 69)
    assert cover(9.5, "article") == 10 and cover(26.5, "article") == 27       # halves up, unlike round()
    assert cover(10_000 * 0.25 / 2_500) == 1 and cover(0.1 * 3 * 10) == 3    # float noise stays whole
    assert to_step(5.078125e9, 0.05e9, "article") == pytest.approx(5.1e9) and to_step(5.078e9, 0.05e9) == 5.078e9
    assert to_figures(30.907e9, 3, "article") == pytest.approx(30.9e9) and to_figures(61.4e6, 3, "article") == pytest.approx(61.4e6)
    assert math.isinf(cover(float("inf")))


# --- "GPU requirements": the bare count -----------------------------------------------------------

def test_bare_count_article():
    k3, v4 = bare.bare(K3, **ART), bare.bare(V4, **ART)
    assert (k3.weights_gpus, k3.kv_gpus, k3.total) == (20, 4_369, 4_389)
    assert round(k3.total, -1) == 4_390                  # "4,390": 20 + 4,369, to the nearest ten
    assert (v4.weights_gpus, v4.kv_gpus, v4.total) == (12, 865, 877)
    assert k3.kv_bytes == pytest.approx(616e12) and v4.kv_bytes == pytest.approx(122e12)
    assert round(4_390 / v4.total, 1) == 5.0
    assert (round(100 * k3.weights_share, 1), round(100 * v4.weights_share, 1)) == (0.5, 1.3)


def test_bare_count_recomputed_moves_with_the_unit_slip():
    # The article's assumptions computed exactly: 207 MiB of KDA state, and 12,492.8 B/token for V4.
    assert bare.bare(K3, basis="article").total == 4_393
    assert bare.bare(V4, basis="article").total == 898


# --- Step 2: EP scale ------------------------------------------------------------------------------

def test_article_expert_sizes():
    assert ep.article_expert_bytes(K3, "article") == pytest.approx(2.45 * GB)
    assert ep.article_expert_bytes(V4, "article") == pytest.approx(5.1 * GB)
    assert ep.article_expert_bytes(K3) == pytest.approx(2.18e12 / 898)     # unrounded: 2.43 GB
    assert ep.article_expert_bytes(V4) == pytest.approx(1.3e12 / 256)


def test_article_ep_tables():
    def table(model):
        return [(r.ep, r.nodes, r.experts_per_gpu, round(r.weights_per_gpu / GB), round(r.kv_per_gpu / GB), r.feasible)
                for r in ep.ep_table(model, "h200", deployment(model).ep_tried, rounding="article")]
    # K3: the article's table prints 141 - 137 = 4 GB left at EP=16: it leaves out the 5 GB overhead there.
    assert table(K3) == [(8, 1, 112, 274, -138, False), (16, 2, 56, 137, -1, False), (32, 4, 28, 69, 67, True)]
    assert table(V4) == [(8, 1, 32, 163, -25, False), (16, 2, 16, 82, 56, True)]
    assert ep.min_viable_ep(K3, "h200", rounding="article") == 32
    assert ep.min_viable_ep(V4, "h200", rounding="article") == 16


def test_eplb_replicas_cost_kv_room():
    with_replicas = ep.ep_row(V4, "h200", 16, rounding="article", redundant_experts=32)
    assert with_replicas.experts_per_gpu == 18 and round(with_replicas.kv_per_gpu / GB) == 46


# --- Steps 3 and 4: per-request memory, handoff, decode units, nodes -------------------------------

def test_handoff():
    k3, v4 = disagg.handoff(K3, 500_000), disagg.handoff(V4, 500_000)
    assert round(k3.state_seconds * 1e3) == 4                       # "207 MB ... approximately 4 ms"
    assert round(v4.seconds, 2) == 0.12                             # "RDMA transfer ~0.12 s"
    assert round(100 * k3.state_bytes / (k3.kv_bytes + k3.state_bytes), 1) == 0.7
    assert disagg.link_bandwidth(400) == 50e9


@pytest.mark.parametrize("g, model, kv_gpu, unit_kv, per_unit, units, d, p, total, gpus", [
    ("h200", K3, 67, 2_144, 69, 145, 580, 232, 812, 6_496),
    ("h200", V4, 56, 896, 147, 68, 136, 54, 190, 1_520),
    ("b300", K3, 214, 6_848, 222, 45, 180, 72, 252, 2_016),
    ("b300", V4, 203, 3_248, 532, 19, 38, 15, 53, 424),
])
def test_article_node_counts(g, model, kv_gpu, unit_kv, per_unit, units, d, p, total, gpus):
    plan = article_plan(model, g)
    assert plan.layout.kv_per_gpu == pytest.approx(kv_gpu * GB)
    assert plan.unit_kv == pytest.approx(unit_kv * GB)
    assert (plan.requests_per_unit, plan.units, plan.d_nodes, plan.p_nodes, plan.nodes, plan.gpus) == \
        (per_unit, units, d, p, total, gpus)


def test_article_ratios():
    n = {(m, g): article_plan(m, g).nodes for m in (K3, V4) for g in ("h200", "b300")}
    assert round(n[K3, "h200"] / n[V4, "h200"], 1) == 4.3
    assert round(n[K3, "b300"] / n[V4, "b300"], 1) == 4.8
    assert round(article_gain(K3), 1) == 3.2 and round(article_gain(V4), 1) == 3.6
    v4 = {g: ep.ep_row(V4, g, 16, rounding="article").kv_per_gpu for g in ("h200", "b300")}
    assert round(v4["b300"] / v4["h200"], 1) == 3.6                # "56 GB to 203 GB (3.6x)"


# --- Step 5: offload by duty cycle ------------------------------------------------------------------

def test_duty_cycle_scenarios():
    w = workload()
    w_decode = offload.decode_seconds(w.output_tokens, w.decode_tokens_per_s)
    assert w_decode == 5.0
    rho = {s.name: offload.duty_cycle(s.w_decode, s.w_idle) for s in scenarios().values()}
    assert (rho["agent"], rho["api"], round(100 * rho["batch"])) == (0.5, 0.25, 11)


@pytest.mark.parametrize("g, model, d25, d50, n25, n50", [
    ("h200", K3, 145, 290, 203, 406), ("h200", V4, 34, 68, 48, 95),
    ("b300", K3, 45, 90, 63, 126), ("b300", V4, 10, 19, 14, 27),
])
def test_article_offload_tables(g, model, d25, d50, n25, n50):
    low, high = article_plan(model, g, rho=0.25), article_plan(model, g, rho=0.5)
    assert (low.d_nodes, high.d_nodes, low.nodes, high.nodes) == (d25, d50, n25, n50)


def test_workload_against_architecture():
    s = scenarios()
    rho = {k: offload.duty_cycle(v.w_decode, v.w_idle) for k, v in s.items()}
    k3 = {k: article_plan(K3, rho=r).nodes for k, r in rho.items()}
    assert round(k3["agent"] / k3["batch"], 1) == 4.5               # "about 4.5 times"
    assert round(article_plan(K3, rho=0.25).nodes / article_plan(V4, rho=0.25).nodes, 1) == 4.2   # not 4.3


def test_peak_residency_exceeds_the_mean():
    assert offload.peak_resident(10_000, 0.25, 0.5) == 2_500
    peak = offload.peak_resident(10_000, 0.25)
    assert 2_500 < peak < 2_700 and offload.peak_resident(10_000, 1.0) == 10_000


# --- decode time and unit cost -------------------------------------------------------------------

def test_article_decode_times():
    budget = workload().latency_budget
    k3, v4 = decode.single_request_step(K3), decode.single_request_step(V4)
    assert round(k3 * 1e3) == 28 and round(100 * (1 - k3 / budget)) == 44
    assert round(v4 * 1e3, 1) == 11.5 and round(100 * (1 - v4 / budget)) == 77
    assert round(decode.single_request_step(K3, "b300") * 1e3) == 17


def test_unit_cost_ratio():
    assert round(cost.bandwidth_ratio(V4, K3), 2) == 0.41
    # With batching the weights are shared and the ratio falls toward the cache ratio.
    assert cost.batched_ratio(V4, K3, 256) < cost.bandwidth_ratio(V4, K3)
    assert round(cost.node_ratio(article_plan(V4), article_plan(K3)), 2) == 0.23
    assert cost.usd_per_million_tokens(8, 2.0, 8 * 1_000) == pytest.approx(2.0 / 3600 / 1_000 * 1e6)


def test_b300_specs_used():
    assert gpu("b300").hbm_bytes == 288e9 and gpu("b300").hbm_bandwidth == 8e12


def test_sliders_only_under_a_live_front_end(monkeypatch):
    from types import SimpleNamespace

    from twopaths.machinery import sliders

    assert not sliders.live()                      # no kernel here, as in a papermill batch run
    shown = []
    monkeypatch.setattr("IPython.display.display", shown.append)
    sliders.show(lambda x=1: x, x=(0, 2))
    assert shown == []

    def kernel(metadata):
        return SimpleNamespace(kernel=SimpleNamespace(get_parent=lambda channel=None: {"metadata": metadata}))

    monkeypatch.setattr("IPython.get_ipython", lambda: kernel({}))          # nbclient sends no cell id
    assert not sliders.live()
    monkeypatch.setattr("IPython.get_ipython", lambda: kernel({"cellId": "c01"}))   # JupyterLab does
    assert sliders.live()
    # The widget itself needs a real kernel (it runs fn once, with pyplot's hooks when pyplot is
    # loaded); this test is about whether show displays one, so stand a plain object in for it.
    monkeypatch.setattr("ipywidgets.interactive", lambda fn, **controls: ("widget", fn, controls))
    sliders.show(lambda x=1: x, x=(0, 2))
    assert len(shown) == 1

"""The EP all-to-all of a decode step and plans that meet a decode speed.

The all-to-all model must give back DeepEP's own measured latencies in the setting they were
measured (128 tokens a GPU, hidden 7,168, top-8, a 400 Gb/s NIC): a model that counts the combine
in FP8, forgets the scales, or takes the wrong EP row fails. A plan asked for a speed must give
every session at least that speed and be the cheapest that does; the time it adds to a step is
recomputed here by hand for V4-Pro's headline plan."""

import pytest

from twopaths.calc import all_to_all, decode, fleet
from twopaths.calc.placement import Placement
from twopaths.specs import gpu
from twopaths.specs.kernels import deepep_low_latency
from twopaths.specs.serving import assumptions

BOOK = assumptions("book")
WORK = fleet.workload(rho=0.25)


@pytest.mark.parametrize("ep", [8, 16, 32, 64, 128, 256])
def test_the_model_gives_back_deepeps_measured_latencies(ep):
    d = deepep_low_latency()
    tokens, hidden, k = d["tokens"], d["hidden"], d["top_k"]
    dispatch = tokens * k * (hidden + hidden // 128 * 4 + 16)      # FP8, FP32 scales, header
    combine = tokens * k * 2 * hidden                              # BF16
    bw_d, bw_c = all_to_all.bandwidths(ep, 4 if ep == 8 else 8, gpu("h200"))
    lat_d, _, lat_c, _ = d["rows"][ep]
    assert dispatch / bw_d * 1e6 == pytest.approx(lat_d, rel=0.03)
    assert combine / bw_c * 1e6 == pytest.approx(lat_c, rel=0.04)


def test_between_rows_the_slower_row_and_a_faster_nic_scales():
    h200, b300 = gpu("h200"), gpu("b300")
    assert all_to_all.bandwidths(96, 8, h200) == all_to_all.bandwidths(128, 8, h200) == (39e9, 39e9)
    assert all_to_all.bandwidths(320, 8, h200) == all_to_all.bandwidths(256, 8, h200)
    assert all_to_all.bandwidths(8, 8, h200) == (98e9, 127e9)           # one node: NVLink
    assert all_to_all.bandwidths(64, 8, b300) == (2 * 43e9, 2 * 46e9)   # an 800 Gb/s NIC


def test_v4_pros_headline_step_adds_its_all_to_all_by_hand():
    p = fleet.plan("deepseek-v4-pro", "h200", BOOK, WORK)
    assert p.placement == Placement(64, 1)
    n = p.decode.requests                                       # attention DP: every token its own GPU's
    # 61 MoE layers, top-6, EP64 row; V4-Pro's FP8 checkpoint (128-wide blocks) dispatches in FP8
    assert all_to_all.fp8_dispatch("deepseek-v4-pro") and not all_to_all.fp8_dispatch("kimi-k3")
    by_hand = 61 * n * (6 * (7168 + 224 + 16) / 43e9 + 6 * 2 * 7168 / 46e9)
    s = decode.plan_step(p)
    assert s.all_to_all == pytest.approx(by_hand, rel=1e-12)
    assert s.step == pytest.approx((s.weight_bytes + s.kv_bytes) / s.bandwidth + by_hand, rel=1e-12)
    # K3 sends its 3,584-wide latent, padded to DeepEP's 4,096, in BF16 (MXFP4 experts take BF16
    # activations) to 16 experts; a TP8 group's tokens split over its ranks, padded to a multiple
    # of 8; EP224 takes the EP256 row (39 and 40 GB/s)
    k3 = fleet.plan("kimi-k3", "h200", BOOK, WORK)
    assert all_to_all.width("kimi-k3") == 4096 and all_to_all.moe_layers("kimi-k3") == 92
    tokens = -(-k3.decode.requests // 8)
    assert decode.plan_step(k3).all_to_all == pytest.approx(
        92 * tokens * (16 * (2 * 4096 + 16) / 39e9 + 16 * 2 * 4096 / 40e9), rel=1e-12)


@pytest.mark.parametrize("model", ["kimi-k3", "deepseek-v4-pro"])
def test_a_plan_for_a_speed_meets_it_and_is_the_cheapest_that_does(model):
    free = fleet.plan(model, "h200", BOOK, WORK)
    target = 50.0
    p = fleet.plan(model, "h200", BOOK, WORK, speed=target)
    assert p.session_speed >= target and p.speed == target and p.nodes >= free.nodes
    # one more request on any GPU of the chosen unit would slow every session below the target
    more = decode.gpu_step(model, "h200", BOOK, WORK.context, p.decode, p.decode.requests + 1)
    assert p.decode.requests == free.decode.requests or 1 / more.step < target
    # no placement meets it with fewer decode nodes
    for q in fleet._candidates(model, BOOK, None):
        try:
            other = fleet.plan(model, "h200", BOOK, WORK, placement=q, speed=target)
        except Exception:
            continue
        assert other.d_nodes >= p.d_nodes


def test_a_speed_no_placement_reaches_is_refused_with_the_fastest(raises_param):
    err = raises_param("speed", fleet.plan, "kimi-k3", "h200", BOOK, WORK, speed=1000.0)
    assert "at most" in str(err)
    raises_param("speed", fleet.plan, "kimi-k3", "h200", BOOK, WORK, speed=0.0)

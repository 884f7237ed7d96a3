"""Deployment calculators: bad input raises a ParameterError that names the parameter."""

import pytest

from twopaths.calc import bare, decode, disagg, ep, fleet, offload, prefill, sweep, weights
from twopaths.calc.placement import Placement, memory
from twopaths.specs.deployment import anchors, deployment
from twopaths.specs.serving import assumptions

K3, V4 = "kimi-k3", "deepseek-v4-pro"
BOOK = assumptions()


@pytest.mark.parametrize("name, kwargs", [
    ("concurrency", {"concurrency": 0}),
    ("concurrency", {"concurrency": -5}),
    ("context", {"context": 0}),
    ("rho", {"rho": 0}),
    ("rho", {"rho": 1.01}),
    ("rho", {"rho": -0.25}),
])
def test_workload_refuses(raises_param, name, kwargs):
    raises_param(name, fleet.workload, **kwargs)


@pytest.mark.parametrize("name, value", [
    ("usable_fraction", 0), ("usable_fraction", 1.5), ("overhead_bytes", -1.0), ("pd_ratio", 0),
    ("redundant_experts", -32), ("max_attention_tp", 0), ("max_attention_tp", 16), ("capacity", "marketing"),
    ("weights", "int4"), ("kv_dtype", "fp4"), ("prefill_mfu", 0), ("prefill_mfu", 1.2), ("inputs", "guessed"),
])
def test_assumptions_refuse(raises_param, name, value):
    raises_param(name, BOOK.but, **{name: value})


def test_assumptions_refuse_unknown_names_and_mixed_sets(raises_param):
    raises_param("assumption", BOOK.but, packing="unit")
    raises_param("preset", assumptions, "vendor")
    raises_param("weights", assumptions, "article", weights="shipped")        # the article sizes at 1 B/param
    raises_param("max_attention_tp", assumptions, "article", max_attention_tp=8)


def test_placement_refuses(raises_param):
    raises_param("ep", Placement, 0)
    raises_param("attention_tp", Placement, 32, 3)                 # TP must divide the unit
    raises_param("ep", memory, K3, "h200", Placement(30), 500_000, BOOK)           # 896 experts over 30 GPUs
    raises_param("ep", memory, V4, "h200", Placement(768), 500_000, BOOK)          # more GPUs than 384 experts
    raises_param("attention_tp", memory, V4, "h200", Placement(48, 3), 500_000, BOOK)   # 3 does not divide 128 heads
    raises_param("attention_tp", memory, K3, "h200", Placement(32, 2), 500_000, assumptions("article"))
    raises_param("context", memory, K3, "h200", Placement(32), 0, BOOK)


def test_unknown_model_or_gpu(raises_param):
    raises_param("gpu", fleet.plan, K3, "h300", BOOK)
    raises_param("model", fleet.plan, "gpt-5", "h200", BOOK)
    raises_param("model", fleet.plan, "deepseek-v3", "h200", assumptions("article"))   # no article deployment
    raises_param("model", deployment, "llama-3.1-405b")
    raises_param("gpu", bare.bare, V4, "tpu-v5")
    raises_param("gpu", ep.ep_row, V4, "mi300", 16)


def test_no_valid_plan_names_the_context_and_a_fix(raises_param):
    err = raises_param("context", fleet.plan, K3, "h200", BOOK, fleet.workload(context=500_000_000))
    assert isinstance(err, fleet.NoValidPlan) and "Smallest change" in err.allowed
    raises_param("context", decode.deployment_bound, K3, "h200", 64, 10_000_000)


def test_ep_that_does_not_divide(raises_param):
    raises_param("ep", ep.ep_row, V4, "h200", 24)                # 256 article experts
    assert weights.weights_per_gpu(V4, 24).experts_per_gpu == 16              # 384 public experts
    raises_param("ep", ep.ep_row, V4, "h200", 18, redundant_experts=32 + 1)


def test_sweep_refuses(raises_param):
    kw = dict(concurrency=[10, 100], context=[1_000, 2_000])
    raises_param("concurrency", sweep.sweep, K3, "h200", BOOK, concurrency=[10, 0], context=1_000)
    raises_param("context", sweep.sweep, K3, "h200", BOOK, concurrency=10, context=[-1, 1_000])
    raises_param("rho", sweep.sweep, K3, "h200", BOOK, rho=[0.5, 0.0], **kw)
    raises_param("pd_ratio", sweep.sweep, K3, "h200", BOOK, pd_ratio=[0, 2.5], **kw)
    raises_param("models", sweep.sweep, ["gpt-5"], "h200", BOOK, **kw)
    raises_param("gpus", sweep.sweep, K3, ["h200", "h300"], BOOK, **kw)


def test_small_calculators_refuse(raises_param):
    raises_param("w_decode", offload.duty_cycle, 0, 5)
    raises_param("w_idle", offload.duty_cycle, 5, -1)
    raises_param("output_tokens", offload.decode_seconds, 0, 200)
    raises_param("tokens_per_s", offload.decode_seconds, 1_000, 0)
    raises_param("rho", offload.resident_requests, 100, 2.0)
    raises_param("quantile", offload.peak_resident, 100, 0.5, 1.5)
    raises_param("d_nodes", disagg.prefill_nodes, -1, 2.5)
    raises_param("pd_ratio", disagg.prefill_nodes, 100, 0)
    raises_param("bandwidth", disagg.transfer_time, 1e9, 0)
    raises_param("gbit_per_s", disagg.link_bandwidth, 0)
    raises_param("bandwidth", decode.step_time, 1e9, 1e9, -4.8e12)
    raises_param("batch", decode.throughput_bound, 0, 1e9, 1e6, 4.8e12)
    raises_param("tokens_per_step", decode.throughput_bound, 8, 1e9, 1e6, 4.8e12, 0.5)
    raises_param("top_k", decode.experts_touched, 10, 300, 256)
    raises_param("hbm_bytes", bare.bare_gpus, 1e12, 1e12, 0)
    raises_param("gpus", prefill.time_bound, 1e15, 0, 1e15)
    raises_param("dtype", prefill.ttft_bound, K3, "h200", 1_000, 8, dtype="int4")
    raises_param("mfu", prefill.tokens_per_s_per_gpu, K3, "h200", 1_000, mfu=0, new_tokens=1_000)
    raises_param("kind", anchors, "prices")
    raises_param("per_target", ep.dispatch_fanout, 896, 16, 0)
    p = fleet.plan(K3, "h200", BOOK)
    raises_param("batch", decode.plan_step, p, p.decode.requests + 1)     # more than the GPU holds

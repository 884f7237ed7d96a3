"""Deployment calculators: bad input raises a ParameterError that names the parameter."""

import pytest

from twopaths.calc import bare, decode, disagg, ep, fleet, offload, prefill, sweep
from twopaths.specs.deployment import anchors, deployment

K3, V4 = "kimi-k3", "deepseek-v4-pro"


@pytest.mark.parametrize("name, kwargs", [
    ("concurrency", {"concurrency": 0}),
    ("concurrency", {"concurrency": -5}),
    ("context", {"context": 0}),
    ("context", {"context": 100_000_000}),          # 6.1 TB a request: no decode unit holds it
    ("pd_ratio", {"pd_ratio": 0}),
    ("pd_ratio", {"pd_ratio": -2.5}),
    ("rho", {"rho": 0}),
    ("rho", {"rho": 1.01}),
    ("rho", {"rho": -0.25}),
    ("ep", {"ep": 30}),                            # 896 experts do not spread over 30 GPUs
    ("ep", {"ep": 16, "rounding": "article"}),     # weights and overhead leave no room for KV
    ("ep", {"ep": 0}),
    ("basis", {"basis": "guessed"}),
    ("rounding", {"rounding": "banker"}),
    ("packing", {"packing": "tight"}),
    ("overhead_bytes", {"overhead_bytes": -1.0}),
    ("usable_fraction", {"usable_fraction": 0}),
    ("redundant_experts", {"redundant_experts": -32}),
])
def test_plan_refuses(raises_param, name, kwargs):
    raises_param(name, fleet.plan, K3, "h200", **kwargs)


def test_unknown_model_or_gpu(raises_param):
    raises_param("gpu", fleet.plan, K3, "h300")
    raises_param("model", fleet.plan, "gpt-5")
    raises_param("model", fleet.plan, "deepseek-v3")          # the article sizes no deployment for it
    raises_param("model", fleet.plan, "gpt-5", basis="public")
    raises_param("model", deployment, "llama-3.1-405b")
    raises_param("gpu", bare.bare, V4, "tpu-v5")
    raises_param("gpu", ep.ep_row, V4, "mi300", 16)


def test_context_that_does_not_fit_one_gpu(raises_param):
    err = raises_param("context", fleet.plan, K3, "h200", context=3_000_000, packing="gpu")
    assert "GPU" in err.allowed
    raises_param("context", decode.deployment_bound, K3, "h200", 64, 10_000_000)


def test_ep_that_does_not_divide(raises_param):
    raises_param("ep", ep.ep_row, V4, "h200", 24)                # 256 article experts
    assert ep.ep_row(V4, "h200", 24, "public").experts_per_gpu == 16     # 384 public experts
    raises_param("ep", ep.ep_row, V4, "h200", 18, redundant_experts=32 + 1)
    raises_param("ep", sweep.sweep, [K3, V4], "h200", concurrency=10, context=1_000, ep=[32, 48])


def test_sweep_refuses(raises_param):
    kw = dict(concurrency=[10, 100], context=[1_000, 2_000])
    raises_param("concurrency", sweep.sweep, K3, "h200", concurrency=[10, 0], context=1_000)
    raises_param("context", sweep.sweep, K3, "h200", concurrency=10, context=[-1, 1_000])
    raises_param("rho", sweep.sweep, K3, "h200", rho=[0.5, 0.0], **kw)
    raises_param("pd_ratio", sweep.sweep, K3, "h200", pd_ratio=[0, 2.5], **kw)
    raises_param("models", sweep.sweep, ["gpt-5"], "h200", **kw)
    raises_param("gpus", sweep.sweep, K3, ["h200", "h300"], **kw)


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
    raises_param("kind", anchors, "prices")
    raises_param("per_target", ep.dispatch_fanout, 896, 16, 0)
    raises_param("batch", decode.plan_step, fleet.plan(K3), 3)           # two 30.9 GB requests fill a K3 GPU
    raises_param("plan", decode.plan_step, fleet.plan(K3, context=1_500_000))   # none fits one GPU

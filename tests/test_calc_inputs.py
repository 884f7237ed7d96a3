"""The calculators' argument checks at their boundaries, and the options a calculator passes on
(cache and state dtypes, weight formats, rounding): each must reach the number it changes. Found by
mutation testing, where a moved bound or a dropped option passed every other test."""

import numpy as np
import pytest

from twopaths import specs
from twopaths.calc import arrays, bare, cost, disagg, kv, offload, request, units
from twopaths.specs import gpu as gpu_spec

TINY = 1e-9
K3, V4 = "kimi-k3", "deepseek-v4-pro"


def ints(values, **bounds):
    return arrays.ints("n", values, **bounds)


def reals(values, **bounds):
    return arrays.reals("x", values, **bounds)


# (callable, fixed arguments, argument checked, last allowed value, first refused value)
CASES = [
    (ints, {"minimum": 0}, "values", [0, 3], [0, -1]),
    (ints, {"maximum": 3}, "values", [3, 0], [4, 0]),
    (reals, {"minimum": 0.0}, "values", [0.0, 1.0], [-TINY, 1.0]),
    (reals, {"minimum": 0.0, "open_min": True}, "values", [TINY], [0.0]),
    (reals, {"maximum": 1.0}, "values", [1.0], [1 + TINY]),
    (bare.bare_gpus, {"kv_bytes": 1.0, "hbm_bytes": 1.0}, "weight_bytes", 0.0, -TINY),
    (bare.bare_gpus, {"weight_bytes": 1.0, "hbm_bytes": 1.0}, "kv_bytes", 0.0, -TINY),
    (bare.bare_gpus, {"weight_bytes": 1.0, "kv_bytes": 1.0}, "hbm_bytes", TINY, 0.0),
    (bare.bare, {"model": K3}, "concurrency", 1, 0),
    (bare.bare, {"model": K3}, "context", 1, 0),
    (cost.batched_ratio, {"model_a": V4, "model_b": K3}, "batch", 1, 0),
    (cost.usd_per_million_tokens, {"usd_per_gpu_hour": 2.0, "tokens_per_s": 1.0}, "gpus", 1, 0),
    (cost.usd_per_million_tokens, {"gpus": 8, "tokens_per_s": 1.0}, "usd_per_gpu_hour", 0.0, -TINY),
    (cost.usd_per_million_tokens, {"gpus": 8, "usd_per_gpu_hour": 2.0}, "tokens_per_s", TINY, 0.0),
    (request.request_bytes, {"model": K3}, "context", 0, -1),
    (request.request_bytes, {"model": K3, "basis": "public"}, "context", 0, -1),
    (request.request_bytes, {"model": K3, "context": 10}, "basis", "public", "Public"),
    (request.model_weight_bytes, {"model": K3}, "basis", "public", "Public"),
    (request.activated_weight_bytes, {"model": K3}, "basis", "public", "Public"),
    (offload.duty_cycle, {"w_idle": 1.0}, "w_decode", TINY, 0.0),
    (offload.duty_cycle, {"w_decode": 1.0}, "w_idle", 0.0, -TINY),
    (offload.decode_seconds, {"tokens_per_s": 1.0}, "output_tokens", 1, 0),
    (offload.decode_seconds, {"output_tokens": 1}, "tokens_per_s", TINY, 0.0),
    (offload.resident_requests, {"rho": 0.5}, "concurrency", 1, 0),
    (offload.resident_requests, {"concurrency": 10}, "rho", 1.0, 1 + TINY),
    (offload.resident_requests, {"concurrency": 10}, "rho", TINY, 0.0),
    (offload.peak_resident, {"rho": 0.5}, "concurrency", 1, 0),
    (offload.peak_resident, {"concurrency": 10, "rho": 0.5}, "quantile", 1.0, 1 + TINY),
    (offload.peak_resident, {"concurrency": 10, "rho": 0.5}, "quantile", TINY, 0.0),
    (offload.scale_nodes, {"rho": 0.5}, "d_nodes", 0.0, -TINY),
    (offload.swap_in_rate, {"rho": 0.5, "w_decode": 1.0, "request_bytes": 1.0}, "concurrency", 1, 0),
    (offload.swap_in_rate, {"concurrency": 4, "w_decode": 1.0, "request_bytes": 1.0}, "rho", 1.0, 1 + TINY),
    (offload.swap_in_rate, {"concurrency": 4, "rho": 0.5, "request_bytes": 1.0}, "w_decode", TINY, 0.0),
    (offload.swap_in_rate, {"concurrency": 4, "rho": 0.5, "w_decode": 1.0}, "request_bytes", 0.0, -TINY),
    (disagg.link_bandwidth, {}, "gbit_per_s", TINY, 0.0),
    (disagg.transfer_time, {"bandwidth": 1.0}, "n_bytes", 0.0, -TINY),
    (disagg.transfer_time, {"n_bytes": 1.0}, "bandwidth", TINY, 0.0),
    (disagg.handoff, {"model": K3, "context": 10}, "bandwidth", TINY, 0.0),
    (disagg.prefill_nodes, {"pd_ratio": 2.0}, "d_nodes", 0.0, -TINY),
    (disagg.prefill_nodes, {"d_nodes": 4.0}, "pd_ratio", TINY, 0.0),
    (units.to_unit, {"n_bytes": 1.0}, "unit", "KiB", "kib"),
]


@pytest.mark.parametrize("fn,fixed,name,allowed,refused", CASES,
                         ids=[f"{c[0].__name__}-{c[2]}-{c[3]}" for c in CASES])
def test_the_boundary_value_is_accepted_and_the_next_refused(raises_param, fn, fixed, name, allowed, refused):
    shown = {reals: "x", ints: "n"}.get(fn, name)
    fn(**fixed, **{name: allowed})
    raises_param(shown, fn, **fixed, **{name: refused})


def test_arrays_report_the_first_offending_element_and_keep_their_types(raises_param):
    err = raises_param("x", arrays.reals, "x", np.array([0.5, -2.0, 3.0]), minimum=0.0, maximum=1.0)
    assert err.got == -2.0
    err = raises_param("n", arrays.ints, "n", np.array([1, 7, -3]), minimum=0, maximum=5)
    assert err.got == 7
    # one element past one bound, whatever the other bound says, and reported, not the element at it
    raises_param("n", arrays.ints, "n", np.array([-1, 2]), minimum=0, maximum=5)
    assert raises_param("x", arrays.reals, "x", np.array([0.0, -1.0]), minimum=0.0).got == -1.0
    assert raises_param("x", arrays.reals, "x", np.array([1.0, 2.0]), maximum=1.0).got == 2.0
    raises_param("x", arrays.reals, "x", np.array(["a"]))                     # not numbers
    raises_param("x", arrays.reals, "x", np.array([]))                        # empty
    assert arrays.ints("n", np.array([1, 2], dtype=np.int32)).dtype == np.int64
    assert type(arrays.reals("x", np.float32(0.5))) is float and type(arrays.ints("n", np.int16(3))) is int


def test_units_convert_and_format():
    assert units.to_unit(3 * 2**30, "GiB") == 3.0 and units.to_unit(5e12, "TB") == 5.0
    assert units.fmt_bytes(61_440, "kB") == "61.4 kB" and units.fmt_bytes(2**20, "MiB", 2) == "1.00 MiB"
    assert units.fmt_bytes(1_234_567_890, "B", 0) == "1,234,567,890 B"


def test_public_basis_options_reach_the_request():
    """kv_dtype and state_dtype move a public request's bytes; the stated and article bases ignore them."""
    kw = dict(model=K3, context=4096, basis="public")
    fp8, bf16 = request.request_bytes(**kw, kv_dtype="fp8"), request.request_bytes(**kw, kv_dtype="bf16")
    assert fp8 < bf16
    assert request.request_bytes(**kw, state_dtype="fp32") > request.request_bytes(**kw, state_dtype="bf16")
    for basis in ("stated", "article"):
        assert (request.request_bytes(K3, 4096, basis, kv_dtype="fp32", state_dtype="fp32")
                == request.request_bytes(K3, 4096, basis))
    assert request.model_weight_bytes(K3) == request.model_weight_bytes(K3, "stated")


def test_weight_formats_reach_the_weights():
    fp4 = {"routed_experts": "fp4"}
    assert request.model_weight_bytes(V4, "public", fp4) != request.model_weight_bytes(V4, "public")
    assert request.activated_weight_bytes(V4, "public", fp4) != request.activated_weight_bytes(V4, "public")


@pytest.mark.parametrize("option", [{"kv_dtype": "fp8"}, {"state_dtype": "fp32"},
                                    {"formats": {"routed_experts": "fp4"}}])
def test_bare_and_cost_pass_their_options_on(option):
    """The composite calculators equal their parts computed with the same option, and the option matters."""
    req = {k: v for k, v in option.items() if k != "formats"}
    got = bare.bare(K3, basis="public", concurrency=100, context=8192, **option)
    weights = request.model_weight_bytes(K3, "public", option.get("formats"))
    kv = 100 * request.request_bytes(K3, 8192, "public", **req)
    assert got == bare.bare_gpus(weights, kv, gpu_spec("h200").hbm_bytes)
    assert got != bare.bare(K3, basis="public", concurrency=100, context=8192)
    ratio = cost.batched_ratio(V4, K3, 8, basis="public", context=8192, **option)
    step = {m: request.activated_weight_bytes(m, "public", option.get("formats")) / 8
            + request.request_bytes(m, 8192, "public", **req) for m in (V4, K3)}
    assert ratio == pytest.approx(step[V4] / step[K3], rel=1e-12)
    assert cost.bandwidth_ratio(V4, K3, basis="public", context=8192, **option) == pytest.approx(
        cost.batched_ratio(V4, K3, 1, basis="public", context=8192, **option), rel=1e-12)
    assert ratio != cost.batched_ratio(V4, K3, 8, basis="public", context=8192)


def test_a_context_reaches_both_models_of_a_ratio():
    short, long = (cost.batched_ratio(V4, K3, 8, context=c) for c in (1_000, 1_000_000))
    assert short != long
    assert long == pytest.approx((request.activated_weight_bytes(V4) / 8 + request.request_bytes(V4, 1_000_000))
                                 / (request.activated_weight_bytes(K3) / 8 + request.request_bytes(K3, 1_000_000)))


def test_handoff_and_prefill_nodes():
    h = disagg.handoff(K3, 10_000, "public", kv_dtype="fp8", bandwidth=1e9)
    state = request.request_bytes(K3, 0, "public", kv_dtype="fp8")
    assert h == disagg.Handoff(request.request_bytes(K3, 10_000, "public", kv_dtype="fp8") - state, state, 1e9)
    assert h != disagg.handoff(K3, 10_000, "public", bandwidth=1e9)
    assert state > 0                                     # K3's KDA state travels even with no tokens
    # 9 decode nodes at 4 per prefill node want 2.25 prefill nodes: 3 whole ones, 2 to the nearest
    assert (disagg.prefill_nodes(9.0, 4.0), disagg.prefill_nodes(9.0, 4.0, "article")) == (3, 2)


def test_offload_rounds_as_told():
    """10 requests at rho 0.21 keep 2.1 resident: 3 whole ones (the default), 2 to the nearest."""
    assert (offload.resident_requests(10, 0.21), offload.resident_requests(10, 0.21, "article")) == (3, 2)
    assert offload.scale_nodes(10.0, 0.21, "strict") == 3


def test_swap_in_rate_is_turns_per_second_times_a_request():
    """10 requests, half of them resident, each turn 2 s apart: 2.5 turns a second of 1 GB each."""
    assert offload.swap_in_rate(10, 0.5, 2.0, 1e9) == pytest.approx(2.5e9)


@pytest.mark.parametrize("model", [K3, V4])
def test_group_bytes_add_up_to_the_request(model):
    spec = specs.model(model)
    for kw in ({}, {"kv_dtype": "fp32"}, {"state_dtype": "fp32"}):
        parts = kv.group_bytes(spec, 50_000, **kw)
        assert [g for g, _ in parts] == list(spec.attention)
        assert sum(b for _, b in parts) == kv.request_kv_bytes(spec, 50_000, **kw)
    assert kv.group_bytes(spec, 50_000, kv_dtype="fp32") != kv.group_bytes(spec, 50_000)
    assert kv.group_bytes(model, 10) == kv.group_bytes(spec, 10)


def test_the_fixed_state_adds_nothing_per_token():
    """K3's KDA state is the same at any length: its dtype moves the request, not the slope."""
    spec = specs.model(K3)
    assert kv.request_kv_bytes(spec, 1000, state_dtype="fp32") > kv.request_kv_bytes(spec, 1000, state_dtype="bf16")
    assert kv.kv_bytes_per_token(spec, state_dtype="fp32") == kv.kv_bytes_per_token(spec, state_dtype="bf16")


def test_a_list_parameter_refuses_repeats_and_names_them(raises_param):
    from twopaths.errors import ParameterError, check_list
    allowed = ["kimi-k3", "deepseek-v4-pro"]
    assert check_list("models", ["kimi-k3", "deepseek-v4-pro"], allowed) == allowed
    raises_param("models", check_list, "models", ["kimi-k3", "deepseek-v4-pro", "kimi-k3"], allowed)
    with pytest.raises(ParameterError, match=r"each item once \('kimi-k3' repeated\)"):
        check_list("models", ["kimi-k3", "kimi-k3"], allowed)

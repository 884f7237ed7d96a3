"""Details of the serving calculators that the plan-level tests pass over: each test here kills a
mutant that survived `make mutants` (an argument check at its boundary, a value threaded through,
a field of a plan nothing read)."""

import math

import numpy as np
import pytest

from twopaths.calc.decode import plan_step
from twopaths.calc import attention_flops, decode, ep, fleet, prefill, sweep, weights
from twopaths.specs import params
from twopaths.calc.placement import Placement, memory, read_share, request_share
from twopaths.calc.rounding import cover, fit, to_figures, to_step
from twopaths.specs import gpu as gpu_spec, model as model_spec
from twopaths.specs.serving import assumptions

K3, V4 = "kimi-k3", "deepseek-v4-pro"
BOOK = assumptions()
W25 = fleet.workload(rho=0.25)


def test_ratio_and_gain_are_node_ratios():
    k, v = fleet.plan(K3, "h200", BOOK, W25), fleet.plan(V4, "h200", BOOK, W25)
    assert fleet.ratio(K3, V4, "h200", BOOK, W25) == k.nodes / v.nodes
    assert fleet.gain(K3, "h200", "b300", BOOK, W25) == k.nodes / fleet.plan(K3, "b300", BOOK, W25).nodes
    assert fleet.gain(K3, "h200", "b300", BOOK) != fleet.gain(K3, "h200", "b300", BOOK, W25)   # work is used


def test_prefill_by_work_by_hand():
    """Prompt tokens a second: turns a second (resident sessions x their speed, one token a step,
    / 1,000 tokens a turn) x tokens a turn; one GPU's rate: MFU x BF16 peak over (2 x activated
    params + prefill attention at the context)."""
    p = fleet.plan(V4, "h200", BOOK, W25)
    demand = 10_000 * 0.25 / (1000 * plan_step(p).step) * BOOK.prompt_tokens_per_turn
    per_token = 2 * model_spec(V4).params_active + attention_flops.attention_flops(V4, 500_000, prefill=True,
                                                                                     new_tokens=2_000)
    rate = 0.4 * gpu_spec("h200").bf16_flops / per_token
    assert p.prefill.tokens_per_s == pytest.approx(demand) and p.prefill.tokens_per_s_per_gpu == pytest.approx(rate)
    unit = p.prefill.unit_nodes
    assert p.prefill.by_work == unit * math.ceil(math.ceil(math.ceil(demand / rate) / 8) / unit)
    assert p.nodes_by_work == p.d_nodes + p.prefill.by_work
    assert prefill.prompt_flops_per_token(V4, 500_000, new_tokens=BOOK.prompt_tokens_per_turn) == pytest.approx(per_token)


def test_prefill_unit_is_none_where_nothing_fits():
    assert fleet.prefill_unit(K3, "h200", 500_000_000, BOOK) is None      # past DCP8 x PP8
    assert fleet.prefill_unit(V4, "h200", 500_000, BOOK).placement == Placement(8)


def test_smallest_change_for_a_given_placement_names_another():
    text = fleet.smallest_change(K3, "h200", BOOK, W25, Placement(32))     # EP32 DP holds no request
    assert text.startswith("another placement") and fleet.plan(K3, "h200", BOOK, W25).placement.name in text
    assert "GB of HBM" in fleet.smallest_change(K3, "h200", BOOK, fleet.workload(context=500_000_000))


def test_memory_counts_the_overhead_and_never_goes_negative():
    base = memory(V4, "h200", Placement(16), 500_000, BOOK)
    heavy = memory(V4, "h200", Placement(16), 500_000, BOOK.but(overhead_bytes=10e9))
    assert heavy.kv_room == pytest.approx(base.kv_room - 10e9) and heavy.requests < base.requests
    assert memory(K3, "h200", Placement(32), 500_000, BOOK).requests == 0          # room < 0


def test_placement_boundaries(raises_param):
    assert Placement(1).attention_groups == 1
    raises_param("attention_tp", Placement, 8, 0)
    # A GQA model's K/V heads must divide or be divided by the TP size (8 heads: 3 does neither).
    raises_param("attention_tp", memory, "llama-3.1-405b", "h200", Placement(24, 3), 1_000, BOOK)


def test_read_share_is_what_attention_touches():
    assert read_share(K3, 500_000, 1, BOOK) == request_share(K3, 500_000, 1, BOOK)     # MLA reads all
    assert read_share(V4, 500_000, 1, BOOK) < request_share(V4, 500_000, 1, BOOK) / 5
    art = assumptions("article")
    assert read_share(V4, 500_000, 1, art) == request_share(V4, 500_000, 1, art)


def test_plan_step_by_hand():
    p = fleet.plan(V4, "h200", BOOK, W25)
    m, step = p.decode, decode.plan_step(p)
    touched = decode.experts_touched(m.requests * p.placement.attention_groups, 6, 384)
    assert step.weight_bytes == pytest.approx(m.other_bytes + m.expert_bytes * touched, rel=1e-12)
    assert step.kv_bytes == pytest.approx(m.requests * read_share(V4, 500_000, 1, BOOK), rel=1e-12)
    assert step.bandwidth == gpu_spec("h200").hbm_bandwidth


def test_decode_bounds_by_hand(raises_param):
    assert decode.throughput_bound(4, 10e9, 1e9, 1e12, 2) == pytest.approx(2 * 4 / ((10e9 + 4e9) / 1e12))
    assert decode.step_time(1, 1, 0.5) == 4.0                                  # a bandwidth below 1 B/s is allowed
    raises_param("kv_bytes", decode.step_time, 1, -1, 1)
    raises_param("request_bytes", decode.throughput_bound, 1, 1, -1, 1)
    raises_param("experts", decode.experts_touched, 1, 1, 0)
    raises_param("tokens_per_step", decode.deployment_bound, V4, "h200", 16, 1_000, tokens_per_step=0.5)
    assert decode.deployment_bound(V4, "h200", 16, 1_000).batch > \
        decode.deployment_bound(V4, "h200", 16, 1_000, usable_fraction=0.9).batch
    assert decode.deployment_bound(V4, "h200", 16, 1).batch > 0                  # a one-token context


def test_prefill_boundaries(raises_param):
    assert prefill.matmul_flops(1e9, 0) == 0
    assert prefill.time_bound(0.5, 1, 1.0) == 0.5 and prefill.time_bound(1.0, 1, 1.0, 1.0) == 1.0
    raises_param("efficiency", prefill.time_bound, 1.0, 1, 1.0, 1.01)
    raises_param("efficiency", prefill.time_bound, 1.0, 1, 1.0, 0)
    raises_param("tokens", prefill.matmul_flops, 1e9, -1)
    raises_param("activated_params", prefill.matmul_flops, 0, 1)
    raises_param("mfu", prefill.tokens_per_s_per_gpu, V4, "h200", 1_000, mfu=1.01, new_tokens=100)
    raises_param("flops_per_gpu", prefill.time_bound, 1.0, 1, 0)
    raises_param("flops", prefill.time_bound, -1.0, 1, 1.0)
    raises_param("context", prefill.prompt_flops_per_token, K3, 0, new_tokens=1)
    raises_param("new_tokens", prefill.prompt_flops_per_token, K3, 1_000, new_tokens=0)
    raises_param("new_tokens", prefill.tokens_per_s_per_gpu, K3, "h200", 1_000, mfu=0.5, new_tokens=0)
    raises_param("prompt_tokens_per_turn", BOOK.but, prompt_tokens_per_turn=0)   # a turn brings a message
    # K3's MLA runs un-absorbed in prefill: cheaper than the decode form, its prefix up-projection included.
    decode_form = 2 * model_spec(K3).params_active + attention_flops.attention_flops(K3, 500_000)
    assert prefill.prompt_flops_per_token(K3, 500_000, new_tokens=2_000) < decode_form
    assert prefill.tokens_per_s_per_gpu(V4, "h200", 1_000, mfu=1.0, new_tokens=1_000) > 0
    # a turn longer than the context is the whole context: a fresh prompt, nothing cached
    assert prefill.prompt_flops_per_token(K3, 1_000, new_tokens=5_000) == \
        prefill.prompt_flops_per_token(K3, 1_000, new_tokens=1_000)
    # fewer new tokens share the prefix's up-projection among fewer
    assert prefill.prompt_flops_per_token(K3, 500_000, new_tokens=500) > \
        prefill.prompt_flops_per_token(K3, 500_000, new_tokens=8_000)
    # The article's 104B activated parameters by default; FP8 peak is twice BF16's.
    fp8 = prefill.ttft_bound(K3, "h200", 1_000, 8)
    assert fp8 == pytest.approx(2 * 104e9 * 1_000 / (8 * gpu_spec("h200").fp8_flops))
    assert prefill.ttft_bound(K3, "h200", 1_000, 8, dtype="bf16") == \
        pytest.approx(fp8 * gpu_spec("h200").fp8_flops / gpu_spec("h200").bf16_flops)


def test_rounding_defaults_types_and_names(raises_param):
    assert to_figures(30.907e9, 3) == 30.907e9 and to_step(5.078e9, 0.05e9) == 5.078e9      # strict by default
    assert to_step(0.125, 0.05, "article") == pytest.approx(0.15)       # 2.4999.. is a half: up, not to even
    assert type(to_step(5.07e9, 0.05e9, "article")) is float      # not a 0-d numpy array
    assert isinstance(to_step(np.array([5.07e9]), 0.05e9, "article"), np.ndarray)
    assert cover(np.array([1, 2])).dtype == float and fit(np.array([1.5]))[0] == 1.0
    for fn in (cover, fit):
        raises_param("rounding", fn, 1.0, "banker")
    raises_param("rounding", to_step, 1.0, 0.5, "banker")


def test_article_ep_sizing_details(raises_param):
    assert [r.ep for r in ep.ep_table(K3, "h200")] == ep.whole_node_eps(K3, maximum=128)
    assert ep.whole_node_eps(V4)[-1] == 256 and ep.whole_node_eps(V4, "public")[-1] == 384
    raises_param("usable_fraction", ep.ep_row, K3, "h200", 32, usable_fraction=1.5)
    raises_param("usable_fraction", ep.ep_row, K3, "h200", 32, usable_fraction=0)
    assert ep.min_viable_ep(K3, "h200") == 16 and ep.min_viable_ep(K3, "h200", overhead_bytes=40e9) == 32
    raises_param("top_k", ep.dispatch_fanout, 896, 0, 28)
    raises_param("request_bytes", ep.min_viable_ep, K3, "h200", request_bytes=-1.0)
    assert [r.ep for r in ep.ep_table(V4, "h200", redundant_experts=32)] == [8, 16, 24, 32, 48, 72, 96]
    assert ep.whole_node_eps(V4, maximum=127)[-1] == 64


def test_weights_details(raises_param):
    assert weights.ep_sizes(V4)[-1] == 384 and 385 not in weights.ep_sizes(V4)
    raises_param("ep", weights.experts_per_gpu, 384, 768)
    raises_param("overhead_bytes", weights.kv_space_per_gpu, 1e9, "h200", overhead_bytes=-1)
    # Under TP the whole-kept share is priced in the chosen formats too.
    fmt = {"attention": "fp8"}
    got = weights.weights_per_gpu(K3, 32, tp=2, formats=fmt).other_bytes
    total = weights.weight_bytes(K3, fmt)
    whole = sum(weights.WEIGHT_FORMATS["fp8" if g == "attention" else "bf16"].bytes(n)
                for g, n in params.tp_replicated(K3).items())
    assert got == pytest.approx(whole + (sum(total.values()) - total["routed_experts"] - whole) / 2, rel=1e-12)


def test_sweep_grid_matches_plan_elementwise():
    conc, rhos = [2_000, 10_000, 30_000], [0.1, 0.5]
    s = sweep.sweep([K3, V4], ["h200", "b300"], BOOK, concurrency=conc, context=[100_000, 500_000], rho=rhos)
    for m in (K3, V4):
        for g in ("h200", "b300"):
            for c in conc:
                for t in (100_000, 500_000):
                    for r in rhos:
                        p = fleet.plan(m, g, BOOK, fleet.Workload(c, t, r))
                        i = s.index(model=m, gpu=g, concurrency=c, context=t, rho=r)
                        assert (s.d_nodes[i].item(), s.p_nodes[i].item()) == (p.d_nodes, p.p_nodes)


def test_a_cached_turn_waits_for_its_attention_on_one_group():
    p = fleet.plan(K3, "h200", BOOK, fleet.workload(10_000, 500_000))
    unit, peak = p.prefill.unit, gpu_spec("h200").bf16_flops
    assert (unit.gpus, unit.attention_tp) == (16, 8)
    weights = 2 * model_spec(K3).params_active * 429 / (16 * peak)     # over the whole unit
    attention = 429 * attention_flops.attention_flops(K3, 500_000, prefill=True, new_tokens=429) / (8 * peak)   # one group
    assert prefill.cached_turn_ttft(p, 429) == pytest.approx(weights + attention, rel=1e-12)
    assert prefill.cached_turn_ttft(p, 10**6) == prefill.cached_turn_ttft(p, 500_000)   # at most the context

"""KDA and Gated DeltaNet against fla-core's naive references, transformers' KDA layer and Qwen3-Next's
Gated DeltaNet, with one state per key head and with grouped value heads (GVA); cache bytes against
the calculator; the tile bound; bad input."""

import functools
import importlib.util
import math
from pathlib import Path

import pytest
import torch
from hypothesis import given, settings, strategies as st

import need

from twopaths.calc import kv
from twopaths.layers import kda

TOL = 1e-5


@functools.cache
def _fla(relative: str):
    """A pure-torch file of the installed fla-core, loaded by path (fla.ops imports Triton kernels),
    on first use, so the tests that need no fla run without it."""
    fla = need.module("fla")
    path = Path(fla.__file__).parent / relative
    spec = importlib.util.spec_from_file_location("fla_" + relative.replace("/", "_")[:-3], path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def fla_kda():
    return _fla("ops/kda/naive.py")


def fla_gdn():
    return _fla("ops/gated_delta_rule/naive.py")


def inputs(B, T, H, K, V, gate, seed, state=False, scalar_gate=False, group=1):
    """Random inputs as the layer produces them (``kda.random_inputs``), with the gate drawn three ways;
    ``group`` value heads per key head (GVA: v, g, beta and the state have H * group heads)."""
    q, k, v, _, beta = kda.random_inputs(B, T, H * group, K, V, seed=seed)
    q, k, H = q[:, :, :H], k[:, :, :H], H * group
    gen = torch.Generator().manual_seed(seed + 1)
    gshape = (B, T, H) if scalar_gate else (B, T, H, K)
    rand = lambda *s: torch.randn(*s, generator=gen)  # noqa: E731
    g = {"bounded": -5 * torch.sigmoid(rand(*gshape)),                   # K3's gate, anywhere in (-5, 0)
         "near-bound": -5 * torch.sigmoid(4 + rand(*gshape)),            # most channels within 0.1 of -5
         "steep": -20 * torch.rand(*gshape, generator=gen)}[gate]       # past the bound: pairwise tiles
    h0 = rand(B, H, K, V) if state else None
    return q, k, v, g, beta, h0


shapes = st.tuples(st.integers(1, 2), st.integers(1, 100), st.integers(1, 4), st.sampled_from([4, 8, 16, 32]),
                   st.sampled_from([4, 8, 24, 32]))


def _close(a, b):
    return (a - b).abs().max().item() if a.numel() else 0.0


@settings(max_examples=20)
@given(shape=shapes, gate=st.sampled_from(["bounded", "near-bound", "steep"]), chunk=st.sampled_from([1, 7, 16, 32, 64]),
       state=st.booleans(), seed=st.integers(0, 2**16), group=st.sampled_from([1, 2, 3]),
       scale=st.one_of(st.none(), st.floats(0.05, 3.0)))
def test_kda_matches_fla_naive_recurrent(shape, gate, chunk, state, seed, group, scale):
    q, k, v, g, beta, h0 = inputs(*shape, gate, seed, state, group=group)
    o_ref, S_ref = fla_kda().naive_recurrent_kda(q, k, v, g, beta, scale, initial_state=h0, output_final_state=True)
    o_rec, S_rec = kda.kda_recurrent(q, k, v, g, beta, scale, initial_state=h0)
    o_chk, S_chk = kda.kda_chunked(q, k, v, g, beta, scale, initial_state=h0, chunk_size=chunk)
    assert S_rec.dtype == S_chk.dtype == torch.float32
    for o, S in ((o_rec, S_rec), (o_chk, S_chk)):
        assert _close(o, o_ref) < TOL and _close(S, S_ref) < TOL


@pytest.mark.parametrize("T,chunk,gate,group", [(128, 64, "near-bound", 1), (48, 16, "steep", 1),
                                                (64, 32, "bounded", 1), (48, 16, "bounded", 2)])
def test_kda_chunked_matches_fla_naive_chunk(T, chunk, gate, group):
    q, k, v, g, beta, h0 = inputs(2, T, 3, 16, 24, gate, seed=T + chunk, state=True, group=group)
    o_ref, S_ref = fla_kda().naive_chunk_kda(q, k, v, g, beta, initial_state=h0, output_final_state=True,
                                           chunk_size=chunk)
    o, S = kda.kda_chunked(q, k, v, g, beta, initial_state=h0, chunk_size=chunk)
    assert _close(o, o_ref) < TOL and _close(S, S_ref) < TOL


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
def test_half_precision_inputs_are_computed_in_float32(dtype):
    q, k, v, g, beta, _ = (x.to(dtype) if x is not None else None for x in inputs(1, 50, 2, 16, 16, "bounded", 3))
    o_ref, S_ref = fla_kda().naive_recurrent_kda(q, k, v, g, beta, output_final_state=True)
    step = torch.finfo(dtype).eps                            # one rounding step of the output's dtype
    for fn in (kda.kda_recurrent, kda.kda_chunked):
        o, S = fn(q, k, v, g, beta)
        assert o.dtype == dtype and S.dtype == torch.float32
        assert _close(S, S_ref) < TOL
        assert _close(o.float(), o_ref.float()) <= step * o_ref.float().abs().max().item()


@pytest.mark.parametrize("T,chunk", [(77, 64), (64, 16), (5, 64)])
def test_gated_delta_rule_matches_fla(T, chunk):
    q, k, v, g, beta, h0 = inputs(2, T, 3, 8, 16, "bounded", seed=T, state=True, scalar_gate=True)
    o_rec, S_rec = fla_gdn().naive_recurrent_gated_delta_rule(q, k, v, beta, g, initial_state=h0,   # beta before g
                                                            output_final_state=True)
    o_chk, S_chk = fla_gdn().naive_chunk_gated_delta_rule(q, k, v, g, beta, chunk_size=chunk, initial_state=h0,
                                                        output_final_state=True)
    o, S = kda.gated_delta_rule(q, k, v, g, beta, initial_state=h0, chunk_size=chunk)
    for o_ref, S_ref in ((o_rec, S_rec), (o_chk, S_chk)):
        assert _close(o, o_ref) < TOL and _close(S, S_ref) < TOL


@pytest.mark.parametrize("T,chunk", [(50, 16), (7, 64)])
def test_grouped_gated_delta_rule_matches_qwen3_next(T, chunk):
    """Two value heads per key head, as Qwen3.5's Gated DeltaNet runs it; transformers' Qwen3-Next
    reference takes the H key heads and HV value heads as they are."""
    from transformers.models.qwen3_next import modeling_qwen3_next as M

    q, k, v, g, beta, h0 = inputs(2, T, 2, 8, 16, "bounded", seed=T, state=True, scalar_gate=True, group=2)
    o, S = kda.gated_delta_rule(q, k, v, g, beta, initial_state=h0, chunk_size=chunk)
    assert o.shape == v.shape and S.shape == h0.shape
    for ref in (M.torch_chunk_gated_delta_rule, M.torch_recurrent_gated_delta_rule):
        o_ref, S_ref = ref(q, k, v, g, beta, initial_state=h0, output_final_state=True)
        assert _close(o, o_ref) < TOL and _close(S, S_ref) < TOL


def test_chunked_form_gradients_match_the_recurrence():
    q, k, v, g, beta, _ = inputs(1, 40, 2, 8, 8, "bounded", 7)
    grads = []
    for fn in (kda.kda_recurrent, lambda *a: kda.kda_chunked(*a, chunk_size=16)):
        leaves = [x.clone().requires_grad_() for x in (q, k, v, g)]
        o, S = fn(*leaves, beta)
        (o.square().sum() + S.sum()).backward()
        grads.append([x.grad for x in leaves])
    for a, b in zip(*grads):
        assert _close(a, b) < 1e-4


# --- the layer -----------------------------------------------------------------------------------

def _glm5_kda(d_model, heads, head_dim, kernel):
    """transformers' Glm5Next KDA layer (Kimi-style, lower-bound gate -5) on a tiny inline config."""
    config_mod = need.module("transformers.models.glm5_next.configuration_glm5_next")
    from transformers.models.glm5_next import modeling_glm5_next

    config = config_mod.Glm5NextTextConfig(hidden_size=d_model, linear_head_dim=head_dim, linear_num_heads=heads,
                                           linear_conv_kernel_dim=kernel, num_hidden_layers=1,
                                           layer_types=["linear_attention"], rms_norm_eps=1e-5, linear_lower_bound=-5.0)
    ref = modeling_glm5_next.Glm5NextTextLinearAttention(config, 0).float()
    gen = torch.Generator().manual_seed(0)
    with torch.no_grad():
        for p in ref.parameters():
            p.copy_(0.3 * torch.randn(p.shape, generator=gen))
    return ref


@pytest.mark.parametrize("qk_weight", [None, 1e-3])
def test_kda_layer_matches_transformers(qk_weight):
    """``qk_weight``: tiny q and k projections, so that |q|^2 is near the L2 norm's eps and where the
    eps sits (inside the root, or F.normalize's clamp) moves the output by 5e-2."""
    ref = _glm5_kda(32, 3, 8, 4)
    if qk_weight is not None:
        with torch.no_grad():
            for w in (ref.q_proj.weight, ref.k_proj.weight):
                w.copy_(qk_weight * torch.randn(w.shape, generator=torch.Generator().manual_seed(3)))
    ours = kda.KDA(32, 3, 8, conv_kernel=4, lower_bound=-5.0, gate_rank=8, chunk_size=16)
    f = ref.forget_gate
    ours.load_state_dict({
        "q_proj.weight": ref.q_proj.weight, "k_proj.weight": ref.k_proj.weight, "v_proj.weight": ref.v_proj.weight,
        "conv_weight": ref.conv1d.weight[:, 0], "f_proj.0.weight": f.f_a_proj.weight, "f_proj.1.weight": f.f_b_proj.weight,
        "A_log": f.A_log, "dt_bias": f.dt_bias, "b_proj.weight": ref.b_proj.weight,
        "out_gate.0.weight": ref.g_a_proj.weight, "out_gate.1.weight": ref.g_b_proj.weight,
        "o_norm.weight": ref.o_norm.weight, "o_proj.weight": ref.o_proj.weight})
    x = torch.randn(2, 37, 32, generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        expected = ref(x)
        assert _close(ours(x), expected) < TOL
        assert expected.abs().mean() > 0.1
        g = ours.forget_gate(x)
    assert g.min() > -5 and g.max() < 0


def _repeat_heads(w, heads, group):
    """Rows of w [heads * n, ...] with each head's block repeated ``group`` times in place."""
    return w.unflatten(0, (heads, -1)).repeat_interleave(group, 0).flatten(0, 1)


def test_grouped_value_heads_equal_repeated_key_heads():
    """A GVA layer (2 key heads, 4 value heads) is the layer with 4 key heads whose q and k
    projections (and their conv channels) repeat each key head for its two value heads."""
    H, K, V, group = 2, 8, 6, 2
    gva = kda.KDA(24, H, K, head_dim_v=V, conv_kernel=3, chunk_size=8, value_heads=H * group)
    full = kda.KDA(24, H * group, K, head_dim_v=V, conv_kernel=3, chunk_size=8)
    q_conv, k_conv, v_conv = gva.conv_weight.split([H * K, H * K, H * group * V])
    state = dict(gva.state_dict(), **{
        "q_proj.weight": _repeat_heads(gva.q_proj.weight, H, group),
        "k_proj.weight": _repeat_heads(gva.k_proj.weight, H, group),
        "conv_weight": torch.cat([_repeat_heads(q_conv, H, group), _repeat_heads(k_conv, H, group), v_conv])})
    full.load_state_dict(state)
    x = torch.randn(2, 21, 24, generator=torch.Generator().manual_seed(4))
    with torch.no_grad():
        expected = full(x)
        assert _close(gva(x), expected) < TOL and expected.abs().mean() > 0.01


@pytest.mark.parametrize("value_heads", [2, 4])
def test_decoding_with_the_cache_continues_the_prefill(value_heads):
    layer = kda.KDA(24, 2, 8, head_dim_v=12, conv_kernel=4, chunk_size=8, value_heads=value_heads)
    x = torch.randn(2, 30, 24, generator=torch.Generator().manual_seed(2))
    with torch.no_grad():
        full = layer(x)
        cache = layer.new_cache(2)
        steps = [layer(x[:, :19], cache)] + [layer(x[:, t:t + 1], cache) for t in range(19, 30)]
    assert _close(torch.cat(steps, 1), full) < TOL


@pytest.mark.parametrize("heads,K,V,kernel,state,conv,group", [
    (2, 8, 12, 4, "fp32", "fp32", 1), (3, 16, 16, 1, "bf16", "fp32", 1), (1, 4, 32, 2, "fp32", "bf16", 1),
    (2, 8, 12, 4, "fp32", "bf16", 2)])
def test_cache_bytes_equal_the_calculator(heads, K, V, kernel, state, conv, group):
    dtype = {"fp32": torch.float32, "bf16": torch.bfloat16}
    layer = kda.KDA(16, heads, K, head_dim_v=V, conv_kernel=kernel, value_heads=heads * group)
    cache = layer.new_cache(1, dtype[state], dtype[conv])
    with torch.no_grad():
        for t in range(3):                       # the cache does not grow as tokens arrive
            layer(torch.randn(1, 1 + t, 16), cache)
            assert cache.nbytes == kv.kda_state_bytes(heads, K, V, state, kernel, conv, value_heads=heads * group)
            assert cache.state.dtype == dtype[state] and cache.conv.dtype == dtype[conv]


# --- why the lower bound --------------------------------------------------------------------------

def test_the_largest_safe_gate_is_where_the_tile_factor_overflows():
    for dtype in (torch.bfloat16, torch.float32, torch.float16):
        for tile in (8, 16, 64):
            g = kda.largest_safe_gate(tile, dtype)
            big = torch.tensor(-tile * g, dtype=torch.float64).exp()
            assert torch.isfinite(big.to(dtype)) and not torch.isfinite((big * 1.001).to(dtype))
    assert kda.largest_safe_gate(16, torch.bfloat16) == pytest.approx(-math.log(torch.finfo(torch.bfloat16).max) / 16,
                                                                     rel=1e-3)
    assert kda.largest_safe_gate(16, torch.bfloat16) < -5      # K3's bound of -5 sits inside


def test_tile_factor_exponents():
    g = -torch.rand(2, 48, 4, generator=torch.Generator().manual_seed(0))
    worst = kda.tile_factor_exponents(g, 16)
    assert worst.shape == (2, 3)
    assert torch.allclose(worst[:, 1], -g[:, 16:32].sum(-2).min(-1).values)
    assert (kda.tile_factor_exponents(torch.full((1, 32, 2), -5.0), 16) == 80).all()


def test_benchmark_runs_and_reports_both_ratios(capsys):
    from twopaths.bench import kda as bench

    ratios = bench.main(["--tokens", "128", "--heads", "2", "--dim", "16", "--repeats", "1", "--chunks", "64", "48"])
    assert set(ratios) == {"recurrent / chunked, chunk 64", "fla naive / chunked, chunk 64", "recurrent / chunked, chunk 48"}
    out = capsys.readouterr().out
    assert all(name in out for name in ratios) and all(r > 0 for r in ratios.values())
    # every timed form computed what the recurrence computes, on the same inputs
    diffs = [float(line.rsplit(" ", 1)[1]) for line in out.splitlines() if "from the recurrence" in line]
    # the recurrence, two chunked runs and, with fla-core, its naive form at chunk 64 (128 % 48 != 0)
    assert len(diffs) == 3 + (bench.fla_naive_chunk() is not None)
    assert diffs[0] == 0 and max(diffs) < 1e-4          # the recurrence against itself, then the rest


# --- bad input ------------------------------------------------------------------------------------

def test_bad_input_names_the_argument(raises_param):
    q, k, v, g, beta, _ = inputs(1, 10, 2, 8, 4, "bounded", 0)
    for fn in (kda.kda_recurrent, kda.kda_chunked):
        raises_param("q", fn, q[0], k, v, g, beta)
        raises_param("k", fn, q, k[:, :9], v, g, beta)
        raises_param("v", fn, q, k, v[:, :, :1], g, beta)
        raises_param("g", fn, q, k, v, g[..., :4], beta)
        raises_param("beta", fn, q, k, v, g, beta[..., None])
        raises_param("initial_state", fn, q, k, v, g, beta, initial_state=torch.zeros(1, 2, 4, 8))
        raises_param("g", fn, q, k, v, g.clone().index_fill_(1, torch.tensor([3]), 0.1), beta)
        raises_param("g", fn, q, k, v, torch.full_like(g, float("nan")), beta)
        raises_param("beta", fn, q, k, v, g, beta + 1.0)
        raises_param("beta", fn, q, k, v, g, beta - 1.0)
        raises_param("scale", fn, q, k, v, g, beta, scale=0.0)
        raises_param("q", fn, q.long(), k, v, g, beta)
    raises_param("chunk_size", kda.kda_chunked, q, k, v, g, beta, chunk_size=0)
    raises_param("chunk_size", kda.kda_chunked, q, k, v, g, beta, chunk_size=2.5)
    raises_param("g", kda.gated_delta_rule, q, k, v, g, beta)            # needs one gate per head
    raises_param("lower_bound", kda.KDA, 16, 2, 8, lower_bound=1.0)
    raises_param("value_heads", kda.KDA, 16, 2, 8, value_heads=3)
    raises_param("v", kda.kda_chunked, q, k, torch.randn(1, 10, 3, 4), g, beta)     # 3 value heads for 2 key heads
    raises_param("value_heads", kv.kda_state_bytes, 2, 8, 8, value_heads=1)
    raises_param("tile", kda.largest_safe_gate, 0, torch.bfloat16)
    raises_param("g", kda.tile_factor_exponents, g[0], 3)

"""Peer cross-check against NVIDIA's AIConfigurator (aiconfigurator 0.12.0, pinned; analytic, offline).

Under AIConfigurator's own assumptions (its KV dtype, entry layout, state dtype and slots, byte widths
without block scales, replication) the book's calculators give its figures: exactly for KV bytes per
request and per token, the fixed state per request and the routed-expert bytes per GPU; exactly for
the other weights per GPU of K3, V3 and V3.2, and within 0.25% for V4's (its attention sinks and
position biases, priced in fp32, are the rest), once each convention listed in
``specs/aiconfigurator.yaml`` is applied. That file names each difference, the choice the book makes
and why; the chapter "What the checkpoints actually weigh" shows it.
"""

import logging

import pytest

import need

from twopaths import specs
from twopaths.calc import fleet, kv, weights
from twopaths.specs import params
from twopaths.calc.placement import Placement, request_share
from twopaths.specs.serving import assumptions

aic_builders = need.module("aiconfigurator_core.sdk.config_builders")
aic_models = need.module("aiconfigurator_core.sdk.models")
logging.getLogger("aiconfigurator_core").setLevel(logging.ERROR)

PATHS = {"kimi-k3": "moonshotai/Kimi-K3", "deepseek-v4-pro": "deepseek-ai/DeepSeek-V4-Pro",
         "deepseek-v4-flash": "deepseek-ai/DeepSeek-V4-Flash", "deepseek-v3.2": "deepseek-ai/DeepSeek-V3.2",
         "deepseek-v3": "deepseek-ai/DeepSeek-V3"}
EP_SIZES = (8, 16, 32, 64)


def aic(model_id, ep=8, tp=1):
    """AIConfigurator's model for sglang with attention DP over the EP group (tp * dp == ep)."""
    mc = aic_builders.build_model_config(tp_size=tp, pp_size=1, attention_dp_size=ep // tp, moe_tp_size=1,
                                         moe_ep_size=ep, kvcache_quant_mode=None)
    aic_builders.apply_nextn(mc, 0)
    return aic_models.get_model(PATHS[model_id], mc, "sglang")


# AIConfigurator's KV layouts, as KVFormat pairs (entry, indexer key) for the book's calculator.
PLAIN_FP8 = kv.KVFormat("aic-fp8", 1, 1)                 # every element one byte, no scales
V32_FP8 = kv.KVFormat("aic-v32-fp8", 1, 2)               # FP8 latent, BF16 rope, no scales
FP4_INDEX = kv.KVFormat("aic-fp4-index", 0.5, 0.5)       # V4's indexer keys in FP4, no scales
AIC_KV = {"kimi-k3": "bf16", "deepseek-v3": PLAIN_FP8, "deepseek-v3.2": (V32_FP8, kv.FORMATS["fp8-indexer"]),
          "deepseek-v4-pro": (PLAIN_FP8, FP4_INDEX), "deepseek-v4-flash": (PLAIN_FP8, FP4_INDEX)}


def compressor_buffers(spec):
    """What AIConfigurator adds per request and the book does not count as cache: each compressor's
    fp32 working window (two windows of ratio x slots x dim), the indexer's own included."""
    c = spec.raw["config"]
    hd, di = c["head_dim"], c["index_head_dim"]
    total = 0
    for r in c["compress_ratios"][:c["num_hidden_layers"]]:
        if r:
            slots = 2 if r == 4 else 1
            total += 2 * r * slots * hd * 4 + (2 * r * slots * di * 4 if r == 4 else 0)
    return total


@pytest.mark.parametrize("model_id", list(PATHS))
def test_kv_bytes_per_request_equal(model_id):
    spec, model = specs.model(model_id), aic(model_id)
    fixed = compressor_buffers(spec) if model_id.startswith("deepseek-v4") else 0
    state = model._kda_state_bytes_per_request() if model_id == "kimi-k3" else 0
    for tokens in (1, 127, 4096, 131_072, 1_048_576):
        ours = kv.request_kv_bytes(spec, tokens, AIC_KV[model_id], state_dtype="fp32")
        ours_state = kv.kv_breakdown(spec, tokens, AIC_KV[model_id], state_dtype="fp32").get("KDA state", 0)
        assert model.get_kvcache_bytes_per_sequence(tokens) == ours - ours_state + state + fixed


def test_per_token_slopes_equal():
    assert kv.kv_bytes_per_token("deepseek-v3", PLAIN_FP8) == aic("deepseek-v3").get_kvcache_elements_per_token()
    assert kv.kv_bytes_per_token("kimi-k3", "bf16") == 2 * aic("kimi-k3").get_kvcache_elements_per_token()
    for m in ("deepseek-v4-pro", "deepseek-v4-flash", "deepseek-v3.2"):
        model, n = aic(m), 1 << 20
        slope = (model.get_kvcache_bytes_per_sequence(n + 512) - model.get_kvcache_bytes_per_sequence(n)) / 512
        assert kv.kv_bytes_per_token(m, AIC_KV[m]) == slope


def test_kda_state_is_five_fp32_slots():
    """AIConfigurator charges five state slots per request (its sglang radix-cache proxy); the book one."""
    ours = kv.kv_breakdown("kimi-k3", 0, "bf16", state_dtype="fp32")["KDA state"]
    assert aic("kimi-k3")._kda_state_bytes_per_request() == 5 * ours
    assert aic("kimi-k3", ep=8, tp=8)._kda_state_bytes_per_request() == 5 * ours / 8


def _aic_weights(model):
    ops = [(op._name, op.get_weights()) for op in model.context_ops]
    routed = sum(w for n, w in ops if n.endswith("_moe"))
    return routed, sum(w for _, w in ops) - routed


def _routed_unscaled(model_id, ep, moe_layers=None):
    counts = params.param_counts(model_id)
    e = counts.component("routed experts")
    experts, layers = weights.moe_shape(counts, specs.model(model_id))
    bits = weights.WEIGHT_FORMATS[weights.shipped_formats(model_id)["routed_experts"]].bits
    return e.params / layers * (moe_layers or layers) / ep * bits / 8


@pytest.mark.parametrize("model_id", list(PATHS))
@pytest.mark.parametrize("ep", EP_SIZES)
def test_routed_expert_bytes_per_gpu_equal(model_id, ep):
    """Exact, once scales are dropped (AIConfigurator prices 4-bit and FP8 weights without them) and, for
    V3/V3.2, every one of the 61 layers is taken as MoE (AIConfigurator does not model the 3 dense ones)."""
    moe_layers = specs.model(model_id).layers if model_id in ("deepseek-v3", "deepseek-v3.2") else None
    routed, _ = _aic_weights(aic(model_id, ep))
    assert routed == pytest.approx(_routed_unscaled(model_id, ep, moe_layers), rel=1e-12)


def other_weights_under_aic_conventions(spec):
    """The book's non-expert bytes per GPU (attention DP) of an MLA, DSA, V4 or KDA model, moved to
    AIConfigurator's conventions term by term; each term is a row of specs/aiconfigurator.yaml."""
    spec = specs.model(spec) if isinstance(spec, str) else spec
    counts, c, family = params.param_counts(spec), spec.raw["config"], spec.raw["family"]
    fmts = weights.shipped_formats(spec)
    b = weights.weight_bytes(spec)
    other = sum(v for g, v in b.items() if g != "routed_experts") - b["norms"] - b.get("residual", 0) * (family == "kimi_linear")
    experts, moe_layers = weights.moe_shape(counts, spec)
    other -= 2 * experts * moe_layers                        # router selection bias: not counted
    if "fp8" in fmts.values():                               # FP8 block scales: not counted
        fp8_params = sum(n for g, n in counts.by_group().items() if fmts[g] == "fp8" and g != "routed_experts")
        other -= weights.WEIGHT_FORMATS["fp8"].bytes(fp8_params) - fp8_params
    if family == "deepseek_v4":
        hd, h, L = c["head_dim"], c["num_attention_heads"], c["num_hidden_layers"]
        other += c["o_lora_rank"] * h * hd * L               # grouped o_a projection priced in BF16, not FP8
        other += 2 * counts.component("mHC residual streams").params - 2 * c["hc_mult"] * (c["hc_mult"] * c["hidden_size"] + 1)
    width = {g: weights.WEIGHT_FORMATS[f].bits / 8 for g, f in fmts.items()}    # bytes a weight, no scales
    if family in ("mla", "mla+dsa"):                         # dense layers modelled as MoE layers
        dense = c["first_k_dense_replace"]
        other -= counts.component("dense FFN").params * width["dense_ffn"]
        other += dense * counts.component("shared experts").params / moe_layers * width["shared_experts"]
        other += dense * 2 * experts * c["hidden_size"]
    if family == "mla+dsa":                                  # indexer key projection: not counted
        other -= c["num_hidden_layers"] * c["hidden_size"] * c["index_head_dim"] * width["attention"]
    if family == "kimi_linear":
        kda_extras = len(c["linear_attn_config.kda_layers"]) * (3 * 4 * 96 * 128 + 96 + 96 * 128)
        other -= 2 * kda_extras                               # short convs, A_log, dt_bias: not counted
    return other


@pytest.mark.parametrize("model_id", list(PATHS))
def test_other_weights_per_gpu_within_a_quarter_percent(model_id):
    _, theirs = _aic_weights(aic(model_id, 8))
    assert other_weights_under_aic_conventions(model_id) == pytest.approx(theirs, rel=2.5e-3)


def test_the_differences_table_is_complete_data():
    import yaml
    from importlib.resources import files
    rows = yaml.safe_load((files("twopaths.specs") / "aiconfigurator.yaml").read_text())
    assert all(set(r) == {"topic", "aiconfigurator", "book", "why", "where"} for r in rows)
    assert len({r["topic"] for r in rows}) == len(rows)


# --- the layouts the book's plans choose, against AIConfigurator's model of the same layout ---------

def _plan_layouts():
    """Every (model, gpu, placement) a headline plan or smallest valid unit uses under the book's
    serving assumptions, K3 and V4-Pro on H200 and B300."""
    a, out = assumptions(), set()
    for m in ("kimi-k3", "deepseek-v4-pro"):
        for g in ("h200", "b300"):
            for rho in (0.1, 0.25, 0.5):
                p = fleet.plan(m, g, a, fleet.workload(rho=rho))
                out |= {(m, p.placement), (m, p.prefill.unit)}
    return sorted(out, key=lambda x: (x[0], x[1].ep, x[1].attention_tp))


LAYOUTS = _plan_layouts()


def _ids(case):
    return f"{case[0]}-{case[1].name}".replace(", ", "-").replace(" ", "")


@pytest.mark.parametrize("case", LAYOUTS, ids=_ids)
def test_plan_layout_experts_per_gpu_equal(case):
    model_id, p = case
    routed, _ = _aic_weights(aic(model_id, p.ep, p.attention_tp))
    assert routed == pytest.approx(_routed_unscaled(model_id, p.ep), rel=1e-12)


def _tp_savings(model_id, ep, tp):
    """Non-expert bytes per GPU that attention TP removes, the book's and AIConfigurator's."""
    ours = weights.weights_per_gpu(model_id, ep).other_bytes - weights.weights_per_gpu(model_id, ep, tp=tp).other_bytes
    theirs = _aic_weights(aic(model_id, ep))[1] - _aic_weights(aic(model_id, ep, tp))[1]
    return ours, theirs


V4_TP = [("deepseek-v4-pro", Placement(64, tp)) for tp in (2, 8)]     # V4-Pro's plans choose DP


@pytest.mark.parametrize("case", [c for c in LAYOUTS if c[1].attention_tp > 1] + V4_TP, ids=_ids)
def test_plan_layout_tp_split_agrees(case):
    """What TP takes off each GPU, once AIConfigurator's choices are applied: it splits the shared
    experts by TP (SGLang's DeepEP path runs them unsplit; the book follows SGLang). K3: it also
    splits the embedding, which SGLang's DP attention keeps whole, and keeps KDA's beta projection
    (d -> H, one value per head) whole; equal within 0.05%. V4-Pro: it prices o_a in BF16; within 2%."""
    model_id, p = case
    ours, theirs = _tp_savings(model_id, p.ep, p.attention_tp)
    c, keep = specs.model(model_id).raw["config"], 1 - 1 / p.attention_tp
    b = weights.weight_bytes(model_id)
    ours += b["shared_experts"] * keep
    if model_id == "kimi-k3":
        ours += b["embedding"] * keep
        ours -= len(c["linear_attn_config.kda_layers"]) * c["hidden_size"] * 96 * 2 * keep
        assert ours == pytest.approx(theirs, rel=5e-4)
    else:
        o_a = c["o_lora_rank"] * c["num_attention_heads"] * c["head_dim"] * c["num_hidden_layers"]
        ours += (2 * o_a - weights.WEIGHT_FORMATS["fp8"].bytes(o_a)) * keep
        assert ours == pytest.approx(theirs, rel=2e-2)


@pytest.mark.parametrize("tp", [1, 2, 4, 8])
def test_cache_per_rank_under_tp(tp):
    """Per rank of an attention TP group, AIConfigurator and the book split the same cache: K3's KDA
    state by heads (AIConfigurator's five FP32 slots against the book's one), its MLA latent not at
    all; V4-Pro's whole cache not at all."""
    a, t = assumptions(state_dtype="fp32"), 500_000
    kda = kv.kv_breakdown("kimi-k3", t, "bf16", state_dtype="fp32")["KDA state"]
    assert aic("kimi-k3", 8 * tp, tp).get_kvcache_bytes_per_sequence(t) == \
        pytest.approx(request_share("kimi-k3", t, tp, a) + 4 * kda / tp, rel=1e-12)
    v4 = aic("deepseek-v4-pro", 8 * tp, tp).get_kvcache_bytes_per_sequence(t)
    assert v4 == aic("deepseek-v4-pro", 8, 1).get_kvcache_bytes_per_sequence(t)
    assert request_share("deepseek-v4-pro", t, tp, a) == request_share("deepseek-v4-pro", t, 1, a)

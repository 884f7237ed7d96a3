"""No plan asks a decode unit to hold more than its GPUs have, by a memory model written here from
the configs and owing nothing to the planner (calc.placement, calc.weights, calc.kv).

The model is a floor, not a copy: every routed expert is stored at least once in the unit, each
attention group keeps its own embedding and output head, and every resident request's cache sits
somewhere in its attention group, in at least one byte a value under FP8 and two under BF16. The
unit's GPUs must offer that much. So a planner that drops the experts, the cache, a layer kind or
a request factor, or counts a unit's room as one GPU's, fails; replication the floor does not
model (the attention weights, an MLA latent on every TP rank, the reserve) is slack it allows."""

import pytest
from hypothesis import given, settings, strategies as st

from twopaths import specs
from twopaths.calc import fleet
from twopaths.specs import BOOK_MODELS, gpu as gpu_spec
from twopaths.specs.serving import assumptions, weight_scenarios

BOOK = assumptions()
FAST = settings(max_examples=60, deadline=None)


def config(model: str) -> dict:
    return specs.model(model).config


def routed_expert_params(model: str) -> int:
    """Layers with routed experts x experts x (gate, up, down) x the expert's in and out dims."""
    c = config(model)
    experts = c.get("n_routed_experts", c.get("num_experts"))
    d_in = c.get("routed_expert_hidden_size", c["hidden_size"])      # K3's latent MoE runs at 3,584
    return (c["num_hidden_layers"] - c.get("first_k_dense_replace", 0)) * experts * 3 * d_in \
        * c["moe_intermediate_size"]


def expert_bytes_per_param(model: str, weights: str) -> float:
    """The fewest bytes a routed-expert parameter takes: 4-bit as K3 and V4 ship them, else 8-bit."""
    four_bit = model == "kimi-k3" or config(model).get("expert_dtype") == "fp4"
    return 0.5 if four_bit and weights != "fp8" else 1.0


def embedding_bytes(model: str) -> int:
    c = config(model)
    return c["vocab_size"] * c["hidden_size"] * (1 if c["tie_word_embeddings"] else 2) * 2   # BF16


def cache_floor(model: str, tokens: int, kv_dtype: str) -> float:
    """One request's cache, at least: entries x values x (2 B in BF16, 1 B in FP8), FP8 indexer keys."""
    c, b = config(model), 2 if kv_dtype == "bf16" else 1
    if model == "kimi-k3":            # 24 MLA layers of latent + rope key; 69 KDA states of 96 heads
        mla = len(c["linear_attn_config.full_attn_layers"])
        kda = len(c["linear_attn_config.kda_layers"])
        heads, dim = c["linear_attn_config.num_heads"], c["linear_attn_config.head_dim"]
        return mla * tokens * (c["kv_lora_rank"] + c["qk_rope_head_dim"]) * b + kda * heads * dim * dim * 2
    if "compress_ratios" in c:        # V4: a 128-token window in every layer, compressed entries per ratio
        ratios = c["compress_ratios"][: c["num_hidden_layers"]]
        entries = len(ratios) * min(tokens, c["sliding_window"]) + sum(tokens // r for r in ratios if r)
        keys = sum(tokens // r for r in ratios if r == 4) * c["index_head_dim"]    # CSA's indexer
        return entries * c["head_dim"] * b + keys
    latent = c["num_hidden_layers"] * tokens * (c["kv_lora_rank"] + c["qk_rope_head_dim"]) * b
    keys = c["num_hidden_layers"] * tokens * c["index_head_dim"] if "index_head_dim" in c else 0   # DSA
    return latent + keys


def test_the_floor_by_hand():
    # K3: 92 MoE layers x 896 experts x 3 x 3,584 x 3,072; V3: 58 x 256 x 3 x 7,168 x 2,048
    assert routed_expert_params("kimi-k3") == 92 * 896 * 3 * 3584 * 3072
    assert routed_expert_params("deepseek-v3") == 58 * 256 * 3 * 7168 * 2048
    # V4-Pro at 1,000 tokens: 61 windows of 128, 30 CSA layers of 250 entries, 31 HCA layers of 7
    assert cache_floor("deepseek-v4-pro", 1000, "bf16") == (61 * 128 + 30 * 250 + 31 * 7) * 512 * 2 \
        + 30 * 250 * 128
    assert cache_floor("deepseek-v3", 10, "fp8") == 61 * 10 * 576


@FAST
@given(model=st.sampled_from(BOOK_MODELS), gpu=st.sampled_from(["h100", "h200", "b200", "b300"]),
       context=st.integers(1_000, 2_000_000), concurrency=st.integers(1, 100_000), rho=st.floats(0.01, 1.0),
       fmt=st.sampled_from(list(weight_scenarios())), kv_dtype=st.sampled_from(["bf16", "fp8"]),
       capacity=st.sampled_from(["device", "nominal"]), usable=st.floats(0.5, 1.0))
def test_a_unit_holds_at_least_its_experts_heads_and_caches(model, gpu, context, concurrency, rho, fmt,
                                                            kv_dtype, capacity, usable):
    a = BOOK.but(weights=fmt, kv_dtype=kv_dtype, capacity=capacity, usable_fraction=usable)
    try:
        p = fleet.plan(model, gpu, a, fleet.Workload(concurrency, context, rho))
    except fleet.NoValidPlan:
        return
    g = gpu_spec(gpu)
    room = p.placement.gpus * usable * (g.device_bytes if capacity == "device" else g.hbm_bytes)
    floor = (routed_expert_params(model) * expert_bytes_per_param(model, fmt)
             + p.placement.attention_groups * embedding_bytes(model)
             + p.requests_per_unit * cache_floor(model, context, kv_dtype))
    assert p.requests_per_unit >= 1 and floor <= room, (p.placement.name, floor / room)


@pytest.mark.parametrize("model", BOOK_MODELS)
def test_the_floor_is_near_what_the_planner_holds(model):
    """The floor is tight enough to bite: on an H200 at 500K tokens it is at least half of the room
    the planner fills (0.9 of each device): 55% for K3, whose KDA projections it leaves out, and
    71-85% for the DeepSeek models. Dropping the cache or the experts takes it far below."""
    a = BOOK.but(usable_fraction=0.9)
    p = fleet.plan(model, "h200", a)
    floor = (routed_expert_params(model) * expert_bytes_per_param(model, a.weights)
             + p.placement.attention_groups * embedding_bytes(model)
             + p.requests_per_unit * cache_floor(model, 500_000, a.kv_dtype))
    assert floor >= 0.5 * p.placement.gpus * 0.9 * gpu_spec("h200").device_bytes

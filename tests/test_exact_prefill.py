"""Exact values of the prefill bounds (``calc.prefill``) that the hand-written mutants of
tools/hand-mutants/calc/prefill.yaml must change. Qwen2.5-72B keeps the arithmetic short: 72.7B
activated parameters and 80 GQA layers of 64 query heads of 128 dims, so a prompt token at context
T spends 80 x 2 x 64 x T x (128 + 128) FLOP in attention, the same in prefill as in decode. An
H200 peaks at 989 TFLOP/s in BF16 and 1,979 in FP8. The plans are stand-ins carrying only what
the functions read, so the unit's GPUs and attention TP are chosen here."""

from types import SimpleNamespace

import pytest

from twopaths.calc import prefill
from twopaths.calc.placement import Placement

QWEN = "qwen-2.5-72b"
ACTIVE = 72.7e9
BF16, FP8 = 989e12, 1979e12


def attention(context: int) -> float:
    return 80 * 2 * 64 * context * (128 + 128)      # Qwen2.5-72B, FLOP a prompt token


def stand_in(unit: Placement, context: int = 1000):
    return SimpleNamespace(model=QWEN, gpu="h200", assumptions=SimpleNamespace(inputs="public"),
                           prefill=SimpleNamespace(unit=unit), work=SimpleNamespace(context=context))


def test_the_bound_takes_the_dtypes_peak_and_the_efficiency():
    # K3's 104B activated, 2,000 tokens over 16 GPUs at half the BF16 peak
    got = prefill.ttft_bound("kimi-k3", "h200", 2000, 16, dtype="bf16", efficiency=0.5)
    assert got == pytest.approx(2 * 104e9 * 2000 / (16 * BF16 * 0.5))      # 0.0526 s
    assert prefill.ttft_bound("kimi-k3", "h200", 2000, 16) == pytest.approx(2 * 104e9 * 2000 / (16 * FP8))


def test_a_public_plan_prices_its_own_models_activated_parameters():
    # Qwen has no stated figure in the article: its config's 72.7B over 8 GPUs at FP8 peak
    got = prefill.plan_ttft(stand_in(Placement(8, 8, routed=False)), 4000)
    assert got == pytest.approx(2 * ACTIVE * 4000 / (8 * FP8))             # 0.0367 s


def test_a_turn_longer_than_its_context_is_the_whole_context():
    # 2,000 new tokens of a 1,000-token session: the pass is the context, nothing cached
    per_token = 2 * ACTIVE + attention(1000)
    assert prefill.prompt_flops_per_token(QWEN, 1000, new_tokens=2000) == pytest.approx(per_token)


def test_a_gpu_sustains_prompt_tokens_at_its_bf16_peak():
    per_token = 2 * ACTIVE + attention(1000)                              # 148.0 GFLOP
    got = prefill.tokens_per_s_per_gpu(QWEN, "h200", 1000, mfu=0.4, new_tokens=500)
    assert got == pytest.approx(0.4 * BF16 / per_token)                   # 2,672 tokens/s


def test_a_cached_turns_attention_runs_on_one_attention_group():
    # a unit of 8 GPUs in 4 groups of TP2; a turn of 3,000 tokens on a 1,000-token context is
    # 1,000 new tokens: their weights over the 8 GPUs, their attention over the group's 2, at BF16
    unit = Placement(8, 2, routed=False)
    weights, attn = 2 * ACTIVE * 1000, 1000 * attention(1000)
    got = prefill.cached_turn_ttft(stand_in(unit), 3000)
    assert got == pytest.approx(weights / (8 * BF16) + attn / (2 * BF16))    # 0.0197 s

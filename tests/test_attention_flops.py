"""Attention FLOPs and bytes per decoded token: the formulas on the public configs, the entry counts
against what the toy layers let a query see, and bad input."""

import pytest
import torch

from twopaths.calc import attention_flops as af
from twopaths.layers.csa_hca import CSA, HCA
from twopaths.layers.dsa import DSA
from twopaths.layers.window import WindowAttention, window_mask

M = 1_000_000


def test_layer_plans_follow_the_configs():
    assert [(g.kind, g.layers) for g in af.attention_layers("deepseek-v4-pro")] == [("csa", 30), ("hca", 31)]
    assert [(g.kind, g.layers) for g in af.attention_layers("deepseek-v4-flash")] == [("window", 2), ("csa", 21), ("hca", 20)]
    assert [(g.kind, g.topk) for g in af.attention_layers("deepseek-v3.2")] == [("dsa", 2048)]
    assert [g.kind for g in af.attention_layers("deepseek-v3")] == ["mla"]


@pytest.mark.parametrize("T", [1, 100, 5_000, M])
def test_flops_by_hand(T):
    dsa = 61 * (2 * 128 * min(T, 2048) * (576 + 512) + 2 * 64 * 128 * T)
    assert af.attention_flops("deepseek-v3.2", T) == dsa
    assert af.attention_flops("deepseek-v3", T) == 61 * 2 * 128 * T * (576 + 512)
    near = min(T, 128)
    csa = 2 * 128 * (near + min(T // 4, 1024)) * 1024 + 2 * 64 * 128 * (T // 4)
    hca = 2 * 128 * (near + T // 128) * 1024
    assert af.attention_flops("deepseek-v4-pro", T) == 30 * csa + 31 * hca
    assert af.flops_per_token("deepseek-v4-pro", T) == af.weight_flops("deepseek-v4-pro") + 30 * csa + 31 * hca


def test_bytes_by_hand():
    # FP8: V3.2 entries 656 B, V4 entries 584 B, indexer keys 132 B (the layouts kv.py sizes)
    assert af.bytes_read_per_token("deepseek-v3.2", M, "fp8") == 61 * (2048 * 656 + M * 132)
    v4 = 30 * ((128 + 1024) * 584 + (M // 4) * 132) + 31 * (128 + M // 128) * 584
    assert af.bytes_read_per_token("deepseek-v4-pro", M, "fp8") == v4


def test_sparse_paths_grow_slower_than_dense():
    for T in (10_000, 100_000, M):
        assert af.attention_flops("deepseek-v4-pro", T) < af.attention_flops("deepseek-v3.2", T) < af.attention_flops("deepseek-v3", T)


def _seen_by_last_query(layer, T):
    """How many keys (raw and compressed) the toy layer lets its last query attend to."""
    x, pos = torch.randn(1, T, 32), torch.arange(T)
    with torch.no_grad():
        if isinstance(layer, DSA):
            return int((layer.indexer(x, layer.q_norm(layer.wq_a(x)), pos)[0, -1] >= 0).sum())
        raw = int(window_mask(pos, pos, layer.window)[-1].sum())
        extra = layer.compressed(x, layer.q_norm(layer.wq_a(x)), pos, None)
        return raw + (0 if extra is None else int(extra[1][0, -1].sum()))


@pytest.mark.parametrize("T", [3, 9, 33, 70])
def test_entry_counts_are_what_the_toy_layers_attend(T):
    kw = dict(heads=2, head_dim=16, rope_dim=4, window=8)
    cases = [(WindowAttention(32, **kw), af.AttentionLayers("window", 1, 2, 16, 16, 4, window=8)),
             (WindowAttention(32, **{**kw, "window": None}), af.AttentionLayers("mla", 1, 2, 16, 16, 4)),
             (CSA(32, 4, topk=5, index_dim=8, **kw), af.AttentionLayers("csa", 1, 2, 16, 16, 4, 8, 4, 5, 4, 8)),
             (HCA(32, 8, **kw), af.AttentionLayers("hca", 1, 2, 16, 16, 4, 8, 8)),
             (DSA(32, topk=6, rope_dim=4, index_dim=8), af.AttentionLayers("dsa", 1, 4, 68, 64, 4, topk=6))]
    for layer, group in cases:
        assert _seen_by_last_query(layer, T) == group.attended(T), (group.kind, T)


def test_bad_input(raises_param):
    raises_param("model", af.attention_layers, "qwen-2.5-72b")
    raises_param("tokens", af.attention_flops, "deepseek-v3.2", -1)


def test_k3_counts_its_mla_layers_and_a_fixed_kda_cost():
    """K3: 24 MLA layers over every token (96 heads, 576 + 512 absorbed, 192 + 128 un-absorbed in
    prefill) and 69 KDA layers at three 128 x 128 products per head, whatever the context."""
    t = 500_000
    mla_decode = 24 * 2 * 96 * t * (576 + 512)
    mla_prefill = 24 * 2 * 96 * t * (192 + 128)
    kda = 69 * 2 * 3 * 96 * 128 * 128
    assert af.attention_flops("kimi-k3", t) == mla_decode + kda
    assert af.attention_flops("kimi-k3", t, prefill=True) == mla_prefill + kda
    assert af.attention_flops("kimi-k3", 1) - kda == 24 * 2 * 96 * (576 + 512)


def test_prefill_form_changes_only_mla():
    """V4's layers share one K=V head: no un-absorbed form, so prefill costs what decode does."""
    assert af.attention_flops("deepseek-v4-pro", 65_536, prefill=True) == af.attention_flops("deepseek-v4-pro", 65_536)
    assert af.attention_flops("deepseek-v3", 4096, prefill=True) < af.attention_flops("deepseek-v3", 4096)

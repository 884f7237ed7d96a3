"""The KV compressor: pooling as the formula says, streaming equals one shot, what it keeps, bad input.
(Its entries against transformers' compressors are in test_csa_hca.py.)"""

import math

import pytest
import torch

from twopaths.layers.compressor import KVCompressor, pool


def test_equal_gates_give_the_window_mean():
    kv = torch.randn(2, 12, 5)
    torch.testing.assert_close(pool(kv, torch.zeros_like(kv), 4, False), kv.view(2, 3, 4, 5).mean(2))


def test_overlap_pools_previous_first_half_with_current_second_half():
    torch.manual_seed(0)
    m, d = 4, 3
    kv, gate = torch.randn(1, 3 * m, 2 * d), torch.randn(1, 3 * m, 2 * d)
    got = pool(kv, gate, m, True)
    for w in range(3):
        cur = slice(w * m, (w + 1) * m)
        slots_kv, slots_gate = kv[0, cur, d:], gate[0, cur, d:]
        if w:                                     # window 0 has no previous window
            prev = slice((w - 1) * m, w * m)
            slots_kv = torch.cat([kv[0, prev, :d], slots_kv])
            slots_gate = torch.cat([gate[0, prev, :d], slots_gate])
        expected = (torch.softmax(slots_gate, dim=0) * slots_kv).sum(0)     # per channel, over slots
        torch.testing.assert_close(got[0, w], expected)


@pytest.mark.parametrize("overlap", [False, True])
@pytest.mark.parametrize("chunk", [1, 3, 5])
def test_streaming_equals_one_shot_and_keeps_one_entry_per_window(overlap, chunk):
    torch.manual_seed(chunk)
    comp = KVCompressor(16, 8, 4, overlap, rope_dim=4)
    with torch.no_grad():
        comp.slot_bias.normal_()
        x = torch.randn(2, 23, 16)
        full = comp(x)
        state = comp.new_state()
        for a in range(0, 23, chunk):
            streamed = comp(x[:, a:a + chunk], state)
    assert full.shape == (2, 5, 8)
    torch.testing.assert_close(streamed, full, rtol=0, atol=1e-6)
    assert state.nbytes == 2 * 5 * 8 * 4                   # B x floor(23 / 4) x dim x fp32
    open_tokens = 23 - 20
    assert state.buffer_nbytes == 2 * open_tokens * comp.wkv.out_features * 4 * 2 + (2 * 4 * 8 * 4 * 2 if overlap else 0)


def test_bad_input(raises_param):
    raises_param("ratio", KVCompressor, 16, 8, 0, False)
    raises_param("rope_dim", KVCompressor, 16, 8, 4, False, rope_dim=10)


def test_slot_bias_norm_and_rope_position_by_hand():
    # d_model = dim = 2, ratio 2, no overlap, rope on both channels (one pair, frequency theta^0 = 1).
    # W_kv = I, W_z = 0 and the slot bias B = [0, ln 3]: the gate softmax weighs a window's tokens
    # 1/4 and 3/4. Each pooled entry is RMS-normalised, then rotated at its window's first token
    # position w * m: angle 0 for window 0 and 2 (radians) for window 1.
    c = KVCompressor(2, 2, 2, False, rope_dim=2)
    with torch.no_grad():
        c.wkv.weight.copy_(torch.eye(2))
        c.wgate.weight.zero_()
        c.slot_bias.copy_(torch.tensor([[0.0, 0.0], [math.log(3), math.log(3)]]))
    x = torch.tensor([[[1.0, 2.0], [3.0, -1.0], [0.0, 4.0], [2.0, 2.0]]])

    def normed(a, b):       # RMSNorm, eps 1e-6 inside the root, weight 1
        r = math.sqrt((a * a + b * b) / 2 + 1e-6)
        return a / r, b / r

    a0, b0 = normed(0.25 * 1 + 0.75 * 3, 0.25 * 2 + 0.75 * -1)          # (2.5, 0.25)
    a1, b1 = normed(0.25 * 0 + 0.75 * 2, 0.25 * 4 + 0.75 * 2)           # (1.5, 2.5)
    c2, s2 = math.cos(2.0), math.sin(2.0)
    expected = torch.tensor([[[a0, b0], [a1 * c2 - b1 * s2, b1 * c2 + a1 * s2]]])
    torch.testing.assert_close(c(x), expected)

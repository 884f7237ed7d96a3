"""The KV compressor: pooling as the formula says, streaming equals one shot, what it keeps, bad input.
(Its entries against transformers' compressors are in test_csa_hca.py.)"""

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

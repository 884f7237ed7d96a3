"""CSA and HCA: V4's window attention plus compressed entries, all under one softmax with the sink.

- HCA (Heavily Compressed Attention, m = 128): non-overlapping 128:1 entries, every closed one
  read densely: query t sees entries w < floor((t + 1) / m).
- CSA (Compressed Sparse Attention, m = 4): overlapping 4:1 entries, of which the Lightning
  Indexer picks ``topk`` per query (one pick for all heads).

Both keep the raw sliding window of ``window`` tokens. The ratio must divide the window, so the
window always holds the tokens of the open, not yet compressed, block: every past token is seen
raw or inside an entry. Entries are rotated at their window's first position with the compress
RoPE base (160000 in V4; V4 also applies YaRN there, which a toy at short context leaves out).
"""

from __future__ import annotations

import torch

from ..errors import ParameterError, check_int
from .compressor import KVCompressor
from .indexer import LightningIndexer, gather_picks
from .window import AttentionCache, WindowAttention


class HCA(WindowAttention):
    """Window attention plus every closed ``ratio``:1 entry (non-overlapping windows)."""

    overlap = False

    def __init__(self, d_model: int, ratio: int = 128, *, window: int = 128, rope_theta: float = 160_000.0, **kw):
        super().__init__(d_model, window=check_int("window", window, minimum=1), rope_theta=rope_theta, **kw)
        check_int("ratio", ratio, minimum=1)
        if window % ratio:
            raise ParameterError("ratio", ratio, f"a divisor of the window ({window}), so the open block stays inside it")
        self.ratio = ratio
        self.compressor = KVCompressor(d_model, self.head_dim, ratio, self.overlap, self.rope_dim, rope_theta, self.eps)

    def new_cache(self) -> AttentionCache:
        return AttentionCache(self.window, compressor=self.compressor.new_state())

    def compressed(self, x, c_q, pos, cache):
        entries = self.compressor(x, None if cache is None else cache.compressor)   # [B, S, d]
        seen = torch.arange(entries.shape[1], device=x.device)[None, :] < ((pos + 1) // self.ratio)[:, None]
        return entries, seen[None].expand(x.shape[0], -1, -1)


class CSA(HCA):
    """Window attention plus the ``topk`` overlapping ``ratio``:1 entries the indexer picks."""

    overlap = True

    def __init__(self, d_model: int, ratio: int = 4, *, topk: int = 64, index_heads: int = 4, index_dim: int = 32,
                 **kw):
        super().__init__(d_model, ratio, **kw)
        self.indexer = LightningIndexer(d_model, self.wq_a.out_features, index_heads, index_dim, topk, ratio,
                                        self.rope_dim, self.rope_theta, self.eps)

    def new_cache(self) -> AttentionCache:
        cache = super().new_cache()
        cache.indexer = self.indexer.new_state()
        return cache

    def compressed(self, x, c_q, pos, cache):
        entries, _ = super().compressed(x, c_q, pos, cache)
        picks = self.indexer(x, c_q, pos, None if cache is None else cache.indexer)      # [B, T, topk]
        return gather_picks(entries, picks)

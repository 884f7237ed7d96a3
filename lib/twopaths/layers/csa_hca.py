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

from ..errors import ParameterError, check_int, check_real
from ..specs import CacheGroup
from .compressor import KVCompressor
from .indexer import LightningIndexer, causal_topk, distill_loss, gather_picks, selected, with_loss
from .window import AttentionCache, WindowAttention, window_mask


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

    def cache_groups(self) -> list[CacheGroup]:
        return super().cache_groups() + [CacheGroup("compressed", 1, {"ratio": self.ratio, "entry_dim": self.head_dim,
                                                                      "rope_dim": self.rope_dim})]

    def compressed(self, x, c_q, pos, cache):
        entries = self.compressor(x, None if cache is None else cache.compressor)   # [B, S, d]
        seen = torch.arange(entries.shape[1], device=x.device)[None, :] < ((pos + 1) // self.ratio)[:, None]
        return entries, seen[None].expand(x.shape[0], -1, -1)

    def _entry_attention(self, c_q, pos, entries, seen) -> torch.Tensor:
        logits = torch.einsum("bthd,bsd->bhts", self.queries(c_q, pos), entries) * self.head_dim ** -0.5
        p = torch.softmax(logits.masked_fill(~seen[:, None], float("-inf")), dim=-1).nan_to_num(0.0)
        return p.mean(1)

    def entry_probs(self, x: torch.Tensor) -> torch.Tensor:
        """Dense attention over the compressed entries alone, averaged over heads: [B, T, S], rows
        summing to 1 over what each query sees (0 where it sees none). CSA's indexer learns this."""
        pos = torch.arange(x.shape[1], device=x.device)
        c_q = self.q_norm(self.wq_a(x))
        return self._entry_attention(c_q, pos, *HCA.compressed(self, x, c_q, pos, None))


class CSA(HCA):
    """Window attention plus the ``topk`` overlapping ``ratio``:1 entries the indexer picks."""

    overlap = True

    def __init__(self, d_model: int, ratio: int = 4, *, topk: int = 64, index_heads: int = 4, index_dim: int = 32,
                 index_loss: float = 1.0, **kw):
        super().__init__(d_model, ratio, **kw)
        self.index_loss = check_real("index_loss", index_loss, minimum=0)
        self.indexer = LightningIndexer(d_model, self.wq_a.out_features, index_heads, index_dim, topk, ratio,
                                        self.rope_dim, self.rope_theta, self.eps)

    def new_cache(self) -> AttentionCache:
        cache = super().new_cache()
        cache.indexer = self.indexer.new_state()
        return cache

    def cache_groups(self) -> list[CacheGroup]:
        return super().cache_groups() + [CacheGroup("indexer", 1, {"ratio": self.ratio, "index_dim": self.indexer.dim})]

    def compressed(self, x, c_q, pos, cache):
        """The picked entries. Training, the indexer (fed detached inputs, as in V3.2) also learns to
        match the layer's dense attention over the entries (``index_loss`` weighs that KL)."""
        entries, seen = super().compressed(x, c_q, pos, cache)
        scores = self.indexer.scores(x.detach(), c_q.detach(), pos, None if cache is None else cache.indexer)
        visible = self.indexer.visible(pos)
        if self.training and torch.is_grad_enabled() and self.index_loss:
            target = self._entry_attention(c_q, pos, entries, seen).detach()
            entries = with_loss(entries, self.index_loss * distill_loss(scores, target, visible))
        return gather_picks(entries, causal_topk(scores, visible, self.indexer.topk))


@torch.no_grad()
def token_view(layer: WindowAttention, x: torch.Tensor) -> torch.Tensor:
    """Which past tokens each query of the first sequence in x [B, T, d_model] can see: [T, T] with
    2 = raw (the window), 1 = only pooled inside a compressed entry it attends to, 0 = not at all.
    A CSA entry w pools tokens [(w - 1) m, (w + 1) m) (two windows, overlapping); HCA's [w m, (w + 1) m)."""
    x = x[:1]
    T = x.shape[1]
    pos = torch.arange(T, device=x.device)
    view = torch.zeros(T, T, dtype=torch.uint8, device=x.device)
    if isinstance(layer, HCA):
        c_q = layer.q_norm(layer.wq_a(x))
        S = T // layer.ratio
        if isinstance(layer, CSA):
            attended = selected(layer.indexer(x, c_q, pos), S)[0]                  # [T, S]
        else:
            attended = torch.arange(S, device=x.device)[None, :] < (pos[:, None] + 1) // layer.ratio
        first = (torch.arange(S, device=x.device) - int(layer.overlap)) * layer.ratio
        covers = (pos[None, :] >= first[:, None]) & (pos[None, :] < first[:, None] + (1 + int(layer.overlap)) * layer.ratio)
        view[(attended.float() @ covers.float()) > 0] = 1
    view[window_mask(pos, pos, layer.window)] = 2
    return view

"""V3.2's DeepSeek Sparse Attention (DSA): a Lightning Indexer over every past token picks ``topk``
of them, and MLA attends to those only (V3.2 report; fla ``naive_dsa``).

The attention is MLA in its absorbed decode form: one shared key per token, the normalised latent
plus a rope part, with the latent doubling as the value (``[c | k_r]`` as key, ``c`` as value):

    c_s = RMSNorm(W_c x_s),  k_s = [c_s | RoPE_s(W_r x_s)],          one key of d_c + d_r per token
    q_h = [W_qc,h c_q | RoPE_t(W_qr,h c_q)],    c_q = RMSNorm(W_qa x_t)   (W_UK absorbed into W_qc)
    y_t = W_o [ sum_{s in topk(t)} softmax_s(q_h . k_s / sqrt(d_c + d_r)) c_s ]_h   (W_UV absorbed)

Its cache per token is MLA's: d_c + d_r values, plus the indexer's key. Top-k passes no gradient:
in training the indexer, fed detached inputs, learns to match the dense attention (V3.2's KL).
"""

from __future__ import annotations

import torch
from torch import nn

from ..errors import check_int, check_real
from ..specs import CacheGroup
from .indexer import LightningIndexer, causal_topk, distill_loss, gather_picks, with_loss
from .window import AttentionCache, attend, rope, window_mask


class DSA(nn.Module):
    """Absorbed MLA over the ``topk`` past tokens a token-level indexer picks; x [B, T, d_model]."""

    def __init__(self, d_model: int, heads: int = 4, latent_dim: int = 64, rope_dim: int = 16, q_rank: int | None = None,
                 topk: int = 64, index_heads: int = 4, index_dim: int = 32, rope_theta: float = 10_000.0,
                 index_loss: float = 1.0, eps: float = 1e-6):
        super().__init__()
        check_int("d_model", d_model, minimum=1)
        self.heads, self.latent_dim = check_int("heads", heads, minimum=1), check_int("latent_dim", latent_dim, minimum=1)
        self.rope_dim = check_int("rope_dim", rope_dim, minimum=0)
        self.rope_theta = check_real("rope_theta", rope_theta, minimum=0, open_min=True)
        q_rank = check_int("q_rank", q_rank if q_rank is not None else d_model, minimum=1)
        self.wq_a, self.q_norm = nn.Linear(d_model, q_rank, bias=False), nn.RMSNorm(q_rank, eps=eps)
        self.wq_b = nn.Linear(q_rank, heads * (latent_dim + rope_dim), bias=False)
        self.wc, self.c_norm = nn.Linear(d_model, latent_dim, bias=False), nn.RMSNorm(latent_dim, eps=eps)
        self.wr = nn.Linear(d_model, rope_dim, bias=False)
        self.wo = nn.Linear(heads * latent_dim, d_model, bias=False)
        self.indexer = LightningIndexer(d_model, q_rank, index_heads, index_dim, topk, 1, rope_dim, rope_theta, eps,
                                        variant="v3.2")
        self.index_loss = check_real("index_loss", index_loss, minimum=0)   # weight of its distillation, training

    def new_cache(self) -> AttentionCache:
        return AttentionCache(None, indexer=self.indexer.new_state())

    def cache_groups(self) -> list[CacheGroup]:
        return [CacheGroup("mla", 1, {"kv_lora_rank": self.latent_dim, "rope_dim": self.rope_dim}),
                CacheGroup("indexer", 1, {"ratio": 1, "index_dim": self.indexer.dim})]

    def forward(self, x: torch.Tensor, cache: AttentionCache | None = None) -> torch.Tensor:
        B, T, _ = x.shape
        start = 0 if cache is None else cache.length
        pos = torch.arange(start, start + T, device=x.device)
        c_q = self.q_norm(self.wq_a(x))
        q = rope(self.wq_b(c_q).view(B, T, self.heads, -1), pos, self.rope_theta, self.rope_dim)
        k = torch.cat([self.c_norm(self.wc(x)), rope(self.wr(x), pos, self.rope_theta, self.rope_dim)], -1)
        if cache is not None:
            k = cache.raw = k if cache.raw is None else torch.cat([cache.raw, k], 1)
            cache.length += T
        scale = (self.latent_dim + self.rope_dim) ** -0.5
        scores = self.indexer.scores(x.detach(), c_q.detach(), pos, None if cache is None else cache.indexer)
        visible = self.indexer.visible(pos)
        if self.training and torch.is_grad_enabled() and self.index_loss:     # the indexer learns dense attention
            causal = window_mask(pos, torch.arange(k.shape[1], device=x.device), None)
            logits = torch.einsum("bthd,bsd->bhts", q, k).mul(scale).masked_fill(~causal, float("-inf"))
            k = with_loss(k, self.index_loss * distill_loss(scores, torch.softmax(logits, -1).mean(1).detach(), visible))
        k, seen = gather_picks(k, causal_topk(scores, visible, self.indexer.topk))
        k = k[:, :, None]                                                                 # one shared head
        o = attend(q, k, k[..., :self.latent_dim], seen, scale)
        return self.wo(o.flatten(2))

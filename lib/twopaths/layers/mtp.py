"""A toy decoder with a DeepSeek-V3-style multi-token-prediction (MTP) module.

The main model reads tokens t_0..t_i and gives a final hidden state h_i and p(t_{i+1}). The MTP
module (DeepSeek-V3 report, section 2.2) predicts one token further. At depth k it combines the
previous depth's state with the embedding of the token k steps ahead:

    h'_i = eh_proj([enorm(Emb(t_{i+k})), hnorm(h_i^{k-1})])     (2d -> d; this order is the checkpoint's)
    h_i^k = Block(h'_{0..i})                                    (one causal transformer block)
    logits = Head(norm(h_i^k))                                   (the main model's head, its own norm)

The embedding and the output head are the main model's own (shared, not copied). Trained with
depth 1, the module drafts t_{i+2}; applied again to its own output it drafts further, which is
how a server gets several drafts from one MTP layer.

Shapes: B sequences, T positions, d model width, V vocabulary.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from ..errors import ParameterError, check_int
from .ffn import FFN


class Block(nn.Module):
    """A pre-norm causal transformer block: self-attention then a SwiGLU FFN, each residual."""

    def __init__(self, d: int, heads: int, hidden: int):
        super().__init__()
        self.heads = heads
        self.attn_norm, self.ffn_norm = nn.RMSNorm(d), nn.RMSNorm(d)
        self.qkv, self.out = nn.Linear(d, 3 * d, bias=False), nn.Linear(d, d, bias=False)
        self.ffn = FFN(d, hidden, "swiglu")

    def forward(self, x: torch.Tensor) -> torch.Tensor:           # x: [B, T, d]
        B, T, d = x.shape
        q, k, v = self.qkv(self.attn_norm(x)).view(B, T, 3, self.heads, d // self.heads).unbind(2)
        a = F.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), is_causal=True)
        x = x + self.out(a.transpose(1, 2).reshape(B, T, d))
        return x + self.ffn(self.ffn_norm(x))


class TinyLM(nn.Module):
    """Embedding, ``layers`` blocks, final norm, head; learned absolute positions up to ``max_len``."""

    def __init__(self, vocab: int, d: int = 64, layers: int = 2, heads: int = 4, hidden: int = 128,
                 max_len: int = 256):
        super().__init__()
        for name, value in (("vocab", vocab), ("d", d), ("layers", layers), ("heads", heads),
                            ("hidden", hidden), ("max_len", max_len)):
            check_int(name, value, minimum=1)
        if d % heads:
            raise ParameterError("heads", heads, f"a divisor of the width d = {d}")
        self.max_len = max_len
        self.embed, self.pos = nn.Embedding(vocab, d), nn.Embedding(max_len, d)
        self.blocks = nn.ModuleList(Block(d, heads, hidden) for _ in range(layers))
        self.norm, self.head = nn.RMSNorm(d), nn.Linear(d, vocab, bias=False)

    def forward(self, tokens: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """tokens [B, T] -> (h [B, T, d] after the final norm, logits [B, T, V] for t_{i+1})."""
        T = tokens.shape[1]
        check_int("tokens", T, maximum=self.max_len)   # positions beyond the table: refuse, do not wrap
        x = self.embed(tokens) + self.pos(torch.arange(T, device=tokens.device))
        for block in self.blocks:
            x = block(x)
        h = self.norm(x)
        return h, self.head(h)


class MTPHead(nn.Module):
    """One MTP module on top of ``main``: the same embedding and head modules (shared weights)."""

    def __init__(self, main: TinyLM, heads: int = 4, hidden: int = 128):
        super().__init__()
        d = main.embed.embedding_dim
        self.embed, self.head = main.embed, main.head   # the same modules: one set of weights
        self.enorm, self.hnorm = nn.RMSNorm(d), nn.RMSNorm(d)
        self.eh_proj = nn.Linear(2 * d, d, bias=False)
        self.block = Block(d, heads, hidden)
        self.norm = nn.RMSNorm(d)

    def forward(self, h: torch.Tensor, ahead: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """h [B, T, d] (the previous depth's states) and ``ahead`` [B, T] (token k steps past each
        position) -> (h^k [B, T, d], logits [B, T, V] for the token k+1 steps past each position)."""
        assert h.shape[:2] == ahead.shape, (h.shape, ahead.shape)
        x = self.eh_proj(torch.cat([self.enorm(self.embed(ahead)), self.hnorm(h)], dim=-1))   # [B, T, d]
        hk = self.block(x)             # h already carries each position; the block adds no new ones
        return hk, self.head(self.norm(hk))


def mtp_loss(main: TinyLM, mtp: MTPHead, tokens: torch.Tensor, weight: float = 0.3) -> tuple[torch.Tensor, dict]:
    """Next-token loss plus ``weight`` times the depth-1 MTP loss (DeepSeek-V3 used 0.3, then 0.1).

    tokens [B, T]: the main model predicts t_{i+1} at i < T-1; the MTP module, given h_i and
    t_{i+1}, predicts t_{i+2} at i < T-2 (positions whose target lies past the sequence are left out).
    """
    h, logits = main(tokens)
    V = logits.shape[-1]
    main_ce = F.cross_entropy(logits[:, :-1].reshape(-1, V), tokens[:, 1:].reshape(-1))
    _, mtp_logits = mtp(h[:, :-2], tokens[:, 1:-1])
    mtp_ce = F.cross_entropy(mtp_logits.reshape(-1, V), tokens[:, 2:].reshape(-1))
    return main_ce + weight * mtp_ce, {"main": main_ce.item(), "mtp": mtp_ce.item()}

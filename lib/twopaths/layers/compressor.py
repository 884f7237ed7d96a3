"""V4's KV compressor: every ``ratio`` tokens become one entry, a per-channel softmax-gated pool.

For the tokens j of window w (V4 report §2.3.1-2.3.2; transformers ``DeepseekV4HCACompressor`` and
``DeepseekV4CSACompressor``):

    c_j = W_kv x_j,   z_j = W_z x_j + B[j mod m]           (B: a learned bias per slot)
    entry_w = RoPE_{w m}( RMSNorm( sum_j softmax_j(z_j) * c_j ) )     softmax over j, per channel

Non-overlapping (HCA, m = 128): j runs over the window's m tokens. Overlapping (CSA, m = 4): each
token projects to two halves (Ca, Cb) and j runs over 2m slots, the previous window's Ca and this
window's Cb, so windows are 2m wide with stride m (the first window has no previous one).
An entry exists once its window has closed: query t sees entries w < floor((t + 1) / m).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn

from ..errors import check_int
from .window import rope


def pool(kv: torch.Tensor, gate: torch.Tensor, ratio: int, overlap: bool,
         prev: tuple[torch.Tensor, torch.Tensor] | None = None) -> torch.Tensor:
    """Pool n closed windows: kv, gate [B, n * ratio, width] -> [B, n, dim] (before the norm).

    ``overlap``: width = 2 dim; slots are the previous window's first half (``prev`` = its
    (kv, gate) [B, ratio, dim] for the first window, or none) and this window's second half.
    """
    B, L, width = kv.shape
    n = L // ratio
    kv, gate = kv.view(B, n, ratio, width), gate.view(B, n, ratio, width)
    if overlap:
        d = width // 2
        first_kv = kv.new_zeros(B, 1, ratio, d) if prev is None else prev[0][:, None]
        first_gate = gate.new_full((B, 1, ratio, d), float("-inf")) if prev is None else prev[1][:, None]
        kv = torch.cat([torch.cat([first_kv, kv[:, :-1, :, :d]], 1), kv[..., d:]], dim=2)     # [B, n, 2m, d]
        gate = torch.cat([torch.cat([first_gate, gate[:, :-1, :, :d]], 1), gate[..., d:]], dim=2)
    return (kv * torch.softmax(gate.float(), dim=2).to(kv.dtype)).sum(dim=2)


@dataclass
class CompressorState:
    """A compressor's decode state: the entries emitted so far (the cache) and its working buffer."""

    ratio: int
    entries: torch.Tensor | None = None     # [B, W, dim]
    pending: tuple | None = None            # (kv, gate) of the open window's tokens, [B, < ratio, width]
    prev: tuple | None = None               # overlap: last closed window's first half (kv, gate) [B, ratio, dim]

    @property
    def count(self) -> int:
        return 0 if self.entries is None else self.entries.shape[1]

    @property
    def nbytes(self) -> int:
        return 0 if self.entries is None else self.entries.nbytes

    @property
    def buffer_nbytes(self) -> int:
        return sum(t.nbytes for pair in (self.pending, self.prev) if pair is not None for t in pair)


class KVCompressor(nn.Module):
    """Compress x [B, T, d_model] into entries [B, T // ratio, dim]; with a state, T new tokens at a
    time, returning every entry so far."""

    def __init__(self, d_model: int, dim: int, ratio: int, overlap: bool, rope_dim: int = 0,
                 rope_theta: float = 160_000.0, eps: float = 1e-6):
        super().__init__()
        self.ratio = check_int("ratio", ratio, minimum=1)
        self.dim, self.overlap = check_int("dim", dim, minimum=1), overlap
        self.rope_dim, self.rope_theta = check_int("rope_dim", rope_dim, minimum=0, maximum=dim), rope_theta
        width = 2 * dim if overlap else dim
        self.wkv = nn.Linear(d_model, width, bias=False)
        self.wgate = nn.Linear(d_model, width, bias=False)
        self.slot_bias = nn.Parameter(torch.zeros(ratio, width))
        self.norm = nn.RMSNorm(dim, eps=eps)

    def new_state(self) -> CompressorState:
        return CompressorState(self.ratio)

    def forward(self, x: torch.Tensor, state: CompressorState | None = None) -> torch.Tensor:
        state = state if state is not None else self.new_state()
        kv, gate = self.wkv(x), self.wgate(x)
        if state.pending is not None:       # the open window's tokens come first
            kv, gate = torch.cat([state.pending[0], kv], 1), torch.cat([state.pending[1], gate], 1)
        n = kv.shape[1] // self.ratio
        closed, state.pending = n * self.ratio, (kv[:, n * self.ratio:], gate[:, n * self.ratio:])
        if n:
            kv = kv[:, :closed]
            gate = (gate[:, :closed].view(x.shape[0], n, self.ratio, -1) + self.slot_bias).flatten(1, 2)
            pooled = self.norm(pool(kv, gate, self.ratio, self.overlap, state.prev))
            positions = (state.count + torch.arange(n, device=x.device)) * self.ratio
            new = rope(pooled, positions, self.rope_theta, self.rope_dim)
            state.entries = new if state.entries is None else torch.cat([state.entries, new], 1)
            if self.overlap:
                last = slice(closed - self.ratio, closed)
                state.prev = (kv[:, last, :self.dim], gate[:, last, :self.dim])
        if state.entries is None:
            state.entries = x.new_zeros(x.shape[0], 0, self.dim)
        return state.entries

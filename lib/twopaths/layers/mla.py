"""Multi-head Latent Attention (DeepSeek-V2/V3) and Kimi K3's Gated MLA.

Each token's keys and values come from one normalised latent c = RMSNorm(W_DKV x) of
``kv_lora_rank`` dims plus a ``qk_rope_dim``-dim key k_pe shared by every head. Per head h::

    k_h = [W_UK,h c ; k_pe]      v_h = W_UV,h c      score = (q_nope,h . W_UK,h c + q_pe,h . k_pe) * scale

The cache keeps only c and k_pe per token. Decoding can expand them into per-head keys and values
(the *naive* path) or fold W_UK into the query and W_UV after the weighted sum, so that every head
attends over the same (c, k_pe) of ``kv_lora_rank + qk_rope_dim`` dims: the *absorbed* path, MQA
with one shared key whose first ``kv_lora_rank`` dims double as the value. Both give the same output.

RoPE is DeepSeek's interleaved form (adjacent pairs rotate together). ``GatedMLA`` is K3's variant:
no rotation at all (NoPE; the rope dims are still produced and cached) and a sigmoid output gate
sigma(W_g x), elementwise per head and channel, before the output projection.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn

from ..errors import ParameterError, check_int, check_real


def rotate(x: torch.Tensor, positions: torch.Tensor, theta: float) -> torch.Tensor:
    """Interleaved RoPE: pair (x_2i, x_2i+1) at position p turns by p * theta^(-2i/d). x [..., T, d]."""
    d = x.shape[-1]
    inv_freq = theta ** (-torch.arange(0, d, 2, device=x.device, dtype=torch.float32) / d)
    angle = positions.float()[:, None] * inv_freq                  # [T, d/2]
    cos, sin = angle.cos(), angle.sin()
    even, odd = x[..., 0::2], x[..., 1::2]
    return torch.stack([even * cos - odd * sin, odd * cos + even * sin], -1).flatten(-2)


@dataclass
class MLACache:
    """Per request and layer: the normalised latent [B, T, kv_lora_rank] and the rope key [B, T, rope]."""

    latent: torch.Tensor
    rope: torch.Tensor

    @property
    def length(self) -> int:
        return self.latent.shape[1]

    @property
    def nbytes(self) -> int:
        return self.latent.nbytes + self.rope.nbytes

    def append(self, latent: torch.Tensor, rope: torch.Tensor) -> None:
        self.latent = torch.cat([self.latent, latent.detach().to(self.latent.dtype)], 1)
        self.rope = torch.cat([self.rope, rope.detach().to(self.rope.dtype)], 1)


class MLA(nn.Module):
    """Multi-head Latent Attention: [B, T, d_model] -> [B, T, d_model], causal."""

    def __init__(self, d_model: int, heads: int, kv_lora_rank: int, qk_nope_dim: int, qk_rope_dim: int,
                 v_dim: int, q_lora_rank: int | None = None, rope: bool = True, output_gate: bool = False,
                 rope_theta: float = 10_000.0, norm_eps: float = 1e-6):
        super().__init__()
        self.d_model = check_int("d_model", d_model, minimum=1)
        self.heads = check_int("heads", heads, minimum=1)
        self.rank = check_int("kv_lora_rank", kv_lora_rank, minimum=1)
        self.nope = check_int("qk_nope_dim", qk_nope_dim, minimum=1)
        self.rope_dim = check_int("qk_rope_dim", qk_rope_dim, minimum=0)
        if rope and self.rope_dim % 2:
            raise ParameterError("qk_rope_dim", qk_rope_dim, "an even number when rope=True")
        self.v_dim = check_int("v_dim", v_dim, minimum=1)
        self.rope, self.theta = bool(rope), check_real("rope_theta", rope_theta, minimum=0, open_min=True)
        self.scale = (self.nope + self.rope_dim) ** -0.5
        q_out = heads * (self.nope + self.rope_dim)
        if q_lora_rank is None:
            self.q_proj = nn.Linear(d_model, q_out, bias=False)
        else:   # K3 and DeepSeek-V3 compress the query through its own normalised latent
            rank = check_int("q_lora_rank", q_lora_rank, minimum=1)
            self.q_proj = nn.Sequential(nn.Linear(d_model, rank, bias=False), nn.RMSNorm(rank, eps=norm_eps),
                                        nn.Linear(rank, q_out, bias=False))
        self.kv_a = nn.Linear(d_model, kv_lora_rank + self.rope_dim, bias=False)   # W_DKV and the rope key
        self.kv_norm = nn.RMSNorm(kv_lora_rank, eps=norm_eps)
        self.kv_b = nn.Linear(kv_lora_rank, heads * (self.nope + v_dim), bias=False)   # [W_UK ; W_UV] per head
        self.gate = nn.Linear(d_model, heads * v_dim, bias=False) if output_gate else None
        self.o_proj = nn.Linear(heads * v_dim, d_model, bias=False)

    def new_cache(self, batch: int, dtype: torch.dtype = torch.float32, device=None) -> MLACache:
        return MLACache(torch.zeros(batch, 0, self.rank, dtype=dtype, device=device),
                        torch.zeros(batch, 0, self.rope_dim, dtype=dtype, device=device))

    def forward(self, x: torch.Tensor, cache: MLACache | None = None, absorbed: bool = False) -> torch.Tensor:
        """x [B, T, d_model]. With a cache, attend to what it holds plus x, and append x's entries."""
        if not isinstance(x, torch.Tensor) or x.dim() != 3 or x.shape[-1] != self.d_model:
            raise ParameterError("x", tuple(getattr(x, "shape", ())), f"a tensor [B, T, {self.d_model}]")
        B, T, _ = x.shape
        start = 0 if cache is None else cache.length
        pos = torch.arange(start, start + T, device=x.device)
        q = self.q_proj(x).unflatten(-1, (self.heads, self.nope + self.rope_dim))
        q_nope, q_pe = q.split([self.nope, self.rope_dim], -1)      # [B, T, H, nope], [B, T, H, rope]
        c, k_pe = self.kv_a(x).split([self.rank, self.rope_dim], -1)
        c = self.kv_norm(c)                                         # normalised before it is cached
        if self.rope:
            q_pe = rotate(q_pe.transpose(1, 2), pos, self.theta).transpose(1, 2)
            k_pe = rotate(k_pe, pos, self.theta)
        if cache is not None:
            cache.append(c, k_pe)
            c, k_pe = cache.latent.to(x.dtype), cache.rope.to(x.dtype)
        S = c.shape[1]
        causal = torch.arange(S, device=x.device)[None, :] <= pos[:, None]   # [T, S]
        attend = self._absorbed if absorbed else self._naive
        o = attend(q_nope, q_pe, c, k_pe, causal)                  # [B, T, H, v_dim]
        if self.gate is not None:
            o = o * torch.sigmoid(self.gate(x)).unflatten(-1, (self.heads, self.v_dim))
        return self.o_proj(o.flatten(-2))

    def _softmax(self, scores: torch.Tensor, causal: torch.Tensor) -> torch.Tensor:
        return torch.softmax((scores * self.scale).masked_fill(~causal, float("-inf")), -1)

    def _naive(self, q_nope, q_pe, c, k_pe, causal):
        """Expand the latent into per-head keys and values, then attend as MHA."""
        k_nope, v = self.kv_b(c).unflatten(-1, (self.heads, self.nope + self.v_dim)).split([self.nope, self.v_dim], -1)
        scores = torch.einsum("bthd,bshd->bhts", q_nope, k_nope) + torch.einsum("bthr,bsr->bhts", q_pe, k_pe)
        return torch.einsum("bhts,bshv->bthv", self._softmax(scores, causal), v)

    def _absorbed(self, q_nope, q_pe, c, k_pe, causal):
        """Fold W_UK into the query and W_UV after the sum: every head attends over the shared (c, k_pe)."""
        W = self.kv_b.weight.view(self.heads, self.nope + self.v_dim, self.rank)
        W_UK, W_UV = W[:, : self.nope], W[:, self.nope:]           # [H, nope, rank], [H, v_dim, rank]
        q_lat = torch.einsum("bthd,hdc->bthc", q_nope, W_UK)       # the query, in latent space
        scores = torch.einsum("bthc,bsc->bhts", q_lat, c) + torch.einsum("bthr,bsr->bhts", q_pe, k_pe)
        o_lat = torch.einsum("bhts,bsc->bthc", self._softmax(scores, causal), c)
        return torch.einsum("bthc,hvc->bthv", o_lat, W_UV)


class GatedMLA(MLA):
    """Kimi K3's MLA layer: NoPE (the rope dims are produced and cached but never rotated) and a
    sigmoid output gate (``mla_use_nope`` and ``mla_use_output_gate`` in its config)."""

    def __init__(self, d_model: int, heads: int, kv_lora_rank: int, qk_nope_dim: int, qk_rope_dim: int,
                 v_dim: int, q_lora_rank: int | None = None, norm_eps: float = 1e-6):
        super().__init__(d_model, heads, kv_lora_rank, qk_nope_dim, qk_rope_dim, v_dim, q_lora_rank,
                         rope=False, output_gate=True, norm_eps=norm_eps)

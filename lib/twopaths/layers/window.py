"""DeepSeek V4's attention core, and its sliding-window-only layer.

Every V4 layer attends with one shared head that is key and value at once (V4 report §2.3; the
transformers ``DeepseekV4Attention``). For a query at position t:

    c_q = RMSNorm(W_qa x_t)                        low-rank query latent (the indexer reads it too)
    q_h = RoPE_t(UnitRMSNorm(W_qb,h c_q))          H heads of d channels
    e_s = RoPE_s(RMSNorm(W_kv x_s))                one d-channel entry per token: key and value
    p_h = softmax([q_h . e_s / sqrt(d)  for visible s ;  sink_h])      the sink's share is dropped
    y_t = W_o [ RoPE_{-t}(sum_s p_hs e_s) ]_h        undo the value's rotation at the query position

The sliding-window layer sees the last ``window`` tokens (itself included); ``window=None`` sees
every past token (dense attention, the cache of absorbed MLA). CSA and HCA (``csa_hca``) add
compressed entries to the same softmax. RoPE rotates the last ``rope_dim`` channels in adjacent
pairs ("interleaved"), as V4 does.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

from ..errors import ParameterError, check_int, check_real
from ..specs import CacheGroup, ModelSpec
from ..specs.cache_formats import LABELS, group_label


def rope(x: torch.Tensor, positions: torch.Tensor, theta: float, rope_dim: int, inverse: bool = False) -> torch.Tensor:
    """Rotate the trailing ``rope_dim`` channels of ``x`` [B, T, ..., d] in adjacent pairs by angle
    position x theta^(-2i/rope_dim); ``positions`` [T]; ``inverse`` rotates back."""
    if rope_dim == 0:
        return x
    inv_freq = 1.0 / (theta ** (torch.arange(0, rope_dim, 2, dtype=torch.float32, device=x.device) / rope_dim))
    angle = positions.to(torch.float32)[:, None] * inv_freq                      # [T, rope_dim/2]
    angle = angle.view(angle.shape[0], *([1] * (x.dim() - 3)), -1)              # broadcast over heads
    cos, sin = angle.cos(), angle.sin() * (-1.0 if inverse else 1.0)
    a, b = x[..., -rope_dim::2].float(), x[..., -rope_dim + 1::2].float()
    rotated = torch.stack((a * cos - b * sin, b * cos + a * sin), dim=-1).flatten(-2)
    return torch.cat([x[..., :-rope_dim], rotated.to(x.dtype)], dim=-1)


def attend(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, allowed: torch.Tensor, scale: float,
           sinks: torch.Tensor | None = None) -> torch.Tensor:
    """Masked softmax attention with G key/value heads shared by groups of the H query heads.

    q [B, T, H, dk]; k [B, S, G, dk]; v [B, S, G, dv], H a multiple of G (G = 1: one shared head);
    allowed [B or 1, T, S] bool; sinks [H] logits appended to every row (their share is dropped).
    Returns [B, T, H, dv].
    """
    B, T, H, dk = q.shape
    G = k.shape[2]
    if G < 1 or H % G or v.shape[2] != G:
        raise ParameterError("k", tuple(k.shape), f"key/value heads that divide the {H} query heads, the same in k and v")
    if sinks is not None and sinks.shape != (H,):
        raise ParameterError("sinks", tuple(sinks.shape), f"one sink logit per query head: ({H},)")
    q = q.view(B, T, G, H // G, dk)
    logits = torch.einsum("btgrd,bsgd->bgrts", q, k) * scale                    # [B, G, H/G, T, S]
    logits = logits.masked_fill(~allowed[:, None, None], float("-inf"))
    if sinks is not None:
        sink = sinks.view(1, G, H // G, 1, 1).to(logits.dtype).expand(B, -1, -1, T, 1)
        p = torch.softmax(torch.cat([logits, sink], dim=-1), dim=-1)[..., :-1]
    else:
        p = torch.softmax(logits, dim=-1)
    return torch.einsum("bgrts,bsgd->btgrd", p, v).reshape(B, T, H, v.shape[-1])


def window_mask(q_pos: torch.Tensor, k_pos: torch.Tensor, window: int | None) -> torch.Tensor:
    """[T, S] True where key position s is visible from query position t: s <= t, and t - s < window."""
    diff = q_pos[:, None] - k_pos[None, :]
    return (diff >= 0) if window is None else (diff >= 0) & (diff < window)


@dataclass
class AttentionCache:
    """What one V4-style layer keeps between decode steps.

    ``raw``: the last ``window`` entries (all of them for dense attention). CSA and HCA add the
    state of their compressor and, for CSA, of the indexer's (``compressor.CompressorState``).
    """

    window: int | None
    length: int = 0                        # tokens seen so far
    raw: torch.Tensor | None = None        # [B, min(length, window), d]
    compressor: object = None
    indexer: object = None

    def parts(self) -> dict[str, int]:
        """Cache bytes by the calculator's labels (``twopaths.calc.kv``), working buffers excluded."""
        out = {LABELS["window"] if self.window else LABELS["mla"]: _nbytes(self.raw)}
        if self.compressor is not None:
            out[group_label(CacheGroup("compressed", 1, {"ratio": self.compressor.ratio}))] = self.compressor.nbytes
        if self.indexer is not None:
            out[LABELS["indexer"]] = self.indexer.nbytes
        return out

    @property
    def nbytes(self) -> int:
        return sum(self.parts().values())

    @property
    def buffer_nbytes(self) -> int:
        """The compressors' working buffers: the open window's raw tokens and CSA's overlap half."""
        return sum(s.buffer_nbytes for s in (self.compressor, self.indexer) if s is not None)


def _nbytes(t: torch.Tensor | None) -> int:
    return 0 if t is None else t.nbytes


def cache_spec(layer: nn.Module) -> ModelSpec:
    """A one-layer spec whose cache groups (``layer.cache_groups()``) the calculator in
    ``twopaths.calc.kv`` sizes: what the layer's decode cache should measure."""
    n = sum(p.numel() for p in layer.parameters())
    return ModelSpec(id=type(layer).__name__, name=type(layer).__name__, assumptions="public", layers=1,
                     attention=tuple(layer.cache_groups()), params_total=n, params_active=n, source="a toy layer")


class WindowAttention(nn.Module):
    """V4's attention with raw entries only: the last ``window`` tokens, or all (``window=None``).

    ``forward(x, cache)`` takes T new tokens x [B, T, d_model] (following ``cache.length`` earlier
    ones when a cache from ``new_cache()`` is given) and returns [B, T, d_model].
    """

    def __init__(self, d_model: int, heads: int = 4, head_dim: int = 64, window: int | None = 128,
                 rope_dim: int | None = None, q_rank: int | None = None, rope_theta: float = 10_000.0,
                 eps: float = 1e-6):
        super().__init__()
        check_int("d_model", d_model, minimum=1)
        self.heads = check_int("heads", heads, minimum=1)
        self.head_dim = check_int("head_dim", head_dim, minimum=2)
        self.window = None if window is None else check_int("window", window, minimum=1)
        rope_dim = head_dim // 8 // 2 * 2 if rope_dim is None else rope_dim    # V4: 64 of 512
        self.rope_dim = check_int("rope_dim", rope_dim, minimum=0, maximum=head_dim)
        if rope_dim % 2:
            raise ParameterError("rope_dim", rope_dim, "an even number (channels rotate in pairs)")
        self.rope_theta = check_real("rope_theta", rope_theta, minimum=0, open_min=True)
        q_rank = check_int("q_rank", q_rank if q_rank is not None else d_model, minimum=1)
        self.wq_a = nn.Linear(d_model, q_rank, bias=False)
        self.q_norm = nn.RMSNorm(q_rank, eps=eps)
        self.wq_b = nn.Linear(q_rank, heads * head_dim, bias=False)
        self.wkv = nn.Linear(d_model, head_dim, bias=False)
        self.kv_norm = nn.RMSNorm(head_dim, eps=eps)
        self.wo = nn.Linear(heads * head_dim, d_model, bias=False)
        self.sinks = nn.Parameter(torch.zeros(heads))
        self.eps = eps

    def new_cache(self) -> AttentionCache:
        return AttentionCache(self.window)

    def cache_groups(self) -> list[CacheGroup]:
        """The cache as the calculator describes it; dense attention caches MLA's layout, one vector per token."""
        if self.window is None:
            return [CacheGroup("mla", 1, {"kv_lora_rank": self.head_dim - self.rope_dim, "rope_dim": self.rope_dim})]
        return [CacheGroup("window", 1, {"window": self.window, "entry_dim": self.head_dim, "rope_dim": self.rope_dim})]

    def compressed(self, x, c_q, pos, cache):
        """Entries beyond the raw ones, and which query sees which: none here (see ``csa_hca``)."""
        return None

    def queries(self, c_q: torch.Tensor, pos: torch.Tensor) -> torch.Tensor:
        """q [B, T, H, d] from the query latent c_q [B, T, q_rank]: per-head unit RMS, then RoPE."""
        q = self.wq_b(c_q).unflatten(-1, (self.heads, self.head_dim))
        return rope(F.rms_norm(q, (self.head_dim,), eps=self.eps), pos, self.rope_theta, self.rope_dim)

    def forward(self, x: torch.Tensor, cache: AttentionCache | None = None) -> torch.Tensor:
        B, T, _ = x.shape
        start = 0 if cache is None else cache.length
        pos = torch.arange(start, start + T, device=x.device)
        c_q = self.q_norm(self.wq_a(x))
        q = self.queries(c_q, pos)
        e = rope(self.kv_norm(self.wkv(x)), pos, self.rope_theta, self.rope_dim)      # [B, T, d]
        keys = e if cache is None or cache.raw is None else torch.cat([cache.raw, e], dim=1)
        allowed = window_mask(pos, torch.arange(start + T - keys.shape[1], start + T, device=x.device), self.window)
        allowed = allowed[None].expand(B, -1, -1)
        extra = self.compressed(x, c_q, pos, cache)
        if extra is not None:
            entries, seen = extra                                            # [B, S, d], [B, T, S]
            keys, allowed = torch.cat([keys, entries], dim=1), torch.cat([allowed, seen], dim=-1)
        o = attend(q, keys[:, :, None], keys[:, :, None], allowed, self.head_dim ** -0.5, self.sinks)
        if cache is not None:
            raw = e if cache.raw is None else torch.cat([cache.raw, e], dim=1)
            cache.raw = raw if self.window is None else raw[:, -self.window:]
            cache.length += T
        o = rope(o, pos, self.rope_theta, self.rope_dim, inverse=True)
        return self.wo(o.flatten(2))

"""Toy decode caches whose tensors are the measurement: stream tokens in, read ``.nbytes`` out.

Each cache stores exactly what its kind of attention keeps per request (see ``twopaths.calc.kv``),
in the storage format named, with real FP8 tensors and block scales for the FlashMLA layouts.
The KV chapter and the tests compare these measured bytes with the calculator's formulas.
"""

from __future__ import annotations

import math

import torch

from ..specs import ModelSpec
from ..specs.cache_formats import KVFormat, formats_for, group_label
from .kda import kda_recurrent

TORCH_DTYPE = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32}


def _nbytes(tensors) -> int:
    return sum(t.nbytes for t in tensors)


def store(x: torch.Tensor, rope_dim: int, fmt: KVFormat) -> list[torch.Tensor]:
    """Store vectors ``x`` [N, dim] (rope part last) as ``fmt`` lays them out; returns the tensors."""
    n, dim = x.shape
    nope, rope = x[:, : dim - rope_dim], x[:, dim - rope_dim:]
    if fmt.name in TORCH_DTYPE:
        return [x.to(TORCH_DTYPE[fmt.name])]
    if not fmt.scale_group:
        # Per-tensor FP8 (vLLM, SGLang): the one scale belongs to the layer, not to a request.
        scale = x.abs().amax().clamp_min(1e-12) / torch.finfo(torch.float8_e4m3fn).max
        return [(x / scale).to(torch.float8_e4m3fn)]
    # Block-scaled FP8: one scale per scale_group non-rope values, rope kept in BF16.
    groups = math.ceil(nope.shape[1] / fmt.scale_group)
    padded = torch.nn.functional.pad(nope, (0, groups * fmt.scale_group - nope.shape[1]))
    blocks = padded.view(n, groups, fmt.scale_group)
    amax = blocks.abs().amax(-1).clamp_min(1e-12)
    scale = amax / torch.finfo(torch.float8_e4m3fn).max            # [N, groups]
    if fmt.scale_bytes == 1:                                        # UE8M0: a power-of-two exponent
        scale = torch.exp2(torch.ceil(torch.log2(scale)))
    q = (blocks / scale[..., None]).view(n, -1)[:, : nope.shape[1]].to(torch.float8_e4m3fn)
    scales = scale.to(torch.float32) if fmt.scale_bytes == 4 else scale.to(torch.float8_e8m0fnu)
    out = [q, scales]
    if rope_dim:
        out.append(rope.to(torch.bfloat16))
    if fmt.pad_bytes:
        out.append(torch.zeros(n, fmt.pad_bytes, dtype=torch.uint8, device=x.device))
    return out


class TokenCache:
    """MHA/GQA K,V or MLA latent+rope: one stored vector per token per layer."""

    def __init__(self, dim: int, rope_dim: int, fmt: KVFormat):
        self.dim, self.rope_dim, self.fmt, self.parts = dim, rope_dim, fmt, []

    def append(self, x: torch.Tensor) -> None:       # x: [t, dim]
        assert x.shape[1] == self.dim
        self.parts.append(store(x, self.rope_dim, self.fmt))

    @property
    def nbytes(self) -> int:
        return sum(_nbytes(p) for p in self.parts)


class WindowCache(TokenCache):
    """Keeps only the last ``window`` raw vectors."""

    def __init__(self, dim: int, rope_dim: int, fmt: KVFormat, window: int):
        super().__init__(dim, rope_dim, fmt)
        self.window, self.raw = window, None

    def append(self, x: torch.Tensor) -> None:
        self.raw = x if self.raw is None else torch.cat([self.raw, x])
        self.raw = self.raw[-self.window:]
        self.parts = [store(self.raw, self.rope_dim, self.fmt)]


class CompressedCache(TokenCache):
    """One entry per ``ratio`` tokens (a softmax-weighted pool, as V4's compressor makes them).

    The raw tokens of a window still open wait in ``pending``: the compressor's working buffer,
    which is not part of the cache and is reported apart (``pending_nbytes``).
    """

    def __init__(self, dim: int, rope_dim: int, fmt: KVFormat, ratio: int):
        super().__init__(dim, rope_dim, fmt)
        self.ratio, self.pending = ratio, None

    def append(self, x: torch.Tensor) -> None:
        self.pending = x if self.pending is None else torch.cat([self.pending, x])
        full = (self.pending.shape[0] // self.ratio) * self.ratio
        if full:
            windows = self.pending[:full].view(-1, self.ratio, self.dim)      # [w, ratio, dim]
            weights = torch.softmax(windows, dim=1)                           # per channel, over the window
            self.parts.append(store((weights * windows).sum(1), self.rope_dim, self.fmt))
            self.pending = self.pending[full:]

    @property
    def pending_nbytes(self) -> int:
        return 0 if self.pending is None else self.pending.nbytes


class KDAState:
    """KDA's fixed state: S [HV, K, V] updated by forget, correct, write; plus the conv tail of q, k
    (``heads`` each) and v (``value_heads``, more than ``heads`` in Gated DeltaNet's grouped form)."""

    def __init__(self, heads: int, head_dim_k: int, head_dim_v: int, state_dtype: str, conv_kernel: int,
                 device=None, value_heads: int | None = None):
        value_heads = value_heads or heads
        self.S = torch.zeros(value_heads, head_dim_k, head_dim_v, dtype=TORCH_DTYPE[state_dtype], device=device)
        width = 2 * heads * head_dim_k + value_heads * head_dim_v
        self.conv = torch.zeros(max(conv_kernel - 1, 0), width, dtype=torch.bfloat16, device=device)

    def step(self, k: torch.Tensor, v: torch.Tensor, alpha: torch.Tensor, beta: torch.Tensor) -> None:
        """k [H, K] (unit norm), v [HV, V], alpha [HV, K] in (0, 1), beta [HV] in [0, 1]: one token of
        ``kda_recurrent`` (forget, correct, write), the state kept in its own dtype."""
        one = lambda x: x[None, None]  # noqa: E731  [B=1, T=1, ...]
        _, S = kda_recurrent(one(k), one(k), one(v), one(alpha.log()), one(beta), initial_state=self.S[None])
        self.S.copy_(S[0])
        if self.conv.shape[0]:
            self.conv = torch.roll(self.conv, -1, 0)  # the newest q/k/v inputs take the last row

    @property
    def nbytes(self) -> int:
        return self.S.nbytes + self.conv.nbytes


def build(spec: ModelSpec, tokens: int, kv_dtype: str = "bf16", state_dtype: str = "bf16",
          chunk: int = 7, device=None, seed: int = 0) -> dict[str, int]:
    """Stream ``tokens`` random tokens, ``chunk`` at a time, through one layer of each of ``spec``'s
    cache groups; return measured bytes per group label, multiplied by the group's layer count."""
    fmt, index_fmt = formats_for(spec, kv_dtype)
    gen = torch.Generator(device="cpu").manual_seed(seed)
    rand = lambda *shape: torch.randn(*shape, generator=gen).to(device)  # noqa: E731
    out: dict[str, int] = {}
    for g in spec.attention:
        d = g.dims
        if g.kind == "kda":
            hv = d.get("value_heads", d["heads"])
            cache = KDAState(d["heads"], d["head_dim_k"], d["head_dim_v"], state_dtype, d.get("conv_kernel", 0),
                             device, hv)
            for _ in range(min(tokens, 4)):   # the state never grows: a few steps show it
                k = torch.nn.functional.normalize(rand(d["heads"], d["head_dim_k"]), dim=-1)
                cache.step(k, rand(hv, d["head_dim_v"]), torch.sigmoid(rand(hv, d["head_dim_k"])),
                           torch.sigmoid(rand(hv)))
        else:
            if g.kind == "mha":
                cache = TokenCache(d["kv_heads"] * (d["head_dim_k"] + d["head_dim_v"]), 0, fmt)
            elif g.kind == "mla":
                rank = d.get("latents", 1) * d["kv_lora_rank"]
                cache = TokenCache(rank + d["rope_dim"], d["rope_dim"], fmt)
            elif g.kind == "window":
                cache = WindowCache(d["entry_dim"], d["rope_dim"], fmt, d["window"])
            elif g.kind == "compressed":
                cache = CompressedCache(d["entry_dim"], d["rope_dim"], fmt, d["ratio"])
            elif g.kind == "indexer":
                cache = CompressedCache(d["index_dim"], 0, index_fmt, d["ratio"])
            else:
                raise ValueError(f"no toy cache for kind {g.kind!r}")
            for start in range(0, tokens, chunk):
                cache.append(rand(min(chunk, tokens - start), cache.dim))
        out[group_label(g)] = out.get(group_label(g), 0) + g.layers * cache.nbytes
    return out

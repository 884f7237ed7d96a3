"""Kimi Delta Attention (KDA): a fixed K x V state per head, updated by forget, correct, write.

Per head, with a state S of shape [K, V], per-channel retention alpha_t = exp(g_t) in (0, 1]^K and
a write strength beta_t in [0, 1] (equation 1 of the Kimi Linear report)::

    S <- Diag(alpha_t) S                      forget
    e_t = v_t - S^T k_t                       correct: what the decayed state gets wrong about v_t
    S <- S + beta_t k_t e_t^T                 write
    o_t = S^T (scale * q_t)                   read

``kda_recurrent`` runs that loop token by token; ``kda_chunked`` computes the same outputs a chunk
at a time with matrix products (the WY / UT form), which is how training kernels run it.
Gated DeltaNet is the case where alpha_t is one scalar per head (``gated_delta_rule``).
Tensor layout as in fla's ``naive_recurrent_kda``: q, k [B, T, H, K]; v [B, T, HV, V];
g [B, T, HV, K] (log-retention, already activated, <= 0); beta [B, T, HV] (after the sigmoid);
state [B, HV, K, V]. HV = H is one state per key head; HV a multiple of H is grouped value
attention (GVA, as Qwen3.5's Gated DeltaNet): value head j reads key head j // (HV / H).
Inputs of any float dtype are computed in float32; outputs come back in the dtype of ``v``, the
state in float32.

``KDA`` is the layer around that core: short convolution, L2-normalised q and k, K3's lower-bound
forget gate g = lb * sigmoid(...), beta, a gated RMSNorm on the output, and a decode cache.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

from ..errors import ParameterError, check_int, check_real

TILE = 16              # tokens per diagonal tile inside a chunk, as K3's kernels use
LOG2E = 1.4426950408889634   # the chunked form works in base 2: exp2 is several times faster than exp
SAFE_BITS = 86.0       # |log2 factor| allowed in a factored tile: 2^86 ~ 1e26 leaves float32 headroom
FLOOR_BITS = -58.0     # retention factors below 2^-58 (3e-18) are kept at 2^-58, see _decay


# --- checks ----------------------------------------------------------------------------------------

def _check_tensor(name: str, x, shape: tuple) -> None:
    if not isinstance(x, torch.Tensor) or not x.is_floating_point():
        raise ParameterError(name, type(x).__name__ if not isinstance(x, torch.Tensor) else x.dtype,
                             "a floating-point torch.Tensor")
    if tuple(x.shape) != shape:
        raise ParameterError(name, tuple(x.shape), f"shape {shape}")


def check_inputs(q, k, v, g, beta, scale=None, initial_state=None, scalar_gate=False) -> float:
    """Validate the kernels' inputs (shapes, g <= 0, beta in [0, 1]); return the scale to use.
    ``scalar_gate``: g is one value per value head, [B, T, HV] (Gated DeltaNet)."""
    if not isinstance(q, torch.Tensor) or q.dim() != 4:
        raise ParameterError("q", getattr(q, "shape", q), "a tensor [B, T, H, K]")
    B, T, H, K = q.shape
    _check_tensor("q", q, (B, T, H, K))
    _check_tensor("k", k, (B, T, H, K))
    if not isinstance(v, torch.Tensor) or v.dim() != 4:
        raise ParameterError("v", getattr(v, "shape", v), f"a tensor [{B}, {T}, HV, V]")
    HV, V = v.shape[2:]
    if HV % H:
        raise ParameterError("v", tuple(v.shape), f"value heads (dim 2) a multiple of the {H} key heads")
    _check_tensor("v", v, (B, T, HV, V))
    _check_tensor("g", g, (B, T, HV) if scalar_gate else (B, T, HV, K))
    _check_tensor("beta", beta, (B, T, HV))
    if initial_state is not None:
        _check_tensor("initial_state", initial_state, (B, HV, K, V))
    if g.numel() and not (g <= 0).all():   # also refuses NaN
        raise ParameterError("g", g.max().item(), "log-retention <= 0 everywhere (exp(g) in (0, 1])")
    if beta.numel() and not ((beta >= 0) & (beta <= 1)).all():
        bad = beta[~((beta >= 0) & (beta <= 1))][0].item()
        raise ParameterError("beta", bad, "values in [0, 1] (beta after the sigmoid)")
    return K ** -0.5 if scale is None else check_real("scale", scale, minimum=0, open_min=True)


def _per_value_head(q, k, v):
    """q, k [B, T, H, K] repeated to v's HV heads, each key head serving HV / H consecutive ones."""
    group = v.shape[2] // q.shape[2]
    return q.repeat_interleave(group, dim=2), k.repeat_interleave(group, dim=2)


# --- the recurrence ---------------------------------------------------------------------------------

def kda_recurrent(q, k, v, g, beta, scale=None, initial_state=None):
    """KDA token by token. Returns (o [B, T, HV, V] in v's dtype, final state [B, HV, K, V] float32)."""
    scale = check_inputs(q, k, v, g, beta, scale, initial_state)
    dtype = v.dtype
    q, k = _per_value_head(q, k, v)
    q, k, v, g, beta = (x.float() for x in (q, k, v, g, beta))
    B, T, H, K = q.shape
    S = q.new_zeros(B, H, K, v.shape[-1]) if initial_state is None else initial_state.float().clone()
    o = torch.empty_like(v)
    for t in range(T):
        S = g[:, t].exp()[..., None] * S                                   # forget
        e = v[:, t] - torch.einsum("bhk,bhkv->bhv", k[:, t], S)            # correct
        S = S + (beta[:, t, :, None] * k[:, t])[..., None] * e[:, :, None]  # write
        o[:, t] = torch.einsum("bhk,bhkv->bhv", scale * q[:, t], S)        # read
    return o.to(dtype), S


# --- the chunked form -------------------------------------------------------------------------------

def _decay(log2_factor: torch.Tensor) -> torch.Tensor:
    """2^x in float32 for x <= 0 (given in float64), with x floored at FLOOR_BITS. Past 2^-126 float32
    turns subnormal, which both exp2 and every product after it handle many times slower; a factor
    under 3e-18 (or a product of two) is invisible next to the O(1) terms it is added to, so the floor
    changes no result above 1e-17."""
    return log2_factor.clamp_min(FLOOR_BITS).float().exp2()


def _tile(chunk: int) -> int:
    """The diagonal tile: halve the chunk while it is even and above TILE tokens."""
    while chunk > TILE and chunk % 2 == 0:
        chunk //= 2
    return chunk


def intra_chunk_scores(q, k, G, steepest: float):
    """A_kk[i, j] = sum_d k_id k_jd 2^(G_id - G_jd) for j < i, and A_qk the same with q_i for j <= i.

    q, k, G: [..., C, K], G (float64) the inclusive cumulative log2-retention inside the chunk; ``steepest`` the
    largest -g in the input, in bits. 2^(G_i - G_j) is split as 2^(G_i - G_r) 2^(G_r - G_j) so that
    each block of scores is a matrix product. Off the diagonal tiles the pivot r is the boundary between two
    halves, so both exponents are <= 0 and nothing can overflow. Inside a diagonal tile the pivot is
    the tile's middle token; the factors then stay finite only while the decay within the tile is
    bounded (K3's lower bound on g guarantees it), and a tile where they might not is computed pair by
    pair instead.
    """
    *lead, C, K = k.shape
    A_kk, A_qk = k.new_zeros(*lead, C, C), k.new_zeros(*lead, C, C)
    m, tile = C, _tile(C)
    while m > tile:                                                # halves of blocks of m tokens
        n, h = C // m, m // 2
        qs, ks, Gs = (x.view(*lead, n, m, K) for x in (q, k, G))
        r = Gs[..., h - 1:h, :]                                    # last token of the first half
        below, cols = _decay(Gs[..., h:, :] - r), ks[..., :h, :] * _decay(r - Gs[..., :h, :])
        for A, x in ((A_kk, ks), (A_qk, qs)):
            scores = (x[..., h:, :] * below) @ cols.mT                # [..., n, h, h]
            for b in range(n):                                     # second half's rows, first half's columns
                A[..., b * m + h:(b + 1) * m, b * m:b * m + h] = scores[..., b, :, :]
        m = h
    n = C // m
    qs, ks, Gs = (x.view(*lead, n, m, K) for x in (q, k, G))
    rel = Gs - Gs[..., m // 2:m // 2 + 1, :]                       # log factors from the tile's middle
    up, down = rel.float().exp2(), (-rel).float().exp2()
    unsafe = None
    if steepest * ((m + 1) // 2) > SAFE_BITS:                      # a tile may be too steep to factor
        unsafe = rel.abs().amax((-2, -1)) > SAFE_BITS               # [..., n]
        pair = _decay((rel[unsafe][..., :, None, :] - rel[unsafe][..., None, :, :]).clamp(max=0))
    cols = (ks * down).mT
    for A, x, diagonal in ((A_kk, ks, -1), (A_qk, qs, 0)):
        tiles = ((x * up) @ cols).tril(diagonal)                    # [..., n, m, m]
        if unsafe is not None and unsafe.any():
            tiles[unsafe] = torch.einsum("mid,mjd,mijd->mij", x[unsafe], ks[unsafe], pair).tril(diagonal)
        for b in range(n):
            A[..., b * m:(b + 1) * m, b * m:(b + 1) * m] = tiles[..., b, :, :]
    return A_kk, A_qk


def kda_chunked(q, k, v, g, beta, scale=None, initial_state=None, chunk_size=64):
    """KDA a chunk at a time; the same (o, final state) as ``kda_recurrent`` up to rounding.

    Inside a chunk of C tokens with state S entering it (G: inclusive cumsum of g in the chunk, kept
    in base 2 in the code): M = (I + Diag(beta) A_kk)^-1 Diag(beta); W = M (e^G * K); U = M V; the
    corrected values are U - W S; the outputs (Q * e^G) S + A_qk (U - W S); the state leaves as
    Diag(e^G_C) S + (K * e^(G_C - G))^T (U - W S). The sequence is padded to a multiple of C with
    tokens that change nothing (k = v = 0, g = 0, beta = 0).
    """
    chunk_size = check_int("chunk_size", chunk_size, minimum=1)
    scale = check_inputs(q, k, v, g, beta, scale, initial_state)
    dtype = v.dtype
    q, k = _per_value_head(q, k, v)
    B, T, H, K = q.shape                                           # H: the value heads from here on
    V, C = v.shape[-1], chunk_size
    N = math.ceil(T / C)
    pad = N * C - T

    def chunks(x):   # [B, T, H, ...] -> [B, H, N, C, ...], float32, zero-padded
        x = F.pad(x.float(), (0, 0) * (x.dim() - 2) + (0, pad)) if pad else x.float()
        return x.transpose(1, 2).reshape(B, H, N, C, *x.shape[3:])

    steepest = -LOG2E * g.min().item() if g.numel() else 0.0     # in bits
    q, k, v, g, beta = chunks(q), chunks(k), chunks(v), chunks(g), chunks(beta)
    # log2-retention summed inside each chunk; in float64, because the factors come from differences
    # G_i - G_j of sums that reach hundreds of bits within a chunk when the decay is steep.
    G = (LOG2E * g.double()).cumsum(-2)                            # [B, H, N, C, K]
    A_kk, A_qk = intra_chunk_scores(q, k, G, steepest)
    eG = _decay(G)
    lower = beta[..., None] * A_kk
    lower.diagonal(dim1=-2, dim2=-1).fill_(1)                      # I + Diag(beta) A_kk
    # X^T lower^T = rhs^T is the same system in the memory order LAPACK wants (twice as fast here).
    solve = lambda rhs: torch.linalg.solve_triangular(  # noqa: E731
        lower.mT, rhs.mT, upper=True, left=False, unitriangular=True).mT
    W, U = solve(beta[..., None] * eG * k), solve(beta[..., None] * v)   # [..., C, K], [..., C, V]
    G_end = G[..., -1:, :]                                         # [B, H, N, 1, K]
    k_out = (k * _decay(G_end - G)).mT                             # [B, H, N, K, C]
    keep = _decay(G_end).mT                                        # [B, H, N, K, 1]

    S = q.new_zeros(B, H, K, V) if initial_state is None else initial_state.float()
    S_in, V_new = [], []
    for n in range(N):                                             # only the state crosses chunks
        S_in.append(S)
        V_new.append(U[:, :, n] - W[:, :, n] @ S)
        S = keep[:, :, n] * S + k_out[:, :, n] @ V_new[-1]
    o = (A_qk @ torch.stack(V_new, 2)).add_((q * eG) @ torch.stack(S_in, 2)).mul_(scale)   # [B, H, N, C, V]
    return o.reshape(B, H, N * C, V)[:, :, :T].transpose(1, 2).to(dtype), S


def gated_delta_rule(q, k, v, g, beta, scale=None, initial_state=None, chunk_size=64):
    """Gated DeltaNet (Qwen3-Next): KDA with one retention per value head, g [B, T, HV] instead of
    [B, T, HV, K]."""
    check_inputs(q, k, v, g, beta, scale, initial_state, scalar_gate=True)
    return kda_chunked(q, k, v, g[..., None].expand(*g.shape, q.shape[-1]), beta, scale, initial_state, chunk_size)


def l2_normalise(x: torch.Tensor, eps: float = 1e-6) -> torch.Tensor:
    """x / sqrt(sum x^2 + eps): eps inside the root, as fla's kernels do (F.normalize clamps instead)."""
    return x / torch.sqrt((x * x).sum(-1, keepdim=True) + eps)


def random_inputs(batch: int, tokens: int, heads: int, head_dim_k: int, head_dim_v: int,
                  lower_bound: float = -5.0, seed: int = 0, device=None):
    """(q, k, v, g, beta) as K3's layer hands them to the kernel: unit-norm q and k, v ~ N(0, 1),
    g = lower_bound * sigmoid(N(0, 1)) and beta = sigmoid(N(0, 1)); drawn on the CPU from ``seed``."""
    gen = torch.Generator().manual_seed(seed)
    rand = lambda *s: torch.randn(*s, generator=gen)   # noqa: E731
    shape = (batch, tokens, heads, head_dim_k)
    q, k = l2_normalise(rand(*shape)), l2_normalise(rand(*shape))
    v, g = rand(batch, tokens, heads, head_dim_v), lower_bound * torch.sigmoid(rand(*shape))
    return tuple(x.to(device) for x in (q, k, v, g, torch.sigmoid(rand(batch, tokens, heads))))


# --- why K3 bounds the gate -------------------------------------------------------------------------

def tile_factor_exponents(g: torch.Tensor, tile: int = TILE) -> torch.Tensor:
    """The largest exponent the factored scores of a tile need: e^(-G) with G the log-retention summed
    from the tile's start (g [..., T, K], T a multiple of ``tile``); one value per tile [..., T/tile]."""
    tile = check_int("tile", tile, minimum=1)
    if g.shape[-2] % tile:
        raise ParameterError("g", tuple(g.shape), f"a length (dim -2) that is a multiple of tile={tile}")
    G = g.float().unflatten(-2, (-1, tile)).cumsum(-2)             # [..., T/tile, tile, K]
    return (-G).amax((-2, -1))


def largest_safe_gate(tile: int, dtype: torch.dtype) -> float:
    """The most negative constant log-retention g for which e^(-tile * g), the largest factor of a
    tile's factored scores, is still finite in ``dtype``; found by bisection on the dtype itself."""
    tile = check_int("tile", tile, minimum=1)
    finite = lambda g: bool(torch.isfinite(torch.tensor(-tile * g, dtype=torch.float64).exp().to(dtype)))  # noqa: E731
    lo, hi = -1e3, 0.0                                             # finite(hi), not finite(lo)
    for _ in range(200):
        mid = (lo + hi) / 2
        lo, hi = (lo, mid) if finite(mid) else (mid, hi)
    return hi


# --- the layer --------------------------------------------------------------------------------------

def _projection(d_in: int, d_out: int, rank: int | None) -> nn.Module:
    """A full-rank map (K3: use_full_rank_gate) or the low-rank pair Kimi Linear uses."""
    if rank is None:
        return nn.Linear(d_in, d_out, bias=False)
    return nn.Sequential(nn.Linear(d_in, rank, bias=False), nn.Linear(rank, d_out, bias=False))


@dataclass
class KDACache:
    """What one KDA layer keeps per request while decoding: the conv inputs of the last kernel-1
    tokens [B, 2HK + HV V, kernel-1] and the state [B, HV, K, V]. Neither grows with the context."""

    conv: torch.Tensor
    state: torch.Tensor

    @property
    def nbytes(self) -> int:
        return self.conv.nbytes + self.state.nbytes


class KDA(nn.Module):
    """One KDA layer: [B, T, d_model] -> [B, T, d_model], causal. ``heads`` query/key heads;
    ``value_heads`` (default: as many) a multiple of them, each with its own state, gates and write
    strength (GVA)."""

    def __init__(self, d_model: int, heads: int, head_dim_k: int, head_dim_v: int | None = None,
                 conv_kernel: int = 4, lower_bound: float = -5.0, gate_rank: int | None = None,
                 chunk_size: int = 64, norm_eps: float = 1e-5, value_heads: int | None = None):
        super().__init__()
        self.heads = check_int("heads", heads, minimum=1)
        self.value_heads = check_int("value_heads", value_heads if value_heads is not None else heads, minimum=1)
        if self.value_heads % heads:
            raise ParameterError("value_heads", value_heads, f"a multiple of heads={heads}")
        self.K = check_int("head_dim_k", head_dim_k, minimum=1)
        self.V = check_int("head_dim_v", head_dim_v if head_dim_v is not None else head_dim_k, minimum=1)
        self.kernel = check_int("conv_kernel", conv_kernel, minimum=1)
        self.lower_bound = check_real("lower_bound", lower_bound, maximum=0)
        self.chunk_size = check_int("chunk_size", chunk_size, minimum=1)
        HK, HVK, HV = heads * self.K, self.value_heads * self.K, self.value_heads * self.V
        self.q_proj, self.k_proj = nn.Linear(d_model, HK, bias=False), nn.Linear(d_model, HK, bias=False)
        self.v_proj = nn.Linear(d_model, HV, bias=False)
        self.conv_weight = nn.Parameter(torch.empty(2 * HK + HV, conv_kernel))   # depthwise, causal
        nn.init.uniform_(self.conv_weight, -conv_kernel ** -0.5, conv_kernel ** -0.5)
        self.f_proj = _projection(d_model, HVK, gate_rank)         # forget gate, per channel of each state
        self.A_log = nn.Parameter(torch.empty(self.value_heads).uniform_(1, 16).log())   # per-state temperature
        dt = torch.empty(HVK).uniform_(math.log(1e-3), math.log(1e-1)).exp()
        self.dt_bias = nn.Parameter(dt + torch.log(-torch.expm1(-dt)))   # per channel; fla's init: slow decay
        self.b_proj = nn.Linear(d_model, self.value_heads, bias=False)   # write strength
        self.out_gate = _projection(d_model, HV, gate_rank)
        self.o_norm = nn.RMSNorm(self.V, eps=norm_eps)
        self.o_proj = nn.Linear(HV, d_model, bias=False)

    def forget_gate(self, x: torch.Tensor) -> torch.Tensor:
        """g = lb * sigmoid(e^A_log * (W_f x + dt_bias)) in (lb, 0): K3's bounded log-retention [B, T, HV, K]."""
        f = (self.f_proj(x) + self.dt_bias).unflatten(-1, (self.value_heads, self.K))
        return self.lower_bound * torch.sigmoid(self.A_log.exp()[:, None] * f)

    def new_cache(self, batch: int, state_dtype: torch.dtype = torch.float32, conv_dtype: torch.dtype = torch.float32,
                  device=None) -> KDACache:
        """An empty decode cache. The kernels compute in float32 whatever these say; a narrower dtype
        only rounds what is stored between calls (transformers' Kimi Linear keeps the state in float32)."""
        width = self.conv_weight.shape[0]
        return KDACache(torch.zeros(batch, width, self.kernel - 1, dtype=conv_dtype, device=device),
                        torch.zeros(batch, self.value_heads, self.K, self.V, dtype=state_dtype, device=device))

    def forward(self, x: torch.Tensor, cache: KDACache | None = None) -> torch.Tensor:
        """x [B, T, d_model]. With a cache, continue the request it holds and update it in place."""
        B, T, _ = x.shape
        qkv = torch.cat([self.q_proj(x), self.k_proj(x), self.v_proj(x)], -1).transpose(1, 2)  # [B, C, T]
        tail = qkv.new_zeros(B, qkv.shape[1], self.kernel - 1) if cache is None else cache.conv.to(qkv.dtype)
        qkv = torch.cat([tail, qkv], -1)                           # causal: the previous kernel-1 inputs
        if cache is not None:
            cache.conv = qkv[..., qkv.shape[-1] - (self.kernel - 1):].detach().to(cache.conv.dtype)
        w = self.conv_weight
        qkv = F.silu(sum(w[:, i, None] * qkv[..., i:i + T] for i in range(self.kernel))).transpose(1, 2)  # [B, T, C]
        q, k, v = qkv.split([self.heads * self.K, self.heads * self.K, self.value_heads * self.V], -1)
        q = l2_normalise(q.unflatten(-1, (self.heads, self.K)).float())
        k = l2_normalise(k.unflatten(-1, (self.heads, self.K)).float())
        v = v.unflatten(-1, (self.value_heads, self.V))
        g, beta = self.forget_gate(x), torch.sigmoid(self.b_proj(x))
        state = None if cache is None else cache.state
        if T == 1:                                                 # decoding: one step of the recurrence
            o, final = kda_recurrent(q, k, v, g, beta, initial_state=state)
        else:
            o, final = kda_chunked(q, k, v, g, beta, initial_state=state, chunk_size=self.chunk_size)
        if cache is not None:
            cache.state = final.detach().to(cache.state.dtype)
        o = self.o_norm(o.float()) * torch.sigmoid(self.out_gate(x).unflatten(-1, (self.value_heads, self.V)).float())
        return self.o_proj(o.flatten(-2).to(x.dtype))

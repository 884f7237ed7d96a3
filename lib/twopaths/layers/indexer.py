"""The Lightning Indexer: a cheap multi-head score that picks which entries a query attends to.

For a query at position t and an entry s (V3.2 and V4 reports; fla ``naive_dsa_indexer``,
transformers ``DeepseekV4Indexer``):

    I[t, s] = sum_h w[t, h] * ReLU(q[t, h] . k[s] / sqrt(d_I)),     w = W_w x_t / sqrt(H_I)

with H_I small query heads q = RoPE_t(W_q c_q) read from the attention's query latent, and one key
per entry shared by all heads. The top k visible entries by I are kept, one selection for every
attention head. The two models differ in their keys and their RoPE:

    variant="v3.2"  DSA: every token, k_s = RoPE_s(LayerNorm(W_k x_s)), RoPE half-split on the
                    leading rope_dim channels (transformers ``DeepseekV32Indexer``)
    variant="v4"    CSA: the ratio:1 entries of a compressor of its own at d_I channels, RoPE in
                    adjacent pairs on the trailing channels (``DeepseekV4Indexer``)

The indexer learns to agree with the attention it serves (``distill_loss``); ``topk_mass``
measures how well it does.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from ..errors import ParameterError, check_int
from .compressor import CompressorState, KVCompressor
from .window import rope


VARIANTS = ("v3.2", "v4")


def rope_half(x: torch.Tensor, positions: torch.Tensor, theta: float, rope_dim: int) -> torch.Tensor:
    """V3.2's indexer RoPE: rotate the leading ``rope_dim`` channels of x [B, T, ..., d], channel i
    with channel i + rope_dim/2 ("half-split", not adjacent pairs), by angle position x
    theta^(-2i/rope_dim); ``positions`` [T]."""
    if rope_dim == 0:
        return x
    inv_freq = 1.0 / (theta ** (torch.arange(0, rope_dim, 2, dtype=torch.float32, device=x.device) / rope_dim))
    angle = positions.to(torch.float32)[:, None] * inv_freq                      # [T, rope_dim/2]
    angle = angle.view(angle.shape[0], *([1] * (x.dim() - 3)), -1)              # broadcast over heads
    cos, sin = angle.cos(), angle.sin()
    a, b = x[..., :rope_dim // 2].float(), x[..., rope_dim // 2:rope_dim].float()
    rotated = torch.cat((a * cos - b * sin, b * cos + a * sin), dim=-1)
    return torch.cat([rotated.to(x.dtype), x[..., rope_dim:]], dim=-1)


def index_scores(q: torch.Tensor, k: torch.Tensor, w: torch.Tensor, scale: float) -> torch.Tensor:
    """I [B, T, S] from q [B, T, H, d], keys k [B, S, d] (one per entry) and weights w [B, T, H]."""
    if w.shape != q.shape[:3]:
        raise ParameterError("w", tuple(w.shape), f"one weight per query head: {tuple(q.shape[:3])}")
    return torch.einsum("bthd,bsd->btsh", q, k).mul(scale).relu().mul(w[:, :, None]).sum(-1)


def causal_topk(scores: torch.Tensor, visible: torch.Tensor, k: int) -> torch.Tensor:
    """The k best of the ``visible[t]`` first entries for each query: scores [B, T, S], visible [T]
    -> indices [B, T, k], best first, -1 where a query sees fewer than k entries.

    Ties go to the earlier entry (ReLU makes exact zeros common), so a query picks the same entries
    whether it is scored in one pass or while decoding, with fewer entries in existence."""
    check_int("k", k, minimum=1)
    S = scores.shape[-1]
    future = torch.arange(S, device=scores.device)[None, :] >= visible[:, None]
    order = scores.masked_fill(future, float("-inf")).sort(dim=-1, descending=True, stable=True).indices
    idx = order[..., :min(k, S)]
    idx = idx.masked_fill(idx >= visible[:, None], -1)
    return F.pad(idx, (0, k - idx.shape[-1]), value=-1)


def selected(indices: torch.Tensor, S: int) -> torch.Tensor:
    """The picks as a mask: indices [B, T, k] (-1 for none) -> [B, T, S] bool."""
    mask = torch.zeros(*indices.shape[:2], S + 1, dtype=torch.bool, device=indices.device)
    return mask.scatter_(-1, indices.masked_fill(indices < 0, S), True)[..., :S]


def gather_picks(entries: torch.Tensor, indices: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Only the entries some query picked, so attention costs k entries and not all of them:
    entries [B, S, d], indices [B, T, k] -> (picked [B, U, d], which query sees which [B, T, U])."""
    seen = selected(indices, entries.shape[1])
    used = seen.flatten(0, 1).any(0).nonzero().squeeze(-1)
    return entries[:, used], seen[..., used]


def topk_mass(p: torch.Tensor, indices: torch.Tensor, k: int) -> torch.Tensor:
    """How much of exact attention's top-k mass the picks hold, per query.

    p [B, T, S]: exact attention over the entries (rows sum to 1 over what each query sees);
    indices [B, T, >= k] the indexer's picks. Returns [B, T]: picked mass / mass of the k largest
    p; 1 means the indexer chose as well as the exact scores could.
    """
    S = p.shape[-1]
    check_int("k", k, minimum=1)
    if k > min(S, indices.shape[-1]):
        raise ParameterError("k", k, f"at most the {S} entries scored and the {indices.shape[-1]} picks given")
    picked = (p * selected(indices[..., :k], S)).sum(-1)
    return picked / p.topk(k, dim=-1).values.sum(-1)


def distill_loss(scores: torch.Tensor, p: torch.Tensor, visible: torch.Tensor) -> torch.Tensor:
    """KL(p || softmax(I)) over the visible entries, averaged over queries that see any: V3.2's
    indexer warm-up, with p the attention summed over heads and renormalised."""
    future = torch.arange(scores.shape[-1], device=scores.device)[None, :] >= visible[:, None]
    logq = torch.log_softmax(scores.masked_fill(future, float("-inf")), dim=-1).masked_fill(future, 0)
    kl = (p * (torch.log(p.clamp_min(1e-30)) - logq)).sum(-1)           # [B, T]
    return kl[:, visible > 0].mean()


class _AttachLoss(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, loss):
        ctx.save_for_backward(loss)
        return x.view_as(x)

    @staticmethod
    def backward(ctx, grad):
        (loss,) = ctx.saved_tensors
        return grad, torch.ones_like(loss)


def with_loss(x: torch.Tensor, loss: torch.Tensor) -> torch.Tensor:
    """x unchanged; in backward, ``loss`` also gets gradient 1, as if it were added to the loss of
    whatever x feeds. How a layer trains its indexer inside any model: top-k passes no gradient, so
    the indexer learns from ``distill_loss`` alone (as MoE code adds its balance loss)."""
    return _AttachLoss.apply(x, loss)


class LightningIndexer(nn.Module):
    """Pick ``topk`` entries per query from the query latent c_q [B, T, q_rank] and x [B, T, d_model].

    ``variant="v3.2"`` keys every token (DSA; ``ratio`` must be 1); ``"v4"`` keys V4's overlapping
    ``ratio``:1 compressed entries. ``forward(x, c_q, positions, state)`` returns indices
    [B, T, topk] into the entries so far.
    """

    def __init__(self, d_model: int, q_rank: int, heads: int = 4, dim: int = 32, topk: int = 64, ratio: int = 4,
                 rope_dim: int = 0, rope_theta: float = 160_000.0, eps: float = 1e-6, variant: str = "v4"):
        super().__init__()
        self.heads, self.dim = check_int("index_heads", heads, minimum=1), check_int("index_dim", dim, minimum=1)
        self.topk, self.ratio = check_int("topk", topk, minimum=1), check_int("ratio", ratio, minimum=1)
        self.rope_dim, self.rope_theta = check_int("rope_dim", rope_dim, minimum=0, maximum=dim), rope_theta
        if variant not in VARIANTS:
            raise ParameterError("variant", variant, f"one of {VARIANTS}")
        if variant == "v3.2" and ratio != 1:
            raise ParameterError("ratio", ratio, "1 for V3.2's indexer, which keys every token")
        if rope_dim % 2:
            raise ParameterError("rope_dim", rope_dim, "an even number: RoPE rotates channel pairs")
        self.variant = variant
        self.wq = nn.Linear(q_rank, heads * dim, bias=False)
        self.ww = nn.Linear(d_model, heads, bias=False)
        if variant == "v3.2":
            self.wk, self.k_norm = nn.Linear(d_model, dim, bias=False), nn.LayerNorm(dim, eps=eps)
        else:
            self.compressor = KVCompressor(d_model, dim, ratio, True, rope_dim, rope_theta, eps)

    def _rope(self, x: torch.Tensor, positions: torch.Tensor) -> torch.Tensor:
        turn = rope_half if self.variant == "v3.2" else rope
        return turn(x, positions, self.rope_theta, self.rope_dim)

    def new_state(self) -> CompressorState:
        return CompressorState(self.ratio)

    def keys(self, x: torch.Tensor, positions: torch.Tensor, state: CompressorState | None) -> torch.Tensor:
        """Every key so far [B, S, dim], the new tokens' included."""
        if self.variant == "v4":
            return self.compressor(x, state)
        k = self._rope(self.k_norm(self.wk(x)), positions)
        if state is None:
            return k
        state.entries = k if state.entries is None else torch.cat([state.entries, k], 1)
        return state.entries

    def scores(self, x, c_q, positions, state=None) -> torch.Tensor:
        """I [B, T, S] against every entry so far (future ones included; ``visible`` says which count)."""
        B, T, _ = x.shape
        q = self._rope(self.wq(c_q).view(B, T, self.heads, self.dim), positions)
        w = self.ww(x) * self.heads ** -0.5
        return index_scores(q, self.keys(x, positions, state), w, self.dim ** -0.5)

    def visible(self, positions: torch.Tensor) -> torch.Tensor:
        return (positions + 1) // self.ratio

    def forward(self, x, c_q, positions, state=None) -> torch.Tensor:
        return causal_topk(self.scores(x, c_q, positions, state), self.visible(positions), self.topk)

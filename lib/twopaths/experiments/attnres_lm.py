"""A tiny causal language model whose sublayers read through AttnRes, trained on a synthetic task.

The task: tokens are drawn uniformly from ``vocab`` symbols and the target at position t is
(x_t + x_{t-1}) mod vocab (position 0 has no target). One attention sublayer must fetch x_{t-1}, an MLP
must combine it with x_t, and the head must read the result: a small problem in which different
sublayers need different earlier depths, so what AttnRes's weights choose can be read off.

Each layer has an attention and an MLP sublayer; each sublayer (and the final read-out) has its own
``AttnRes`` over the sources of ``DepthSources``, then its own RMSNorm. ``residual="plain"`` builds the
same network with an ordinary pre-norm residual, for comparison.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

from ..errors import ParameterError, check_choice, check_int, check_real
from ..layers.attnres import AttnRes, DepthSources

RESIDUALS = ("attnres", "plain")


def modular_sum_batch(batch: int, length: int, vocab: int, generator: torch.Generator,
                      device=None) -> tuple[torch.Tensor, torch.Tensor]:
    """Tokens [batch, length] and targets (x_t + x_{t-1}) mod vocab, with -100 (ignored) at t = 0."""
    x = torch.randint(vocab, (batch, length), generator=generator)
    y = (x + x.roll(1, dims=1)) % vocab
    y[:, 0] = -100
    return x.to(device), y.to(device)


class Attention(nn.Module):
    def __init__(self, dim: int, heads: int):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(dim, 3 * dim, bias=False)
        self.out = nn.Linear(dim, dim, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:        # x [B, T, D]
        q, k, v = self.qkv(x).unflatten(-1, (3, self.heads, -1)).permute(2, 0, 3, 1, 4)   # each [B, H, T, d]
        o = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.out(o.transpose(1, 2).flatten(-2))


class MLP(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.up, self.down = nn.Linear(dim, 4 * dim, bias=False), nn.Linear(4 * dim, dim, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.down(F.gelu(self.up(x)))


class TinyLM(nn.Module):
    def __init__(self, vocab: int, dim: int = 64, layers: int = 4, heads: int = 4, block_size: int = 1,
                 residual: str = "attnres"):
        super().__init__()
        check_int("vocab", vocab, minimum=2)
        check_int("layers", layers, minimum=1)
        check_int("dim", dim, minimum=1)
        check_int("heads", heads, minimum=1)
        if dim % heads:
            raise ParameterError("heads", heads, f"a divisor of dim ({dim})")
        self.block_size = check_int("block_size", block_size, minimum=1)
        self.residual = check_choice("residual", residual, RESIDUALS)
        self.embed = nn.Embedding(vocab, dim)
        self.sublayers = nn.ModuleList(m for _ in range(layers) for m in (Attention(dim, heads), MLP(dim)))
        self.norms = nn.ModuleList(nn.RMSNorm(dim) for _ in range(2 * layers + 1))   # the last is the final norm
        self.depth = nn.ModuleList(AttnRes(dim) for _ in range(2 * layers + 1)) if residual == "attnres" else None
        self.head = nn.Linear(dim, vocab, bias=False)

    def forward(self, tokens: torch.Tensor) -> tuple[torch.Tensor, list[torch.Tensor]]:
        """tokens [B, T] -> (logits [B, T, vocab], per aggregation point its weights [S, B, T])."""
        h = self.embed(tokens)
        if self.depth is None:
            for f, norm in zip(self.sublayers, self.norms):
                h = h + f(norm(h))
            return self.head(self.norms[-1](h)), []
        sources, weights = DepthSources(h, self.block_size), []
        for f, norm, read in zip(self.sublayers, self.norms, self.depth):
            u, p = read(sources.values())
            sources.add(f(norm(u)))
            weights.append(p)
        u, p = self.depth[-1](sources.values())
        return self.head(self.norms[-1](u)), weights + [p]


@dataclass
class Trained:
    model: TinyLM
    losses: list[float]       # training loss per step (nats)
    accuracy: float           # on a fresh batch, positions with a target
    weights: list[torch.Tensor]   # per aggregation point, the mean weight of each source [S]


def train(model: TinyLM, steps: int, batch: int = 32, length: int = 16, lr: float = 3e-3, seed: int = 0,
          device=None, progress: Callable[[Iterable], Iterable] = iter) -> Trained:
    """Adam on the modular-sum task; returns the losses, the accuracy and the mean AttnRes weights.

    ``progress`` wraps the step loop (a progress bar such as ``tqdm``).
    """
    check_int("steps", steps, minimum=1)
    check_real("lr", lr, minimum=0.0, open_min=True)
    vocab = model.head.out_features
    gen = torch.Generator().manual_seed(seed)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    losses = []
    for _ in progress(range(steps)):
        x, y = modular_sum_batch(batch, length, vocab, gen, device)
        loss = F.cross_entropy(model(x)[0].flatten(0, 1), y.flatten(), ignore_index=-100)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    with torch.no_grad():
        x, y = modular_sum_batch(4 * batch, length, vocab, gen, device)
        logits, weights = model(x)
        seen = y != -100
        accuracy = (logits.argmax(-1)[seen] == y[seen]).float().mean().item()
    return Trained(model, losses, accuracy, [p.mean(dim=(1, 2)).cpu() for p in weights])

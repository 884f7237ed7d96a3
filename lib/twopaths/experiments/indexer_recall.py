"""Indexer recall: how much of exact attention's top-k mass a Lightning Indexer's top-k picks hold.

A CSA layer with frozen random weights reads random token sequences (a fixed random embedding per
token of a small vocabulary, so what a query looks for depends on content). Its exact attention over
the compressed entries (``CSA.entry_probs``) is the target. The layer's own indexer, fewer and
narrower heads behind a ReLU, starts from random weights and is trained by V3.2's warm-up
distillation (KL from that attention to the indexer's softmax), then measured on held-out sequences:

    recall_k = sum of p over the indexer's k picks / sum of the k largest p        (1 = no miss)

over the queries that see more than k entries (with fewer, top-k keeps them all). Two references at
the same k: picks by the untrained indexer, and k picks drawn at random (in expectation k/n of the
mass, with n entries visible).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from tqdm.auto import tqdm

from ..errors import check_int, check_real
from ..layers.csa_hca import CSA
from ..layers.indexer import causal_topk, distill_loss, topk_mass


@dataclass(frozen=True)
class Setting:
    d_model: int = 64
    heads: int = 4
    head_dim: int = 64
    index_heads: int = 2
    index_dim: int = 16
    vocab: int = 64
    tokens: int = 512
    batch: int = 8
    steps: int = 200
    lr: float = 3e-3
    window: int = 64

    def __post_init__(self):
        for name in ("d_model", "heads", "head_dim", "index_heads", "index_dim", "vocab", "tokens", "batch", "window"):
            check_int(name, getattr(self, name), minimum=1)
        check_int("steps", self.steps, minimum=0)
        check_real("lr", self.lr, minimum=0, open_min=True)


def sequences(embedding: torch.Tensor, batch: int, tokens: int, gen: torch.Generator) -> torch.Tensor:
    """x [batch, tokens, d_model]: random token ids looked up in a fixed embedding [vocab, d_model]."""
    ids = torch.randint(embedding.shape[0], (batch, tokens), generator=gen)
    return embedding[ids.to(embedding.device)]


def _scores_and_visible(layer: CSA, x: torch.Tensor):
    pos = torch.arange(x.shape[1], device=x.device)
    c_q = layer.q_norm(layer.wq_a(x)).detach()        # the indexer reads the frozen query latent
    return layer.indexer.scores(x, c_q, pos), layer.indexer.visible(pos)


def distill(layer: CSA, embedding: torch.Tensor, s: Setting, gen: torch.Generator, progress: bool = True) -> list[float]:
    """Train ``layer.indexer`` (only) to match ``layer.entry_probs``; returns the loss per step."""
    opt = torch.optim.Adam(layer.indexer.parameters(), lr=s.lr)
    losses = []
    for _ in tqdm(range(s.steps), desc=f"distil indexer {layer.ratio}:1", disable=not progress, leave=False):
        x = sequences(embedding, s.batch, s.tokens, gen)
        with torch.no_grad():
            p = layer.entry_probs(x)
        scores, visible = _scores_and_visible(layer, x)
        loss = distill_loss(scores, p, visible)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses


@torch.no_grad()
def recall(layer: CSA, x: torch.Tensor, ks: list[int]) -> dict[int, tuple[float, float]]:
    """For each k: (indexer recall, random-picks recall), averaged over queries seeing more than k entries."""
    p = layer.entry_probs(x)
    scores, visible = _scores_and_visible(layer, x)
    out = {}
    for k in ks:
        rows = visible > k
        if not rows.any():
            continue
        got = topk_mass(p, causal_topk(scores, visible, k), k)[:, rows]
        chance = (k / visible[rows].float()) / p[:, rows].topk(k, dim=-1).values.sum(-1)
        out[k] = (got.mean().item(), chance.mean().item())
    return out


@dataclass(frozen=True)
class Row:
    ratio: int
    k: int
    trained: float
    untrained: float
    chance: float


def run(ratios: list[int], ks: list[int], s: Setting = Setting(), seed: int = 0, device="cpu",
        progress: bool = True) -> tuple[list[Row], dict[int, list[float]]]:
    """Recall against k for each compression ratio; also the distillation losses per ratio."""
    gen = torch.Generator().manual_seed(seed)
    embedding = torch.randn(s.vocab, s.d_model, generator=gen).to(device)
    test = sequences(embedding, s.batch, s.tokens, gen)
    rows, losses = [], {}
    for ratio in ratios:
        torch.manual_seed(seed + ratio)
        layer = CSA(s.d_model, ratio, heads=s.heads, head_dim=s.head_dim, window=s.window, topk=max(ks),
                    index_heads=s.index_heads, index_dim=s.index_dim).to(device)
        layer.requires_grad_(False)
        layer.indexer.requires_grad_(True)
        before = recall(layer, test, ks)
        losses[ratio] = distill(layer, embedding, s, gen, progress)
        after = recall(layer, test, ks)
        rows += [Row(ratio, k, after[k][0], before[k][0], after[k][1]) for k in after]
    return rows, losses

"""Signal, gradient and mixing through a deep stack: a plain residual, hyper-connections and mHC.

Every layer is one sublayer, an MLP read through the layer's connection: F(u) = W2 gelu(W1 RMSNorm(u)).
The residual stack adds F(x) to its one stream; the HC and mHC stacks copy the input into n streams and
wrap each F in a ``HyperConnection`` or an ``MHC``.

No trained mixing weights are public for either model, so the stacks stand in for trained ones: each
connection's static weights get a seeded Gaussian nudge of standard deviation ``spread``. For HC that is
its static alpha and beta, the mixing matrices themselves; for mHC its biases, the logits before the
sigmoids and the Sinkhorn. ``spread=0`` is each method's own initialisation: the identity for HC, and for
mHC the transformers port's zero biases, which make its mixing nearly uniform. ``diagonal`` adds a logit
to the diagonal of mHC's mixing bias, so that it too can start near the identity.

The composite residual map after l layers, M_l = R_l^T ... R_1^T, carries the input streams to layer l
when every F is zero (x_l = M_l x_0, streams as rows). Its gains are the ones the mHC paper plots: the
largest absolute row sum (forward) and column sum (backward); its singular values say how much any
direction of the streams is stretched.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

from ..errors import check_choice, check_int, check_real
from ..layers.hyper_connections import HyperConnection, collapse, expand_streams, mix
from ..layers.mhc import MHC

KINDS = ("residual", "hc", "mhc")


class Branch(nn.Module):
    """The sublayer every stack shares: a pre-normed two-layer MLP, O(1) output at initialisation."""

    def __init__(self, dim: int, generator: torch.Generator):
        super().__init__()
        self.norm = nn.Parameter(torch.ones(dim))
        self.w1 = nn.Parameter(torch.randn(4 * dim, dim, generator=generator) / dim**0.5)
        self.w2 = nn.Parameter(torch.randn(dim, 4 * dim, generator=generator) / (4 * dim) ** 0.5)

    def forward(self, u: torch.Tensor) -> torch.Tensor:
        return F.gelu(F.rms_norm(u, self.norm.shape, self.norm) @ self.w1.T) @ self.w2.T


class Stack(nn.Module):
    """``layers`` sublayers joined by a plain residual, hyper-connections or mHC."""

    def __init__(self, kind: str, layers: int, dim: int, streams: int = 4, spread: float = 0.0,
                 sinkhorn_iters: int = 20, diagonal: float = 0.0, seed: int = 0):
        super().__init__()
        self.kind = check_choice("kind", kind, KINDS)
        check_int("layers", layers, minimum=1)
        self.streams = check_int("streams", streams, minimum=1)
        check_real("spread", spread, minimum=0.0)
        check_real("diagonal", diagonal)
        gen = torch.Generator().manual_seed(seed)
        self.branches = nn.ModuleList(Branch(dim, gen) for _ in range(layers))
        if kind == "residual":
            self.connections = None
            return
        if kind == "hc":
            self.connections = nn.ModuleList(HyperConnection(dim, streams, layer=i) for i in range(layers))
        else:
            self.connections = nn.ModuleList(MHC(dim, streams, sinkhorn_iters, generator=gen) for _ in range(layers))
        with torch.no_grad():
            for c in self.connections:
                for p in ((c.static_alpha, c.static_beta) if kind == "hc" else (c.bias,)):
                    p.add_(spread * torch.randn(p.shape, generator=gen))
                if kind == "mhc":     # b_res is the last n*n entries of the bias, row by row
                    c.bias[-streams * streams:].view(streams, streams).diagonal().add_(diagonal)

    def forward(self, h: torch.Tensor) -> tuple[torch.Tensor, list[torch.Tensor], list[torch.Tensor]]:
        """h [..., D] -> (output [..., D], the state entering each layer and the last one, res per layer).

        Multi-stream outputs are the streams' mean; ``res`` is empty for the plain residual.
        """
        states, res = [], []
        if self.connections is None:
            x = h
            for f in self.branches:
                states.append(x)
                x = x + f(x)
            return x, states + [x], res
        x = expand_streams(h, self.streams)
        for f, c in zip(self.branches, self.connections):
            states.append(x)
            pre, post, r = c.weights(x)          # what c(x, f) computes, with its mixing matrix kept
            res.append(r.detach())
            x = mix(x, f(collapse(x, pre)), post, r)
        return x.mean(-2), states + [x], res


@dataclass
class Trace:
    """What one stack did to one batch: per depth 0..L, the state's RMS and its gradient's norm."""

    kind: str
    rms: list[float]          # root mean square of every element of the residual state
    grad: list[float]         # |dloss/dstate|, divided by its value at the top
    res: list[torch.Tensor]   # per layer, [tokens, n, n]


def trace(stack: Stack, h: torch.Tensor, probe: torch.Tensor) -> Trace:
    """Run ``h`` [tokens, D] through ``stack`` and back from the loss sum(output * probe)."""
    out, states, res = stack(h.detach().requires_grad_())
    for s in states:
        s.retain_grad()
    (out * probe).sum().backward()
    grads = [s.grad.norm().item() for s in states]
    return Trace(stack.kind, [s.detach().pow(2).mean().sqrt().item() for s in states],
                 [g / grads[-1] for g in grads], res)


def composite(res: list[torch.Tensor]) -> list[torch.Tensor]:
    """M_l = R_l^T ... R_1^T for l = 1..L, each [tokens, n, n]: the residual part of x_0 -> x_l."""
    m = torch.eye(res[0].shape[-1], dtype=res[0].dtype, device=res[0].device)
    out = []
    for r in res:
        m = r.transpose(-1, -2) @ m
        out.append(m)
    return out


def gains(m: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Forward (largest |row| sum) and backward (largest |column| sum) gain of maps [..., n, n]."""
    return m.abs().sum(-1).amax(-1), m.abs().sum(-2).amax(-1)

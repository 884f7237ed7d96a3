"""Hyper-connections (Zhu et al., arXiv 2409.19606): n residual streams read and written with weights.

A plain residual keeps one stream ``x`` and adds each sublayer's output to it. Hyper-connections keep
``n`` streams ``x`` [..., n, D]; around a sublayer ``F`` they compute, per token,

    u   = sum_i pre_i x_i                       (width connection: what F reads)
    x'_j = post_j F(u) + sum_i res[i, j] x_i    (depth connection plus stream mixing)

The three stream helpers below are shared with mHC (``twopaths.layers.mhc``), which differs only in
how ``pre``, ``post`` and ``res`` are made. Note the sum over the *first* index of ``res``.

Plain HC makes them as a static matrix plus a small dynamic term: with each stream normalised,
``A = A_static + s_a tanh(norm(x) W_a)`` in R^{n x (1+n)} (column 0 is ``pre``, the rest is ``res``)
and ``beta = beta_static + s_b tanh(norm(x) W_b)`` (``post``). Nothing bounds ``res``.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
import torch.nn.functional as F
from torch import nn

from ..errors import ParameterError, check_int, check_real


def check_streams(name: str, x: torch.Tensor, streams: int, dim: int) -> None:
    """``x`` must be [..., streams, dim]; say which argument is wrong otherwise."""
    if x.dim() < 2 or tuple(x.shape[-2:]) != (streams, dim):
        raise ParameterError(name, tuple(x.shape), f"a tensor of shape [..., {streams}, {dim}] (streams, dim)")


def expand_streams(x: torch.Tensor, streams: int) -> torch.Tensor:
    """Copy a hidden state [..., D] into ``streams`` identical streams [..., n, D] (the embedding's entry)."""
    check_int("streams", streams, minimum=1)
    return x.unsqueeze(-2).expand(*x.shape[:-1], streams, x.shape[-1]).contiguous()


def collapse(x: torch.Tensor, pre: torch.Tensor) -> torch.Tensor:
    """u = sum_i pre_i x_i: x [..., n, D], pre [..., n] -> [..., D]."""
    if pre.shape[-1] != x.shape[-2]:
        raise ParameterError("pre", tuple(pre.shape), f"[..., {x.shape[-2]}], one weight per stream of x")
    return (pre.unsqueeze(-1) * x).sum(-2)


def mix(x: torch.Tensor, y: torch.Tensor, post: torch.Tensor, res: torch.Tensor) -> torch.Tensor:
    """x'_j = post_j y + sum_i res[i, j] x_i: x [..., n, D], y [..., D], post [..., n], res [..., n, n]."""
    n = x.shape[-2]
    if y.shape != x.shape[:-2] + x.shape[-1:]:
        raise ParameterError("y", tuple(y.shape), f"{tuple(x.shape[:-2] + x.shape[-1:])}, x without its stream axis")
    if post.shape[-1] != n:
        raise ParameterError("post", tuple(post.shape), f"[..., {n}], one weight per stream of x")
    if res.shape[-2:] != (n, n):
        raise ParameterError("res", tuple(res.shape), f"[..., {n}, {n}]")
    return post.unsqueeze(-1) * y.unsqueeze(-2) + res.transpose(-1, -2) @ x


class HyperConnection(nn.Module):
    """One hyper-connection around one sublayer, initialised as the HC paper does.

    At initialisation ``res`` is the identity, ``post`` is all ones and ``pre`` reads stream
    ``layer % n`` alone, so an n-stream network starts as n copies of a plain residual network.
    ``dynamic=False`` drops the tanh terms (the paper's static HC).
    """

    def __init__(self, dim: int, streams: int = 4, layer: int = 0, *, dynamic: bool = True,
                 dynamic_scale: float = 1e-2, norm_eps: float = 1e-6):
        super().__init__()
        self.dim = check_int("dim", dim, minimum=1)
        self.streams = n = check_int("streams", streams, minimum=1)
        check_int("layer", layer, minimum=0)
        self.norm_eps = check_real("norm_eps", norm_eps, minimum=0.0, open_min=True)
        self.dynamic = dynamic
        alpha = torch.zeros(n, 1 + n)
        alpha[layer % n, 0] = 1.0
        alpha[:, 1:] = torch.eye(n)
        self.static_alpha = nn.Parameter(alpha)                  # [n, 1+n]: pre | res
        self.static_beta = nn.Parameter(torch.ones(n))           # [n]: post
        self.norm_weight = nn.Parameter(torch.ones(dim))
        self.alpha_fn = nn.Parameter(torch.zeros(dim, 1 + n))   # zero: the dynamic part starts silent
        self.beta_fn = nn.Parameter(torch.zeros(dim))
        self.alpha_scale = nn.Parameter(torch.tensor(float(dynamic_scale)))
        self.beta_scale = nn.Parameter(torch.tensor(float(dynamic_scale)))

    def weights(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """pre [..., n], post [..., n], res [..., n, n] for streams x [..., n, D]."""
        check_streams("x", x, self.streams, self.dim)
        alpha, beta = self.static_alpha, self.static_beta
        if self.dynamic:
            normed = F.rms_norm(x, (self.dim,), self.norm_weight, self.norm_eps)      # each stream on its own
            alpha = alpha + self.alpha_scale * torch.tanh(normed @ self.alpha_fn)   # [..., n, 1+n]
            beta = beta + self.beta_scale * torch.tanh(normed @ self.beta_fn)       # [..., n]
        else:
            alpha = alpha.expand(*x.shape[:-2], *alpha.shape)
            beta = beta.expand(*x.shape[:-2], *beta.shape)
        return alpha[..., 0], beta, alpha[..., 1:]

    def forward(self, x: torch.Tensor, branch: Callable[[torch.Tensor], torch.Tensor]) -> torch.Tensor:
        pre, post, res = self.weights(x)
        return mix(x, branch(collapse(x, pre)), post, res)

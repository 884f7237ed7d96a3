"""mHC, manifold-constrained hyper-connections, the way DeepSeek V4 computes them.

n streams x [..., n, D] as in ``twopaths.layers.hyper_connections``, but all three weights are made per
token from the *flattened* streams, and the mixing matrix is projected near the doubly-stochastic
matrices (rows and columns summing to one) by a Sinkhorn iteration:

    x^ = RMSNorm(flatten(x))                          no weight; x^ in R^{nD}
    [p | q | R] = x^ phi^T                            phi in R^{(2n + n^2) x nD}
    pre  = sigmoid(a1 p + b_pre) + eps
    post = 2 sigmoid(a2 q + b_post)
    res  = Sinkhorn(a3 R + b_res)                     R viewed as n x n

A doubly-stochastic ``res`` averages streams without amplifying them: its largest singular value is
one, and so is that of any product of such matrices. That is the constraint plain HC lacks.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
import torch.nn.functional as F
from torch import nn

from ..errors import ParameterError, check_int, check_real
from .hyper_connections import check_streams, collapse, mix


def sinkhorn(logits: torch.Tensor, iters: int = 20, eps: float = 1e-6) -> torch.Tensor:
    """Project logits [..., n, n] near the doubly-stochastic matrices, as DeepSeek V4 does.

    A row softmax (so rows already sum to one), plus eps, then a column normalisation; then
    ``iters - 1`` times a row and a column normalisation. Every denominator gets + eps, so sums land
    a hair under one. The last step normalises columns: columns are exact, rows are not quite.
    """
    check_int("iters", iters, minimum=1)
    check_real("eps", eps, minimum=0.0)
    if logits.dim() < 2 or logits.shape[-1] != logits.shape[-2]:
        raise ParameterError("logits", tuple(logits.shape), "a batch of square matrices [..., n, n]")
    # Matrix axes first, [n_row, n_col, ...]: each reduction is then n contiguous passes over all
    # tokens, many times faster on a CPU than reducing a trailing axis of length 4.
    m = logits.movedim((-2, -1), (0, 1)).contiguous()
    m = torch.softmax(m, dim=1) + eps               # each row
    m = m / (m.sum(0) + eps)                        # columns
    for _ in range(iters - 1):
        m = m / (m.sum(1, keepdim=True) + eps)      # rows
        m = m / (m.sum(0) + eps)                    # columns
    return m.movedim((0, 1), (-2, -1))


class MHC(nn.Module):
    """One mHC connection around one sublayer (DeepSeek V4's ``attn_hc`` / ``ffn_hc``).

    Initialised like the transformers port: ``phi`` normal with ``init_std``, biases zero, scales one.
    With zero biases ``res`` starts near the uniform matrix (every stream reads the streams' mean).
    """

    def __init__(self, dim: int, streams: int = 4, sinkhorn_iters: int = 20, eps: float = 1e-6,
                 norm_eps: float = 1e-6, init_std: float = 0.02, generator: torch.Generator | None = None):
        super().__init__()
        self.dim = check_int("dim", dim, minimum=1)
        self.streams = n = check_int("streams", streams, minimum=1)
        self.sinkhorn_iters = check_int("sinkhorn_iters", sinkhorn_iters, minimum=1)
        self.eps = check_real("eps", eps, minimum=0.0)
        self.norm_eps = check_real("norm_eps", norm_eps, minimum=0.0, open_min=True)
        check_real("init_std", init_std, minimum=0.0)
        self.phi = nn.Parameter(torch.randn((2 + n) * n, n * dim, generator=generator) * init_std)
        self.bias = nn.Parameter(torch.zeros((2 + n) * n))
        self.scale = nn.Parameter(torch.ones(3))      # a1, a2, a3

    def weights(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """pre [..., n], post [..., n], res [..., n, n] for streams x [..., n, D]."""
        check_streams("x", x, self.streams, self.dim)
        n = self.streams
        flat = F.rms_norm(x.flatten(-2), (n * self.dim,), eps=self.norm_eps)
        p, q, r = (flat @ self.phi.T).split([n, n, n * n], dim=-1)
        b_pre, b_post, b_res = self.bias.split([n, n, n * n])
        pre = torch.sigmoid(self.scale[0] * p + b_pre) + self.eps
        post = 2 * torch.sigmoid(self.scale[1] * q + b_post)
        res = sinkhorn((self.scale[2] * r + b_res).unflatten(-1, (n, n)), self.sinkhorn_iters, self.eps)
        return pre, post, res

    def forward(self, x: torch.Tensor, branch: Callable[[torch.Tensor], torch.Tensor]) -> torch.Tensor:
        pre, post, res = self.weights(x)
        return mix(x, branch(collapse(x, pre)), post, res)


class MHCHead(nn.Module):
    """The last collapse, before the model's final norm: pre = sigmoid(a (x^ phi^T) + b) + eps."""

    def __init__(self, dim: int, streams: int = 4, eps: float = 1e-6, norm_eps: float = 1e-6,
                 init_std: float = 0.02, generator: torch.Generator | None = None):
        super().__init__()
        self.dim = check_int("dim", dim, minimum=1)
        self.streams = n = check_int("streams", streams, minimum=1)
        self.eps = check_real("eps", eps, minimum=0.0)
        self.norm_eps = check_real("norm_eps", norm_eps, minimum=0.0, open_min=True)
        check_real("init_std", init_std, minimum=0.0)
        self.phi = nn.Parameter(torch.randn(n, n * dim, generator=generator) * init_std)
        self.bias = nn.Parameter(torch.zeros(n))
        self.scale = nn.Parameter(torch.ones(1))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Streams x [..., n, D] -> one hidden state [..., D]."""
        check_streams("x", x, self.streams, self.dim)
        flat = F.rms_norm(x.flatten(-2), (self.streams * self.dim,), eps=self.norm_eps)
        pre = torch.sigmoid(self.scale * (flat @ self.phi.T) + self.bias) + self.eps
        return collapse(x, pre)

"""AttnRes, attention residuals (Kimi team, arXiv 2603.15031): each sublayer chooses which depth to read.

A plain residual hands sublayer l the sum of everything before it. AttnRes hands it a softmax-weighted
mix of the earlier outputs ("sources" v_0 = the embedding, v_1 ... v_{l-1}):

    p_i = softmax_i( w . RMSNorm_g(v_i) * scale )       one learned pseudo-query w per sublayer
    h_l = sum_i p_i v_i                                 the values are *not* normalised

The keys are normalised so that a source's size does not buy it attention; the values are not, so the
mix keeps each source's scale. ``w`` starts at zero: at initialisation every source weighs the same and
h_l is their mean.

Block AttnRes keeps fewer sources: sublayer outputs inside a block of ``block_size`` sublayers are summed
as a plain residual would, and a sublayer reads [embedding, completed block sums, the current block's
partial sum]. ``block_size=1`` is full AttnRes.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
import torch.nn.functional as F
from torch import nn

from ..errors import ParameterError, check_int, check_real


def depth_attention(query: torch.Tensor, sources: Sequence[torch.Tensor], key_weight: torch.Tensor,
                    eps: float = 1e-6, scale: float = 1.0) -> tuple[torch.Tensor, torch.Tensor]:
    """Mix ``sources`` (each [..., D]) by softmax(query . RMSNorm(source)) over depth.

    Returns (h [..., D], p [S, ...]).
    """
    if len(sources) == 0:
        raise ParameterError("sources", [], "at least one tensor [..., D]")
    shape = sources[0].shape
    if any(s.shape != shape for s in sources):
        raise ParameterError("sources", [tuple(s.shape) for s in sources], "tensors of one shape [..., D]")
    dim = shape[-1]
    if query.numel() != dim:
        raise ParameterError("query", tuple(query.shape), f"{dim} values, the sources' last dimension")
    if key_weight.shape != (dim,):
        raise ParameterError("key_weight", tuple(key_weight.shape), f"({dim},)")
    v = torch.stack(tuple(sources))                                  # [S, ..., D]
    k = F.rms_norm(v, (dim,), key_weight, eps)
    p = torch.softmax((k @ query.reshape(dim)) * scale, dim=0)       # [S, ...]: over depth, per token
    return (p.unsqueeze(-1) * v).sum(0), p


class AttnRes(nn.Module):
    """One aggregation point: a zero-initialised pseudo-query and the RMSNorm weight of its keys."""

    def __init__(self, dim: int, eps: float = 1e-6):
        super().__init__()
        check_int("dim", dim, minimum=1)
        self.eps = check_real("eps", eps, minimum=0.0, open_min=True)
        self.query = nn.Parameter(torch.zeros(dim))
        self.key_weight = nn.Parameter(torch.ones(dim))

    def forward(self, sources: Sequence[torch.Tensor]) -> tuple[torch.Tensor, torch.Tensor]:
        return depth_attention(self.query, sources, self.key_weight, self.eps)


class DepthSources:
    """The sources a sublayer reads under block AttnRes, kept as the forward pass goes.

    ``add`` takes each sublayer's output; every ``block_size`` outputs close a block.
    """

    def __init__(self, embedding: torch.Tensor, block_size: int = 1):
        self.block_size = check_int("block_size", block_size, minimum=1)
        self.closed = [embedding]          # embedding, then one sum per completed block
        self.partial, self.count = None, 0

    def add(self, output: torch.Tensor) -> None:
        self.partial = output if self.partial is None else self.partial + output
        self.count += 1
        if self.count % self.block_size == 0:
            self.closed.append(self.partial)
            self.partial = None

    def values(self) -> list[torch.Tensor]:
        return self.closed + ([] if self.partial is None else [self.partial])


def source_count(sublayers: int, block_size: int) -> int:
    """How many sources the final aggregation reads after ``sublayers`` outputs (embedding included)."""
    check_int("sublayers", sublayers, minimum=0)
    check_int("block_size", block_size, minimum=1)
    return 1 + -(-sublayers // block_size)

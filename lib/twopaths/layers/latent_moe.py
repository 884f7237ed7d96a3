"""LatentMoE (Kimi K3's "Stable LatentMoE"): routed experts work in a narrower latent, shared ones at full width.

    y = sum_{j in shared} E_j(x) + W_up RMSNorm( sum_{i in TopK(x)} p_i E_i(W_down x) )

The router scores the full-width ``x``; ``W_down`` (d -> latent) is applied once per token, so what crosses
machines to the experts is ``latent`` wide, not ``d``. K3 (config): d 7168, latent 3584
(``routed_expert_hidden_size``), 896 experts, top-16, expert hidden 3072, 2 shared experts of hidden 3072,
``latent_moe_use_norm`` true. The RMSNorm (weighted, eps 1e-5) sits after the weighted sum and before
``W_up``: whatever scale the chain ``W_down -> expert -> weighted sum`` produced, ``W_up`` sees unit RMS.

With ``norm=False`` and ``act="relu2"`` this is Nemotron-H's latent MoE (transformers ``NemotronHMoE``).
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

from ..errors import check_int, check_real
from .ffn import FFN, Activation, as_activation
from .routers import TopKRouter


class Experts(nn.Module):
    """``n`` FFNs of width ``d`` and hidden ``hidden``, stored as [n, out, in] tensors."""

    def __init__(self, n: int, d: int, hidden: int, act: str | Activation = "situ"):
        super().__init__()
        self.act = as_activation(act)
        init = lambda *shape: nn.Parameter(torch.empty(*shape).uniform_(-1, 1) / math.sqrt(shape[-1]))  # noqa: E731  nn.Linear's scale
        self.w_gate = init(n, hidden, d) if self.act.gated else None
        self.w_up = init(n, hidden, d)
        self.w_down = init(n, d, hidden)

    def forward(self, x: torch.Tensor, indices: torch.Tensor, weights: torch.Tensor) -> torch.Tensor:
        """x [T, d], indices and weights [T, k] -> sum_k weights * E_indices(x): [T, d]."""
        out = torch.zeros_like(x)
        for e in indices.unique().tolist():
            tok, slot = (indices == e).nonzero(as_tuple=True)
            xe = x[tok]
            gate = F.linear(xe, self.w_gate[e]) if self.w_gate is not None else None
            ye = F.linear(self.act(gate, F.linear(xe, self.w_up[e])), self.w_down[e])
            out.index_add_(0, tok, ye * weights[tok, slot, None].to(ye.dtype))
        return out


class LatentMoE(nn.Module):
    """x [..., d] -> y [..., d]; ``router`` defaults to a sigmoid top-k router on the full width."""

    def __init__(self, d: int, latent: int, n_experts: int, top_k: int, hidden: int, *, n_shared: int = 1,
                 shared_hidden: int | None = None, act: str | Activation = "situ", norm: bool = True,
                 eps: float = 1e-5, router: nn.Module | None = None):
        super().__init__()
        check_int("latent", latent, minimum=1)
        check_int("n_shared", n_shared, minimum=0)
        self.router = router if router is not None else TopKRouter(d, n_experts, top_k)
        self.down = nn.Linear(d, latent, bias=False)
        self.experts = Experts(n_experts, latent, hidden, act)
        self.norm = nn.RMSNorm(latent, eps=eps) if norm else nn.Identity()
        self.up = nn.Linear(latent, d, bias=False)
        # n shared experts of one width are one FFN n times as wide: the sum of FFNs concatenates hiddens.
        self.shared = FFN(d, n_shared * (shared_hidden or hidden), act) if n_shared else None
        self.last_routing = None                   # the Routing of the latest call, for balancing and plots

    def routed(self, x: torch.Tensor) -> torch.Tensor:
        """The routed path alone: x [T, d] -> W_up norm(sum_k p_k E_k(W_down x)) [T, d]."""
        self.last_routing = r = self.router(x)
        mixed = self.experts(self.down(x), r.indices, r.weights)         # [T, latent]
        return self.up(self.norm(mixed))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        flat = x.reshape(-1, x.shape[-1])                                  # [T, d]
        y = self.routed(flat)
        if self.shared is not None:
            y = y + self.shared(flat)
        return y.view(x.shape)

    def chain(self) -> list[torch.Tensor]:
        """The weights the routed path multiplies in a row: W_down, the experts' gate/up/down, W_up."""
        ex = self.experts
        return [self.down.weight] + [w for w in (ex.w_gate, ex.w_up, ex.w_down) if w is not None] + [self.up.weight]


def init_chain_(moe: LatentMoE, gain: float = 1.0, generator: torch.Generator | None = None) -> None:
    """Redraw every matrix of the routed chain ~ N(0, gain^2 / fan_in): each multiplies the RMS by ``gain``.

    ``gain = 1`` makes every product of the chain preserve scale on its own; a chain drifted by training
    is modelled by ``gain != 1`` on all of them at once, ``W_up`` included.
    """
    check_real("gain", gain, minimum=0, open_min=True)
    with torch.no_grad():
        for w in moe.chain():
            w.copy_(torch.randn(w.shape, generator=generator) * (gain / math.sqrt(w.shape[-1])))


def residual_rms(blocks: list[nn.Module], x: torch.Tensor) -> list[float]:
    """RMS of a pre-norm residual stream ``x <- x + block(rmsnorm(x))`` before and after each block."""
    out = [x.pow(2).mean().sqrt().item()]
    for block in blocks:
        x = x + block(F.rms_norm(x, (x.shape[-1],)))
        out.append(x.pow(2).mean().sqrt().item())
    return out

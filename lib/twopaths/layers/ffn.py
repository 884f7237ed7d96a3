"""Feed-forward blocks and their activations: SwiGLU, K3's SiTU-GLU, V4's clipped SwiGLU, relu².

A gated block computes ``W_down act(W_gate x, W_up x)``; the activations differ only in how they bound
the gate ``g`` and the linear path ``u``:

- SwiGLU:       ``silu(g) * u``: unbounded in both.
- SiTU (K3):    ``[b1 tanh(g/b1) sigmoid(g)] * [b2 tanh(u/b2)]``: soft caps, ``|h| <= b1 * b2``; the
                sigmoid sees the *uncapped* gate (K3 config: ``activation_situ_beta`` 4,
                ``activation_situ_linear_beta`` 25).
- clip (V4):    ``silu(min(g, L)) * clamp(u, -L, L)`` with ``swiglu_limit`` L = 10: hard caps, whose
                gradient drops to zero at the boundary.
- relu2:        ``relu(u)^2`` with no gate (Nemotron-H's experts), used only to match that oracle.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

from ..errors import check_choice, check_int, check_real

ACTIVATIONS = ("swiglu", "situ", "clip", "relu2")


def softcap(x: torch.Tensor, beta: float) -> torch.Tensor:
    """``beta * tanh(x / beta)``: the identity near 0, bounded by ``beta``, smooth everywhere."""
    beta = check_real("beta", beta, minimum=0, open_min=True)
    return beta * torch.tanh(x / beta)


def swiglu(gate: torch.Tensor, up: torch.Tensor) -> torch.Tensor:
    return F.silu(gate) * up


def situ(gate: torch.Tensor, up: torch.Tensor, beta1: float = 4.0, beta2: float = 25.0) -> torch.Tensor:
    """SiTU-GLU: SiLU with its linear factor softcapped at ``beta1``, times the softcapped up path."""
    beta1, beta2 = check_real("beta1", beta1, minimum=0, open_min=True), check_real("beta2", beta2, minimum=0, open_min=True)
    return softcap(gate, beta1) * torch.sigmoid(gate) * softcap(up, beta2)


def clipped_swiglu(gate: torch.Tensor, up: torch.Tensor, limit: float = 10.0) -> torch.Tensor:
    """V4's SwiGLU: gate clamped from above only, up clamped on both sides."""
    return F.silu(gate.clamp(max=limit)) * up.clamp(-limit, limit)


def relu2(up: torch.Tensor) -> torch.Tensor:
    return F.relu(up).square()


@dataclass(frozen=True)
class Activation:
    """One of ``ACTIVATIONS`` with its bounds; call it as ``act(gate, up)`` (``gate`` is None for relu2)."""

    kind: str = "swiglu"
    beta1: float = 4.0     # SiTU gate cap
    beta2: float = 25.0    # SiTU linear-path cap
    limit: float = 10.0    # hard-clip bound

    def __post_init__(self):
        check_choice("act", self.kind, ACTIVATIONS)
        check_real("beta1", self.beta1, minimum=0, open_min=True)
        check_real("beta2", self.beta2, minimum=0, open_min=True)
        check_real("limit", self.limit, minimum=0, open_min=True)

    @property
    def gated(self) -> bool:
        return self.kind != "relu2"

    def __call__(self, gate: torch.Tensor | None, up: torch.Tensor) -> torch.Tensor:
        if self.kind == "swiglu":
            return swiglu(gate, up)
        if self.kind == "situ":
            return situ(gate, up, self.beta1, self.beta2)
        if self.kind == "clip":
            return clipped_swiglu(gate, up, self.limit)
        return relu2(up)


def as_activation(act: str | Activation) -> Activation:
    return act if isinstance(act, Activation) else Activation(act)


class FFN(nn.Module):
    """``W_down act(W_gate x, W_up x)``: x [..., d] -> [..., d]; hidden width ``hidden``."""

    def __init__(self, d: int, hidden: int, act: str | Activation = "swiglu"):
        super().__init__()
        check_int("d", d, minimum=1)
        check_int("hidden", hidden, minimum=1)
        self.act = as_activation(act)
        self.w_gate = nn.Linear(d, hidden, bias=False) if self.act.gated else None
        self.w_up = nn.Linear(d, hidden, bias=False)
        self.w_down = nn.Linear(hidden, d, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        gate = self.w_gate(x) if self.w_gate is not None else None
        return self.w_down(self.act(gate, self.w_up(x)))


def grads(act: Activation, gate: torch.Tensor, up: torch.Tensor):
    """(h, dh/dgate, dh/dup) elementwise, by autograd: how much signal each path passes back."""
    gate, up = gate.detach().clone().requires_grad_(), up.detach().clone().requires_grad_()
    h = act(gate, up)
    dg, du = torch.autograd.grad(h.sum(), (gate, up))
    return h.detach(), dg, du

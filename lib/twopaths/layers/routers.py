"""MoE routers: which experts each token goes to, with what weight, and how the choice is balanced.

Every router scores a token against every expert from the full-width hidden state, ``s = f(x W_r^T)``,
*chooses* on the biased score ``s + b`` and *weights* the chosen experts by the unbiased ``s``:

- DeepSeek-V3: ``f = sigmoid``; choose among the best ``topk_group`` of ``n_group`` expert groups (a group
  scores the sum of its two best biased scores); weights ``s_sel / sum(s_sel) * 2.5``.
- DeepSeek-V4: ``f = sqrt(softplus)``, plain top-k, weights normalised then ``* 1.5`` (Flash) or ``* 2.5`` (Pro).
- Kimi K3: ``f = sigmoid``, one group, renormalised, scale 1.
- Hash routing (V4's first MoE layers): the experts come from a frozen token-id -> experts table; the
  weights still come from ``s``.

The bias ``b`` is not trained by gradient: the auxiliary-loss-free rule (V3) nudges it by a fixed step
against each expert's load; Quantile Balancing (K3, ``quantile_balancing.py``) solves for it.

``TopKRouter`` and ``HashRouter`` return a ``Routing`` (scores [T, E], weights [T, k], indices [T, k]);
``moe_counts`` reads expert counts from a config excerpt (``specs.model(id).raw["config"]``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import NamedTuple

import torch
import torch.nn.functional as F
from torch import nn

from ..errors import ParameterError, check_choice, check_int, check_real


def sqrt_softplus(logits: torch.Tensor) -> torch.Tensor:
    return F.softplus(logits).sqrt()


SCORE_FUNCS = {"sigmoid": torch.sigmoid, "sqrtsoftplus": sqrt_softplus}


class Routing(NamedTuple):
    scores: torch.Tensor    # [T, E] unbiased scores s
    weights: torch.Tensor   # [T, k] gate weights of the chosen experts
    indices: torch.Tensor   # [T, k] chosen experts


def check_top_k(top_k: int, n_experts: int, *, strict: bool = False) -> int:
    """``1 <= top_k <= n_experts`` (``< n_experts`` when ``strict``: Quantile Balancing needs a (k+1)-th)."""
    check_int("n_experts", n_experts, minimum=1)
    return check_int("top_k", top_k, minimum=1, maximum=n_experts - 1 if strict else n_experts)


def check_groups(n_experts: int, top_k: int, n_group: int, topk_group: int) -> None:
    """``n_group`` divides the experts, ``topk_group <= n_group``, and the kept groups hold ``top_k`` experts."""
    check_top_k(top_k, n_experts)
    check_int("n_group", n_group, minimum=1, maximum=n_experts)
    if n_experts % n_group:
        raise ParameterError("n_group", n_group, f"a divisor of the expert count {n_experts}")
    check_int("topk_group", topk_group, minimum=1, maximum=n_group)
    if top_k > topk_group * (n_experts // n_group):
        raise ParameterError("top_k", top_k, f"at most topk_group * experts per group = {topk_group * (n_experts // n_group)}")


def group_limited_topk(choice: torch.Tensor, top_k: int, n_group: int = 1, topk_group: int = 1) -> torch.Tensor:
    """Top-``top_k`` of ``choice`` [T, E] restricted to the ``topk_group`` best of ``n_group`` equal groups."""
    T, E = choice.shape
    check_groups(E, top_k, n_group, topk_group)
    if n_group > 1:
        grouped = choice.view(T, n_group, E // n_group)
        group_score = grouped.topk(min(2, E // n_group), dim=-1).values.sum(-1)          # [T, n_group]
        keep = torch.zeros_like(group_score, dtype=torch.bool)
        keep.scatter_(1, group_score.topk(topk_group, dim=-1).indices, True)
        choice = choice.masked_fill(~keep.repeat_interleave(E // n_group, dim=1), float("-inf"))
    return choice.topk(top_k, dim=-1).indices


def gate_weights(scores: torch.Tensor, indices: torch.Tensor, scale: float = 1.0,
                 normalize: bool = True) -> torch.Tensor:
    """The chosen experts' unbiased scores, optionally summing to 1, times ``scale``: [T, k]."""
    w = scores.gather(1, indices)
    if normalize:
        w = w / (w.sum(-1, keepdim=True) + 1e-20)
    return w * scale


class TopKRouter(nn.Module):
    """Score, choose on ``s + bias`` (group-limited when ``n_group > 1``), weight by ``s``."""

    def __init__(self, d: int, n_experts: int, top_k: int, score: str = "sigmoid", *, n_group: int = 1,
                 topk_group: int = 1, scale: float = 1.0, normalize: bool = True):
        super().__init__()
        check_groups(n_experts, top_k, n_group, topk_group)
        self.score_func = check_choice("score", score, SCORE_FUNCS)
        self.top_k, self.n_group, self.topk_group = top_k, n_group, topk_group
        self.scale, self.normalize = check_real("scale", scale, minimum=0, open_min=True), normalize
        self.proj = nn.Linear(d, n_experts, bias=False)
        self.register_buffer("bias", torch.zeros(n_experts))       # set by a balancing rule, never by gradient

    def scores(self, x: torch.Tensor) -> torch.Tensor:
        """x [..., d] -> s [T, E], in fp32."""
        x = x.reshape(-1, self.proj.in_features).float()
        return SCORE_FUNCS[self.score_func](F.linear(x, self.proj.weight.float()))

    def forward(self, x: torch.Tensor) -> Routing:
        s = self.scores(x)
        idx = group_limited_topk(s + self.bias, self.top_k, self.n_group, self.topk_group)
        return Routing(s, gate_weights(s, idx, self.scale, self.normalize), idx)


def hash_table(vocab: int, n_experts: int, top_k: int, seed: int = 0) -> torch.Tensor:
    """A frozen [vocab, top_k] table of distinct experts per token id, uniform at random."""
    check_top_k(top_k, n_experts)
    check_int("vocab", vocab, minimum=1)
    gen = torch.Generator().manual_seed(seed)
    return torch.rand(vocab, n_experts, generator=gen).argsort(-1)[:, :top_k]


class HashRouter(TopKRouter):
    """Experts from ``table[input_ids]``; weights from the learned scores, as in the top-k router."""

    def __init__(self, d: int, n_experts: int, top_k: int, vocab: int, score: str = "sqrtsoftplus", *,
                 scale: float = 1.0, normalize: bool = True, seed: int = 0):
        super().__init__(d, n_experts, top_k, score, scale=scale, normalize=normalize)
        self.register_buffer("table", hash_table(vocab, n_experts, top_k, seed))

    def forward(self, x: torch.Tensor, input_ids: torch.Tensor) -> Routing:
        s = self.scores(x)
        idx = self.table[input_ids.reshape(-1)]
        return Routing(s, gate_weights(s, idx, self.scale, self.normalize), idx)


# --- balance ---------------------------------------------------------------------------------------

def expert_load(indices: torch.Tensor, n_experts: int) -> torch.Tensor:
    """Tokens each expert receives: [E] counts from indices [T, k]."""
    return torch.bincount(indices.reshape(-1), minlength=n_experts)


def max_violation(load: torch.Tensor) -> float:
    """MaxVio (Loss-Free Balancing paper): ``max(load) / mean(load) - 1``; 0 is perfect balance."""
    load = load.float()
    return (load.max() / load.mean() - 1).item()


def aux_free_update(bias: torch.Tensor, load: torch.Tensor, rate: float = 1e-3) -> torch.Tensor:
    """V3's rule: ``b + rate * sign(mean load - load)``: overloaded experts become less attractive."""
    rate = check_real("rate", rate, minimum=0, open_min=True)
    load = load.float()
    return bias + rate * torch.sign(load.mean() - load)


# --- expert counts from a config ---------------------------------------------------------------------

class MoECounts(NamedTuple):
    routed: int
    top_k: int
    shared: int

    def activation_rate(self, with_shared: bool = True) -> float:
        """Experts a token runs over experts it could run: ``(k + shared) / (E + shared)``, or ``k / E``."""
        return (self.top_k + self.shared) / (self.routed + self.shared) if with_shared else self.top_k / self.routed


# The configs name the same counts differently (DeepSeek's names first, then Kimi's).
_KEYS = {"routed": ("n_routed_experts", "num_experts"),
         "top_k": ("num_experts_per_tok", "num_experts_per_token"),
         "shared": ("n_shared_experts", "num_shared_experts")}


def moe_counts(config: Mapping) -> MoECounts:
    """Routed experts, experts per token and shared experts from a verbatim config excerpt."""
    found = {}
    for field, names in _KEYS.items():
        hits = [config[n] for n in names if n in config]
        if not hits:
            raise ParameterError("config", sorted(config), f"a config with one of {', '.join(names)}")
        found[field] = int(hits[0])
    return MoECounts(**found)

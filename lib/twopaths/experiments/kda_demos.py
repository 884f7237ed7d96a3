"""The KDA chapter's small demonstrations: what a state reads back after each write, gates as a layer
draws them, one tile's scores factored in BF16, and how far token order moves a state."""

from __future__ import annotations

import math

import torch

from ..layers import kda


def read_back(keys: torch.Tensor, values: torch.Tensor, query: torch.Tensor, beta=None):
    """Write ``values`` [T, V] under ``keys`` [T, K] one token at a time into one head with no
    forgetting, and read what ``query`` [K] holds after each write. ``beta`` [1, T, 1] is the write
    strength (default 1). Returns the delta rule's reads and plain linear attention's, both [T, V]."""
    T, K = keys.shape
    as_batch = lambda x: x[None, :, None]   # noqa: E731  [T, ...] -> [1, T, 1, ...]
    g = torch.zeros(1, T, 1, K)
    beta = torch.ones(1, T, 1) if beta is None else beta
    delta, linear = [], []
    for t in range(1, T + 1):
        queries = query.expand(t, K) * K ** 0.5   # the kernel's 1/sqrt(K) undone: reads S^T query
        o, _ = kda.kda_recurrent(as_batch(queries), as_batch(keys[:t]), as_batch(values[:t]),
                                 g[:, :t], beta[:, :t])
        delta.append(o[0, -1, 0])
        linear.append(torch.einsum("tk,tv->kv", keys[:t], values[:t]).T @ query)
    return torch.stack(delta), torch.stack(linear)


def layer_gates(tokens: int, heads: int, channels: int, spread: float, lower_bound: float,
                generator: torch.Generator):
    """Log-retentions [tokens, heads, channels] from the same pre-activations (normal, sd ``spread``)
    through two gates, with the per-head scale e^A and per-channel ``dt_bias`` drawn as fla
    initialises them: Kimi Linear's unbounded -e^A softplus(x + b) and K3's floored
    ``lower_bound`` * sigmoid(e^A (x + b))."""
    x = spread * torch.randn(tokens, heads, channels, generator=generator)
    scale = torch.empty(heads, 1).uniform_(1, 16, generator=generator)
    dt = torch.empty(heads, channels).uniform_(math.log(1e-3), math.log(1e-1), generator=generator).exp()
    bias = dt + torch.log(-torch.expm1(-dt))
    unbounded = -scale * torch.nn.functional.softplus(x + bias)
    return unbounded, lower_bound * torch.sigmoid(scale * (x + bias))


def tile_scores_bf16(q: torch.Tensor, k: torch.Tensor, g: torch.Tensor):
    """A tile's causal scores ([n, K] inputs) factored as one BF16 matrix product, and exactly
    (pairwise, float64); both as the flat lower triangle."""
    G = g.double().cumsum(0)   # [n, K], from the tile start
    factored = ((q.double() * G.exp()).bfloat16() @ (k.double() * (-G).exp()).bfloat16().T).double()
    exact = torch.einsum("id,jd,ijd->ij", q.double(), k.double(), (G[:, None] - G[None, :]).exp())
    keep = torch.ones(len(q), len(q), dtype=torch.bool).tril()
    return factored[keep], exact[keep]


def order_change(q, k, v, g, beta, orders) -> dict[str, list[float]]:
    """For each of ``orders`` (permutations of the tokens of one head), how far the final state moves,
    relative to its size, under linear attention, the delta rule without decay, and KDA."""
    states = {
        "linear attention": lambda k, v, g, beta: torch.einsum("btk,btv->kv", k[:, :, 0], v[:, :, 0]),
        "delta rule (no decay)":
            lambda k, v, g, beta: kda.kda_recurrent(q, k, v, torch.zeros_like(g), beta)[1][0, 0],
        "KDA (decay and delta rule)": lambda k, v, g, beta: kda.kda_recurrent(q, k, v, g, beta)[1][0, 0],
    }
    change = {name: [] for name in states}
    for order in orders:
        for name, final_state in states.items():
            S = final_state(k, v, g, beta)
            S_perm = final_state(k[:, order], v[:, order], g[:, order], beta[:, order])
            change[name].append(((S_perm - S).norm() / S.norm()).item())
    return change

"""The one-screen findings page: the article's headline claims, each with the chapter that shows it,
and the K3 / V4-Pro comparison at a glance, from the calculators the chapters use."""

from __future__ import annotations

import itertools
from dataclasses import dataclass

from IPython.display import Markdown

from ..claims.audit import Row, by_id
from ..machinery.report import markdown_table
from ..specs.lookup import shipped_kv_dtype
from ..specs.serving import Assumptions
from . import plans
from .audit_report import figure, printed

# The claims the article's conclusions rest on, in the article's order, and the page that shows each.
HEADLINE = {
    "k3-mla-per-token-layer": "01-kv-wall",
    "k3-over-v4-request": "01-kv-wall",
    "v4-kv-share-of-v32": "01-kv-wall",
    "k3-sparsest": "04-latent-moe",
    "gpu-gap-bare": "11-prefill-decode",
    "node-ratio-h200": "11-prefill-decode",
    "kda-advantage-context": "14-audit",
    "k3-b300-improvement": "13-hardware-cost",
    "k3-ttft-headroom": "13-hardware-cost",
    "unit-cost-ratio": "13-hardware-cost",
}
# How the released-config figure is counted where the method is not the claim's own words: the
# bare count pools every GPU's memory as the article's Step 1 does, the fleet claims take the
# book's valid plans with every session resident (the article's Step 4), the check's ``pub_plan``.
MEASURED_AS = {
    "gpu-gap-bare": "bare counts, memory pooled as in the article",
    "node-ratio-h200": "valid plans, every session resident",
    "k3-b300-improvement": "valid plans, every session resident",
    "k3-ttft-headroom": "a first token waits for its prompt's prefill",
}


def headline_rows() -> list[Row]:
    rows = by_id()
    return [rows[cid] for cid in HEADLINE]


def released(r: Row) -> str:
    """The released-config figure, with how it is counted where that is not the claim's method."""
    how = MEASURED_AS.get(r.id)
    return figure(r, r.public_config) + (f" ({how})" if how else "")


def headline_table(rows: list[Row]) -> Markdown:
    """One line per headline claim: the article's figure, the figure from its own inputs and from
    the released configs, the verdict and the chapter that shows it."""
    return markdown_table(
        ["claim", "the article says", "from its own inputs", "from the released configs", "verdict", "shown in"],
        [[r.claim, printed(r), figure(r, r.recomputed), released(r), r.overall,
          f"{{doc}}`{HEADLINE[r.id]}`"] for r in rows])


# The settings the page's range of K3 : V4-Pro spans, on each headline GPU: weight formats, cache
# formats (chosen, or each model's as shipped: specs.lookup.shipped_kv_dtype) and DCP or none.
RANGE = {"the weight format": ("shipped", "fp8-non-expert"), "the cache format": ("bf16", "fp8", "shipped"),
         "DCP": (True, False)}


def ratio_grid(a: Assumptions, rho: float) -> dict[tuple, float]:
    """K3 : V4-Pro nodes on the book's headline plans at duty cycle ``rho``, for each ``(weights,
    cache, dcp, gpu)`` of ``RANGE`` and ``plans.HEADLINE_GPUS``, everything else as ``a``."""
    out = {}
    for w, kv, dcp in itertools.product(*RANGE.values()):
        b = a.but(weights=w, **({} if dcp else {"max_dcp": 1}))
        h = {m: plans.headline(b.but(kv_dtype=shipped_kv_dtype(m) if kv == "shipped" else kv))
             for m in (plans.K3, plans.V4)}
        for g in plans.HEADLINE_GPUS:
            out[w, kv, dcp, g] = h[plans.K3][plans.K3, g, rho].nodes / h[plans.V4][plans.V4, g, rho].nodes
    return out


def _cache(kv: str) -> str:
    """``BF16``, or ``as shipped (K3 BF16, V4-Pro FP8)``."""
    if kv != "shipped":
        return kv.upper()
    return f"as shipped (K3 {shipped_kv_dtype(plans.K3).upper()}, V4-Pro {shipped_kv_dtype(plans.V4).upper()})"


def setting(w: str, kv: str, dcp: bool, gpu: str) -> str:
    """One setting of ``ratio_grid`` in words."""
    weights = {"shipped": "weights as shipped", "fp8-non-expert": "FP8 non-expert weights"}[w]
    caches = f"caches {_cache(kv)}" if kv == "shipped" else f"{_cache(kv)} caches"
    return f"{weights}, {caches}, {'with' if dcp else 'without'} DCP, on {gpu.upper()}s"


def range_table(grid: dict[tuple, float]) -> Markdown:
    """``ratio_grid`` as one line a setting of weights, caches and DCP, a column a GPU."""
    gpus = list(dict.fromkeys(k[3] for k in grid))
    rows = [[{"shipped": "as shipped", "fp8-non-expert": "FP8 non-expert"}[w], _cache(kv),
             "yes" if dcp else "no", *(f"{grid[w, kv, dcp, g]:.2f}" for g in gpus)]
            for w, kv, dcp in dict.fromkeys(k[:3] for k in grid)]
    return markdown_table(["weights", "caches", "DCP", *(f"K3 : V4-Pro on {g.upper()}" for g in gpus)], rows)


@dataclass(frozen=True)
class Glance:
    """K3 against V4-Pro: cache per request over context, weights per decode GPU and nodes for the
    sessions, by GPU, from the book's plans (public configs, the book's serving assumptions)."""
    contexts: tuple[int, ...]
    cache: dict            # model -> bytes per request at each context
    weights: dict          # (model, gpu) -> weight bytes on one decode GPU
    usable: dict           # gpu -> bytes a GPU gives weights plus cache
    nodes: dict            # (model, gpu) -> total nodes


def glance(a, plans: dict, models: tuple[str, str], gpus: tuple[str, ...], rho: float,
           contexts: tuple[int, ...]) -> Glance:
    """The at-a-glance figures from ``plans`` (``plans.headline``) at duty cycle ``rho``."""
    from ..calc import kv
    from ..specs import model
    cache = {m: [kv.request_kv_bytes(model(m), t, a.kv_dtype) for t in contexts] for m in models}
    pick = {(m, g): plans[m, g, rho] for m in models for g in gpus}
    return Glance(contexts, cache, {k: p.decode.weights for k, p in pick.items()},
                  {g: pick[models[0], g].decode.usable for g in gpus},
                  {k: p.nodes for k, p in pick.items()})

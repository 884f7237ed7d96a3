"""Bytes one request keeps on a decode GPU, and the weights a model brings, under three bases.

A *basis* says where the dimensions come from:

- ``"stated"``: the article's printed figures (``specs/deployment.yaml``): a fixed state plus a
  per-token cache (K3: 207 MB + 61.4 kB a token; V4-Pro: 12.2 kB a token), weights at one byte a
  parameter. With ``rounding="article"`` a request is rounded to three significant figures, as the
  article prints and carries it (30.9 GB, 6.10 GB, 61.6 GB).
- ``"article"``: the article's assumptions recomputed exactly by ``calc.kv`` (``specs.model(id,
  "article")``): the same model of the cache without its rounding and unit slips.
- ``"public"``: the public configs (``calc.kv`` and ``calc.weights``), in ``kv_dtype``/``state_dtype``
  and the shipped weight formats unless ``formats`` overrides them.

``request_bytes(model, context, basis, rounding, kv_dtype=None, state_dtype=None)``,
``model_weight_bytes(model, basis, formats=None)`` and ``activated_weight_bytes(model, basis,
formats=None)`` return bytes.
"""

from __future__ import annotations

from ..errors import check_choice
from ..specs import model as model_spec
from ..specs.deployment import deployment
from ..specs.params import param_counts
from . import kv
from .rounding import to_figures
from .weights import weight_bytes

BASES = ("stated", "article", "public")
PRINTED_FIGURES = 3         # the article prints a request's cache to three figures and carries that


def request_bytes(model: str, context: int, basis: str = "stated", rounding: str = "strict", *,
                  kv_dtype=None, state_dtype: str | None = None) -> float:
    """Cache bytes of one request of ``context`` tokens on a decode GPU (KV plus any fixed state)."""
    check_choice("basis", basis, BASES)
    if basis == "stated":
        d = deployment(model)
        tokens = kv.check_int("context", context, minimum=0, maximum=kv.MAX_TOKENS)
        return to_figures(d.fixed_state_bytes + d.kv_per_token * tokens, PRINTED_FIGURES, rounding)
    spec = model_spec(model, "article" if basis == "article" else "public")
    tokens = kv.check_int("context", context, minimum=0, maximum=kv.MAX_TOKENS)
    return kv.request_kv_bytes(spec, tokens, kv_dtype if basis == "public" else None,
                               state_dtype if basis == "public" else None)


def model_weight_bytes(model: str, basis: str = "stated", formats: dict | None = None) -> float:
    """All of a model's weights: the article's headline count at its bytes per parameter, or the
    public config's in the shipped formats (``formats`` overrides groups, as in ``calc.weights``)."""
    check_choice("basis", basis, BASES)
    if basis == "public":
        return sum(weight_bytes(model, formats).values())
    d = deployment(model)
    return d.params_headline * d.bytes_per_param


def activated_weight_bytes(model: str, basis: str = "stated", formats: dict | None = None) -> float:
    """Bytes of the weights one token reads: the article's activated parameters at its bytes per
    parameter, or each public component's activated share of its bytes in the shipped formats."""
    check_choice("basis", basis, BASES)
    if basis != "public":
        d = deployment(model)
        return d.activated_params * d.bytes_per_param
    counts = param_counts(model)
    group_bytes = weight_bytes(model, formats)
    group_params = counts.by_group()
    out = 0.0
    for c in counts.components:
        if c.in_total and c.group != "embedding" and c.params:
            out += group_bytes[c.group] * c.activated / group_params[c.group]
    return out

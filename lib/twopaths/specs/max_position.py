"""The longest context a model's config declares, and whether a context is past it.

A config's ``max_position_embeddings`` is the longest context the model was built for (Kimi K3 and
DeepSeek V4: 1,048,576 tokens; V3 and V3.2: 163,840). The book's arithmetic does not stop there: a
cache of more tokens has a size, and a fleet for it can be priced, which is how chapter 13 and a
reader's own contexts find where plans stop. But such a figure is not a deployment the model
supports (vLLM refuses a longer ``max_model_len`` unless ``VLLM_ALLOW_LONG_MAX_MODEL_LEN`` is set,
SGLang unless ``SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN`` is), so it is computed and flagged,
never shown silently. ``beyond`` is the one test every page, table, the
``plan`` command's text and JSON and ``calc.fleet.Plan.beyond_max_position`` use; how a page says
it is ``views.context_limit``.
"""

from __future__ import annotations

from ..errors import check_int
from . import ModelSpec, model as model_spec


def _spec(model: ModelSpec | str) -> ModelSpec:
    return model_spec(model) if isinstance(model, str) else model


def limit(model: ModelSpec | str) -> int | None:
    """The config's ``max_position_embeddings``, or None where it declares none."""
    value = _spec(model).config.get("max_position_embeddings")
    return int(value) if value else None


def beyond(model: ModelSpec | str, context: int) -> bool:
    """Whether ``context`` tokens is past the longest context the model's config declares."""
    cap = limit(model)
    return cap is not None and check_int("context", context, minimum=0) > cap


def capped(model: ModelSpec | str, tokens: int) -> int:
    """``tokens``, or the model's limit where that is shorter: of the contexts that fit, the longest
    the model serves."""
    cap = limit(model)
    tokens = check_int("tokens", tokens, minimum=0)
    return tokens if cap is None else min(tokens, cap)

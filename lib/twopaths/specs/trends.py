"""The companion note's five-model table, as far as the registry does not hold it (``trends.yaml``),
and the attention routes each registry model's layers take, read from its cache groups.

The note sorts long-context attention into four routes: compression (fewer, coarser entries: MLA's
latent, V4's 4:1 and 128:1 entries), sparsity (attend to a selected subset: DSA, CSA's top-k),
linear (a fixed-size recurrent state: KDA) and the sliding window (the last w tokens, raw).
"""

from __future__ import annotations

from datetime import date
from functools import cache

import yaml

from ..errors import check_choice
from . import HERE, ModelSpec, model, model_ids

ROUTES = ("compression", "sparse", "linear", "sliding window")


@cache
def _data() -> dict:
    return yaml.safe_load((HERE / "trends.yaml").read_text())


def columns() -> list[str]:
    """The note's five models, in its column order."""
    return list(_data()["columns"])


def note_entry(model_id: str) -> dict:
    """The note's cells for ``model_id`` that the registry does not hold (GLM-5.2: all of them)."""
    return dict(_data()["models"][check_choice("model", model_id, columns())])


def source() -> str:
    return _data()["source"]


def release(model_id: str) -> date:
    """The release date the note prints (a month only: its first day)."""
    text = str(note_entry(model_id)["release"])
    return date.fromisoformat(text if len(text) == 10 else text + "-01")


def published(name: str) -> dict:
    """A published figure the book compares with, with its source (``trends.yaml: published``)."""
    return dict(_data()["published"][check_choice("published figure", name, list(_data()["published"]))])


def attention_routes(spec: ModelSpec) -> dict[str, int]:
    """Layers of ``spec`` taking each route (a layer may take several: V4's CSA is compressed,
    sparse and windowed at once). Read from the cache groups of the public spec."""
    layers = dict.fromkeys(ROUTES, 0)
    for g in spec.attention:
        if g.kind == "kda":
            layers["linear"] += g.layers
        elif g.kind in ("mla", "compressed"):
            layers["compression"] += g.layers
        elif g.kind == "window":
            layers["sliding window"] += g.layers
        elif g.kind == "indexer":    # a Lightning Indexer picks what to attend: V3.2's DSA, V4's CSA
            layers["sparse"] += g.layers
    return layers


def routes(model_id: str) -> dict[str, int]:
    """``attention_routes`` of a registry model, or the note's reading for a model without a config."""
    if model_id in model_ids(include_reference=True):
        return attention_routes(model(model_id))
    return {r: note_entry(model_id)["routes"][r] for r in ROUTES}

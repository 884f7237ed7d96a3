"""The architecture-trends chapter's side-by-side table (the companion note's appendix, rebuilt).

Each column comes from a model's ``config.json`` and ``specs.params`` where the registry has the model;
otherwise (GLM-5.2) it repeats the note's own figures (``specs/trends.yaml``), each such cell marked
"(note)". The accessors (``name``, ``total``, ``active``, ``moe``, ``n_layers``) answer the same way,
so the chapter's other tables and plots read one source.
"""

from __future__ import annotations

from functools import cache

from IPython.display import Markdown

from .. import specs
from ..claims.checks import trends as note_checks
from ..layers import routers
from ..machinery.report import markdown_table
from ..specs import params
from ..specs import trends

SCHEDULE = {0: "sliding-window", 4: "CSA", 128: "HCA"}   # V4's compress ratio -> layer kind
NOTE = " (note)"


def in_registry(m: str) -> bool:
    return m in specs.model_ids()


@cache
def counts(m: str) -> params.ParamCounts:
    return params.param_counts(m)


def cfg(m: str) -> dict:
    return specs.model(m).config


def name(m: str) -> str:
    return specs.model(m).name if in_registry(m) else trends.note_entry(m)["name"]


def total(m: str) -> float:
    return counts(m).total if in_registry(m) else trends.note_entry(m)["params"]["total"]


def active(m: str) -> float:
    return counts(m).activated() if in_registry(m) else trends.note_entry(m)["params"]["active"]


def active_share(m: str) -> float:
    """Parameters a token activates over all of them, both counted from the config (the note's own
    figures for a model the registry lacks): the one share of parameters every page gives."""
    return active(m) / total(m)


def moe(m: str) -> routers.MoECounts:
    if in_registry(m):
        return routers.moe_counts(cfg(m))
    return routers.MoECounts(**trends.note_entry(m)["moe"])


def n_layers(m: str) -> int:
    return cfg(m)["num_hidden_layers"] if in_registry(m) else trends.note_entry(m)["layers"]


def layers_cell(m: str) -> str:
    if not in_registry(m):
        e = trends.note_entry(m)
        return f"{e['layers']} ({e['dense_layers']} dense + {e['moe_layers']} MoE){NOTE}"
    c, n = cfg(m), n_layers(m)
    if "linear_attn_config.kda_layers" in c:
        return (f"{n} ({len(c['linear_attn_config.kda_layers'])} KDA + "
                f"{len(c['linear_attn_config.full_attn_layers'])} Gated MLA)")
    if "compress_ratios" in c:
        first = c["compress_ratios"][0]
        lead = note_checks.leading(m, first)
        hca = note_checks.hca(m) - (lead if first == 128 else 0)
        return f"{n} (first {lead} {SCHEDULE[first]}, then {note_checks.csa(m)} CSA + {hca} HCA)"
    return f"{n} (first {c['first_k_dense_replace']} dense)"


def attention_cell(m: str) -> str:
    text = trends.note_entry(m)["attention"]
    if not in_registry(m):
        e = trends.note_entry(m)
        return f"{text}; {e['index_layers']} of {e['layers']} layers keep their own index{NOTE}"
    c = cfg(m)
    if "index_topk" in c:
        return (f"{text}; CSA keeps the top {c['index_topk']:,}; "
                f"{c['num_attention_heads']} heads of {c['head_dim']}")
    if "linear_attn_config.kda_layers" in c:
        return (f"{text}; {c['linear_attn_config.num_heads']} KDA heads of "
                f"{c['linear_attn_config.head_dim']}")
    return f"{text}; {c['num_attention_heads']} heads"


def moe_cell(m: str) -> str:
    e = moe(m)
    latent = ""
    if in_registry(m) and "routed_expert_hidden_size" in cfg(m):
        latent = f" (LatentMoE, experts at width {cfg(m)['routed_expert_hidden_size']:,})"
    return (f"{e.routed} routed, {e.top_k} per token, {e.shared} shared{latent}"
            + ("" if in_registry(m) else NOTE))


def balance_cell(m: str) -> str:
    text = trends.note_entry(m)["routing_balance"]
    hashed = cfg(m).get("num_hash_layers") if in_registry(m) else None
    return text.replace("the first layers", f"the first {hashed} layers") if hashed else text


def residual_cell(m: str) -> str:
    text = trends.note_entry(m)["residual"]
    if in_registry(m) and "hc_mult" in cfg(m):
        return f"{text}, {cfg(m)['hc_mult']} streams"
    if in_registry(m) and "attn_res_block_size" in cfg(m):
        return f"{text}, blocks of {cfg(m)['attn_res_block_size']} sublayers"
    return text


def from_config(m: str, key: str) -> str:
    if in_registry(m):
        return f"{cfg(m)[key]:,}"
    value = trends.note_entry(m)[{"vocab_size": "vocab", "max_position_embeddings": "context"}[key]]
    return f"{value:,}{NOTE}" if isinstance(value, int) else f"{value}{NOTE}"


def release_cell(m: str) -> str:
    e = trends.note_entry(m)
    return str(e["release"]) + (f" ({e['release_note']})" if e.get("release_note") else "")


def _counted(m: str) -> str:
    return "" if in_registry(m) else NOTE


ROWS = {
    "released": release_cell,
    "total parameters": lambda m: f"{total(m) / 1e9:,.0f}B" + _counted(m),
    "activated per token": lambda m: f"{active(m) / 1e9:,.1f}B" + _counted(m),
    "activated / total": lambda m: f"{active(m) / total(m):.2%}",
    "layers": layers_cell,
    "attention": attention_cell,
    "MoE": moe_cell,
    "routing balance": balance_cell,
    "residual": residual_cell,
    "vocabulary": lambda m: from_config(m, "vocab_size"),
    "context (tokens)": lambda m: from_config(m, "max_position_embeddings"),
    "MTP layers": lambda m: (from_config(m, "num_nextn_predict_layers") if in_registry(m)
                             else "not stated"),
    "modality": lambda m: trends.note_entry(m)["modality"],
    "weights": lambda m: trends.note_entry(m)["weights"],
}


def table(models: list[str]) -> Markdown:
    """The note's table for ``models`` (its column ids), one row per entry of ``ROWS``."""
    return markdown_table([""] + [name(m) for m in models],
                          [[label] + [cell(m) for m in models] for label, cell in ROWS.items()])

"""The spec registry: model and accelerator facts loaded from the YAML files beside this module.

Two assumption sets describe each model's attention cache:
- ``"public"``: derived from the verbatim excerpt of the model's public ``config.json`` kept in
  ``models/`` (``from_config``, which reads any config.json the same way),
- ``"article"``: the article's own assumptions (``article.yaml``), for the models it gives figures for.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from functools import cache
from pathlib import Path

import yaml

from ..errors import ParameterError, check_choice, check_real

HERE = Path(__file__).parent
ASSUMPTIONS = ("public", "article")

# Which keys each kind of cache group needs; the calculators in calc/kv.py give them meaning.
GROUP_KEYS = {
    "mha": {"kv_heads", "head_dim_k", "head_dim_v"},
    "mla": {"kv_lora_rank", "rope_dim"},
    "kda": {"heads", "head_dim_k", "head_dim_v"},
    "window": {"window", "entry_dim", "rope_dim"},
    "compressed": {"ratio", "entry_dim", "rope_dim"},
    "indexer": {"ratio", "index_dim"},
    "scaled": {"of", "factor"},
    "stated": {"bytes_per_token_layer"},
}


@dataclass(frozen=True)
class CacheGroup:
    """A set of ``layers`` layers that share one cache layout (``kind`` plus its dimensions)."""

    kind: str
    layers: int
    dims: dict = field(default_factory=dict)

    def __getitem__(self, key):
        return self.dims[key]


@dataclass(frozen=True)
class ModelSpec:
    id: str
    name: str
    assumptions: str
    layers: int
    attention: tuple[CacheGroup, ...]
    params_total: float
    params_active: float
    source: str
    kv_format: str | None = None     # set by an assumption set that fixes the KV dtype
    state_dtype: str | None = None
    raw: dict = field(default_factory=dict, repr=False, compare=False)

    @property
    def config(self) -> dict:
        """The verbatim excerpt of the model's public config.json (dotted keys for nested ones)."""
        return self.raw.get("config", {})


@dataclass(frozen=True)
class GPUSpec:
    id: str
    name: str
    hbm_bytes: float
    hbm_bandwidth: float
    bf16_flops: float
    fp8_flops: float | None             # None: no FP8 tensor cores (an A100); ``flops("fp8")`` refuses it
    nvlink_bandwidth: float             # per direction, between the GPUs of a node (over PCIe where scale_up is "pcie")
    source: str
    alternatives: str = ""
    device_bytes: float | None = None    # what the driver exposes (nvidia-smi memory.total)
    device_source: str = ""
    scale_out_bandwidth: float = 50e9    # per direction to other nodes; a GPU given without it: one 400 Gb/s NIC
    gpus_per_node: int | None = None     # in the server the spec sheet names (HGX H200, DGX B300)
    node_source: str = ""
    scale_up: str = "fabric"             # what joins a node's GPUs: "fabric" (NVLink, Infinity Fabric) or "pcie"

    def flops(self, fmt: str) -> float:
        """Dense FLOP/s in ``fmt`` ("bf16" or "fp8"); a format this GPU has no tensor-core rate for
        (``fp8_flops`` null in gpus.yaml, an A100's) is a ``ParameterError`` naming the GPU and the
        format, never 0 or NaN, so no bound divides by a rate the part does not have."""
        check_choice("dtype", fmt, ("bf16", "fp8"))
        rate = getattr(self, f"{fmt}_flops")
        if rate is None:
            raise ParameterError("dtype", fmt, f"a format {self.name} ({self.id}) has tensor cores for: "
                                 + ", ".join(f for f in ("bf16", "fp8") if getattr(self, f"{f}_flops") is not None)
                                 + f" (specs/gpus.yaml gives no {fmt}_flops for it)")
        return rate


@cache
def _model_files() -> dict[str, dict]:
    out = {}
    for path in sorted((HERE / "models").glob("*.yaml")):
        data = yaml.safe_load(path.read_text())
        out[data["id"]] = data
    return out


@cache
def _article() -> dict:
    return yaml.safe_load((HERE / "article.yaml").read_text())


@cache
def _gpus() -> dict:
    return yaml.safe_load((HERE / "gpus.yaml").read_text())


def model_ids(assumptions: str = "public", *, include_reference: bool = False) -> list[str]:
    """The models described under an assumption set (reference-only anchors excluded by default)."""
    check_choice("assumptions", assumptions, ASSUMPTIONS)
    if assumptions == "article":
        return list(_article()["models"])
    return [m for m, d in _model_files().items() if include_reference or not d.get("reference_only")]


BOOK_MODELS = ("kimi-k3", "deepseek-v4-pro", "deepseek-v4-flash", "deepseek-v3.2", "deepseek-v3")


def _groups(items: list[dict], where: str) -> tuple[CacheGroup, ...]:
    """The article's cache groups from YAML; a malformed group is a bug in article.yaml, so say where."""
    groups = []
    for item in items:
        item = dict(item)
        kind, layers = item.pop("kind", None), item.pop("layers", None)
        if kind not in GROUP_KEYS:
            raise ValueError(f"{where}: cache group kind {kind!r} is not one of {sorted(GROUP_KEYS)}")
        if kind != "scaled" and not (isinstance(layers, int) and layers >= 1):
            raise ValueError(f"{where}: {kind} group needs layers >= 1, got {layers!r}")
        missing = GROUP_KEYS[kind] - item.keys()
        if missing:
            raise ValueError(f"{where}: {kind} group lacks {sorted(missing)}")
        groups.append(CacheGroup(kind, layers or 0, item))
    return tuple(groups)


def model(model_id: str, assumptions: str = "public") -> ModelSpec:
    """The spec of ``model_id`` under ``assumptions`` ("public" config or the "article"'s)."""
    check_choice("assumptions", assumptions, ASSUMPTIONS)
    check_choice("model", model_id, model_ids("public", include_reference=True))
    base = _model_files()[model_id]
    side = {k: v for k, v in base.items() if k not in ("config", "params")}
    public = from_config(base["config"], id=model_id, name=base["name"], source=base["source"], extra=side,
                         params=(base["params"]["total"], base["params"]["active"]))
    if assumptions == "public":
        return public
    art = _article()
    if model_id not in art["models"]:
        raise ParameterError("model", model_id, "under the article's assumptions, one of "
                             + ", ".join(map(repr, art["models"])) + " (the article gives no KV figure for the others)")
    return replace(public, assumptions="article", source=art["source"], kv_format=art["kv_format"],
                   state_dtype=art["state_dtype"],
                   attention=_groups(art["models"][model_id]["attention"], f"article.yaml: {model_id}"))


def add_model(path_or_dict, model_id: str | None = None) -> str:
    """Register the model of a config.json (a path or a dict) for this process, so every calculator
    that looks models up by id takes it, and return its id (by default the file's name, or its
    folder's for a plain ``config.json``). Like the reference anchors, it stays out of the default
    ``model_ids()``. An id already taken by another config is a ``ParameterError``."""
    spec = from_config(path_or_dict, id=model_id)
    table = _model_files()
    entry = {"id": spec.id, "name": spec.name, "source": spec.source, "reference_only": True,
             "config": spec.config, "params": {"total": spec.params_total, "active": spec.params_active}}
    if spec.id in table and table[spec.id]["config"] != spec.config:
        raise ParameterError("model", spec.id, "an id no registry model or other config already has")
    table[spec.id] = entry
    return spec.id


def gpu_ids() -> list[str]:
    return list(_gpus())


GPU_FIELDS = ("hbm_bytes", "hbm_bandwidth", "bf16_flops", "fp8_flops", "nvlink_bandwidth")


def add_gpu(gpu_id: str, fields: Mapping) -> str:
    """Make an accelerator the registry lacks usable by id: ``fields`` gives ``GPU_FIELDS`` (bytes,
    bytes/s, dense FLOP/s, per-direction link bytes/s), optionally ``name``, ``source`` and
    ``device_bytes`` (what the driver exposes; the nominal ``hbm_bytes`` stands in without it).
    Each field is checked, named ``gpu_specs.<id>.<field>``. For this process only, like
    ``add_model``; an id ``gpus.yaml`` already has is refused unless given with its own figures."""
    where = f"gpu_specs.{gpu_id}"
    if not isinstance(gpu_id, str) or not gpu_id:
        raise ParameterError("gpu_specs", gpu_id, "GPU ids that are non-empty strings")
    if not isinstance(fields, Mapping):
        raise ParameterError(where, fields, "a mapping of " + ", ".join(GPU_FIELDS) + " (and optionally "
                             "name, source, device_bytes)")
    unknown = set(fields) - set(GPU_FIELDS) - {"name", "source", "device_bytes", "scale_out_bandwidth"}
    if unknown:
        raise ParameterError(where, sorted(unknown), "fields among " + ", ".join(GPU_FIELDS)
                             + ", name, source, device_bytes, scale_out_bandwidth")
    entry = {"name": str(fields.get("name", gpu_id))}
    for k in GPU_FIELDS + tuple(k for k in ("device_bytes", "scale_out_bandwidth") if k in fields):
        entry[k] = check_real(f"{where}.{k}", fields.get(k), minimum=0, open_min=True)
    entry["source"] = str(fields.get("source", "given as a chapter or command parameter (gpu_specs)"))
    if "device_bytes" not in entry:
        entry.update(device_bytes=entry["hbm_bytes"], device_source="none given: the nominal hbm_bytes")
    table = _gpus()
    if gpu_id in table and table[gpu_id] != entry:
        raise ParameterError("gpu_specs", gpu_id, "an id not already in specs/gpus.yaml ("
                             + ", ".join(gpu_ids()) + ") or given with other figures")
    table[gpu_id] = entry
    return gpu_id


def gpu(gpu_id: str) -> GPUSpec:
    check_choice("gpu", gpu_id, gpu_ids())
    d = dict(_gpus()[gpu_id])
    as_is = ("name", "source", "alternatives", "device_source", "gpus_per_node", "node_source", "scale_up")
    check_choice(f"gpus.yaml {gpu_id}.scale_up", d.get("scale_up", "fabric"), ("fabric", "pcie"))
    return GPUSpec(id=gpu_id, **{k: (float(v) if k not in as_is and v is not None else v) for k, v in d.items()})


from .from_config import from_config  # noqa: E402  (it builds the dataclasses above)

"""The deployment assumptions every serving chapter shares (``serving.yaml``), as one frozen value.

``assumptions("book")`` is the book's set: public configs, HBM as the driver exposes it, less a
runtime reserve per GPU (SGLang's memory rule, ``calc.reserve``), the checkpoints' shipped formats,
attention data-parallel or TP up to 8 inside a node, decode EP groups up to 320 GPUs.
``assumptions("article")`` is the article's: its printed figures, nominal HBM, all of it usable, one
byte a parameter, attention data-parallel. Change fields with ``.but(...)``,
which checks them; ``capacity(gpu)`` is the bytes one GPU offers under the capacity convention,
``formats(model)`` the weight format of each group under the weight scenario.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields, replace
from functools import cache
from pathlib import Path

import yaml

from ..errors import ParameterError, check_choice, check_int, check_real
from . import GPUSpec, gpu as gpu_spec
from .cache_formats import KV_DTYPES, STATE_DTYPES

HERE = Path(__file__).parent
INPUTS = ("public", "article", "stated")     # calc.request's bases
CAPACITIES = ("device", "nominal")


@cache
def _data() -> dict:
    return yaml.safe_load((HERE / "serving.yaml").read_text())


def weight_scenarios() -> dict[str, dict]:
    """Each weight-format scenario: its label, note and the groups it overrides."""
    return _data()["weight_scenarios"]


def reserve_models() -> dict[str, dict]:
    """Each runtime-reserve model (``calc.reserve``): its label, source and terms in MiB."""
    return _data()["reserve_models"]


def presets() -> list[str]:
    return list(_data()["presets"])


@dataclass(frozen=True)
class Assumptions:
    label: str
    preset: str                  # the preset the defaults (and their sources) came from
    inputs: str
    capacity: str
    usable_fraction: float
    reserve: str                 # a key of reserve_models: what the runtime keeps beside weights and caches
    overhead_bytes: float
    kv_dtype: str
    state_dtype: str
    weights: str
    max_attention_tp: int
    max_dcp: int
    max_ep: int
    redundant_experts: int
    gpus_per_node: int
    pd_ratio: float
    prefill_mfu: float
    prompt_tokens_per_turn: int
    aggregate_max_gpus: int      # a decode fleet of at most this many GPUs prefills too (calc.fleet)

    def __post_init__(self):
        check_choice("preset", self.preset, presets())
        check_choice("inputs", self.inputs, INPUTS)
        check_choice("capacity", self.capacity, CAPACITIES)
        check_real("usable_fraction", self.usable_fraction, minimum=0, maximum=1, open_min=True)
        check_choice("reserve", self.reserve, list(reserve_models()))
        check_real("overhead_bytes", self.overhead_bytes, minimum=0)
        check_choice("kv_dtype", self.kv_dtype, KV_DTYPES)
        check_choice("state_dtype", self.state_dtype, STATE_DTYPES)
        check_choice("weights", self.weights, list(weight_scenarios()))
        check_int("max_attention_tp", self.max_attention_tp, minimum=1, maximum=self.gpus_per_node)
        check_int("max_dcp", self.max_dcp, minimum=1, maximum=self.gpus_per_node)   # within each TP group
        check_int("max_ep", self.max_ep, minimum=self.gpus_per_node)
        check_int("redundant_experts", self.redundant_experts, minimum=0)
        check_int("gpus_per_node", self.gpus_per_node, minimum=1)
        check_real("pd_ratio", self.pd_ratio, minimum=0, open_min=True)
        check_real("prefill_mfu", self.prefill_mfu, minimum=0, maximum=1, open_min=True)
        check_int("prompt_tokens_per_turn", self.prompt_tokens_per_turn, minimum=1)   # a turn brings a message
        check_int("aggregate_max_gpus", self.aggregate_max_gpus, minimum=0)
        if self.inputs != "public" and self.weights != "fp8":
            raise ParameterError("weights", self.weights,
                                 "'fp8' unless inputs is 'public': the article sizes every weight at one byte")
        if self.inputs != "public" and self.max_attention_tp != 1:
            raise ParameterError("max_attention_tp", self.max_attention_tp,
                                 "1 unless inputs is 'public': the article's figures have no heads to split")

    def but(self, **changes) -> "Assumptions":
        """A copy with ``changes`` applied (each field checked; an unknown name is refused)."""
        names = {f.name for f in fields(self)}
        for k in changes:
            if k not in names:
                raise ParameterError("assumption", k, "one of " + ", ".join(sorted(names)))
        return replace(self, **changes)

    def capacity_bytes(self, gpu: GPUSpec | str) -> float:
        """The bytes one GPU offers under this capacity convention."""
        g = gpu_spec(gpu) if isinstance(gpu, str) else gpu
        if self.capacity == "nominal":
            return g.hbm_bytes
        if g.device_bytes is None:
            raise ParameterError("capacity", self.capacity, f"'nominal' for {g.id}: gpus.yaml gives no "
                                 "device_bytes (driver-reported capacity) for it")
        return g.device_bytes

    def usable_bytes(self, gpu: GPUSpec | str) -> float:
        """The bytes one GPU gives weights, caches and the runtime reserve: usable_fraction x
        capacity_bytes."""
        return self.usable_fraction * self.capacity_bytes(gpu)

    def formats(self) -> dict[str, str]:
        """Weight format overrides by group under this weight scenario (calc.weights ``formats``)."""
        return dict(weight_scenarios()[self.weights]["groups"])

    def as_dict(self) -> dict:
        return asdict(self)


def assumptions(preset: str = "book", **changes) -> Assumptions:
    """A preset of ``serving.yaml`` with ``changes`` applied."""
    check_choice("preset", preset, presets())
    d = dict(_data()["presets"][preset], preset=preset)
    kinds = {"float": float, "int": int}
    d = {f.name: kinds[f.type](d[f.name]) if f.type in kinds else d[f.name] for f in fields(Assumptions)}
    return Assumptions(**d).but(**changes)


def source(name: str, preset: str = "book") -> str:
    """Where an assumption's default comes from in ``preset``."""
    return _data()["sources"][check_choice("preset", preset, presets())].get(name, "")

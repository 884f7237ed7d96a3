"""The article's deployment assumptions (``deployment.yaml``) and published anchors (``anchors.yaml``).

- ``deployment(model_id)``: what the article assumes for one model's deployment (EP size, per-GPU
  overhead, the parameter split it sizes experts with, its KV per token), an ``ArticleDeployment``.
- ``workload()``: the workload it sizes for (concurrency, contexts, P:D ratio, output length, decode
  speed, latency budget), a ``Workload``; ``hardware()``: GPUs per node and the inter-node link.
- ``scenarios()``: its three duty-cycle scenarios, ``{name: Scenario}``; ``standard_scenario()``.
- ``anchors(kind)``: published figures, ``kind`` "decode_throughput" or "kv_per_token".
All quantities are SI (bytes, bytes/s, seconds, parameters, tokens).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

import yaml

from ..errors import check_choice

HERE = Path(__file__).parent


@cache
def _deployment() -> dict:
    return yaml.safe_load((HERE / "deployment.yaml").read_text())


@cache
def _anchors() -> dict:
    return yaml.safe_load((HERE / "anchors.yaml").read_text())


@dataclass(frozen=True)
class ArticleDeployment:
    model: str
    ep: int
    ep_tried: tuple[int, ...]
    overhead_bytes: float
    params_headline: float
    params_total: float
    excluded_params: dict
    routed_experts: int
    shared_experts: int
    experts_in_divisor: int
    redundant_experts: int
    bytes_per_param: float
    activated_params: float
    kv_per_token: float
    fixed_state_bytes: float
    section: dict = field(default_factory=dict, compare=False)


@dataclass(frozen=True)
class Workload:
    concurrency: int
    bare_context: int
    average_context: int
    pd_ratio: float
    output_tokens: int
    decode_tokens_per_s: float
    latency_budget: float
    section: dict = field(default_factory=dict, compare=False)


@dataclass(frozen=True)
class Hardware:
    gpus_per_node: int
    link_bandwidth: float
    section: dict = field(default_factory=dict, compare=False)


@dataclass(frozen=True)
class Scenario:
    name: str
    label: str
    w_decode: float
    w_idle: float


def _typed(cls, d: dict) -> dict:
    """YAML 1.1 reads ``2.8e12`` (no exponent sign) as a string: coerce each field to its declared type."""
    kinds = {"float": float, "int": int}
    return {k: kinds[cls.__annotations__[k]](v) if cls.__annotations__[k] in kinds else v for k, v in d.items()}


def deployment_models() -> list[str]:
    """The models the article sizes a deployment for."""
    return list(_deployment()["models"])


def deployment(model_id: str) -> ArticleDeployment:
    """The article's deployment assumptions for ``model_id`` (one of ``deployment_models()``)."""
    check_choice("model", model_id, deployment_models())
    d = _typed(ArticleDeployment, _deployment()["models"][model_id])
    d["ep_tried"] = tuple(d["ep_tried"])
    d["excluded_params"] = {k: float(v) for k, v in d["excluded_params"].items()}
    return ArticleDeployment(model=model_id, **d)


def workload() -> Workload:
    return Workload(**_typed(Workload, _deployment()["workload"]))


def hardware() -> Hardware:
    return Hardware(**_typed(Hardware, _deployment()["hardware"]))


def scenarios() -> dict[str, Scenario]:
    return {name: Scenario(name=name, **_typed(Scenario, s)) for name, s in _deployment()["scenarios"].items()}


def standard_scenario() -> str:
    return _deployment()["standard_scenario"]


def anchors(kind: str) -> dict[str, dict]:
    """Published figures of one kind, by id, each with its ``source``."""
    check_choice("kind", kind, list(_anchors()))
    return _anchors()[kind]

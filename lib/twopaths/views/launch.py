"""A plan as the command lines that launch it: for each engine of ``specs.engines`` that can launch
both its decode and its prefill unit (``calc.placement.engine_for``), the command of the first node
of each unit, with the flags the engine table names.

A unit of ``ep`` GPUs spans ``ep / gpus_per_node`` nodes (a pipeline-parallel unit a node a stage);
every node runs the same command with its own rank (SGLang's ``--node-rank``, vLLM's
``--data-parallel-start-rank`` or ``--node-rank``), and ``HEAD`` stands for the first node's
address. A unit smaller than a node is one command on its share of the node's GPUs (several
share a node). An aggregated plan (``calc.fleet``) has one command a unit, which also prefills
(chunked), and carries no disaggregation flag. ``commands(plan)`` gives ``{engine id: Launch}``; ``as_dict`` what the
``plan`` command prints under ``plans[].launch``.
"""

from __future__ import annotations

import json
import math
import shlex
from dataclasses import asdict, dataclass

from ..calc.all_to_all import dispatches
from ..calc.moe import top_k
from ..calc.placement import GPUMemory, Placement, can_launch, memory
from ..specs import model as model_spec
from ..specs.engines import Engine, engines
from ..specs.kernels import deepep_low_latency
from ..specs.serving import Assumptions

PORT = 5000


@dataclass(frozen=True)
class Launch:
    engine: str                  # "vLLM 0.33.0"
    decode: str                  # the first decode node's command (aggregated: it prefills too)
    prefill: str | None          # the first prefill node's command; None for an aggregated plan
    decode_nodes_per_unit: int
    prefill_nodes_per_unit: int


def model_path(model: str) -> str:
    """What an engine loads: the registry's Hugging Face repo, else the config's own name where it
    is a repo or a path (``org/name``), else the repo a corpus file names (AIConfigurator's
    ``Org--Model``), else the config's bare name. (Nemotron-Super's config calls itself
    ``llama_nemotron_super``, which no engine can fetch.)"""
    spec = model_spec(model)
    own = spec.config.get("_name_or_path") or ""
    corpus = spec.id.replace("--", "/", 1) if "--" in spec.id else ""
    return spec.raw.get("repo") or ("/" in own and own) or corpus or own or spec.id


def _flag(e: Engine, feature: str, value=None) -> list[str]:
    f = e.feature(feature)
    return [*f.flag.split(), *([] if value is None else [str(value)]), *f.extra]


def backend(e: Engine, model: str, role: str) -> str:
    """The all-to-all backend of a ``role`` unit: the engine's for the role (an aggregated unit
    decodes), or, for a model that routes a token to more experts than DeepEP's low-latency
    kernels take (``specs/kernels.yaml`` max_top_k), its wide-top-k one."""
    values = e.feature("all_to_all").values
    role = "decode" if role == "aggregated" else role
    wide = role == "decode" and top_k(model) > deepep_low_latency()["max_top_k"]
    return values["wide_top_k"] if wide else values[role]


def _sglang(e: Engine, model: str, p: Placement, a: Assumptions, role: str, nodes: int) -> list[str]:
    args = _flag(e, "tensor_parallel", p.ep)
    if p.routed and p.ep == 1:      # one GPU holds every expert: nothing to parallelize
        args = []
    elif p.routed:
        args += _flag(e, "expert_parallel", p.ep)
        args += _flag(e, "all_to_all", backend(e, model, role)) if dispatches(p) else []
        args += _flag(e, "data_parallel", p.attention_groups) if p.attention_groups > 1 else []
        args += _flag(e, "redundant_experts", a.redundant_experts) if a.redundant_experts else []
    else:
        args = _flag(e, "tensor_parallel", p.attention_tp)
        args += _flag(e, "replicas", p.attention_groups) if p.attention_groups > 1 else []
        args += _flag(e, "pipeline_parallel", p.pp) if p.pp > 1 else []
    args += _flag(e, "decode_context_parallel", p.dcp) if p.dcp > 1 else []
    if nodes > 1:       # not in engines.yaml: SGLang's multi-node flags, checked in tests/data/engines
        args += ["--nnodes", str(nodes), "--node-rank", "0", "--dist-init-addr", f"HEAD:{PORT}"]
    return args


def _vllm(e: Engine, model: str, p: Placement, a: Assumptions, role: str, nodes: int) -> list[str]:
    args = _flag(e, "tensor_parallel", p.attention_tp) if p.attention_tp > 1 else []
    if p.attention_groups > 1:
        args += _flag(e, "data_parallel" if p.routed else "replicas", p.attention_groups)
    if p.routed and p.ep > 1:
        args += _flag(e, "expert_parallel")
        # an aggregated unit sits in one node: the default all-to-all (over NVLink) takes its chunks
        # one attention group takes no all-to-all kernels (calc.all_to_all.dispatches)
        args += _flag(e, "all_to_all", backend(e, model, role)) if role != "aggregated" and dispatches(p) else []
        if a.redundant_experts:
            args += ["--enable-eplb", "--eplb-config", json.dumps({"num_redundant_experts": a.redundant_experts})]
    args += _flag(e, "decode_context_parallel", p.dcp) if p.dcp > 1 else []
    if p.pp > 1:        # a stage a node; vLLM's multiprocessing backend spans them
        return args + _flag(e, "pipeline_parallel", p.pp) + ["--nnodes", str(nodes), "--node-rank", "0",
                                                             "--master-addr", "HEAD"]
    if nodes > 1:       # each node runs its share of the data-parallel ranks
        args += ["--data-parallel-size-local", str(p.attention_groups // nodes), "--data-parallel-address", "HEAD",
                 "--data-parallel-start-rank", "0"]
    return args


BUILD = {"sglang": _sglang, "vllm": _vllm}


def unit_nodes(p: Placement, a: Assumptions) -> int:
    """Nodes one unit of ``p`` spans: 1 for a unit smaller than a node (several share one), a
    node a pipeline stage."""
    return max(p.gpus // a.gpus_per_node, 1)


def _memory(e: Engine, m: GPUMemory, role: str) -> list[str]:
    """The flags that give each GPU the planned cache pool and no more: vLLM takes the pool in bytes
    (its own profiling would also count activations against it); SGLang a fraction of device memory
    for weights plus pool, the runtime reserve being the rest. A prefill unit's chunked-prefill
    size is the one its reserve's activations assume."""
    if e.supports("cache_pool"):
        args = _flag(e, "cache_pool", int(m.kv_room))
    else:     # rounded down, so the engine keeps at least the reserve
        args = _flag(e, "memory_fraction", f"{math.floor(1000 * (m.weights + m.kv_room) / m.capacity) / 1000:.3f}")
    if role in ("prefill", "aggregated"):     # vLLM's tokens are per DP rank; SGLang divides its own
        per_rank = e.supports("cache_pool")
        args += _flag(e, "chunked_prefill", m.reserve.chunk_tokens * (1 if per_rank else m.placement.attention_groups))
    elif m.request_cap:       # vLLM sizes DeepEP's buffer by its batched tokens; SGLang's default is the cap
        args += _flag(e, "chunked_prefill", m.request_cap) if e.supports("cache_pool") else []
    if role == "decode" and e.supports("max_running"):   # no more than the buffer and the pool hold
        groups = 1 if e.feature("max_running").per_rank else m.placement.attention_groups
        args += _flag(e, "max_running", m.requests * groups)
    return args


def command(e: Engine, model: str, m: GPUMemory, a: Assumptions, role: str, context: int) -> str:
    """The command of the first node of a ``role`` ("decode", "prefill", or "aggregated": a unit
    that does both, with no disaggregation flag) unit, one of whose GPUs is ``m``, for requests of
    ``context`` tokens (the longest the engine admits: its default, the config's limit, may not fit
    the pool)."""
    p = m.placement
    nodes = unit_nodes(p, a)
    head = [*e.command.split(), *(["--model-path"] if e.id == "sglang" else []), model_path(model)]
    args = BUILD[e.id](e, model, p, a, role, nodes) + _flag(e, "context_length", context)
    args += _flag(e, "kv_cache_dtype", e.feature("kv_cache_dtype").values[a.kv_dtype])
    spec = model_spec(model)
    if any(g.kind == "kda" for g in spec.attention) and e.supports("state_dtype", spec.raw.get("family")):
        args += _flag(e, "state_dtype", e.feature("state_dtype").values[a.state_dtype])   # engines default to FP32
    args += _memory(e, m, role)
    if role != "aggregated":
        args += _flag(e, "disaggregation", e.feature("disaggregation").values[role])
    return shlex.join(head + args)


def commands(plan) -> dict[str, Launch]:
    """``{engine id: Launch}`` for each engine that can launch both of ``plan``'s units."""
    a, model = plan.assumptions, plan.model
    decode, prefill = plan.placement, plan.prefill.unit
    if plan.aggregated:       # one command a unit: it decodes and prefills
        return {e.id: Launch(e.label, command(e, model, plan.decode, a, "aggregated", plan.work.context), None,
                             unit_nodes(decode, a), 0)
                for e in engines() if e.id in BUILD and can_launch(e, model, decode, a)}
    pre = memory(model, plan.gpu, prefill, plan.work.context, a, "prefill")
    out = {}
    for e in engines():
        if e.id in BUILD and all(can_launch(e, model, p, a) for p in (decode, prefill)):
            out[e.id] = Launch(e.label, command(e, model, plan.decode, a, "decode", plan.work.context),
                               command(e, model, pre, a, "prefill", plan.work.context), unit_nodes(decode, a),
                               unit_nodes(prefill, a))
    return out


def as_dict(plan) -> dict:
    """``commands(plan)`` as plain data."""
    return {k: asdict(v) for k, v in commands(plan).items()}

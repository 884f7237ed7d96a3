"""What a serving chapter is asked about: which models, on which GPUs.

Every serving chapter names its models two ways, ``models`` (registry ids) and ``configs``
(config.json paths, or names in AIConfigurator's corpus, read by ``specs.from_config``), and its
GPUs two ways, ``gpus`` or ``gpu`` (registry ids) and ``gpu_specs`` (the figures of accelerators
``specs/gpus.yaml`` lacks, as a mapping or a JSON file). These functions check them, register what is new for this process and
return plain ids, so a chapter's first cells refuse a bad parameter by name before any long work.
``title`` names the models, GPUs and workload a table or figure was computed for.
"""

from __future__ import annotations

from collections.abc import Mapping

from .. import specs
from ..errors import ParameterError
from ..specs.lookup import add_gpu_file, resolve_model


def _once(name: str, ids: list[str], given) -> list[str]:
    for i, m in enumerate(ids):
        if m in ids[:i]:
            raise ParameterError(name, given, f"each one once ({m!r} is given twice)")
    return ids


def models(models, configs=()) -> list[str]:
    """The ids of ``models`` (registry ids) then of ``configs`` (each registered by
    ``specs.add_model``), each model once; at least one in all."""
    for name, given in (("models", models), ("configs", configs)):
        if isinstance(given, (str, bytes)) or not isinstance(given, (list, tuple)):
            raise ParameterError(name, given, "a list (for one, a list of one: [\"kimi-k3\"])")
    known = specs.model_ids(include_reference=True)
    for m in models:
        if m not in known:
            raise ParameterError("models", m, "registry ids: " + ", ".join(known)
                                 + " (a config.json goes in `configs`)")
    ids = [*models, *(resolve_model(c, "configs") for c in configs)]
    if not ids:
        raise ParameterError("models", models, "at least one model, in `models` or `configs`")
    return _once("models", ids, [*models, *configs])


def add_gpus(gpu_specs) -> list[str]:
    """Register each accelerator of ``gpu_specs`` ({id: figures}, ``specs.add_gpu``, or the path of
    a JSON file holding that mapping, as ``python -m twopaths.plan --gpu-spec`` takes); their ids."""
    if gpu_specs is None:
        return []
    if isinstance(gpu_specs, str):
        return add_gpu_file(gpu_specs)
    if not isinstance(gpu_specs, Mapping):
        raise ParameterError("gpu_specs", gpu_specs, "a mapping of GPU ids to their figures, "
                             "{'my-gpu': {'hbm_bytes': 192e9, ...}}")
    return [specs.add_gpu(g, figures) for g, figures in gpu_specs.items()]


def gpus(gpus, gpu_specs=None) -> list[str]:
    """The ids of ``gpus``, each once, after ``gpu_specs`` has been registered."""
    add_gpus(gpu_specs)
    if isinstance(gpus, (str, bytes)) or not isinstance(gpus, (list, tuple)) or not gpus:
        raise ParameterError("gpus", gpus, "a non-empty list of GPU ids, e.g. [\"h200\", \"b300\"]")
    for g in gpus:
        if g not in specs.gpu_ids():
            raise ParameterError("gpus", g, "GPUs of specs/gpus.yaml (" + ", ".join(specs.gpu_ids())
                                 + ") or keys of gpu_specs")
    return _once("gpus", list(gpus), gpus)


def gpu(gpu, gpu_specs=None) -> str:
    """One GPU id, after ``gpu_specs`` has been registered."""
    add_gpus(gpu_specs)
    if gpu not in specs.gpu_ids():
        raise ParameterError("gpu", gpu, "a GPU of specs/gpus.yaml (" + ", ".join(specs.gpu_ids())
                             + ") or a key of gpu_specs")
    return gpu


def model_name(model: str) -> str:
    """``Kimi K3`` for ``kimi-k3``: what a table or figure calls a model."""
    return specs.model(model).name


def gpu_name(gpu: str) -> str:
    return specs.gpu(gpu).name


def listing(words) -> str:
    """``A``, ``A and B``, ``A, B and C``."""
    words = list(words)
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]


def title(what: str, models=(), gpus=(), where: str = "") -> str:
    """``what`` for the named models on the named GPUs, then ``where`` (a workload, a dtype):
    ``"Nodes, Kimi K3 and DeepSeek-V4-Pro on H200, 10,000 sessions of 500K tokens"``."""
    parts = [what]
    if models:
        parts[0] += ", " + listing(model_name(m) for m in models)
        if gpus:
            parts[0] += " on " + listing(gpu_name(g) for g in gpus)
    elif gpus:
        parts[0] += ", " + listing(gpu_name(g) for g in gpus)
    return ", ".join(parts + ([where] if where else []))


def cache_path(model: str) -> str:
    """Which of the article's two paths a model's cache takes, read from its cache groups (indexer
    keys ride with the layers they index): ``"Kimi K3 keeps a fixed state in 69 of 93 layers and
    every token in 24: K3's path"``."""
    spec = specs.model(model)
    layers = {}
    for g in spec.attention:
        layers[g.kind] = layers.get(g.kind, 0) + g.layers
    name, total = model_name(model), spec.layers
    # the layers that keep every token: the groups that are neither a state, a window nor indexer keys
    tokens = sum(n for kind, n in layers.items() if kind not in ("kda", "window", "indexer", "compressed"))
    if layers.get("kda"):
        none = total - layers["kda"] - tokens      # a Mamba hybrid's FFN-only blocks keep no cache
        return (f"{name} keeps a fixed state in {layers['kda']} of {total} layers and every token in "
                f"{tokens}" + (f" (its other {none} keep none)" if none else "") + ": K3's path")
    if layers.get("compressed"):
        return (f"{name} keeps compressed entries in {layers['compressed']} of {total} layers, beside a "
                "sliding window in each: V4's path")
    if layers.get("window"):
        return (f"{name} keeps a sliding window in {layers['window']} of {total} layers and every token "
                f"in {tokens}: neither path, a window")
    return f"{name} keeps every token in all {total} layers: neither path"

"""What a reader names a model or a GPU by, turned into registry ids.

A model is a registry id, a config.json path or a name in AIConfigurator's bundled corpus
(``Org--Model``); a config is read by ``from_config`` and registered by ``add_model`` for this
process. GPUs the registry lacks come as a JSON file of their figures (``add_gpu_file``). Both
the ``plan`` command and the chapters' parameters (``views.scenario``) take these.
"""

from __future__ import annotations

import difflib
import importlib.util
import json
from pathlib import Path

from ..errors import ParameterError
from . import _model_files, add_gpu, add_model, checkpoint, model, model_ids


def add_gpu_file(path: str) -> list[str]:
    """``add_gpu`` for each accelerator of a JSON file ``{id: {field: value}}``; their ids."""
    try:
        data = json.loads(Path(path).read_text())
    except OSError as e:
        raise ParameterError("gpu_specs", path, f"a readable JSON file ({e.strerror})") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise ParameterError("gpu_specs", path, f"a file holding JSON ({e})") from None
    if not isinstance(data, dict) or not data:
        raise ParameterError("gpu_specs", path, 'a JSON object of GPU ids to their figures, {"my-gpu": {...}}')
    return [add_gpu(gid, fields) for gid, fields in data.items()]


def _corpus() -> Path | None:
    """AIConfigurator's bundled configs, if it is installed (found without importing the package)."""
    spec = importlib.util.find_spec("aiconfigurator_core")
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(list(spec.submodule_search_locations)[0]) / "model_configs"


# The corpus configs the chapters' parameters name by default, shipped so that a chapter runs without
# AIConfigurator installed (byte for byte its files: tests/test_install.py).
SHIPPED = Path(__file__).parent / "configs"


def corpus_path(name: str) -> Path | None:
    """The file of ``name`` (``Org--Model``) in AIConfigurator's bundled corpus, or among the few
    configs the book ships, if either holds one."""
    for folder in (_corpus(), SHIPPED):
        path = folder / f"{name}_config.json" if folder else None
        if path and path.is_file():
            return path
    return None


def corpus_names() -> list[str]:
    """Every config of AIConfigurator's corpus (``Org--Model``), its quantisation side files left out;
    none when it is not installed."""
    folder = _corpus()
    return sorted(p.name.removesuffix("_config.json") for p in folder.glob("*_config.json")
                  if not p.name.endswith("_hf_quant_config.json")) if folder else []


def near_misses(name: str, n: int = 3) -> list[str]:
    """Registry ids and corpus names that ``name`` nearly spells: the same letters and digits in any
    case (``qwen3-32b`` for ``Qwen--Qwen3-32B``), else the closest by difflib."""
    shipped = (p.name.removesuffix("_config.json") for p in SHIPPED.glob("*_config.json"))
    names = sorted({*model_ids(include_reference=True), *corpus_names(), *shipped})

    def key(s):
        return "".join(ch for ch in s.lower() if ch.isalnum())

    same = [c for c in names if key(c).endswith(key(name)) and key(name)]
    if same:
        return sorted(same, key=len)[:n]
    lowered = {c.lower(): c for c in names}
    return [lowered[c] for c in difflib.get_close_matches(name.lower(), list(lowered), n=n, cutoff=0.6)]


def resolve_model(arg: str, name: str = "MODEL") -> str:
    """The id a model argument names: a registry id, or a config (a path ending .json or a name in
    AIConfigurator's corpus) added to the registry for this process by ``add_model``. Anything
    else, or a bad config file (missing, not JSON, not a config, a key its family lacks), is a
    ``ParameterError`` named ``name``."""
    ids = model_ids(include_reference=True)
    if not isinstance(arg, (str, Path)):
        raise ParameterError(name, arg, "a registry id, a path to a config.json or a corpus name (text)")
    if arg in ids:
        return arg
    if Path(arg).is_dir():                    # a checkpoint folder: its config, and its weights' own size
        return _add_folder(Path(arg), name)
    path = arg if Path(arg).suffix == ".json" else corpus_path(arg)
    if path is None:
        close = near_misses(arg)
        hint = f" (did you mean {' or '.join(repr(c) for c in close)}?)" if close else ""
        raise ParameterError(name, arg, "a registry id (" + ", ".join(ids) + "), a path to a config.json, "
                             "or a name in AIConfigurator's corpus such as 'Qwen--Qwen3-235B-A22B'" + hint)
    try:
        return add_model(str(Path(path).resolve()))   # resolved: ./config.json is named by its folder
    except ParameterError as e:
        if e.name == "config":                # the file itself: missing, unreadable, not JSON
            raise ParameterError(name, arg, e.allowed) from None
        raise ParameterError(name, arg, f"a config the book reads ({e})") from None


def _add_folder(folder: Path, name: str) -> str:
    """The model of a checkpoint folder: its config.json registered, with the bytes its safetensors
    files hold (``specs.checkpoint``) kept beside it as ``checkpoint``."""
    if not (folder / "config.json").is_file():
        raise ParameterError(name, str(folder), "a checkpoint folder holding a config.json")
    model_id = resolve_model(str(folder / "config.json"), name)
    found = checkpoint.weight_bytes(folder)
    if found:
        _model_files()[model_id]["checkpoint"] = found
    return model_id


def shipped_kv_dtype(name) -> str:
    """The cache format ``name`` (an id or a spec) is served in as released: what its model file
    names (``shipped_kv_dtype``: V4's FP8), else BF16, the dtype of a config with no KV
    quantisation (K3's ``kv_cache_scheme: null``)."""
    spec = model(name) if isinstance(name, str) else name
    return spec.raw.get("shipped_kv_dtype", "bf16")


def shipped_state_dtype(name) -> str | None:
    """The dtype the config of ``name`` (an id or a spec) keeps its fixed state in
    (``mamba_ssm_dtype``); None where the config names none or the model keeps no
    linear-attention state."""
    spec = model(name) if isinstance(name, str) else name
    has_state = any(g.kind == "kda" for g in spec.attention)
    return spec.raw.get("shipped_state_dtype") if has_state else None

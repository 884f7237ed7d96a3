"""Chapter 01 re-run for a model and a GPU of the reader's: a GQA model from AIConfigurator's corpus
on a GPU the registry lacks. The tables must name them and show that model's own numbers, and a
bad parameter must stop the chapter, named, before any work."""

import json
import math
from pathlib import Path

import pytest

from twopaths.views import plans, scenario
from twopaths.machinery import runner
from twopaths import specs
from twopaths.calc import kv
from rerun_case import MY_GPU, NO_HBM, entries

pytestmark = pytest.mark.notebooks

ROOT = Path(__file__).resolve().parents[1]

NB = ROOT / "notebooks" / "01-kv-wall.ipynb"
MODEL = "Qwen--Qwen3-235B-A22B"
SHOWN = "Qwen3-235B-A22B (Qwen)"   # how tables name it (specs.from_config)


def _run(tmp_path, **params):
    return entries(NB, tmp_path, params)


def test_a_corpus_gqa_model_on_a_users_gpu(tmp_path):
    values = _run(tmp_path, models=[], configs=[MODEL], gpus=["my-gpu"], gpu_specs=MY_GPU,
                  concurrency=1_000)
    v = {name: entry["value"] for name, entry in values.items()}
    for name in ("kv_longest.title", "kv_fleet.title", "context.title"):
        assert SHOWN in v[name] and "my-gpu" in v[name], (name, v[name])
    assert SHOWN in v["kv_request.title"] and SHOWN in v["kv_tensors.title"]
    assert "1,000 requests" in v["kv_fleet.title"]
    # the same model and GPU, computed here from the calculators
    (model,) = scenario.models([], [MODEL])
    (gpu,) = scenario.gpus(["my-gpu"], MY_GPU)
    spec, a = specs.model(model), plans.serving_assumptions({})
    assert v["kv_request[0].model"] == spec.name
    assert v["kv_request[0].per token, public config"] == kv.kv_bytes_per_token(spec, "bf16", "bf16") / 1e3
    assert v["kv_request[0].fixed, public config"] == 0          # GQA: all of it grows
    assert v["kv_longest[0].on one my-gpu"] == kv.max_context(spec, 192e9, "bf16", "bf16")
    request = kv.request_kv_bytes(spec, 1_000_000, "bf16", "bf16")
    # each GPU gives the cache all it offers but the least runtime reserve, SGLang's 10 GiB floor
    assert v["kv_fleet[0].my-gpu GPUs, public"] == math.ceil(1_000 * request / (a.usable_bytes(gpu) - 10 * 2**30))
    assert v["context[one my-gpu]"] == [192.0] * len(v["context.x"])
    # the article's own figures do not move with the reader's model
    reference = json.loads((ROOT / "results" / "smoke.json").read_text())["notebooks"][NB.stem]["values"]
    for name in ("k3_over_v4_article", "k3_10k_public_h200", "v4_10k_public_h200", "k3_public_h200_tokens"):
        assert v[name] == reference[name]["value"], name


@pytest.mark.parametrize("params, named", [
    ({"gpus": ["my-gpu"], "gpu_specs": NO_HBM}, "gpu_specs.my-gpu.hbm_bytes"),
    ({"models": [], "configs": [MODEL, MODEL]}, "models"),
    # the chapter's own kv_dtype parameter would silently win over this one
    ({"serving": {"kv_dtype": "fp8"}}, "serving"),
])
def test_a_bad_parameter_stops_the_chapter_named(tmp_path, params, named):
    with pytest.raises(runner.RunError, match=r"ParameterError\): " + named.replace(".", r"\.") + ":"):
        _run(tmp_path, **params)

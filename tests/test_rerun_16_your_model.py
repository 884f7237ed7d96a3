"""Chapter 16 re-run for a reader's model and GPU: its tables name them and hold the library's own
numbers for them; a bad parameter stops it in its setup cell, named."""

import json
from pathlib import Path

import pytest

from twopaths import specs
from twopaths.specs import max_position
from twopaths.views import plan_report
from twopaths.machinery import runner
from twopaths.views import scenario
from twopaths.calc import fleet, kv
from twopaths.specs.serving import assumptions

from test_scenario import restore_registry  # noqa: F401  (autouse: what a test registers leaves with it)
from rerun_case import MY_GPU, NO_HBM, values

NB = Path(__file__).resolve().parents[1] / "notebooks" / "16-your-model.ipynb"
QWEN, HYBRID = "Qwen--Qwen3-235B-A22B", "Qwen--Qwen3.5-397B-A17B"


def defaults() -> dict:
    """The chapter's parameters cell, run: the values a reader gets without changing any."""
    cell = next(c for c in json.loads(NB.read_text())["cells"] if "parameters" in c["metadata"].get("tags", []))
    names: dict = {}
    exec("".join(cell["source"]), {}, names)
    return names


def test_no_default_model_is_run_past_its_declared_context():
    """The page's headline compares its default configs at its default context: none may be past
    the max_position_embeddings its config declares (a figure the model was not built for)."""
    d = defaults()
    past = [m for m in scenario.models(d["models"], d["configs"]) if max_position.beyond(m, d["context"])]
    assert past == [] and len(d["configs"]) == 3
    assert d["context"] == min(max_position.limit(m) for m in scenario.models(d["models"], d["configs"]))


def rerun(tmp_path, **params):
    return values(NB, tmp_path, params)


@pytest.mark.notebooks
def test_a_corpus_model_on_a_made_up_gpu(tmp_path):
    values = rerun(tmp_path, configs=[QWEN], models=[], gpu="my-gpu", gpu_specs=MY_GPU)
    model, gpu = scenario.models([], [QWEN])[0], scenario.gpu("my-gpu", MY_GPU)
    name = specs.model(model).name
    assert name == "Qwen3-235B-A22B (Qwen)"
    for table in ("configs", "cache", "gpu", "fleet"):
        assert name in values[f"{table}.title"], table
    for table in ("gpu", "fleet"):
        assert "my-gpu" in values[f"{table}.title"], table
    assert "262,144 tokens" in values["cache.title"] and "10,000 sessions" in values["fleet.title"]
    assert values["cache[0].model"] == name and [k for k in values if k.startswith("cache[1]")] == []
    # the numbers are the library's for this model on this GPU, recomputed here
    a, work = assumptions("book"), fleet.workload(10_000, 262_144, 0.25)
    assert values["cache[0].bytes a token"] == kv.kv_bytes_per_token(model, "bf16", "bf16") == 94 * 4 * 128 * 2 * 2
    best = fleet.plan(model, gpu, a, work)
    assert values["fleet[0].nodes"] == best.nodes and values["fleet[0].decode unit"] == best.placement.name
    report = plan_report.report(model, gpu, a, work)
    smallest = min(report["placements"], key=lambda p: (p["ep"], p["attention_tp"]))
    assert values["gpu[0].weights"] == smallest["weight_bytes_per_gpu"] / 1e9
    assert values["fig_cache[Qwen3-235B-A22B (Qwen)]"][0] == kv.request_kv_bytes(model, 1_000, "bf16", "bf16") / 1e9
    assert values["state_summary"] == "no config here names a state dtype other than bf16"


@pytest.mark.notebooks
def test_a_hybrid_beside_k3_shows_its_state_as_shipped(tmp_path):
    values = rerun(tmp_path, configs=[HYBRID], models=["kimi-k3"])
    hybrid = scenario.models([], [HYBRID])[0]
    assert [values["cache[0].model"], values["cache[1].model"]] == ["Kimi K3", "Qwen3.5-397B-A17B (Qwen)"]
    assert values["cache[1].state dtype the config names"] == "fp32"
    assert values["cache[0].state dtype the config names"] == "not named"
    assert values["cache[1].fixed state, as shipped"] == kv.request_kv_bytes(hybrid, 0, "bf16", "fp32") / 1e6
    assert values["cache[1].fixed state, priced"] == kv.request_kv_bytes(hybrid, 0, "bf16", "bf16") / 1e6
    assert "Gated DeltaNet state x 45" in values["configs[1].cache groups"]
    assert "KDA state x" in values["configs[0].cache groups"]


@pytest.mark.notebooks
@pytest.mark.parametrize("params, message", [
    ({"configs": [QWEN, QWEN]}, "models: got"),
    ({"gpu": "h300"}, "gpu: got 'h300'"),
    ({"gpu": "my-gpu", "gpu_specs": NO_HBM},
     "gpu_specs.my-gpu.hbm_bytes: got None"),
    ({"context": 0}, "context: got 0"),
])
def test_bad_input_stops_the_chapter_in_its_setup_cell(tmp_path, params, message):
    with pytest.raises(runner.RunError) as info:
        runner.execute(NB, tmp_path / "out.ipynb", {"profile": "smoke", "device": "cpu", **params})
    text = str(info.value)
    assert message in text and "ParameterError" in text
    assert "failed in cell 3" in text, text     # the parameters, papermill's injected cell, then setup


@pytest.mark.notebooks
def test_a_rerun_page_says_what_it_ran_with(tmp_path):
    """The command a reader runs (``runner chapter``): its standalone page opens with the parameters
    given, not only the defaults the parameters cell shows, and its results name the folder kept."""
    import json
    import re
    from twopaths.machinery import rerun as rerun_mod
    params = {"profile": "smoke", "device": "cpu", "configs": [QWEN], "models": [], "gpu": "b300",
              "context": 131_072}
    folder = rerun_mod.rerun(NB, params, tmp_path / "build", runner.ROOT, runner._rerun_execute)
    page = re.sub(r"<[^>]+>", "", (folder / "html" / f"{NB.stem}.html").read_text())
    box = page[page.index("This page is a re-run"):]
    for shown in ('gpu = &quot;b300&quot;', "context = 131072", f'configs = [&quot;{QWEN}&quot;]'):
        assert shown in box[:2000], shown
    results = json.loads((folder / "results.json").read_text())
    assert results["notebooks"][NB.stem]["executed"] == str(folder / NB.name)
    assert (folder / "html" / "_static" / "mathjax").is_symlink()

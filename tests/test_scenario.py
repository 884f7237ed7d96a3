"""A serving chapter's models and GPUs: registry ids, configs and GPU figures, each checked by name
before any work."""

import pytest

import need

from rerun_case import FIGURES
from twopaths.views import scenario
from twopaths import specs



@pytest.fixture(autouse=True)
def restore_registry():
    """What a test registers leaves with it (the registry's tables are per process)."""
    models, gpus = dict(specs._model_files()), dict(specs._gpus())
    yield
    for table, before in ((specs._model_files(), models), (specs._gpus(), gpus)):
        table.clear()
        table.update(before)


def test_models_takes_registry_ids_and_configs_in_order(tmp_path):
    cfg = tmp_path / "tiny-gqa" / "config.json"
    cfg.parent.mkdir()
    cfg.write_text('{"model_type": "llama", "hidden_size": 1024, "num_hidden_layers": 4, '
                   '"num_attention_heads": 8, "num_key_value_heads": 2, "intermediate_size": 4096, '
                   '"vocab_size": 32000, "tie_word_embeddings": false}')
    ids = scenario.models(["qwen-2.5-72b", "kimi-k3"], [str(cfg)])
    assert ids[:2] == ["qwen-2.5-72b", "kimi-k3"] and ids[2] == "tiny-gqa"
    assert specs.model("tiny-gqa").layers == 4


@pytest.mark.parametrize("models, configs, allowed", [
    ("kimi-k3", [], "a list"),
    (["kimi-k3", "kimi-k3"], [], "given twice"),
    (["no-such-model"], [], "registry ids"),
    ([], [], "at least one model"),
])
def test_bad_models_are_refused_by_name(raises_param, models, configs, allowed):
    err = raises_param("models", scenario.models, models, configs)
    assert allowed in str(err)


def test_a_missing_config_is_refused_as_configs(raises_param, tmp_path):
    raises_param("configs", scenario.models, [], [str(tmp_path / "absent.json")])


def test_gpu_specs_add_accelerators_the_registry_lacks(raises_param):
    assert scenario.gpus(["h200", "my-gpu"], {"my-gpu": FIGURES}) == ["h200", "my-gpu"]
    assert specs.gpu("my-gpu").hbm_bytes == 192e9
    raises_param("gpu_specs.no-hbm.hbm_bytes", scenario.gpus, ["no-hbm"],
                 {"no-hbm": {k: v for k, v in FIGURES.items() if k != "hbm_bytes"}})
    raises_param("gpu_specs", scenario.gpu, "h200", ["my-gpu"])
    raises_param("gpus", scenario.gpus, ["h200", "h200"])
    raises_param("gpus", scenario.gpus, "h200")
    raises_param("gpus", scenario.gpus, ["h200", "tpu-v9"])
    raises_param("gpu", scenario.gpu, "tpu-v9")


def test_title_names_models_gpus_and_workload():
    t = scenario.title("Nodes", ["kimi-k3", "deepseek-v4-pro"], ["h200", "b300"], "10,000 sessions")
    assert t == (f"Nodes, Kimi K3 and DeepSeek-V4-Pro on {specs.gpu('h200').name} and "
                 f"{specs.gpu('b300').name}, 10,000 sessions")


def test_gpu_specs_may_be_a_json_file(raises_param, tmp_path):
    path = tmp_path / "my-gpus.json"
    path.write_text('{"file-gpu": ' + str(FIGURES).replace("'", '"') + "}")
    assert scenario.gpu("file-gpu", str(path)) == "file-gpu"
    raises_param("gpu_specs", scenario.gpu, "h200", str(tmp_path / "absent.json"))


def test_cache_path_reads_the_cache_groups():
    """Which path a model's cache takes, counted from its config: K3's 69 KDA layers of 93, V4-Flash's
    41 compressed layers of 43 (its first two keep only the window; the 44th ratio is the MTP
    layer's), gpt-oss's 12 of 24."""
    from twopaths.specs.lookup import resolve_model
    assert scenario.cache_path("kimi-k3") == "Kimi K3 keeps a fixed state in 69 of 93 layers and every token in 24: K3's path"
    assert scenario.cache_path("deepseek-v4-flash").startswith("DeepSeek-V4-Flash keeps compressed entries in 41 of 43 layers")
    assert scenario.cache_path("qwen-2.5-72b") == "Qwen-2.5-72B keeps every token in all 80 layers: neither path"
    need.module("aiconfigurator_core")
    gpt = resolve_model("openai--gpt-oss-20b")
    assert "a sliding window in 12 of 24 layers and every token in 12" in scenario.cache_path(gpt)


def test_a_mamba_hybrids_ffn_blocks_keep_no_cache():
    """Nemotron 3 Nano's pattern MEMEM*E...: 23 Mamba-2 layers (M), 6 attention layers (*) and 23 MoE
    blocks (E) that keep nothing; the 52 are not 23 with a state and 29 with every token."""
    need.module("aiconfigurator_core")
    from twopaths.specs.lookup import resolve_model
    nano = resolve_model("nvidia--NVIDIA-Nemotron-3-Nano-30B-A3B-BF16")
    pattern = specs.model(nano).config["hybrid_override_pattern"]
    assert (pattern.count("M"), pattern.count("*"), pattern.count("E"), len(pattern)) == (23, 6, 23, 52)
    assert scenario.cache_path(nano).endswith(
        "keeps a fixed state in 23 of 52 layers and every token in 6 (its other 23 keep none): K3's path")

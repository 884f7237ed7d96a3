"""``python -m twopaths.plan``: its figures are the calculators' figures, every bad flag gets a
one-line message naming the flag (exit 2, before the long work), and its table fits 100 columns."""

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

import need

from twopaths import plan as cli
from twopaths.specs import lookup
from twopaths.views import plan_report, scenario
from twopaths import specs
from twopaths.calc import fleet, kv
from twopaths.calc.placement import memory, placements
from twopaths.calc.request import model_weight_bytes
from twopaths.specs.serving import assumptions

ROOT = Path(__file__).resolve().parents[1]
HEADLINE = ["--gpu", "h200", "--context", "500000", "--concurrency", "10000", "--rho", "0.25"]


@pytest.fixture(autouse=True)
def registry_untouched():
    """Models and GPUs a test adds (specs.add_model, add_gpu) leave with it: other test modules count
    the registry's entries."""
    models, gpus = set(specs._model_files()), set(specs._gpus())
    yield
    for table, before in ((specs._model_files(), models), (specs._gpus(), gpus)):
        for key in set(table) - before:
            del table[key]


def run(capsys, *argv):
    """(exit status, stdout, stderr) of the command run in-process."""
    try:
        status = cli.main(list(argv))
    except SystemExit as e:
        status = e.code
    out = capsys.readouterr()
    return status, out.out, out.err


def written(path: Path, text: str | None) -> str:
    """``path`` holding ``text`` (None: left missing), as a command-line argument."""
    if text is not None:
        path.write_text(text)
    return str(path)


def as_json(capsys, *argv) -> dict:
    status, out, _ = run(capsys, *argv, "--format", "json")
    assert status == 0
    return json.loads(out)


@pytest.mark.parametrize("model", ["kimi-k3", "deepseek-v4-pro"])
def test_json_is_the_library_plan(capsys, model):
    r = as_json(capsys, model, *HEADLINE)
    a, work = assumptions("book"), fleet.Workload(10_000, 500_000, 0.25)
    spec = specs.model(model)
    assert r["model"] == model and r["gpu"] == "h200"
    assert r["kv_bytes_per_token"] == kv.kv_bytes_per_token(spec, "bf16", "bf16")
    assert r["request_bytes"] == kv.request_kv_bytes(spec, 500_000, "bf16", "bf16")
    assert r["weight_bytes_total"] == model_weight_bytes(model, "public", a.formats())
    best = fleet.plan(model, "h200", a, work)
    assert r["best"] == plan_report.plan_dict(best)
    b = r["best"]
    assert (b["placement"], b["nodes"], b["decode_nodes"], b["prefill_nodes"]) == (
        best.placement.name, best.nodes, best.d_nodes, best.p_nodes)
    assert b["weight_bytes_per_gpu"] == best.decode.weights
    assert b["requests_per_gpu"] == best.decode.requests
    # Every valid placement, each the library's plan restricted to it, fewest nodes first.
    tried = fleet.staged(model, "h200", 500_000, a, placements(model, a))
    valid = [p for p in tried if memory(model, "h200", p, 500_000, a).valid]
    assert {p["placement"] for p in r["plans"]} == {p.name for p in valid}
    for row in r["plans"]:
        p = fleet.plan(model, "h200", a, work,
                       placement=fleet.Placement(row["ep"], row["attention_tp"], dcp=row["dcp"], pp=row["pp"]))
        assert row == plan_report.plan_dict(p)
    assert [p["nodes"] for p in r["plans"]] == sorted(p["nodes"] for p in r["plans"])
    assert r["plans"][0]["nodes"] == b["nodes"]


def test_headline_matches_the_book(capsys):
    # The book's headline (chapter 11, glued in results/default.json): K3 80 nodes on EP224 with
    # attention TP8 and DCP8, V4-Pro 23 nodes on EP64 with attention DP, at 10,000 x 500K and rho 0.25.
    glued = json.loads((ROOT / "results/default.json").read_text())["notebooks"]["11-prefill-decode"]["values"]
    for model, tag in (("kimi-k3", "k3"), ("deepseek-v4-pro", "v4")):
        b = as_json(capsys, model, *HEADLINE)["best"]
        assert b["nodes"] == glued[f"plan_{tag}_h200_rho25_nodes"]["value"]
        assert b["placement"] == glued[f"plan_{tag}_h200_rho25_layout"]["value"]
        assert b["decode_nodes"] == glued[f"plan_{tag}_h200_rho25_d_nodes"]["value"]
    k3, v4 = as_json(capsys, "kimi-k3", *HEADLINE)["best"], as_json(capsys, "deepseek-v4-pro", *HEADLINE)["best"]
    assert (k3["placement"], k3["nodes"], k3["engine"]) == ("EP224, attention TP8, DCP8", 80, "vLLM 0.33.0")
    assert (v4["placement"], v4["nodes"]) == ("EP64, attention DP", 23)


def test_kv_bytes_by_hand(capsys):
    # DeepSeek-V3's public config: 61 MLA layers caching kv_lora_rank 512 + qk_rope_head_dim 64
    # elements a token, 2 bytes each in BF16; in FP8 FlashMLA's 656-byte entry (512 FP8 + 4 fp32
    # scales + 64 BF16 rope).
    assert as_json(capsys, "deepseek-v3", "--context", "4096")["kv_bytes_per_token"] == 61 * 576 * 2
    fp8 = as_json(capsys, "deepseek-v3", "--context", "4096", "--kv-dtype", "fp8")
    assert fp8["kv_bytes_per_token"] == 61 * 656 and fp8["kv_dtype"] == "fp8"
    assert fp8["fixed_bytes_per_request"] == 0          # MLA only: everything grows


def test_fixed_state_is_what_does_not_grow(capsys):
    # K3: MLA grows exactly linearly and the KDA state not at all, so a request is its fixed state
    # plus bytes a token times the context, to the byte.
    r = as_json(capsys, "kimi-k3", *HEADLINE)
    assert r["fixed_bytes_per_request"] == r["kv_breakdown"]["KDA state"] > 0
    assert r["request_bytes"] == r["fixed_bytes_per_request"] + r["kv_bytes_per_token"] * 500_000
    # V4-Pro: the sliding window is full at 500K tokens, so it is fixed; compressed entries grow.
    v4 = as_json(capsys, "deepseek-v4-pro", *HEADLINE)
    assert v4["fixed_bytes_per_request"] == v4["kv_breakdown"]["sliding window"] > 0
    short = as_json(capsys, "deepseek-v4-pro", "--context", "64")     # shorter than the window
    assert short["fixed_bytes_per_request"] == 0


def test_the_state_dtype_priced_is_named_beside_the_shipped_one(capsys):
    """Qwen3.5 ships its Gated DeltaNet state in FP32 (mamba_ssm_dtype): the default prices the book's
    BF16 and says what the config ships; --state-dtype shipped prices the FP32 one."""
    qwen = "Qwen--Qwen3.5-397B-A17B"
    r = as_json(capsys, qwen, *HEADLINE)
    spec = specs.model(qwen)
    fp32 = kv.request_kv_bytes(spec, 0, "bf16", "fp32")       # at 0 tokens a request is its state
    assert (r["state_dtype"], r["shipped_state_dtype"]) == ("bf16", "fp32")
    assert r["fixed_bytes_per_request"] == kv.request_kv_bytes(spec, 0, "bf16", "bf16")
    assert r["fixed_bytes_per_request_shipped"] == fp32 > r["fixed_bytes_per_request"]
    shipped = as_json(capsys, qwen, *HEADLINE, "--state-dtype", "shipped")
    assert shipped["state_dtype"] == "fp32" and shipped["fixed_bytes_per_request"] == fp32
    assert shipped["assumptions"]["state_dtype"] == "fp32"
    status, out, _ = run(capsys, qwen, *HEADLINE)
    assert f"recurrent state bf16 (the config ships it in fp32, conv tail bf16: {fp32 / 1e6:,.1f} MB fixed state)" in out
    status, out, _ = run(capsys, qwen, *HEADLINE, "--state-dtype", "shipped")
    assert "recurrent state fp32, as the config ships it (conv tail bf16)" in out
    # K3's config names no state dtype: shipped falls back to the book's BF16, and says so
    k3 = as_json(capsys, "kimi-k3", *HEADLINE, "--state-dtype", "shipped")
    assert (k3["state_dtype"], k3["shipped_state_dtype"], k3["fixed_bytes_per_request_shipped"]) == \
        ("bf16", None, None)
    assert "recurrent state bf16 (the config names no state dtype)" in run(capsys, "kimi-k3", *HEADLINE)[1]
    assert "state fp32" in run(capsys, "kimi-k3", *HEADLINE, "--state-dtype", "fp32")[1]


def test_flags_reach_the_assumptions(capsys):
    r = as_json(capsys, "deepseek-v4-pro", "--gpu", "GB200", "--formats", "fp8", "--kv-dtype", "fp8",
                "--gpus-per-node", "4", "--context", "1M", "--concurrency", "2e3", "--rho", "0.5")
    a = assumptions("book", weights="fp8", kv_dtype="fp8", gpus_per_node=4, max_attention_tp=4, max_dcp=4)
    assert r["assumptions"] == a.as_dict()
    assert r["workload"] == {"concurrency": 2000, "context": 1_000_000, "rho": 0.5, "resident": 1000,
                             "output_tokens_per_turn": 1000, "prompt_tokens_per_turn": 2000,
                             "context_default_past_limit": None}
    assert r["best"] == plan_report.plan_dict(fleet.plan("deepseek-v4-pro", "gb200", a, fleet.Workload(2000, 10**6, 0.5)))
    assert all(p["ep"] % 4 == 0 and p["attention_tp"] <= 4 for p in r["plans"])


def test_defaults_are_the_articles_workload_with_every_session_resident(capsys):
    """An engine's max_num_seqs counts every open session: so does the default, and the first line
    says how many are resident (10,000 of 10,000; a quarter under --rho 0.25)."""
    r = as_json(capsys, "kimi-k3")
    assert (r["workload"]["concurrency"], r["workload"]["context"], r["workload"]["rho"]) == (10_000, 500_000, 1.0)
    assert r["workload"]["resident"] == 10_000 and r["workload"]["output_tokens_per_turn"] == 1000
    # the turns the plan's sessions finish at its own speed, one token a step
    b = r["best"]
    assert b["turns_per_s"] == pytest.approx(10_000 * b["session_tokens_per_s"] / 1000)
    assert r["gpu"] == "h200" and r["assumptions"] == assumptions("book").as_dict()
    _, out, _ = run(capsys, "kimi-k3", "--rho", "0.25")
    assert out.splitlines()[0] == "Kimi K3 on NVIDIA H200 SXM: 2,500 sessions resident on decode GPUs"


@pytest.mark.parametrize("text, tokens", [("32K", 32_000), ("32Ki", 32_768), ("1Mi", 1_048_576), ("1M", 10**6),
                                          ("128ki", 131_072), ("1e6", 10**6)])
def test_counts_are_decimal_unless_binary_is_asked_for(text, tokens):
    assert cli.count(text) == tokens


def test_traffic_flags_set_the_prefill_work(capsys):
    """Turns of 500 output tokens, 8,000 prompt tokens each, 1,000 sessions all resident, planned
    for at least 100 tokens/s a session: at the plan's speed v, 1,000 x v / 500 turns/s, so
    16,000 v prompt tokens/s for prefill to take in (1.6M at exactly 100)."""
    args = ("kimi-k3", "--concurrency", "1000", "--prompt-tokens", "8K", "--output-tokens", "500",
            "--speed", "100")
    r = as_json(capsys, *args)
    b = r["best"]
    assert r["assumptions"]["prompt_tokens_per_turn"] == 8000 and r["workload"]["output_tokens_per_turn"] == 500
    v = b["session_tokens_per_s"]
    assert 100 <= v < 110
    assert b["turns_per_s"] == pytest.approx(2 * v) and b["prompt_tokens_per_s"] == pytest.approx(16_000 * v)
    a = assumptions("book", prompt_tokens_per_turn=8000)
    p = fleet.plan("kimi-k3", "h200", a, fleet.workload(1000, rho=1.0, output_tokens=500), speed=100)
    assert p.prefill.tokens_per_s == pytest.approx(16_000 * v) and b["prefill_nodes_by_work"] == p.prefill.by_work
    line = f"{2 * v:,.0f} turns/s ({16_000 * v:,.0f} prompt tokens/s)"
    assert line in run(capsys, *args)[1].replace("\n  ", " ")


def test_a_price_gives_each_plans_cost(capsys):
    r = as_json(capsys, "qwen-2.5-72b", "--concurrency", "100", "--context", "32K", "--price", "2")
    for p in r["plans"]:
        assert p["usd_per_hour"] == 2 * p["gpus"]
        # every GPU paid, the fleet decoding one token a step for each resident session
        tokens_per_s = 100 / p["step_s"]
        assert p["usd_per_million_output_tokens"] == pytest.approx(2 * p["gpus"] / 3600 / tokens_per_s * 1e6)
        # prefill by work: the decode GPUs, plus whole 8-GPU nodes for prefill sized by its prompt tokens
        by_work = p["gpus"] - 8 * p["prefill_nodes"] + 8 * p["prefill_nodes_by_work"]
        assert p["gpus_by_work"] == by_work and p["usd_per_hour_prefill_by_work"] == 2 * by_work
        assert p["usd_per_million_output_tokens_prefill_by_work"] == pytest.approx(
            2 * by_work / 3600 / tokens_per_s * 1e6)
    _, out, _ = run(capsys, "qwen-2.5-72b", "--concurrency", "100", "--context", "32K", "--price", "2")
    assert "cost at $2 a GPU-hour" in out and "work GPUs" in out
    status, _, err = run(capsys, "qwen-2.5-72b", "--price", "0")
    assert status == 2 and "--price: got 0" in err


def test_reqs_counts_a_whole_unit(capsys):
    """Under attention TP the GPUs of a group share its requests: the table counts the unit's."""
    r = as_json(capsys, "qwen-2.5-72b", "--concurrency", "100", "--context", "32K")
    for p in r["placements"]:
        assert p["requests_per_unit"] == p["requests_per_attention_group"] * p["ep"] // p["attention_tp"]


def test_a_near_miss_model_id_is_suggested(capsys):
    need.module("aiconfigurator_core", "pip install -r requirements.txt (its corpus names the model)")
    status, _, err = run(capsys, "qwen3-32b")
    assert status == 2 and "did you mean 'Qwen--Qwen3-32B'" in err


def test_a_closed_pipe_ends_quietly():
    out = subprocess.run(f"{sys.executable} -m twopaths.plan kimi-k3 | head -1", shell=True, capture_output=True,
                         text=True, cwd=ROOT)
    assert out.stdout.startswith("Kimi K3 on NVIDIA H200 SXM") and "Traceback" not in out.stderr


def test_no_valid_plan_names_the_smallest_change(capsys):
    status, out, _ = run(capsys, "kimi-k3", "--gpu", "h100", "--context", "100M")
    assert status == 1
    a = assumptions("book")
    work = fleet.workload(context=10**8, rho=0.25)
    fix = fleet.smallest_change("kimi-k3", "h100", a, work)
    assert "no valid plan" in out and fix in out.replace("\n  ", " ")
    status, out, _ = run(capsys, "kimi-k3", "--gpu", "h100", "--context", "100M", "--format", "json")
    r = json.loads(out)
    assert status == 1 and r["best"] is None and r["plans"] == [] and r["smallest_change"] == fix


@pytest.mark.parametrize("argv, flag, allowed", [
    (["--context", "0"], "--context", ">= 1"),
    (["--context", "abc"], "--context", "a whole number"),
    (["--context", "1.5"], "--context", "a whole number"),
    (["--context", "2e12"], "--context", "1000000000000]"),
    (["--concurrency", "0"], "--concurrency", ">= 1"),
    (["--concurrency", "-5"], "--concurrency", "a whole number"),
    (["--rho", "0"], "--rho", "(0, 1]"),
    (["--rho", "1.5"], "--rho", "(0, 1]"),
    (["--rho", "nan"], "--rho", "a finite number"),
    (["--rho", "lots"], "--rho", "invalid float"),
    (["--gpu", "tpu"], "--gpu", "mi355x"),
    (["--kv-dtype", "fp4"], "--kv-dtype", "fp8"),
    (["--formats", "int4"], "--formats", "fp8-non-expert"),
    (["--format", "yaml"], "--format", "json"),
    (["--gpus-per-node", "0"], "--gpus-per-node", ">= 1"),
    (["--gpus-per-node", "two"], "--gpus-per-node", "invalid int"),
])
def test_bad_flag_gets_one_line_naming_it(capsys, argv, flag, allowed):
    status, out, err = run(capsys, "kimi-k3", *argv)
    assert status == 2 and out == ""
    last = err.strip().splitlines()[-1]
    assert last.startswith("python -m twopaths.plan: error: ")
    assert flag in last and allowed in last
    assert "Traceback" not in err


@pytest.mark.parametrize("model, allowed", [("nope", "a registry id (deepseek-v3.2"), ("KIMI-K3", "kimi-k3")])
def test_bad_model_names_model(capsys, model, allowed):
    status, _, err = run(capsys, model)
    assert status == 2
    last = err.strip().splitlines()[-1]
    assert f"MODEL: got {model!r}" in last and allowed in last


def test_a_dense_model_gets_its_cache_and_a_plan_of_tp_groups(capsys):
    a, work = assumptions("book"), fleet.workload(10_000, 500_000, 0.25)
    r = plan_report.report("qwen-2.5-72b", "h200", a, work)
    assert r["kv_bytes_per_token"] == kv.kv_bytes_per_token("qwen-2.5-72b", "bf16", "bf16") == 80 * 8 * 128 * 2 * 2
    # units of one TP group (TP 1, 2, 4, 8); TP8 groups pipelined over 2 to 8 nodes are tried only
    # where no unit without stages holds a request (Qwen2.5-72B fits a node), or under a speed target
    assert r["placements_tried"] == 4 and plan_report.report("qwen-2.5-72b", "h200", a, work, 20.0)[
        "placements_tried"] == 4 + 7 and r["best"]["nodes"] == fleet.plan("qwen-2.5-72b", "h200", a, work).nodes
    assert r["best"]["placement"].startswith("dense, TP8") and "PP" not in r["best"]["placement"]
    status, out, _ = run(capsys, "qwen-2.5-72b")
    assert status == 0 and "dense, TP" in out


def corpus(name: str) -> str:
    """A config of AIConfigurator's bundled corpus (``Org--Model``)."""
    need.module("aiconfigurator_core")
    import aiconfigurator_core
    return str(Path(aiconfigurator_core.__file__).parent / "model_configs" / f"{name}_config.json")


def test_a_config_file_plans_as_its_registry_model(capsys):
    # K3's full config.json from the corpus and the registry's verbatim excerpt of it give the same
    # cache, weights and plans, placement by placement.
    from_file = as_json(capsys, corpus("moonshotai--Kimi-K3"), *HEADLINE)
    registry = as_json(capsys, "kimi-k3", *HEADLINE)
    assert from_file["model"] == "moonshotai--Kimi-K3"
    for key in ("model", "model_name"):
        del from_file[key], registry[key]
    # a prefill GPU's rate counts 2 FLOP an activated parameter: the registry takes K3's from its
    # model card (104B), a bare config.json from counting its weights, 0.03% apart; every count
    # (nodes, requests, prefill nodes by work) agrees exactly
    rates = [[p.pop("prefill_tokens_per_s_at_ratio") for p in (d["best"], *d["plans"])] for d in (from_file, registry)]
    assert rates[0] == pytest.approx(rates[1], rel=1e-3)
    assert from_file == registry


@pytest.mark.parametrize("name, family", [("deepseek-ai--DeepSeek-R1", "mla"),
                                          ("deepseek-ai--DeepSeek-V4-Flash", "deepseek_v4"),
                                          ("zai-org--GLM-5", "mla+dsa")])
def test_corpus_configs_get_the_librarys_plan(capsys, name, family):
    status, out, err = run(capsys, corpus(name), *HEADLINE, "--format", "json")
    r = json.loads(out)
    model = specs.add_model(corpus(name))      # the same id again: accepted, nothing changes
    assert model == r["model"] == name and specs.model(model).raw["family"] == family
    a, work = assumptions("book"), fleet.Workload(10_000, 500_000, 0.25)
    assert r["kv_bytes_per_token"] == kv.kv_bytes_per_token(specs.model(model), "bf16", "bf16")
    if r["unsized"] is None:
        assert status == 0 and r["best"] == plan_report.plan_dict(fleet.plan(model, "h200", a, work))
    else:                      # the prefill FLOP counter does not read this family's attention
        assert status == 1 and r["plans"] == [] and "calc.attention_flops" in r["unsized"]
        assert r["placements"] and "no fleet plan" in run(capsys, corpus(name))[1]


def test_a_corpus_name_is_its_file(capsys):
    by_name = run(capsys, "Qwen--Qwen3.5-397B-A17B", "--context", "100K", "--format", "json")
    by_path = run(capsys, corpus("Qwen--Qwen3.5-397B-A17B"), "--context", "100K", "--format", "json")
    assert by_name == by_path and json.loads(by_name[1])["model"] == "Qwen--Qwen3.5-397B-A17B"
    assert lookup.corpus_path("No--Such-Model") is None


def test_unpriced_weights_are_named_and_the_formats_flag_prices_them(capsys):
    # DeepSeek-V3.1-NVFP4 keeps q/kv BF16 beside an NVFP4 o_proj: the attention group has no one format
    name = corpus("nvidia--DeepSeek-V3.1-NVFP4")
    status, out, err = run(capsys, name, "--context", "4096")
    # the cache does not depend on the weights: it is priced, the weights named unknown, nothing placed
    assert status == 1 and err == "" and "no fleet plan: the weights cannot be priced" in out
    assert "bytes a token (all layers)" in out and "valid placements" not in out
    r = json.loads(run(capsys, name, "--context", "4096", "--format", "json")[1])
    assert r["weight_bytes_total"] is None and r["plans"] == r["placements"] == [] and r["best"] is None
    assert r["weights_unknown"].endswith("attention (NVFP4, None)")     # two formats in one group
    assert r["unsized"].endswith("under --formats shipped attention still have no format")
    assert r["kv_bytes_per_token"] == as_json(capsys, corpus("deepseek-ai--DeepSeek-V3"), "--context", "4096")[
        "kv_bytes_per_token"]
    # every linear layer in FP8: V3's checkpoint as shipped (the same shapes, FP8 blocks but the head)
    r = as_json(capsys, name, "--context", "4096", "--formats", "fp8")
    assert r["weight_bytes_total"] == as_json(capsys, corpus("deepseek-ai--DeepSeek-V3"), "--context", "4096")[
        "weight_bytes_total"]


def test_a_gqa_config_sizes_its_gpus_by_hand(capsys):
    # Qwen3-235B-A22B: 94 layers, 4 K/V heads of head_dim 128, K and V in BF16.
    status, out, _ = run(capsys, corpus("Qwen--Qwen3-235B-A22B"), *HEADLINE, "--format", "json")
    r = json.loads(out)
    assert r["kv_bytes_per_token"] == 94 * 4 * 128 * 2 * 2 == 192_512
    assert r["fixed_bytes_per_request"] == 0
    a = assumptions("book")
    shown = {(m["ep"], m["attention_tp"]): m for m in r["placements"]}
    for p in fleet.staged(r["model"], "h200", 500_000, a, placements(r["model"], a)):
        m = memory(r["model"], "h200", p, 500_000, a)
        assert (m.valid and shown[p.ep, p.attention_tp] == plan_report.memory_dict(m)) or (
            not m.valid and (p.ep, p.attention_tp) not in shown)
    # 4 K/V heads: TP2 and TP4 split them, TP8 holds each head twice (as calc.placement prices it).
    assert shown[8, 2]["request_bytes_per_gpu"] == pytest.approx(r["request_bytes"] / 2)
    assert shown[8, 8]["request_bytes_per_gpu"] == pytest.approx(r["request_bytes"] / 4)
    if r["unsized"]:
        assert status == 1


@pytest.mark.parametrize("text, allowed", [
    (None, "a readable config.json file"),
    ("not json", "a file holding JSON"),
    ("[1, 2]", "a JSON object"),
    ('{"hidden_size": 64}', "model_type: got None"),
    ('{"model_type": "qwen3", "num_hidden_layers": 0}', "num_hidden_layers: got 0"),
    ('{"model_type": "mamba"}', "model_type: got 'mamba'"),
])
def test_bad_config_files_name_model(capsys, tmp_path, text, allowed):
    status, out, err = run(capsys, written(tmp_path / "config.json", text))
    last = err.strip().splitlines()[-1]
    assert status == 2 and out == "" and last.startswith("python -m twopaths.plan: error: MODEL")
    assert allowed in last


def test_a_config_may_not_take_a_registry_models_id(capsys, tmp_path):
    (tmp_path / "kimi-k3").mkdir()
    other = json.loads(Path(corpus("deepseek-ai--DeepSeek-R1")).read_text())
    (tmp_path / "kimi-k3" / "config.json").write_text(json.dumps(other))
    status, _, err = run(capsys, str(tmp_path / "kimi-k3" / "config.json"))
    assert status == 2 and "model: got 'kimi-k3'" in err and "no registry model or other config" in err
    assert specs.model("kimi-k3").raw["family"] == "kimi_linear"       # the registry's K3 untouched


@pytest.mark.parametrize("argv", [["kimi-k3", *HEADLINE], ["deepseek-v4-pro", *HEADLINE],
                                  ["kimi-k3", "--gpu", "h100", "--context", "1M"],
                                  ["deepseek-v4-flash", "--gpu", "mi300x", "--concurrency", "1000000"],
                                  ["corpus:Qwen--Qwen3.5-397B-A17B", "--gpu", "gb300"]])
def test_table_fits_100_columns(capsys, argv):
    argv = [corpus(a[7:]) if a.startswith("corpus:") else a for a in argv]
    status, out, _ = run(capsys, *argv)
    assert status in (0, 1) and out
    assert max(len(line) for line in out.splitlines()) <= 100
    if status == 0:
        assert "plan: " in out and "bytes a token" in out


def test_help_shows_examples(capsys):
    status, out, _ = run(capsys, "--help")
    assert status == 0
    assert "examples:" in out and "python -m twopaths.plan kimi-k3 --gpu h200" in out
    assert "exit status" in out


@pytest.mark.parametrize("text, value", [("500000", 500_000), ("500K", 500_000), ("1M", 10**6),
                                         ("1e6", 10**6), ("1_000_000", 10**6), ("1,000,000", 10**6),
                                         ("1.5k", 1500)])
def test_counts(text, value):
    assert cli.count(text) == value


def test_module_runs_as_a_command():
    out = subprocess.run([sys.executable, "-m", "twopaths.plan", "deepseek-v4-pro", "--rho", "0.25",
                          "--format", "json"], capture_output=True, text=True, timeout=120,
                         env={"PYTHONPATH": str(ROOT / "lib"), "PATH": "/usr/bin:/bin"})
    assert out.returncode == 0, out.stderr
    assert math.isclose(json.loads(out.stdout)["kv_bytes_per_token"],
                        kv.kv_bytes_per_token(specs.model("deepseek-v4-pro"), "bf16", "bf16"))


H200_FIGURES = {k: getattr(specs.gpu("h200"), k) for k in specs.GPU_FIELDS + ("device_bytes",)}


def test_a_gpu_the_registry_lacks_plans_like_one_with_its_figures():
    gid = specs.add_gpu("test-h200-twin", {**H200_FIGURES, "name": "an H200 by another name"})
    assert specs.gpu(gid).name == "an H200 by another name" and gid in specs.gpu_ids()
    a, work = assumptions("book"), fleet.Workload(10_000, 500_000, 0.25)
    twin, h200 = fleet.plan("deepseek-v4-pro", gid, a, work), fleet.plan("deepseek-v4-pro", "h200", a, work)
    assert (twin.nodes, twin.placement, twin.decode) == (h200.nodes, h200.placement, h200.decode)
    assert specs.add_gpu(gid, {**H200_FIGURES, "name": "an H200 by another name"}) == gid    # same again
    # Without device_bytes the nominal HBM stands in, and says so.
    nominal = specs.gpu(specs.add_gpu("test-nominal", {k: H200_FIGURES[k] for k in specs.GPU_FIELDS}))
    assert nominal.device_bytes == nominal.hbm_bytes == 141e9 and "nominal" in nominal.device_source


@pytest.mark.parametrize("gid, fields, name, allowed", [
    ("x1", {k: v for k, v in H200_FIGURES.items() if k != "hbm_bytes"}, "gpu_specs.x1.hbm_bytes", "> 0"),
    ("x2", {**H200_FIGURES, "hbm_bytes": 0}, "gpu_specs.x2.hbm_bytes", "> 0"),
    ("x3", {**H200_FIGURES, "fp8_flops": "fast"}, "gpu_specs.x3.fp8_flops", "a finite number"),
    ("x4", {**H200_FIGURES, "hbm": 1e9}, "gpu_specs.x4", "fields among"),
    ("x5", 141e9, "gpu_specs.x5", "a mapping of hbm_bytes"),
    ("h200", {**H200_FIGURES, "hbm_bytes": 1e12}, "gpu_specs", "an id not already in specs/gpus.yaml"),
])
def test_a_bad_gpu_spec_names_its_field(raises_param, gid, fields, name, allowed):
    err = raises_param(name, specs.add_gpu, gid, fields)
    assert allowed in err.allowed
    assert gid not in specs.gpu_ids() or gid == "h200"
    assert specs.gpu("h200").hbm_bytes == 141e9


def test_a_configs_list_resolves_each_model_once(raises_param):
    qwen = "Qwen--Qwen3-235B-A22B"
    assert scenario.models([], [qwen, "kimi-k3"]) == [qwen, "kimi-k3"]
    err = raises_param("models", scenario.models, [], [qwen, corpus(qwen)])    # one model, two spellings
    assert f"each one once ({qwen!r} is given twice)" in err.allowed
    raises_param("models", scenario.models, [], ["kimi-k3", "kimi-k3"])
    for bad in (qwen, None):
        raises_param("configs", scenario.models, [], bad)
    raises_param("configs", scenario.models, [], [3])
    err = raises_param("configs", scenario.models, [], ["/no/such/config.json"])
    assert "a readable config.json file" in err.allowed


def test_gpu_spec_file_adds_accelerators(capsys, tmp_path):
    path = tmp_path / "gpus.json"
    path.write_text(json.dumps({"test-twin": H200_FIGURES}))
    twin = as_json(capsys, "deepseek-v4-pro", *HEADLINE[2:], "--gpu-spec", str(path), "--gpu", "test-twin")
    h200 = as_json(capsys, "deepseek-v4-pro", *HEADLINE)
    assert twin["gpu"] == "test-twin" and twin["plans"] == h200["plans"] and twin["best"] == h200["best"]


@pytest.mark.parametrize("text, allowed", [
    (None, "--gpu-spec gpu_specs: got"),
    ("{", "a file holding JSON"),
    ("[]", "a JSON object of GPU ids"),
    ('{"x": {"hbm_bandwidth": 8e12}}', "--gpu-spec gpu_specs.x.hbm_bytes: got None; allowed: a finite number > 0"),
    ('{"x": 5}', "--gpu-spec gpu_specs.x: got 5"),
])
def test_bad_gpu_spec_file_names_the_flag(capsys, tmp_path, text, allowed):
    status, out, err = run(capsys, "kimi-k3", "--gpu-spec", written(tmp_path / "gpus.json", text), "--gpu", "x")
    assert status == 2 and out == "" and allowed in err.strip().splitlines()[-1]


def test_a_model_no_node_size_spreads_is_planned_within_a_node(capsys, tmp_path):
    """60 routed experts split evenly over no whole-node EP size, but over EP 1, 2 and 4, and
    unevenly over a node's one TP8 group (vLLM): the command plans units within a node (it used to
    refuse the model), and a top-k above the expert count is refused by name."""
    c = json.loads(Path(corpus("Qwen--Qwen3-235B-A22B")).read_text())
    path = tmp_path / "sixty" / "config.json"
    path.parent.mkdir()
    path.write_text(json.dumps({**c, "num_experts": 60}))
    r = as_json(capsys, str(path))
    assert r["placements"] and all(p["ep"] in (1, 2, 4) or (p["ep"], p["attention_tp"]) == (8, 8)
                                   for p in r["placements"])
    assert any(p["ep"] == 8 for p in r["placements"])
    assert r["best"]["ep"] == 4 and r["best"]["nodes"] > 0
    path.write_text(json.dumps({**c, "num_experts_per_tok": 200}))
    status, out, err = run(capsys, str(path))
    assert status == 2 and "num_experts_per_tok: got 200; allowed: at most the 128 routed experts" in err


def test_attention_tp_the_heads_do_not_split_is_named_not_skipped(capsys, tmp_path):
    # Qwen3-32B's config with 60 query heads (and its 8 K/V heads): TP8 divides the node but not
    # 60 heads, so the plan may only use TP 1, 2 or 4, and the report says why TP8 is missing
    c = json.loads(Path(corpus("Qwen--Qwen3-32B")).read_text())
    c["num_attention_heads"] = 60
    path = written(tmp_path / "config.json", json.dumps(c))
    r = as_json(capsys, path, *HEADLINE)
    assert set(r["attention_tp_not_tried"]) == {"8"} and "60 attention heads" in r["attention_tp_not_tried"]["8"]
    assert all(p["attention_tp"] in (1, 2, 4) for p in r["placements"])
    status, out, _ = run(capsys, path, *HEADLINE)
    assert "attention TP8 not tried: it must be a divisor of" in out


def test_a_config_without_kv_heads_is_said_to_be_mha(capsys, tmp_path):
    """transformers reads a missing num_key_value_heads as one K/V head per query head: the output
    says so, since a GQA model whose key was dropped would be priced 8x or more."""
    c = json.loads(Path(corpus("Qwen--Qwen3-32B")).read_text())
    _, out, _ = run(capsys, written(tmp_path / "config.json", json.dumps(c)), "--concurrency", "10")
    assert "MHA, transformers' default" not in out
    del c["num_key_value_heads"]
    (tmp_path / "mha").mkdir()                  # its own folder: a model's id is its folder's name
    status, out, _ = run(capsys, written(tmp_path / "mha" / "config.json", json.dumps(c)), "--concurrency", "10",
                         "--format", "json")
    r = json.loads(out)
    # 64 layers x 64 K/V heads (the query heads) x 128 x (K, V) x 2 B
    assert r["mha_by_default"] and r["kv_bytes_per_token"] == 64 * 64 * 128 * 2 * 2


@pytest.mark.parametrize("model, fixed", [("qwen-2.5-72b", 0),
                                          # K3: 69 KDA layers x (96 heads x 128 x 128 BF16 + 3 tokens of q, k, v)
                                          ("kimi-k3", 69 * (96 * 128 * 128 * 2 + 3 * 96 * 3 * 128 * 2))])
def test_the_fixed_state_at_the_longest_context_is_only_what_stops_growing(capsys, model, fixed):
    """At kv.MAX_TOKENS (1e12) nothing can be seen to grow past the context: a growing cache must
    still not count as fixed (it read 327,680,000,000 MB for Qwen 2.5)."""
    status, out, _ = run(capsys, model, "--context", "1e12", "--concurrency", "1", "--format", "json")
    r = json.loads(out)
    assert status == 1 and r["best"] is None            # no GPU holds such a request
    assert r["fixed_bytes_per_request"] == kv.fixed_bytes(model, 10**12, "bf16", "bf16") == fixed


def checkpoint_folder(tmp_path, name, index_total=None, tensors=None):
    """A checkpoint folder as Hugging Face lays one out: a corpus config as config.json, with a
    safetensors index (its total only) or one safetensors file whose header gives each tensor's
    byte range (the data after it is not read, so none is written)."""
    folder = tmp_path / name
    folder.mkdir()
    (folder / "config.json").write_text(Path(corpus("Qwen--Qwen3-32B")).read_text())
    if index_total is not None:
        (folder / "model.safetensors.index.json").write_text(json.dumps(
            {"metadata": {"total_size": index_total}, "weight_map": {}}))
    if tensors is not None:
        header = json.dumps(tensors).encode()
        (folder / "model.safetensors").write_bytes(len(header).to_bytes(8, "little") + header)
    return str(folder)


def test_a_checkpoint_folder_shows_its_own_weight_bytes(capsys, tmp_path):
    computed = as_json(capsys, corpus("Qwen--Qwen3-32B"), "--concurrency", "1")["weight_bytes_total"]
    r = as_json(capsys, checkpoint_folder(tmp_path, "same", index_total=round(computed)), "--concurrency", "1")
    assert r["weight_bytes_checkpoint"] == round(computed) and r["weights_warning"] is None
    # 5% more in the files than the config prices: named, both figures given
    status, out, _ = run(capsys, checkpoint_folder(tmp_path, "more", index_total=round(1.05 * computed)),
                         "--concurrency", "1")
    assert status == 0 and "WARNING: the weights computed from the config" in out and "by -4.8%" in out
    # no index: the headers' byte ranges, 2 x 3 BF16 (12 B) and 4 FP32 (16 B)
    tensors = {"__metadata__": {"format": "pt"}, "a": {"dtype": "BF16", "shape": [2, 3], "data_offsets": [0, 12]},
               "b": {"dtype": "F32", "shape": [4], "data_offsets": [12, 28]}}
    r = as_json(capsys, checkpoint_folder(tmp_path, "headers", tensors=tensors), "--concurrency", "1")
    assert r["weight_bytes_checkpoint"] == 28 and "safetensors file" in r["weight_bytes_checkpoint_source"]


def test_a_folder_without_a_config_is_refused_by_name(capsys, tmp_path):
    status, _, err = run(capsys, str(tmp_path))
    assert status == 2 and "MODEL: got" in err and "a checkpoint folder holding a config.json" in err


def test_a_wrapped_line_stays_within_the_width_on_every_continuation():
    from twopaths.views.plan_report import WIDTH, _wrap
    line = " ".join(["word"] * 100)           # 499 characters: four continuation lines
    lines = _wrap(line).split("\n")
    assert len(lines) > 3 and max(map(len, lines)) <= WIDTH and all(x.startswith("  ") for x in lines[1:])
    assert " ".join(x.strip() for x in lines) == line


def test_without_context_a_short_config_gets_its_own_limit_and_says_so(capsys):
    """Qwen3-32B declares 40,960 tokens: the default 500K would price a deployment the model refuses,
    so the command takes the config's limit and says where the figure came from. A context given
    is never changed, only flagged."""
    r = as_json(capsys, "Qwen--Qwen3-32B", "--gpu", "h100")
    assert r["workload"]["context"] == 40_960 and r["workload"]["context_default_past_limit"] == 500_000
    assert r["best"] is not None and not r["best"]["beyond_max_position"]
    out = run(capsys, "Qwen--Qwen3-32B", "--gpu", "h100")[1].replace("\n  ", " ")
    assert "10,000 sessions x 40,960 tokens (the config's max_position_embeddings: the default, 500,000, is" in out
    assert "FLAG" not in out
    given = as_json(capsys, "Qwen--Qwen3-32B", "--gpu", "h100", "--context", "500K")
    assert given["workload"]["context"] == 500_000 and given["workload"]["context_default_past_limit"] is None
    assert given["best"]["beyond_max_position"]
    assert as_json(capsys, "kimi-k3")["workload"]["context_default_past_limit"] is None   # 1,048,576 declared


def test_numbers_read_as_counts_and_rates(capsys):
    """Whole bytes without a decimal, no '0.0 MB' of a state that is not there, a rate under 100 a
    second with three figures (12.8 turns/s, not 13), and one engine line a one-node decode unit."""
    out = run(capsys, "Qwen--Qwen3-32B", "--gpu", "h100", "--concurrency", "64")[1]
    assert "bytes a token (all layers)           262,144 B" in out
    assert "fixed state: none, every layer's cache grows" in out and "0.0 MB" not in out
    assert "finish 2.95 turns/s (5,894 prompt tokens/s)" in out.replace("\n  ", " ")
    # a dense model's step has no EP all-to-all and, without DCP, no merge to name
    assert "(a bound: HBM reads in a 21.7 ms step)" in out and "all-to-all" not in out
    assert "vLLM 0.33.0, on each decode node:" in out and "take their own rank" not in out
    k3 = run(capsys, "kimi-k3", "--gpu", "b300", "--rho", "0.25")[1]
    assert "on the first node of each decode unit of 8 nodes (the others take their own rank):" in k3


@pytest.mark.parametrize("engine, flag", [("vllm", "--max-num-seqs"), ("sglang", "--max-running-requests")])
def test_both_engines_cap_the_requests_a_decode_unit_runs(capsys, engine, flag):
    """vLLM's cap is per data-parallel rank (each rank its own scheduler), SGLang's for the unit:
    Qwen3.5-397B on H200 in EP64 with attention TP2 holds 28 requests in each of 32 attention groups."""
    r = as_json(capsys, "Qwen--Qwen3.5-397B-A17B", "--rho", "0.25", "--context", "256Ki")
    b = r["best"]
    per_group = next(p for p in r["plans"] if p["placement"] == b["placement"])["requests_per_attention_group"]
    assert (b["placement"], per_group) == ("EP64, attention TP2", 28)
    want = {"vllm": 28, "sglang": 28 * 32}[engine]
    assert f"{flag} {want} " in b["launch"][engine]["decode"] + " "


def test_the_table_lists_the_fewest_node_placements_and_all_on_request(capsys):
    """K3 on H200s has 55 valid placements: the text lists the 10 with the fewest nodes, the plan
    first, and says how many more --all lists; --all and the JSON give all 55, in the same order."""
    r = as_json(capsys, "kimi-k3")
    assert len(r["plans"]) == 55
    out = run(capsys, "kimi-k3")[1].splitlines()
    rows = [line for line in out if line.startswith("EP")]
    assert [line.split()[0] for line in rows] == [p["placement"].split()[0] for p in r["plans"][:10]]
    assert rows[0].startswith(r["best"]["placement"])
    assert "  ... and 45 more, each with at least as many nodes (--all lists them)" in out
    every = [line for line in run(capsys, "kimi-k3", "--all")[1].splitlines() if line.startswith("EP")]
    assert len(every) == 55 and every[:10] == rows and not any("more, each" in line for line in every)


def test_the_step_names_only_the_terms_a_plan_has(capsys):
    """V4-Pro's plan has EP but no DCP (no engine has DCP for V4's attention); K3's has both."""
    v4 = run(capsys, "deepseek-v4-pro")[1].replace("\n  ", " ")
    assert "(a bound: HBM reads and " in v4 and "DCP merge" not in v4 and "ms of EP all-to-all in a" in v4
    k3 = run(capsys, "kimi-k3")[1].replace("\n  ", " ")
    assert "(a bound: HBM reads, DCP merge and " in k3


def test_a_plan_whose_ratio_starves_prefill_says_so(capsys):
    """K3 on H200s at P:D 1:2.5: 90 prefill nodes of 8 GPUs at the per-GPU rate take in less than the
    prompt tokens its sessions bring at the plan's speed, so the text flags the plan as
    prefill-bound and names the by-work fleet; the JSON gives both rates."""
    b = as_json(capsys, "kimi-k3")["best"]
    rate = fleet.prefill_rate("kimi-k3", "h200", 500_000, assumptions("book"))
    assert b["prefill_tokens_per_s_at_ratio"] == pytest.approx(b["prefill_nodes"] * 8 * rate)
    share = b["prefill_tokens_per_s_at_ratio"] / b["prompt_tokens_per_s"]
    assert 0 < share < 1
    out = run(capsys, "kimi-k3")[1].replace("\n  ", " ")
    assert (f"PREFILL-BOUND at the ratio: its 90 prefill nodes take in {share:.0%} of those prompt tokens"
            in out) and f"the {b['nodes_by_work']:,} nodes sized by work carry the load" in out
    # a fleet whose ratio gives prefill enough is not flagged
    assert "PREFILL-BOUND" not in run(capsys, "Qwen--Qwen3-32B", "--gpu", "h100", "--concurrency", "64")[1]


def test_the_cost_table_keeps_to_the_shown_placements_unless_all(capsys):
    def rows(*extra):
        out = run(capsys, "kimi-k3", "--price", "3", *extra)[1].splitlines()
        start = next(i for i, line in enumerate(out) if line.startswith("cost at $3"))
        return [line for line in out[start:] if line.startswith("  EP")]
    assert len(rows()) == 10 and len(rows("--all")) == 55

"""Plans an engine can launch: the engine table's flags are the engines' own, every plan's command
lines parse against the engines' recorded options, decode context parallelism goes only where an
engine has it, and a DCP plan for Kimi K3 on H200 matches a computation by hand.

The recorded options (tests/data/engines/*.json) are every option string of SGLang 0.5.23's and
vLLM 0.33.0's argument parsers, built CPU-only from their PyPI releases: neither engine installs
here, so the flags are checked against what their parsers accept.
"""

import json
import math
import shlex
from pathlib import Path

import pytest

from twopaths.calc import fleet, placement, weights
from twopaths.calc.placement import Placement, can_launch, engine_for
from twopaths.specs import engines, model
from twopaths.specs.serving import assumptions
from twopaths.views import launch, plan_report

DATA = Path(__file__).parent / "data" / "engines"
K3, V4, V32 = "kimi-k3", "deepseek-v4-pro", "deepseek-v3.2"
DCP = assumptions("book")                     # the book's preset tries DCP up to 8
BOOK = DCP.but(max_dcp=1)                     # the same without it
HEADLINE = fleet.workload(rho=0.25)           # 10,000 sessions x 500K tokens, a quarter resident


def recorded(engine_id: str) -> dict:
    e = engines.engine(engine_id)
    data = json.loads((DATA / f"{e.id}-{e.version}-options.json").read_text())
    assert data["engine"] == e.id and data["version"] == e.version
    return data["options"]


@pytest.mark.parametrize("engine_id", [e.id for e in engines.engines()])
def test_every_flag_of_the_table_is_an_option_of_that_engine_release(engine_id):
    options = recorded(engine_id)
    for name, f in engines.engine(engine_id).features.items():
        for flag in [w for w in f.flag.split() + list(f.extra) if w.startswith("--")]:
            assert flag.split(".")[0] in options, (engine_id, name, flag)
        if name == "kv_cache_dtype":
            assert set(f.values.values()) <= set(options[f.flag]["choices"]), (engine_id, f.values)


def check_command(engine_id: str, command: str) -> None:
    """Each ``--flag`` is an option of the engine, takes a value exactly when its parser says so,
    takes one of its choices where it has them, and appears once."""
    options = recorded(engine_id)
    words = shlex.split(command)
    head = {"vllm": ["vllm", "serve"], "sglang": ["python", "-m", "sglang.launch_server"]}[engine_id]
    assert words[:len(head)] == head
    words = words[len(head):]
    if engine_id == "sglang":
        assert words[0] == "--model-path"
        words = words[2:]
    else:
        words = words[1:]                     # vllm serve MODEL
    flags = [w for w in words if w.startswith("--")]
    assert len(flags) == len(set(flags)), command
    i = 0
    while i < len(words):
        flag = words[i]
        assert flag in options, (engine_id, flag, command)
        if options[flag]["takes_value"]:
            value = words[i + 1]
            assert not value.startswith("--"), (flag, command)
            if options[flag]["choices"]:
                assert value in options[flag]["choices"], (flag, value)
            i += 2
        else:
            i += 1


SCENARIOS = [  # (model, GPU, assumptions): both models, DCP on and off, FP8 caches, replicas, dense
    (K3, "h200", BOOK), (K3, "h200", DCP), (V4, "h200", DCP), (K3, "b300", DCP.but(kv_dtype="fp8")),
    (V32, "h200", DCP), (V4, "b300", BOOK.but(redundant_experts=32)), ("qwen-2.5-72b", "h200", DCP),
]


@pytest.mark.parametrize("m, gpu, a", SCENARIOS)
def test_every_plan_names_an_engine_and_its_commands_parse(m, gpu, a):
    p = fleet.plan(m, gpu, a, HEADLINE)
    launches = launch.commands(p)
    assert p.engine is not None and p.engine.label in {v.engine for v in launches.values()}
    for engine_id, cmd in launches.items():
        check_command(engine_id, cmd.decode)
        check_command(engine_id, cmd.prefill)
        assert cmd.decode_nodes_per_unit == max(p.ep // a.gpus_per_node, 1)
        flags = shlex.split(cmd.decode)
        if p.placement.dcp > 1:
            dcp_flag = engines.engine(engine_id).feature("decode_context_parallel").flag
            assert flags[flags.index(dcp_flag) + 1] == str(p.placement.dcp)
        role = engines.engine(engine_id).feature("disaggregation")
        for words, which in ((flags, "decode"), (shlex.split(cmd.prefill), "prefill")):
            assert words[words.index(role.flag) + 1] == role.values[which]


def test_the_first_node_command_carries_the_plans_parallelism():
    p = fleet.plan(K3, "h200", DCP, HEADLINE)
    assert p.placement == Placement(224, 8, dcp=8)
    words = shlex.split(launch.commands(p)["vllm"].decode)
    value = lambda flag: words[words.index(flag) + 1]    # noqa: E731
    assert value("--tensor-parallel-size") == "8"          # attention TP
    assert value("--data-parallel-size") == "28"           # 224 / 8 attention groups
    assert value("--decode-context-parallel-size") == "8"
    assert value("--data-parallel-size-local") == "1"      # one group a node: 28 nodes
    # vLLM gets the planned cache pool in bytes, and batches what DeepEP's buffer was sized for
    assert value("--kv-cache-memory-bytes") == str(int(p.decode.kv_room)) and value("--kv-cache-dtype") == "bfloat16"
    assert p.decode.requests * p.decode.request_bytes <= p.decode.kv_room
    assert value("--max-num-batched-tokens") == "128"
    # K3 routes a token to 16 experts, past the 11 DeepEP's low-latency kernels take: DeepEP V2
    assert "--enable-expert-parallel" in words and value("--all2all-backend") == "deepep_v2"
    assert value("--max-model-len") == "500000"       # the default, the config's 1M, would not fit the pool
    assert value("--mamba-ssm-cache-dtype") == "bfloat16"    # the book's BF16 state; vLLM's auto keeps FP32
    # the prefill unit hands its cache over at the decode unit's DCP size (vLLM's NIXL check)
    assert p.prefill.unit == Placement(16, 8, dcp=8) and p.prefill.unit_nodes == 2
    pre = shlex.split(launch.commands(p)["vllm"].prefill)
    assert pre[pre.index("--decode-context-parallel-size") + 1] == "8"
    assert pre[pre.index("--all2all-backend") + 1] == "deepep_high_throughput"
    v4 = placement.memory(V4, "h200", Placement(64, 1), 500_000, BOOK)
    sg = launch.command(engines.engine("sglang"), V4, v4, BOOK, "decode", 500_000).split()
    assert sg[sg.index("--moe-a2a-backend") + 1] == "deepep"          # V4-Pro's top-6: low latency
    assert sg[sg.index("--max-running-requests") + 1] == str(v4.requests * 64) and v4.requests <= 128
    # SGLang's fraction is weights plus pool over device memory: the reserve is what it leaves
    fraction = float(sg[sg.index("--mem-fraction-static") + 1])
    assert 1 - v4.reserve.total / v4.capacity - 1e-3 < fraction <= 1 - v4.reserve.total / v4.capacity   # rounded down
    assert sg[sg.index("--tp-size") + 1] == sg[sg.index("--ep-size") + 1] == "64"     # EP = TP (deepep)
    assert sg[sg.index("--attn-dp-size") + 1] == "64" and sg[sg.index("--nnodes") + 1] == "8"


def test_dcp_goes_only_where_an_engine_has_it():
    vllm, sglang = engines.engine("vllm"), engines.engine("sglang")
    with_dp = Placement(64, 8, dcp=8)              # 8 attention groups
    assert can_launch(vllm, K3, with_dp, DCP) and not can_launch(sglang, K3, with_dp, DCP)
    alone = Placement(8, 8, dcp=8)                 # one attention group: SGLang's DCP slices it
    assert can_launch(sglang, K3, alone, DCP)
    assert engine_for(V4, Placement(64, 8, dcp=8), DCP) is None      # V4 has no DCP path in either
    assert engine_for(V32, Placement(64, 8, dcp=4), DCP) is not None
    assert all(p.dcp == 1 for p in placement.placements(V4, DCP))
    assert all(p.dcp == 1 for p in placement.placements(K3, BOOK))   # max_dcp 1: none tried
    assert DCP.max_dcp == 8
    assert engine_for(K3, Placement(64, 8), BOOK.but(kv_dtype="fp32")) is None   # no engine caches FP32
    # vLLM refuses a BF16 cache for DeepSeek V4 (on Hopper): SGLang launches it; FP8 both
    assert engine_for(V4, Placement(64, 1), BOOK) == sglang
    assert engine_for(V4, Placement(64, 1), BOOK.but(kv_dtype="fp8")) == vllm
    with pytest.raises(Exception, match="dcp"):
        Placement(64, 4, dcp=8)                    # DCP inside the attention group only


def test_a_dcp_plan_for_k3_on_h200_matches_a_hand_computation():
    """K3, 10,000 sessions of 500,000 tokens, a quarter resident, BF16 cache, as shipped, H200."""
    c = model(K3).config
    mla_layers = len(c["linear_attn_config.full_attn_layers"])                     # 24
    kda_layers = len(c["linear_attn_config.kda_layers"])                           # 69
    latent = (c["kv_lora_rank"] + c["qk_rope_head_dim"]) * 2                      # 1,152 B a token a layer
    heads, d = c["linear_attn_config.num_heads"], c["linear_attn_config.head_dim"]
    state = kda_layers * (heads * d * d * 2 + (c["linear_attn_config.short_conv_kernel_size"] - 1) * 3 * heads * d * 2)
    tokens, t, dcp = 500_000, 8, 8
    share = mla_layers * latent * tokens / dcp + state / t     # latents striped 8 ways, state split by heads
    assert (mla_layers, kda_layers, latent) == (24, 69, 1152)
    assert share == pytest.approx(1.728e9 + 232.32e6 / 8, rel=1e-4)

    p = fleet.plan(K3, "h200", DCP, HEADLINE)
    u = p.decode
    assert u.request_bytes == pytest.approx(share, rel=1e-12)
    # DCP changes no weight: the same GPU of EP224, attention TP8 without it
    plain = placement.memory(K3, "h200", Placement(224, 8), tokens, DCP)
    assert u.weights == plain.weights
    # The runtime reserve, SGLang 0.5.23's rule on a 143,771 MiB H200: activations 1.5 MiB x 2,048
    # tokens, decode graphs 2 MiB x 512, runtime 512 MiB + 1 GiB for TP8 make 5,632 MiB, under the
    # 10 GiB floor; above it, DeepEP's low-latency buffer for 896 experts x 128 tokens a rank, 8,320 B
    # a combine message (K3's 3,584-wide latent padded to 4,096: 32 x 4 B of scales + 2 x 4,096),
    # four buffers, plus two signal arrays of 4 B an expert.
    assert 1.5 * 2048 + 2 * 512 + 512 + 1024 == 5632
    deepep = 4 * 896 * 128 * 8_320 + 2 * 4 * 896 + 128
    reserve = 10 * 2**30 + deepep
    assert u.reserve.total == pytest.approx(reserve, abs=1) and u.request_cap == 128
    usable = 143_771 * 2**20                                     # the driver's H200 figure, all usable
    requests = math.floor((usable - u.weights - reserve) / share)    # whole requests on every GPU
    assert u.requests == requests == 47
    per_unit = requests * 224 // t                              # a request spans its group of 8
    units = math.ceil(2_500 / per_unit)
    assert (p.requests_per_unit, p.units, p.d_nodes) == (per_unit, units, units * 224 // 8) == (1316, 2, 56)
    # vLLM launches it and splits the embedding over the group (SGLang would keep it whole)
    assert p.engine.id == "vllm" and "embedding" not in placement.whole_groups(K3, p.placement, DCP)
    sglang = weights.weights_per_gpu(K3, 224, tp=8, formats=DCP.formats())      # SGLang's rule
    assert sglang.other_bytes - u.other_bytes == pytest.approx(weights.weight_bytes(K3)["embedding"] * 7 / 8)
    without = fleet.plan(K3, "h200", BOOK, HEADLINE)
    assert without.d_nodes == 210 and p.nodes < without.nodes


def test_the_plan_command_chooses_dcp_and_prints_its_launch_flags(capsys):
    from twopaths import plan as cli
    status = cli.main(["kimi-k3", "--gpu", "h200", "--context", "500000", "--concurrency", "10000",
                       "--rho", "0.25", "--max-dcp", "8", "--format", "json"])
    r = json.loads(capsys.readouterr().out)
    best = r["best"]
    assert status == 0 and best["dcp"] == 8 and best["engine"] == "vLLM 0.33.0"
    assert best == plan_report.plan_dict(fleet.plan(K3, "h200", DCP, HEADLINE))
    assert set(best["launch"]) == {"vllm"} and "--decode-context-parallel-size 8" in best["launch"]["vllm"]["decode"]
    cli.main(["kimi-k3", "--rho", "0.25", "--max-dcp", "8"])
    text = capsys.readouterr().out
    assert max(map(len, text.splitlines())) <= plan_report.WIDTH
    pasted = text[text.index("vllm serve"):].split("\n  prefill")[0]
    assert shlex.split(pasted.replace("\\\n", " ")) == shlex.split(best["launch"]["vllm"]["decode"])


def test_a_sliding_window_splits_by_heads_under_attention_tp():
    """Llama 4 Scout: its chunked layers are GQA windows; attention TP splits them by K/V heads, as
    it splits the full layers (8 K/V heads: TP8 holds one head of each)."""
    from twopaths.specs.lookup import resolve_model
    scout = resolve_model("meta-llama--Llama-4-Scout-17B-16E-Instruct")
    c = model(scout).config
    heads, d = c["num_key_value_heads"], c["head_dim"]
    chunk, layers = c["attention_chunk_size"], c["num_hidden_layers"]
    chunked = layers * 3 // 4                                    # 3 of every 4 layers are chunked
    tokens = 500_000
    whole = chunked * min(tokens, chunk) * heads * 2 * d * 2 + (layers - chunked) * tokens * heads * 2 * d * 2
    assert placement.request_share(scout, tokens, 1, DCP) == whole
    assert placement.request_share(scout, tokens, 8, DCP) == whole / 8


@pytest.mark.parametrize("corpus_name, repo", [
    # its config calls itself llama_nemotron_super, which no engine can fetch: the corpus names the repo
    ("nvidia--Llama-3_3-Nemotron-Super-49B-v1", "nvidia/Llama-3_3-Nemotron-Super-49B-v1"),
    ("Qwen--Qwen3-32B", "Qwen/Qwen3-32B"),
])
def test_a_launch_command_loads_a_repo_an_engine_can_fetch(corpus_name, repo):
    import need
    need.module("aiconfigurator_core")
    from twopaths.specs.lookup import resolve_model
    assert launch.model_path(resolve_model(corpus_name)) == repo
    assert launch.model_path("kimi-k3") == model("kimi-k3").raw["repo"]

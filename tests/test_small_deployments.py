"""Small deployments (issue 24 item 1): units smaller than a node, aggregated serving for fleets of
at most ``aggregate_max_gpus`` GPUs, and pipeline stages for dense weights no node holds. Each
reviewer case is checked by hand from the configs' own numbers: the GPU count is the sessions over
what one unit holds."""

import math

import pytest

from twopaths.calc import fleet, placement
from twopaths.specs.lookup import resolve_model
from twopaths.specs.serving import assumptions
from twopaths.views import launch
from test_engines import check_command

BOOK = assumptions("book")
SMALL = fleet.Workload(64, 32768, 1.0)


def _fits_every_gpu(p: fleet.Plan) -> None:
    m = p.decode
    assert m.weights + m.reserve.total + m.overhead_bytes + m.cache_bytes <= m.usable


def _commands_parse(p: fleet.Plan) -> None:
    cmds = launch.commands(p)
    assert cmds
    for engine, l in cmds.items():
        check_command(engine, l.decode)
        if p.aggregated:
            assert l.prefill is None and "disaggregation" not in l.decode and "kv-transfer" not in l.decode
        else:
            check_command(engine, l.prefill)


def test_qwen3_32b_on_b200_is_one_tp_group_served_aggregated():
    q = resolve_model("Qwen--Qwen3-32B")
    p = fleet.plan(q, "b200", BOOK, SMALL)
    per_unit = p.decode.requests * p.placement.attention_groups
    assert p.aggregated and p.p_nodes == 0
    assert p.units == math.ceil(64 / per_unit) and p.gpus == p.units * p.placement.gpus <= 8
    assert p.nodes == 1 and p.gpus == 4                # was 2 nodes, 16 GPUs (decode node + prefill node)
    # one GPU alone holds 13 requests at 32K: five would do; a TP4 group holds 68, so four do
    one = placement.memory(q, "b200", placement.Placement(1, 1, routed=False), 32768, BOOK, "aggregated")
    assert math.ceil(64 / one.requests) >= p.gpus
    _fits_every_gpu(p)
    _commands_parse(p)


def test_gpt_oss_120b_on_h100_needs_no_node_of_ep():
    g = resolve_model("openai--gpt-oss-120b")
    one = placement.memory(g, "h100", placement.Placement(1), 32768, BOOK)
    assert one.valid                                   # the weights and a request fit one H100
    p = fleet.plan(g, "h100", BOOK, SMALL)
    assert p.placement.ep < BOOK.gpus_per_node and p.aggregated
    assert p.gpus == p.units * p.placement.ep == math.ceil(64 / p.requests_per_unit) * p.placement.ep
    assert p.gpus == 2                                 # was EP8 and a prefill node: 16 GPUs
    _fits_every_gpu(p)
    _commands_parse(p)


def test_llama_405b_bf16_on_h100_pipelines_over_nodes():
    flat = placement.memory("llama-3.1-405b", "h100", placement.Placement(8, 8, routed=False), 32768, BOOK)
    assert not flat.valid                              # 810 GB of BF16 weights: no TP8 node holds them
    p = fleet.plan("llama-3.1-405b", "h100", BOOK, SMALL)
    assert p.placement.pp == 2 and p.placement.attention_tp == 8 and p.placement.gpus == 16
    one_stage = placement.memory("llama-3.1-405b", "h100", placement.Placement(8, 8, routed=False, pp=1),
                                 32768, BOOK)
    assert p.decode.request_bytes == pytest.approx(one_stage.request_bytes / 2)   # a stage holds half
    assert p.decode.other_bytes < flat.other_bytes / 2 + 1.1e9      # half the layers, plus embedding or head
    assert p.units == math.ceil(64 / p.requests_per_unit) and p.d_gpus == p.units * 16
    _fits_every_gpu(p)
    _commands_parse(p)
    for l in launch.commands(p).values():
        assert "--pipeline-parallel-size 2" in l.decode or "--pp-size 2" in l.decode


def test_aggregation_is_one_assumption():
    q = resolve_model("Qwen--Qwen3-32B")
    apart = fleet.plan(q, "b200", BOOK.but(aggregate_max_gpus=0), SMALL)
    assert not apart.aggregated and apart.p_nodes >= 1
    assert fleet.plan(q, "b200", BOOK, SMALL).gpus < apart.gpus


@pytest.mark.parametrize("model", ["kimi-k3", "deepseek-v4-pro"])
@pytest.mark.parametrize("gpu", ["h200", "b300"])
@pytest.mark.parametrize("rho", [0.25, 1.0])
def test_headline_plans_do_not_get_worse(model, gpu, rho):
    """The units smaller than a node only add candidates: at 10,000 x 500K the headline plans keep
    their nodes (recorded before the change) and are never aggregated."""
    before = {("kimi-k3", "h200", 0.25): 80, ("kimi-k3", "h200", 1.0): 314, ("kimi-k3", "b300", 0.25): 34,
              ("kimi-k3", "b300", 1.0): 118, ("deepseek-v4-pro", "h200", 0.25): 23,
              ("deepseek-v4-pro", "h200", 1.0): 84, ("deepseek-v4-pro", "b300", 0.25): 12,
              ("deepseek-v4-pro", "b300", 1.0): 34}
    p = fleet.plan(model, gpu, BOOK, fleet.workload(rho=rho))
    assert p.nodes <= before[model, gpu, rho] and not p.aggregated
    assert p.gpus <= p.nodes * BOOK.gpus_per_node

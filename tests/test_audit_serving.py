"""The audit of part III (hardware, parallelism, serving): the verdicts the book's deployment chapters
lean on, and the two small recomputations the serving checks own."""

import math

import pytest

from twopaths.calc import fleet
from twopaths.calc.placement import Placement, memory
from twopaths.specs.serving import assumptions
from twopaths.claims.audit import audit
from twopaths.claims.checks.serving import smaller_beyond


@pytest.fixture(scope="module")
def rows():
    return {r.id: r for r in audit(["hardware", "parallelism", "serving"])}


def test_the_article_deployment_reproduces_only_under_its_own_rounding(rows):
    for cid in ("k3-nodes-h200", "k3-h200-nodes-rho25", "v4-b300-nodes-rho25"):
        assert rows[cid].verdict == "matches", rows[cid]
    # 896 GB / 6.1 GB is 146.9 sessions: the article's 147 rounds up what a unit cannot hold, and pools
    # a unit's room; with whole 6.1 GB requests on each GPU's 56 GB a unit holds 16 x 9 = 144, and a
    # plan that never falls short needs more than its 190 nodes.
    a = assumptions("article")
    gpu = memory("deepseek-v4-pro", "h200", Placement(16), 500_000, a)
    per_unit = rows["v4-requests-per-unit"].recomputed
    assert gpu.requests == 9 and 16 * gpu.requests < 146 < per_unit < 147
    strict = fleet.plan("deepseek-v4-pro", "h200", a, placement=Placement(16))
    assert strict.nodes > rows["v4-nodes-h200"].recomputed == 194 > 190


def test_an_error_is_reported_where_it_is_made_and_named_downstream(rows):
    # The 500K-token V4 request carries part I's KiB-as-kB slip; the steps after it start from the
    # 6.1 GB the article carries, so they are judged on their own arithmetic.
    assert rows["v4-request-500k"].note.startswith("unit slip")
    assert rows["v4-request-500k"].arithmetic.status == "slip"
    # 147 requests and 68 units round the wrong way where they are made...
    for cid, need in (("v4-requests-per-unit", 146), ("v4-d-units", 69), ("k3-b300-d-units", 46)):
        a = rows[cid].arithmetic
        assert a.status == "fails" and a.reason.startswith("rounding direction"), cid
        assert f"to {need}" in a.reason or f"the need is {need} " in a.reason, a.reason
    assert "which it rounds the wrong way" in rows["v4-d-units"].arithmetic.reason   # 10,000/147 = 68.03
    # ...and the counts that carry them say so, naming where the error was made
    nodes = rows["v4-nodes-h200"].arithmetic
    assert nodes.status == "fails" and nodes.reason.startswith("carried rounding")
    assert "this step gives 190 nodes exactly" in nodes.reason
    assert "v4-requests-per-unit" in nodes.reason and "v4-d-units" in nodes.reason
    assert "the need is 194 nodes" in nodes.reason
    # K3's counts on H200 are rounded as capacity needs: nothing is named there
    for cid in ("k3-requests-per-unit", "k3-d-units", "k3-d-nodes", "k3-nodes-h200"):
        assert rows[cid].arithmetic.status == "holds", cid
    # the upper bound times rho is a fault of method, with its own figures
    assert "36.25 units" in rows["k3-h200-d-nodes-rho25"].reasoning.reason
    assert "4,998 sessions, short of 5,000" in rows["v4-h200-d-nodes-rho50"].reasoning.reason
    assert "35 whole units, 70 decode nodes" in rows["v4-h200-d-nodes-rho50"].reasoning.reason
    assert "upper bound" not in rows["v4-b300-d-nodes-rho25"].reasoning.reason   # 5 whole units hold 2,660


def test_k3_ep16_row_leaves_out_the_overhead_the_ep32_row_takes(rows):
    r = rows["k3-ep16-free-per-gpu"]
    assert r.note.startswith("inconsistent assumption") and r.recomputed < 0
    assert r.reasoning.status == "fails"
    assert rows["k3-ep32-free-per-gpu"].verdict == "matches"
    assert rows["k3-ep-size"].recomputed == 32


def test_part_iii_attention_and_embedding_shares_are_not_the_configs(rows):
    for cid in ("k3-attention-params", "k3-embedding-params", "v4-non-expert-params"):
        assert rows[cid].note.startswith("inconsistent assumption")
        assert rows[cid].recomputed < float(rows[cid].stated) / 10      # off by more than tenfold
        assert rows[cid].overall == "wrong: inputs"


def test_decode_steps_match_but_are_not_times_to_first_token(rows):
    for cid in ("k3-decode-step-h200", "v4-decode-step-h200", "k3-decode-step-b300"):
        assert rows[cid].verdict == "matches"
    for cid in ("k3-ttft-headroom", "v4-ttft-headroom"):
        assert rows[cid].note.startswith("wrong term") and rows[cid].recomputed < 0


def test_routing_reaches_nearly_every_node_not_half(rows):
    r = rows["k3-routing-fanout"]
    assert r.note.startswith("wrong term") and r.recomputed > 95


def test_k3_never_holds_less_than_dsv4_at_any_context(rows):
    r = rows["kda-advantage-context"]
    assert math.isinf(r.recomputed) and math.isinf(r.public_config)
    assert smaller_beyond("deepseek-v4-pro", "kimi-k3") == 0      # the other way round, from the first token


def test_public_fleet_figures_come_from_plans_that_fit(rows):
    """The public column of every node count is a valid plan under the book's assumptions."""
    book = assumptions()
    for cid, (model, gpu) in {"k3-nodes-h200": ("kimi-k3", "h200"), "v4-nodes-h200": ("deepseek-v4-pro", "h200"),
                              "k3-nodes-b300": ("kimi-k3", "b300"), "v4-nodes-b300": ("deepseek-v4-pro", "b300")}.items():
        p = fleet.plan(model, gpu, book)
        assert rows[cid].public_config == p.nodes and p.decode.used <= p.decode.usable


def test_bare_counts_name_the_usable_memory_their_public_value_assumes():
    """The public bare counts give each H200 the book's usable share of what its driver exposes,
    not the datasheet's 141 GB; their sources must say so."""
    from twopaths.claims.audit import by_id
    from twopaths.specs.serving import assumptions
    rows = by_id(["parallelism"])
    share = f"a GPU gives {100 * assumptions('book').usable_fraction:g}% of the memory its driver exposes"
    for cid in ("k3-kv-gpus", "v4-kv-gpus", "k3-gpus-bare", "gpu-gap-bare"):
        assert share in rows[cid].source, cid
    assert "serving assumptions" not in rows["k3-weights-bytes"].source   # bytes need no GPU


def test_a_decode_step_is_not_a_unit_cost(rows):
    r = rows["unit-cost-ratio"]
    assert r.arithmetic.status == "holds"                 # 55.1 / 134.7 = 0.41, printed as about 40%
    assert r.reasoning.status == "fails" and "190 / 812 = 0.23" in r.reasoning.reason
    assert r.category == "wrong"


def test_decode_speeds_above_the_article_s_own_step_times(rows):
    for cid, cap in (("decode-speed", 87), ("k3-decode-speed-low", 36), ("k3-decode-speed-high", 36)):
        r = rows[cid]
        assert r.recomputed == pytest.approx(cap, abs=0.5) and r.recomputed < float(r.stated), cid
        assert r.reasoning.status == "fails" and f"{cap} tokens/s" in r.reasoning.reason, cid
        assert r.inputs.status == "fails", cid           # the book's plans do not reach it either


def test_the_per_gpu_overhead_against_step_2_and_the_configs(rows):
    # 5 GB a GPU for attention and embedding, against the 0.6T step 2 takes off for them
    assert "600 GB" in rows["k3-ep32-free-per-gpu"].reasoning.reason
    assert "300 GB" in rows["v4-ep16-free-per-gpu"].reasoning.reason
    for cid, gb in (("k3-per-gpu-overhead", 113.5), ("v4-per-gpu-overhead", 27.7)):
        r = rows[cid]
        assert r.public_config == pytest.approx(gb, abs=0.05) and r.overall == "wrong: inputs", cid


def test_the_sentences_registered_from_part_iii(rows):
    assert rows["prefill-takes-seconds"].overall == "holds"           # a 500K prompt takes seconds
    assert rows["workload-over-architecture"].recomputed == 1         # 4.51 against 4.27
    assert rows["workload-architecture-same-order"].recomputed == pytest.approx(4.51 / 4.23, abs=0.01)
    assert "67,353" in rows["avg-context"].note      # DualPath's trace against the fleet's 500K
    assert rows["assessment-lower-ceiling"].reasoning.status == "fails"     # K3 holds more at every length
    # what the scenario assumes checks nothing: its arithmetic is consistent, not verified
    for cid in ("rho-agent", "rho-api", "rho-batch", "w-decode"):
        assert rows[cid].overall == "consistent, not verified", cid


def test_the_weights_share_is_read_as_the_gpus_its_sentence_counts():
    from twopaths.claims.audit import by_id
    rows = by_id(["parallelism"])
    v4 = rows["v4-weight-share-bare"]          # 1.6 of 123.6 TB, 1.29%: 12 of 877 GPUs would print 1.4%
    assert v4.recomputed == pytest.approx(100 * 1.6 / 123.6, abs=1e-3) and v4.arithmetic.status == "holds"
    assert "the bytes, the reading its printed figure follows" in v4.arithmetic.reason
    assert v4.overall == "holds only under the article's inputs"
    # the bare counts are needs: 865.25 GPUs of KV print as 865, a GPU short
    kv = rows["v4-kv-gpus"]
    assert kv.recomputed == pytest.approx(122e12 / 141e9) and kv.arithmetic.reason.startswith("rounding direction")
    assert rows["k3-weight-gpus"].overall == "holds only under the article's inputs"   # 20 GPUs for 12

"""Two models under the same one-at-a-time settings: counts with their reasons, the ratio, the
ranking and the table a chapter shows."""

import pytest

from twopaths.calc import fleet, sensitivity as S
from twopaths.views import sensitivity_tables as V
from twopaths.specs.serving import assumptions

BOOK = assumptions()
WORK = fleet.workload(rho=0.25)
NO_FIT = BOOK.but(capacity="nominal", max_attention_tp=1)   # K3's shipped weights leave no room


def test_a_count_is_the_plans_nodes_or_why_there_is_none_with_the_fix():
    assert S.count("kimi-k3", "h200", BOOK, WORK) == S.Count(fleet.plan("kimi-k3", "h200", BOOK, WORK).nodes)
    c = S.count("kimi-k3", "h200", NO_FIT, WORK)
    assert c.nodes is None and c.why == "no valid plan; smallest change that makes one valid: " + fleet.smallest_change("kimi-k3", "h200", NO_FIT, WORK)
    assert c.shown == c.why


def test_a_dense_model_is_counted_like_any_other():
    assert S.count("qwen-2.5-72b", "h200", BOOK, WORK).nodes == fleet.plan("qwen-2.5-72b", "h200", BOOK, WORK).nodes


def test_other_bad_input_is_not_hidden(raises_param):
    raises_param("gpu", S.count, "kimi-k3", "no-such-gpu", BOOK, WORK)


def test_each_end_is_planned_for_both_models_and_the_ratio_follows():
    base, moved = S.settings(["kimi-k3", "deepseek-v4-pro"], "h200", BOOK, WORK,
                             {"rho": (0.1, 0.5), "gpu": ("b300", "h200")})
    assert S.ratio(*base) == pytest.approx(fleet.ratio("kimi-k3", "deepseek-v4-pro", "h200", BOOK, WORK))
    rho, gpu = moved
    assert rho.ratio(1) == pytest.approx(fleet.ratio("kimi-k3", "deepseek-v4-pro", "h200", BOOK,
                                                     fleet.workload(rho=0.5)))
    assert gpu.counts[1][0].nodes == fleet.plan("deepseek-v4-pro", "b300", BOOK, WORK).nodes
    assert [s.assumption for s in S.ranked(moved)][0] == max(moved, key=lambda s: s.moves).assumption


def test_a_setting_that_leaves_no_plan_ranks_first_and_shows_its_reason():
    # without DCP, where at 20M tokens K3 has a plan (pipelined over stages) and V4-Pro none: its
    # BF16 cache fits no GPU, and the stages are vLLM's, which refuses V4's BF16 cache
    nodcp = BOOK.but(max_dcp=1)
    base, moved = S.settings(["kimi-k3", "deepseek-v4-pro"], "h200", nodcp, WORK,
                             {"rho": (0.1, 0.5), "context": (250_000, 20_000_000)})
    top = S.ranked(moved)[0]
    assert top.assumption == "context" and top.ratio(1) is None and top.ratio(0) is not None
    t = V.table(("K3", "V4-Pro"), base, moved, nodcp, "title")
    assert len(t.rows) == 1 + 2 * len(moved)
    assert t.rows[0][:2] == ("the parameters above", "base")
    high = t.rows[2]
    assert high[:2] == ("context", "20,000K tokens (high)")
    assert high[2] == fleet.plan("kimi-k3", "h200", nodcp, fleet.workload(context=20_000_000, rho=0.25)).nodes
    assert high[3].startswith("no valid plan; smallest change that makes one valid:") and high[4] is None
    assert str(BOOK.gpus_per_node) in t.note


def test_bars_and_tornado_agree():
    r = {"context": (100_000, 1_000_000), "pd_ratio": (2.0, 3.0)}
    assert S.tornado("deepseek-v4-pro", "h200", BOOK, WORK, r) == S.bars(
        *S.settings(["kimi-k3", "deepseek-v4-pro"], "h200", BOOK, WORK, r), which=1)


def test_labels_read_as_words():
    bar, = S.tornado("kimi-k3", "h200", BOOK, WORK, {"context": (250_000, 1_000_000)})
    assert V.label(bar) == "context (250K tokens / 1,000K tokens)"
    t = V.tornado_table(*S.settings(["kimi-k3"], "h200", BOOK, WORK, {"context": (250_000, 1_000_000),
                                                                      "rho": (0.1, 0.5)}), 0, "t", top=1)
    assert t.rows == ((V.label(bar), bar.low_nodes, bar.high_nodes),)


@pytest.mark.parametrize("models", [["kimi-k3"], ["kimi-k3", "deepseek-v4-pro", "qwen-2.5-72b"]])
def test_a_pair_is_two_models(raises_param, models):
    raises_param("models", V.pair, models)
    assert V.pair(["kimi-k3", "deepseek-v4-pro"]) == ("kimi-k3", "deepseek-v4-pro")

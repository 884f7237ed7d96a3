"""A context past a model's declared limit (``max_position_embeddings``) has one behaviour everywhere
(issue 24, item 5): its plan is still computed, and it is flagged, on ``calc.fleet.Plan``, in the
``plan`` command's text and JSON, in the chapter tables' notes and in any longest-context figure,
never at the limit itself."""

import json

import pytest

from twopaths import plan as cli
from twopaths.calc import fleet
from twopaths.specs import max_position
from twopaths.specs.serving import assumptions
from twopaths.views import context_limit, disagg_tables, plans

K3, V4, V32 = "kimi-k3", "deepseek-v4-pro", "deepseek-v3.2"
LIMIT = 1_048_576              # K3's and V4-Pro's max_position_embeddings (2^20)
A = assumptions()


def _run(capsys, *argv) -> str:
    assert cli.main(list(argv)) == 0
    return capsys.readouterr().out


def test_the_limit_is_the_configs():
    assert max_position.limit(K3) == max_position.limit(V4) == LIMIT
    assert max_position.limit(V32) == 163_840
    assert not max_position.beyond(K3, LIMIT) and max_position.beyond(K3, LIMIT + 1)
    assert max_position.capped(K3, 23_616_796) == LIMIT and max_position.capped(K3, 500_000) == 500_000


def test_bad_input(raises_param):
    raises_param("context", max_position.beyond, K3, -1)
    raises_param("tokens", max_position.capped, K3, 1.5)


@pytest.mark.parametrize("context, flagged", [(LIMIT, False), (LIMIT + 1, True), (2_000_000, True)])
def test_a_plan_past_the_limit_is_computed_and_flagged(context, flagged):
    p = fleet.plan(K3, "h200", A, fleet.Workload(10_000, context, 0.25))
    assert p.beyond_max_position is flagged and p.nodes > 0
    note = plans.plan_table([p]).note
    assert ("max_position_embeddings" in note) is flagged
    if flagged:
        assert f"Kimi K3 at {context:,} tokens" in note and f"{LIMIT:,}" in note


def test_the_headline_ratio_table_flags_both_models_past_the_limit():
    past = plans.ratio_table(plans.headline(A, fleet.Workload(10_000, 2_000_000))).note
    assert "Kimi K3 at 2,000,000 tokens" in past and "DeepSeek-V4-Pro at 2,000,000 tokens" in past
    assert plans.ratio_table(plans.headline(A)).note == ""


@pytest.mark.parametrize("context, flagged", [(LIMIT, False), (2_000_000, True)])
def test_the_plan_command_flags_it_in_json_and_text(capsys, context, flagged):
    argv = [K3, "--gpu", "h200", "--context", str(context), "--concurrency", "10000", "--rho", "0.25"]
    r = json.loads(_run(capsys, *argv, "--format", "json"))
    assert r["beyond_max_position"] is flagged and r["max_position_embeddings"] == LIMIT
    assert r["plans"] and all(p["beyond_max_position"] is flagged for p in r["plans"])
    assert r["best"]["beyond_max_position"] is flagged
    text = _run(capsys, *argv)
    assert ("FLAG:" in text) is flagged
    plan_line, = [line for line in text.splitlines() if line.startswith("plan: ")]
    assert plan_line.endswith(" [FLAG]") is flagged   # the FLAG line above it says why
    if flagged:
        assert "2,000,000 tokens is past Kimi K3's max_position_embeddings (1,048,576 tokens)" in text


def test_the_chapter_tables_name_each_flagged_model_once():
    """V3.2 is built for 163,840 tokens: at 500K its plans are flagged, K3's not; a table with
    nothing past its limit has no such note."""
    work = fleet.Workload(10_000, 500_000, 0.25)
    k3, v32 = fleet.plan(K3, "h200", A, work), fleet.plan(V32, "h200", A, work)
    note = context_limit.plans_note([k3, v32, v32, "no valid plan: a reason"])
    assert note.count("DeepSeek-V3.2") == 1 and "Kimi K3" not in note
    assert "its max_position_embeddings: 163,840" in note
    assert context_limit.plans_note([k3]) == ""
    assert disagg_tables.prefill_table([k3, v32], "t").note == note
    assert disagg_tables.plan_table([k3], "t").note == plans.PLAN_NOTE     # only what speed means
    several = context_limit.sentence([(V32, 500_000), (K3, 2_000_000)])
    assert several.startswith("Past the context its config declares: DeepSeek-V3.2 at 500,000 tokens")
    assert "none is a context its model was built for" in several
    assert context_limit.banner([K3, V4], 500_000) is None        # nothing to show, no empty repr
    assert "Kimi K3 at 2,000,000 tokens" in context_limit.banner([K3, V4], 2_000_000).data


def test_a_longest_context_names_the_cap():
    """A cache-limited longest context past the limit says both; one within it, only itself."""
    assert context_limit.longest(K3, 23_616_796) == \
        "23,616,796 tokens fit; Kimi K3's max_position_embeddings caps it at 1,048,576"
    assert context_limit.longest(K3, 900_000) == "900,000 tokens"
    assert context_limit.flag(K3, LIMIT) == ""
    assert context_limit.flag(K3, LIMIT + 1) == "past Kimi K3's max_position_embeddings (1,048,576 tokens)"


def test_a_table_of_longest_contexts_names_each_cap_once():
    pairs = [(K3, 23_616_796), (K3, 900_000), (K3, 2_000_000), (V32, 1_128_650)]
    note = context_limit.lengths_sentence(pairs)
    assert "Kimi K3's max_position_embeddings caps it at 1,048,576 (2 of these)" in note
    assert "DeepSeek-V3.2's max_position_embeddings caps it at 163,840 (1 of these)" in note
    assert note.count("Kimi K3") == 1 and context_limit.lengths_sentence([(K3, 900_000)]) == ""
    t = plans.plan_table([], "t")
    assert context_limit.noted(t, pairs, lengths=True).note == plans.PLAN_NOTE + " " + note
    assert context_limit.noted(t, [(K3, 900_000)]) is t


def test_the_sensitivity_table_flags_a_context_it_moves_past_the_limit():
    from twopaths.calc import sensitivity
    from twopaths.views import sensitivity_tables
    work = fleet.Workload(10_000, 1_000_000, 0.25)
    base, moved = sensitivity.settings([K3, V4], "h200", A, work, {"context": (500_000, 2_000_000)})
    names = ("Kimi K3", "DeepSeek-V4-Pro")
    note = sensitivity_tables.table(names, base, moved, A, "t", models=(K3, V4)).note
    assert "Kimi K3 at 2,000,000 tokens" in note and "DeepSeek-V4-Pro at 2,000,000 tokens" in note
    assert "500,000" not in note
    assert "max_position" not in sensitivity_tables.table(names, base, moved, A, "t").note

"""The recall harness: the task's sequences, buckets, determinism, that it learns, and bad input."""

import ast
import inspect
import json
from pathlib import Path

import pytest
import torch
from torch import nn

from twopaths.machinery import chapter
from twopaths.experiments import recall
from twopaths.layers.kda import KDA


def test_sequences_hold_what_the_task_says():
    task = recall.RecallTask(pairs=6, queries=4, gap=5, keys=10, values=7, filler=3)
    batch = task.sample(50, torch.Generator().manual_seed(0))
    assert batch.tokens.shape == (50, task.length) == (50, 2 * 6 + 5 + 4)
    lo, hi = task.distances
    for tokens, targets, distance in zip(batch.tokens.tolist(), batch.targets.tolist(), batch.distance.tolist()):
        keys, values = tokens[0:12:2], tokens[1:12:2]
        assert len(set(keys)) == 6 and all(k < 10 for k in keys) and all(10 <= v < 17 for v in values)
        assert all(17 <= f < 20 for f in tokens[12:17])
        for pos in range(task.length):
            if pos < 17:
                assert targets[pos] == recall.IGNORE and distance[pos] == -1
                continue
            j = keys.index(tokens[pos])                 # the query's key, and the value after it
            assert targets[pos] == values[j] and distance[pos] == pos - 2 * j and lo <= distance[pos] <= hi
        assert len(set(tokens[17:])) == 4               # each pair asked at most once
    again = task.sample(50, torch.Generator().manual_seed(0))
    assert torch.equal(batch.tokens, again.tokens) and torch.equal(batch.targets, again.targets)


def test_buckets_cover_every_distance_once():
    task = recall.RecallTask(pairs=9, queries=5, gap=3)
    for n in (1, 3, 7):
        ranges = recall.distance_buckets(task, n)
        assert ranges[0][0] == task.distances[0] and ranges[-1][1] == task.distances[1]
        assert all(a[1] + 1 == b[0] and a[0] <= a[1] for a, b in zip(ranges, ranges[1:]))


def _kda(d):
    return KDA(d, heads=2, head_dim_k=8, chunk_size=8)


def test_same_seed_same_numbers_and_it_learns():
    task = recall.RecallTask(pairs=2, queries=2, keys=4, values=4, filler=1)
    kwargs = dict(d_model=32, batch_size=16, lr=1e-2, eval_sequences=64, buckets=2, progress=False, seed=3)
    a = recall.train_and_evaluate([_kda], task, steps=10, **kwargs)
    b = recall.train_and_evaluate([_kda], task, steps=10, **kwargs)
    assert a.losses == b.losses and a.bucket_accuracy == b.bucket_accuracy and a.parameters == b.parameters
    assert sum(a.bucket_counts) == 64 * 2
    trained = recall.train_and_evaluate([_kda], task, steps=100, **kwargs)
    assert a.accuracy < 0.5 < 0.9 < trained.accuracy         # chance is one value in four


class _Future(nn.Module):
    """Leaks the future: every position sees the mean of the whole sequence."""

    def forward(self, x):
        return x + x.mean(1, keepdim=True)


class _Narrow(nn.Module):
    def forward(self, x):
        return x[..., :-1]


def test_bad_input_names_the_argument(raises_param):
    task = recall.RecallTask(pairs=3, queries=2, keys=4)
    raises_param("queries", recall.RecallTask, pairs=3, queries=4)
    raises_param("keys", recall.RecallTask, pairs=5, keys=4)
    raises_param("gap", recall.RecallTask, gap=-1)
    raises_param("mixers", recall.train_and_evaluate, [], task)
    raises_param("mixers", recall.train_and_evaluate, ["kda"], task)
    raises_param("mixers", recall.train_and_evaluate, [lambda d: _Future()], task, steps=1)
    raises_param("mixers", recall.train_and_evaluate, [lambda d: _Narrow()], task, steps=1)
    raises_param("steps", recall.train_and_evaluate, [_kda], task, steps=0)
    raises_param("lr", recall.train_and_evaluate, [_kda], task, lr=0.0)
    raises_param("buckets", recall.train_and_evaluate, [_kda], task, buckets=100)
    raises_param("batch_size", task.sample, 0, torch.Generator())


# Chapters 3 and 8 both train these toys; each once had its own width, evaluation and attention
# layer, and the same stack then "failed" on one page and learned on the other.
PAGES = ("03-hybrid", "08-what-each-gives-up")
NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"


def _code(page: str) -> ast.Module:
    cells = json.loads((NOTEBOOKS / f"{page}.ipynb").read_text())["cells"]
    return ast.parse("\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "code"))


def _is(node, dotted: str) -> bool:
    return ast.unparse(node) == dotted


def test_both_pages_train_one_budget_one_attention_and_one_control():
    budget_fields = set(recall.Budget.__dataclass_fields__)
    for page in PAGES:
        tree = _code(page)
        sizes = {t.id for n in ast.walk(tree) if isinstance(n, ast.Assign)
                 and _is(n.value, "recall.budget(run.profile)") for t in n.targets}
        assert sizes == {"size"}, page
        calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call)
                 and _is(n.func, "recall.train_and_evaluate")]
        assert calls, page
        for call in calls:       # the budget, whole, and nothing that overrides a part of it
            assert [ast.unparse(k.value) for k in call.keywords if k.arg is None] == ["size.kwargs()"], page
            assert not budget_fields & {k.arg for k in call.keywords}, (page, ast.unparse(call))
        controls = [n for n in ast.walk(tree) if isinstance(n, ast.Call) and _is(n.func, "recall.run_control")]
        assert len(controls) == 1 and _is(controls[0].args[0], "size"), page
        # Exact attention comes from recall.attention / gated_attention, never a page's own layer
        # factory (the decode benchmark may build a layer directly: it trains nothing).
        for fn in ast.walk(tree):
            if isinstance(fn, (ast.Lambda, ast.FunctionDef)):
                built = {ast.unparse(n.func) for n in ast.walk(fn) if isinstance(n, ast.Call)}
                assert not built & {"MLA", "GatedMLA"}, (page, ast.unparse(fn)[:80])
        used = {ast.unparse(n) for n in ast.walk(tree) if isinstance(n, ast.Attribute)}
        assert {"recall.attention", "recall.gated_attention"} <= used, page


def test_the_budget_fits_the_loop_and_the_profiles(raises_param):
    accepted = set(inspect.signature(recall.train_and_evaluate).parameters)
    for profile in chapter.PROFILES:
        b = recall.budget(profile)
        assert set(b.kwargs()) <= accepted and b.kwargs()["d_model"] == b.d_model
    assert recall.budget("smoke").steps < recall.budget("default").steps < recall.budget("gpu").steps
    raises_param("profile", recall.budget, "fast")
    assert recall.attention(32).rope and not recall.gated_attention(32).rope
    same = [sum(p.numel() for p in f(64).parameters()) for f in (recall.attention, recall.gated_attention)]
    assert same[0] < same[1]          # the gate's projection is all that differs


def _result(accuracy, counts=(10, 10)):
    return recall.RecallResult("", accuracy, [], [], list(counts), [], 0, 0.0)


def test_over_seeds_and_learned():
    runs = [_result(a) for a in (0.95, 0.5, 0.91)]
    s = recall.over_seeds(runs)
    assert s.values == (0.95, 0.5, 0.91) and s.floor == 1 / 20
    assert recall.over_seeds(runs, lambda r: 1 - r.accuracy).values == pytest.approx((0.05, 0.5, 0.09))
    assert recall.learned(runs) == 2 and recall.learned(runs, threshold=0.92) == 1
    assert recall.learned([_result(recall.LEARNED)]) == 0     # strictly above

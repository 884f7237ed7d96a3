"""The recall harness: the task's sequences, buckets, determinism, that it learns, and bad input."""

import torch
from torch import nn

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

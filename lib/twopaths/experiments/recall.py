"""Multi-query associative recall (MQAR): a seeded task, a small model built from any sequence mixers,
and a train-then-evaluate loop that reports recall accuracy by key-query distance.

The task (Arora et al., "Zoology", 2023). Each sequence holds ``pairs`` key-value pairs drawn afresh
(``k1 v1 k2 v2 ...``, keys distinct within a sequence), then ``gap`` filler tokens, then ``queries``
of those keys in random order. At each query the model must predict the value that followed the key.
A query's *distance* is its position minus its key's position, between ``gap + 2`` and
``2 * pairs + gap + queries - 1``: ``gap`` moves every query further from the pairs, ``pairs`` sets how
much the model must hold at once. Token ids: keys ``[0, keys)``, values ``[keys, keys + values)``,
filler ``[keys + values, vocab)``.

The model: token embedding, then one block per mixer factory (pre-norm: ``x + mixer(norm(x))``, then
``x + mlp(norm(x))`` when ``mlp_ratio`` > 0), a final RMSNorm and a linear head. No positional
embedding: positions come from the mixers (as in Kimi K3, whose MLA layers use none). A mixer factory
is any ``Callable[[int], nn.Module]`` that takes ``d_model`` and returns a causal module mapping
[B, T, d_model] to [B, T, d_model]; the harness checks the shape and the causality before training.

API::

    task = RecallTask(pairs=16, queries=8, gap=32)
    result = train_and_evaluate([make_kda, make_kda, make_kda, make_mla], task,
                                d_model=64, steps=300, batch_size=32, seed=0, device="cpu", desc="3:1")
    result.accuracy                    # over all evaluated queries
    result.buckets                     # [(lo, hi), ...] distance ranges, hi inclusive
    result.bucket_accuracy             # one accuracy per bucket (nan where a bucket got no query)
    result.bucket_counts, result.losses, result.parameters, result.seconds

Lower level: ``task.sample(batch_size, generator)`` gives a ``RecallBatch`` (tokens, targets with
``IGNORE`` off the questions, distances); ``RecallModel(vocab, d_model, mixers)`` is the model;
``distance_buckets(task, n)`` the ranges results are reported in.

Chapters 3 and 8 train their toys through ``budget(profile)`` (width, steps, batch, learning rate,
evaluation) and build exact attention from ``attention`` and ``gated_attention``: a stack on both
pages is one model trained one way, so only the task can make it score differently. Both also run
full attention on ``CONTROL``, the light task that shows what that budget can learn.

Same seed, same task, same arguments, same machine: the same losses and accuracies, bit for bit
(``seconds`` is a timing and is not). Training draws from ``seed``, evaluation from ``seed + 1``,
so the evaluation sequences are the same for every model compared at one seed. On the CPU the loop
runs on one thread: the tensors are small enough that more threads mostly wait for each other.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass

import torch
import torch.nn.functional as F
from torch import nn
from tqdm.auto import tqdm

from ..errors import ParameterError, check_choice, check_int, check_real
from ..layers.mla import MLA, GatedMLA
from ..machinery.variation import Spread
from . import one_cpu_thread

IGNORE = -100   # target id where no prediction is scored


@dataclass(frozen=True)
class RecallBatch:
    tokens: torch.Tensor      # [B, T] token ids
    targets: torch.Tensor     # [B, T] the value id at query positions, IGNORE elsewhere
    distance: torch.Tensor    # [B, T] query position minus key position at queries, -1 elsewhere


@dataclass(frozen=True)
class RecallTask:
    pairs: int = 16
    queries: int = 8
    gap: int = 0
    keys: int = 64
    values: int = 64
    filler: int = 16

    def __post_init__(self):
        check_int("pairs", self.pairs, minimum=1)
        check_int("keys", self.keys, minimum=self.pairs)
        check_int("queries", self.queries, minimum=1, maximum=self.pairs)
        check_int("gap", self.gap, minimum=0)
        check_int("values", self.values, minimum=2)
        check_int("filler", self.filler, minimum=1)

    @property
    def vocab(self) -> int:
        return self.keys + self.values + self.filler

    @property
    def length(self) -> int:
        return 2 * self.pairs + self.gap + self.queries

    @property
    def distances(self) -> tuple[int, int]:
        """The shortest and longest key-query distance the task can produce."""
        return self.gap + 2, 2 * self.pairs + self.gap + self.queries - 1

    def sample(self, batch_size: int, generator: torch.Generator) -> RecallBatch:
        """``batch_size`` sequences drawn from ``generator`` (a CPU generator); tensors on the CPU."""
        B, N, Q = check_int("batch_size", batch_size, minimum=1), self.pairs, self.queries
        keys = torch.rand(B, self.keys, generator=generator).argsort(-1)[:, :N]           # distinct per row
        values = self.keys + torch.randint(self.values, (B, N), generator=generator)
        filler = self.keys + self.values + torch.randint(self.filler, (B, self.gap), generator=generator)
        asked = torch.rand(B, N, generator=generator).argsort(-1)[:, :Q]                   # which pairs
        context = torch.stack([keys, values], -1).flatten(1)                               # k1 v1 k2 v2 ...
        tokens = torch.cat([context, filler, keys.gather(1, asked)], 1)
        targets = torch.full_like(tokens, IGNORE)
        distance = torch.full_like(tokens, -1)
        first = 2 * N + self.gap
        targets[:, first:] = values.gather(1, asked)
        distance[:, first:] = first + torch.arange(Q) - 2 * asked
        return RecallBatch(tokens, targets, distance)


# The light task both recall pages give full attention: few pairs, no filler. Where the toy
# learns this and not a page's own task, the page's task, not the model, is what differs.
CONTROL = RecallTask(pairs=8, queries=8, gap=0, keys=32, values=32)


@dataclass(frozen=True)
class Budget:
    """How wide the toy models are, how they train and how many sequences score them."""

    d_model: int
    steps: int
    batch_size: int
    lr: float
    eval_sequences: int

    def kwargs(self) -> dict:
        """The keyword arguments of ``train_and_evaluate`` this budget fixes."""
        return asdict(self)


BUDGETS = {
    "smoke": Budget(d_model=32, steps=10, batch_size=8, lr=3e-3, eval_sequences=32),
    "default": Budget(d_model=64, steps=800, batch_size=16, lr=3e-3, eval_sequences=512),
    "gpu": Budget(d_model=128, steps=3000, batch_size=64, lr=3e-3, eval_sequences=2048),
}


def budget(profile: str) -> Budget:
    """The one budget of a profile, for every recall experiment in the book."""
    return BUDGETS[check_choice("profile", profile, BUDGETS)]


def _attention_dims(d_model: int) -> dict:
    d_model = check_int("d_model", d_model, minimum=4)
    return dict(heads=2, kv_lora_rank=d_model // 2, qk_nope_dim=d_model // 4, qk_rope_dim=8,
                v_dim=d_model // 4)


def attention(d_model: int) -> MLA:
    """The toys' exact attention: MLA with RoPE, as DeepSeek introduced it (two heads, a latent of
    d_model / 2)."""
    return MLA(d_model, **_attention_dims(d_model))


def gated_attention(d_model: int) -> GatedMLA:
    """K3's Gated MLA at the same dimensions: no rotation (NoPE) and an output gate."""
    return GatedMLA(d_model, **_attention_dims(d_model))


class Block(nn.Module):
    def __init__(self, d_model: int, mixer: nn.Module, mlp_ratio: int):
        super().__init__()
        self.norm1, self.mixer = nn.RMSNorm(d_model), mixer
        self.norm2 = nn.RMSNorm(d_model) if mlp_ratio else None
        self.mlp = nn.Sequential(nn.Linear(d_model, mlp_ratio * d_model), nn.GELU(),
                                 nn.Linear(mlp_ratio * d_model, d_model)) if mlp_ratio else None

    def forward(self, x):
        x = x + self.mixer(self.norm1(x))
        return x + self.mlp(self.norm2(x)) if self.mlp is not None else x


class RecallModel(nn.Module):
    """Embedding, one block per mixer factory, RMSNorm, linear head: tokens [B, T] -> logits [B, T, vocab]."""

    def __init__(self, vocab: int, d_model: int, mixers: Sequence[Callable[[int], nn.Module]], mlp_ratio: int = 2):
        super().__init__()
        self.embed = nn.Embedding(vocab, d_model)
        self.blocks = nn.ModuleList(Block(d_model, make(d_model), mlp_ratio) for make in mixers)
        self.norm, self.head = nn.RMSNorm(d_model), nn.Linear(d_model, vocab, bias=False)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        x = self.embed(tokens)
        for block in self.blocks:
            x = block(x)
        return self.head(self.norm(x))


@dataclass(frozen=True)
class RecallResult:
    desc: str
    accuracy: float
    buckets: list[tuple[int, int]]
    bucket_accuracy: list[float]
    bucket_counts: list[int]
    losses: list[float]
    parameters: int
    seconds: float


def distance_buckets(task: RecallTask, buckets: int) -> list[tuple[int, int]]:
    """``buckets`` contiguous, near-equal ranges covering the task's distances (hi inclusive)."""
    lo, hi = task.distances
    buckets = check_int("buckets", buckets, minimum=1, maximum=hi - lo + 1)
    edges = [lo + round(i * (hi - lo + 1) / buckets) for i in range(buckets + 1)]
    return [(edges[i], edges[i + 1] - 1) for i in range(buckets)]


def _check_mixers(mixers) -> list:
    if isinstance(mixers, (str, bytes)) or not isinstance(mixers, Sequence) or not mixers \
            or not all(callable(m) for m in mixers):
        raise ParameterError("mixers", mixers, "a non-empty list of factories, each Callable[[int], nn.Module]")
    return list(mixers)


def _check_model(model: RecallModel, task: RecallTask, device) -> None:
    """Each mixer keeps the shape; the model is causal (changing the last token changes no earlier logit)."""
    gen = torch.Generator().manual_seed(12345)
    tokens = task.sample(2, gen).tokens.to(device)
    with torch.no_grad():
        x = model.embed(tokens)
        for i, block in enumerate(model.blocks):
            y = block.mixer(x)
            if tuple(y.shape) != tuple(x.shape):
                raise ParameterError("mixers", f"layer {i} gives {tuple(y.shape)}",
                                     f"modules mapping [B, T, d_model] to the same shape {tuple(x.shape)}")
        changed = tokens.clone()
        changed[:, -1] = (changed[:, -1] + 1) % task.vocab
        if not torch.allclose(model(tokens)[:, :-1], model(changed)[:, :-1], atol=1e-5, rtol=1e-4):
            raise ParameterError("mixers", "a model whose earlier outputs change with a later token",
                                 "causal mixers (position t sees only positions <= t)")


def train_and_evaluate(mixers: Sequence[Callable[[int], nn.Module]], task: RecallTask, *, d_model: int = 64,
                       mlp_ratio: int = 2, steps: int = 300, batch_size: int = 32, lr: float = 3e-3,
                       eval_sequences: int = 256, buckets: int = 4, seed: int = 0, device="cpu",
                       desc: str = "", progress: bool = True) -> RecallResult:
    """Train a ``RecallModel`` on fresh ``task`` batches, then score recall by distance bucket."""
    mixers = _check_mixers(mixers)
    d_model, mlp_ratio = check_int("d_model", d_model, minimum=1), check_int("mlp_ratio", mlp_ratio, minimum=0)
    steps, batch_size = check_int("steps", steps, minimum=1), check_int("batch_size", batch_size, minimum=1)
    lr = check_real("lr", lr, minimum=0, open_min=True)
    eval_sequences, seed = check_int("eval_sequences", eval_sequences, minimum=1), check_int("seed", seed)
    ranges, device = distance_buckets(task, buckets), torch.device(device)
    with one_cpu_thread(device):
        return _train(mixers, task, d_model, mlp_ratio, steps, batch_size, lr, eval_sequences, ranges, seed,
                      device, desc, progress)


def _train(mixers, task, d_model, mlp_ratio, steps, batch_size, lr, eval_sequences, ranges, seed, device, desc,
           progress) -> RecallResult:
    with torch.random.fork_rng(devices=[]):     # built on the CPU from the seed, then moved: same weights anywhere
        torch.manual_seed(seed)
        model = RecallModel(task.vocab, d_model, mixers, mlp_ratio).to(device)
    _check_model(model, task, device)
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.1)
    warmup = max(1, steps // 10)
    sched = torch.optim.lr_scheduler.LambdaLR(   # linear warm-up, then cosine to zero
        opt, lambda s: min((s + 1) / warmup, 0.5 * (1 + math.cos(math.pi * min(s, steps) / steps))))
    train_gen, losses = torch.Generator().manual_seed(seed), []
    start = time.perf_counter()
    model.train()
    bar = tqdm(range(steps), desc=desc or "recall", disable=not progress, leave=False)
    for _ in bar:
        batch = task.sample(batch_size, train_gen)
        logits = model(batch.tokens.to(device))
        loss = F.cross_entropy(logits.flatten(0, 1), batch.targets.to(device).flatten(), ignore_index=IGNORE)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        losses.append(loss.item())
        bar.set_postfix(loss=f"{losses[-1]:.3f}", refresh=False)
    seconds = time.perf_counter() - start
    return _evaluate(model, task, ranges, eval_sequences, batch_size, seed + 1, device, desc, losses, seconds)


def _evaluate(model, task, ranges, sequences, batch_size, seed, device, desc, losses, seconds) -> RecallResult:
    gen = torch.Generator().manual_seed(seed)
    correct, total = [0] * len(ranges), [0] * len(ranges)
    model.eval()
    with torch.no_grad():
        for start in range(0, sequences, batch_size):
            batch = task.sample(min(batch_size, sequences - start), gen)
            hit = (model(batch.tokens.to(device)).argmax(-1).cpu() == batch.targets)
            asked = batch.targets != IGNORE
            for i, (lo, hi) in enumerate(ranges):
                inside = asked & (batch.distance >= lo) & (batch.distance <= hi)
                correct[i] += int(hit[inside].sum())
                total[i] += int(inside.sum())
    return RecallResult(desc=desc, accuracy=sum(correct) / sum(total), buckets=ranges,
                        bucket_accuracy=[c / t if t else float("nan") for c, t in zip(correct, total)],
                        bucket_counts=total, losses=losses,
                        parameters=sum(p.numel() for p in model.parameters()), seconds=seconds)


def over_seeds(runs: Sequence[RecallResult], outcome: Callable[[RecallResult], float] | None = None) -> Spread:
    """One outcome (the accuracy unless told) of one model's runs over seeds; an accuracy moves in
    steps of one evaluated query, which is its resolution."""
    outcome = outcome or (lambda r: r.accuracy)
    return Spread(tuple(outcome(r) for r in runs), floor=1 / sum(runs[0].bucket_counts))


LEARNED = 0.9   # the recall above which a run counts as having found the lookup


def learned(runs: Sequence[RecallResult], threshold: float = LEARNED) -> int:
    """How many of the runs recall more than ``threshold``: the seeds that found the lookup."""
    return sum(r.accuracy > threshold for r in runs)


def run_control(budget: Budget, seeds: Sequence[int], device="cpu") -> list[RecallResult]:
    """Full attention (four ``attention`` layers) trained on ``CONTROL`` once per seed: the run both
    recall pages show, so both show the same numbers."""
    return [train_and_evaluate([attention] * 4, CONTROL, **budget.kwargs(), buckets=1, seed=seed,
                               device=device, progress=False) for seed in seeds]

"""Time DeepSeek V4's 20-iteration Sinkhorn over one 4x4 mixing matrix per token.

``python -m twopaths.bench.mhc [--tokens N] [--repeats R] [--threads T]`` prints the best and median of
``R`` timed runs (after one warm-up) for a micro-batch of 64K tokens and for ``--tokens``, on this
machine's CPU, against the 0.5 s target for 64K tokens. One thread by default: the work is a few
passes over memory, and on a CPU shared with other jobs extra OpenMP threads mostly wait for each other.
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch

from ..errors import check_int
from ..layers.mhc import sinkhorn

TARGET_S = 0.5          # for 65,536 tokens
MICRO_BATCH = 65_536


def time_sinkhorn(tokens: int, streams: int = 4, iters: int = 20, repeats: int = 5, seed: int = 0) -> list[float]:
    """Seconds for each of ``repeats`` runs of ``sinkhorn`` on [tokens, streams, streams] float32 logits."""
    check_int("tokens", tokens, minimum=1)
    check_int("repeats", repeats, minimum=1)
    logits = torch.randn(tokens, streams, streams, generator=torch.Generator().manual_seed(seed))
    sinkhorn(logits, iters)                                 # warm-up: allocator and thread pool
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        sinkhorn(logits, iters)
        times.append(time.perf_counter() - start)
    return times


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tokens", type=int, default=262_144, help="a second, larger batch to time")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--threads", type=int, default=1, help="torch CPU threads")
    args = parser.parse_args(argv)
    torch.set_num_threads(check_int("threads", args.threads, minimum=1))
    print(f"torch {torch.__version__}, {torch.get_num_threads()} thread(s); 20 Sinkhorn iterations on 4x4 float32")
    for tokens in (MICRO_BATCH, args.tokens):
        t = time_sinkhorn(tokens, repeats=args.repeats)
        best, median = min(t), statistics.median(t)
        line = f"{tokens:>10,} tokens: best {best * 1e3:8.1f} ms, median {median * 1e3:8.1f} ms"
        line += f", {tokens / best / 1e6:6.2f} M matrices/s"
        if tokens == MICRO_BATCH:
            line += f"; target {TARGET_S * 1e3:.0f} ms, median/target = {median / TARGET_S:.3f}"
        print(line)


if __name__ == "__main__":
    main()

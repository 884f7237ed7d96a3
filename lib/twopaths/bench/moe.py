"""Time one Quantile Balancing update at K3's router shape: 896 experts, top-16, a 1,000-bin histogram.

``python -m twopaths.bench.moe [--micro-batches 1 4 16] [--repeats R] [--threads T] [--bins B]`` times
``observe`` (admission cutoffs and the histogram) for each 65,536-token micro-batch and one ``step``
(quantiles from the cumulative histogram, mean-centred bias, next bounds), and prints the best and
median of ``R`` runs after one warm-up, against the 1 s target for one micro-batch. Larger batches are
micro-batches accumulated into one histogram, as gradient accumulation does; the router's scores are
made once, outside the timing. One thread by default: the update is a few passes over memory, and on a
CPU shared with other jobs extra OpenMP threads mostly wait for each other. The CPU time of the process is
printed too: on a shared CPU, wall time includes waiting for a core.
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch

from ..errors import check_int, check_list
from ..layers.quantile_balancing import QuantileBalancer

TARGET_S = 1.0            # for one micro-batch
MICRO_BATCH = 65_536
EXPERTS, TOP_K, BINS = 896, 16, 1000


def time_update(micro_batches: int, bins: int = BINS, repeats: int = 3, seed: int = 0) -> list[tuple[float, float, float]]:
    """(observe seconds, step seconds, CPU seconds of the process) of each of ``repeats`` updates over
    ``micro_batches`` x 65,536 tokens. CPU seconds count every thread and exclude waiting for a shared CPU."""
    check_int("micro_batches", micro_batches, minimum=1)
    check_int("repeats", repeats, minimum=1)
    gen = torch.Generator().manual_seed(seed)
    scores = torch.sigmoid(torch.randn(MICRO_BATCH, EXPERTS, generator=gen) + torch.randn(EXPERTS, generator=gen))
    out = []
    for i in range(repeats + 1):                            # the first run warms the allocator and threads
        qb = QuantileBalancer(EXPERTS, TOP_K, bins)
        cpu, start = time.process_time(), time.perf_counter()
        for _ in range(micro_batches):
            qb.observe(scores)
        mid = time.perf_counter()
        qb.step()
        if i:
            out.append((mid - start, time.perf_counter() - mid, time.process_time() - cpu))
    return out


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--micro-batches", type=int, nargs="+", default=[1, 4, 16],
                        help="65,536-token micro-batches per update (16 = 1,048,576 tokens)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--threads", type=int, default=1, help="torch CPU threads")
    parser.add_argument("--bins", type=int, default=BINS)
    args = parser.parse_args(argv)
    torch.set_num_threads(check_int("threads", args.threads, minimum=1))
    counts = check_list("micro_batches", args.micro_batches, range(1, 257))
    print(f"torch {torch.__version__}, {torch.get_num_threads()} thread(s); {EXPERTS} experts, top-{TOP_K}, "
          f"{args.bins} bins, float32 scores")
    base = None
    for n in counts:
        runs = time_update(n, args.bins, args.repeats)
        totals = [a + b for a, b, _ in runs]
        best, median = min(totals), statistics.median(totals)
        step = statistics.median(b for _, b, _ in runs)
        cpu = statistics.median(c for _, _, c in runs)
        line = (f"{n * MICRO_BATCH:>10,} tokens: best {best:7.3f} s, median {median:7.3f} s "
                f"(of which quantiles+bias {step * 1e3:6.1f} ms; CPU time {cpu:6.2f} s), "
                f"{n * MICRO_BATCH / best / 1e6:6.2f} M tokens/s")
        if n == 1:
            line += f"; median/target = {median / TARGET_S:.3f}"
        base = base or (n, median)
        line += f"; time ratio to {base[0] * MICRO_BATCH:,} tokens = {median / base[1]:.2f} (tokens x{n / base[0]:g})"
        print(line)


if __name__ == "__main__":
    main()

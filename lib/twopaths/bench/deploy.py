"""Time the vectorised node-count sweep: ``python -m twopaths.bench.deploy [--repeats R] [--sample N]``.

Sweeps a grid of 100,000 configurations (2 models x 2 GPUs x 25 concurrencies x 25 contexts x 10
duty cycles x 4 P:D ratios) with ``calc.sweep``, under the article's and the book's serving
assumptions, against the 1 s target: the first run (per-placement memory computed, caches cold) and
the best and median of ``R`` more. Then times ``calc.fleet.plan``,
one configuration at a time, on ``N`` configurations drawn from the grid, checks that they give the
sweep's node counts, and prints the speed-up.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

from ..calc import fleet
from ..calc.sweep import AXES, sweep
from ..errors import check_int
from ..specs.serving import assumptions, presets

TARGET_S = 1.0
GRID = dict(models=["kimi-k3", "deepseek-v4-pro"], gpus=["h200", "b300"],
            concurrency=np.arange(1_000, 25_001, 1_000), context=np.arange(40_000, 1_000_001, 40_000),
            rho=np.round(np.arange(0.1, 1.01, 0.1), 2), pd_ratio=[1.5, 2.0, 2.5, 3.0])


def timed(fn, repeats: int) -> tuple[float, list[float], object]:
    """Seconds of a first call and of ``repeats`` further calls, and the last result."""
    start = time.perf_counter()
    out = fn()
    first = time.perf_counter() - start
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - start)
    return first, times, out


def scalar_check(result, sample: int, a, seed: int = 0) -> float:
    """Seconds per ``fleet.plan`` call over ``sample`` grid points; asserts each equals the sweep."""
    rng = np.random.default_rng(seed)
    picks = [tuple(int(rng.integers(n)) for n in result.nodes.shape) for _ in range(sample)]
    start = time.perf_counter()
    for idx in picks:
        v = {name: result.axes[name][i] for name, i in zip(AXES, idx)}
        try:
            work = fleet.Workload(int(v["concurrency"]), int(v["context"]), float(v["rho"]))
            nodes = fleet.plan(v["model"], v["gpu"], a.but(pd_ratio=float(v["pd_ratio"])), work).nodes
        except fleet.NoValidPlan:   # no placement holds a request: the sweep says inf
            nodes = np.inf
        assert nodes == result.nodes[idx], (v, nodes, result.nodes[idx])
    return (time.perf_counter() - start) / sample


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--sample", type=int, default=200, help="configurations timed one at a time")
    args = ap.parse_args(argv)
    repeats = check_int("repeats", args.repeats, minimum=1)
    sample = check_int("sample", args.sample, minimum=1)
    print(f"numpy {np.__version__}; target {TARGET_S:.1f} s for 100,000 configurations")
    for label in presets():
        a = assumptions(label)
        first, times, result = timed(lambda: sweep(a=a, **GRID), repeats)  # noqa: B023
        best, median = min(times), statistics.median(times)
        per_plan = scalar_check(result, sample, a)
        print(f"{label:>16}: {result.size:,} configurations; first {first * 1e3:7.1f} ms, best {best * 1e3:6.1f} ms, "
              f"median {median * 1e3:6.1f} ms ({result.size / median / 1e6:5.1f} M/s); median/target = "
              f"{median / TARGET_S:.4f}; first/target = {first / TARGET_S:.4f}")
        print(f"{'':>16}  fleet.plan one at a time: {per_plan * 1e3:.2f} ms each, {sample} checked equal; "
              f"sweep speed-up x{per_plan * result.size / median:,.0f}")


if __name__ == "__main__":
    main()

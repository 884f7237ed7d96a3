"""Time the whole claim audit: ``python -m twopaths.bench.audit [--repeats R]``.

The first run is timed in a fresh interpreter (imports, YAML loading and every recomputation, as
``python -m twopaths.audit`` pays them); then ``R`` runs in this process with the recomputations'
caches warm, against the 2 s target.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time

TARGET_S = 2.0


def cold_run_seconds() -> float:
    """Wall time of ``python -m twopaths.audit --format json`` in a new interpreter."""
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "twopaths.audit", "--format", "json"], check=True,
                   stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def warm_run_seconds(repeats: int) -> list[float]:
    from ..claims.audit import audit
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        rows = audit()
        times.append(time.perf_counter() - start)
    print(f"{len(rows)} claims audited per run")
    return times


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args(argv)
    cold = cold_run_seconds()
    print(f"cold (new interpreter, CLI): {cold:.2f} s; target {TARGET_S:.0f} s, cold/target = {cold / TARGET_S:.2f}")
    warm = warm_run_seconds(max(args.repeats, 1))
    print(f"in-process: best {min(warm) * 1e3:.0f} ms, median {statistics.median(warm) * 1e3:.0f} ms; "
          f"median/target = {statistics.median(warm) / TARGET_S:.3f}")


if __name__ == "__main__":
    main()

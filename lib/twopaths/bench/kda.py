"""Time KDA's chunked form against its recurrence and against fla-core's naive chunked reference.

``python -m twopaths.bench.kda [--tokens 4096] [--heads 4] [--dim 64] [--chunks 64 16] [--repeats 3] [--threads 1]``
draws one batch of inputs as K3's layer makes them (unit-norm q and k, g = -5 sigmoid(.), beta after a
sigmoid), float32, B = 1, and times ``kda_recurrent``, ``kda_chunked`` and fla-core's ``naive_chunk_kda``
(at each chunk size) on the very same tensors, alternating them so that a busy machine slows all alike;
it prints the best time of each, the ratios and the largest difference from the recurrence. fla's file
is loaded by path, as the tests do (its package imports Triton kernels); without fla-core it is skipped.
One thread by default: the CPU is shared, and the recurrence's small steps only lose from more.
"""

from __future__ import annotations

import argparse
import importlib.util
import time
from pathlib import Path

import torch

from ..errors import check_int
from ..layers.kda import kda_chunked, kda_recurrent, random_inputs


def fla_naive_chunk():
    """fla-core's ``naive_chunk_kda``, or None when fla-core is not installed."""
    spec = importlib.util.find_spec("fla")
    if spec is None or spec.origin is None:
        return None
    path = Path(spec.origin).parent / "ops" / "kda" / "naive.py"
    module_spec = importlib.util.spec_from_file_location("fla_kda_naive", path)
    module = importlib.util.module_from_spec(module_spec)
    module_spec.loader.exec_module(module)
    return module.naive_chunk_kda


def time_runs(runs: dict, repeats: int) -> tuple[dict, dict]:
    """Best seconds and last output of each run, the runs alternated so that load hits all alike."""
    best, outputs = {name: float("inf") for name in runs}, {}
    with torch.no_grad():
        for _ in range(repeats):
            for name, run in runs.items():
                start = time.perf_counter()
                outputs[name] = run()
                best[name] = min(best[name], time.perf_counter() - start)
    return best, outputs


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tokens", type=int, default=4096)
    parser.add_argument("--heads", type=int, default=4)
    parser.add_argument("--dim", type=int, default=64, help="K = V per head")
    parser.add_argument("--chunks", type=int, nargs="+", default=[64, 16], help="chunk sizes to time")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--threads", type=int, default=1, help="torch CPU threads")
    args = parser.parse_args(argv)
    torch.set_num_threads(check_int("threads", args.threads, minimum=1))
    T, repeats = check_int("tokens", args.tokens, minimum=1), check_int("repeats", args.repeats, minimum=1)
    chunks = [check_int("chunks", c, minimum=1) for c in args.chunks]
    H, K = check_int("heads", args.heads, minimum=1), check_int("dim", args.dim, minimum=1)
    q, k, v, g, beta = random_inputs(1, T, H, K, K)
    fla = fla_naive_chunk()
    runs = {"recurrent": lambda: kda_recurrent(q, k, v, g, beta)}
    for C in chunks:
        runs[f"chunked, chunk {C}"] = lambda C=C: kda_chunked(q, k, v, g, beta, chunk_size=C)
        if fla is not None and T % C == 0:   # fla's naive chunked form does not pad
            runs[f"fla naive, chunk {C}"] = lambda C=C: fla(q, k, v, g, beta, output_final_state=True, chunk_size=C)
    best, outputs = time_runs(runs, repeats)
    print(f"torch {torch.__version__}, {torch.get_num_threads()} thread(s), float32; B=1, T={T}, H={H}, "
          f"K=V={K}; best of {repeats}")
    for name, seconds in best.items():
        diff = max((outputs[name][i] - outputs["recurrent"][i]).abs().max().item() for i in (0, 1))
        print(f"  {name:<20} {seconds * 1e3:9.1f} ms   max |difference| from the recurrence {diff:.1e}")
    ratios = {}
    for C in chunks:
        ours = best[f"chunked, chunk {C}"]
        ratios[f"recurrent / chunked, chunk {C}"] = best["recurrent"] / ours
        if f"fla naive, chunk {C}" in best:
            ratios[f"fla naive / chunked, chunk {C}"] = best[f"fla naive, chunk {C}"] / ours
    for name, ratio in ratios.items():
        print(f"  {name}: {ratio:.2f}x")
    if fla is None:
        print("  fla naive: skipped (fla-core is not installed)")
    return ratios


if __name__ == "__main__":
    main()

"""Time KDA's chunked form against its recurrence and against fla-core's naive chunked reference.

``python -m twopaths.bench.kda [--tokens 4096] [--heads 4] [--dim 64] [--chunk 64] [--repeats 3] [--threads 1]``
draws one batch of inputs as K3's layer makes them (unit-norm q and k, g = -5 sigmoid(.), beta after a
sigmoid), float32, B = 1, and times ``kda_recurrent``, ``kda_chunked`` and fla-core's ``naive_chunk_kda``
on the very same tensors, alternating them so that a busy machine slows all three alike; it prints the
best time of each, the two ratios and the largest difference between the outputs. fla's file is loaded
by path, as the tests do (its package imports Triton kernels); without fla-core that column is skipped.
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


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tokens", type=int, default=4096)
    parser.add_argument("--heads", type=int, default=4)
    parser.add_argument("--dim", type=int, default=64, help="K = V per head")
    parser.add_argument("--chunk", type=int, default=64)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--threads", type=int, default=1, help="torch CPU threads")
    args = parser.parse_args(argv)
    torch.set_num_threads(check_int("threads", args.threads, minimum=1))
    T, C = check_int("tokens", args.tokens, minimum=1), check_int("chunk", args.chunk, minimum=1)
    repeats = check_int("repeats", args.repeats, minimum=1)
    H, K = check_int("heads", args.heads, minimum=1), check_int("dim", args.dim, minimum=1)
    q, k, v, g, beta = random_inputs(1, T, H, K, K)
    fla = fla_naive_chunk()
    runs = {"recurrent": lambda: kda_recurrent(q, k, v, g, beta),
            "chunked": lambda: kda_chunked(q, k, v, g, beta, chunk_size=C)}
    if fla is not None and T % C == 0:   # fla's naive chunk form does not pad
        runs["fla naive chunk"] = lambda: fla(q, k, v, g, beta, output_final_state=True, chunk_size=C)
    best, outputs = {name: float("inf") for name in runs}, {}
    with torch.no_grad():
        for _ in range(repeats):
            for name, run in runs.items():
                start = time.perf_counter()
                outputs[name] = run()
                best[name] = min(best[name], time.perf_counter() - start)
    print(f"torch {torch.__version__}, {torch.get_num_threads()} thread(s), float32; B=1, T={T}, H={args.heads}, "
          f"K=V={args.dim}, chunk {C}; best of {repeats}")
    for name, seconds in best.items():
        diff = max((outputs[name][i] - outputs["recurrent"][i]).abs().max().item() for i in (0, 1))
        print(f"  {name:<16} {seconds * 1e3:9.1f} ms   max |difference| from the recurrence {diff:.1e}")
    ratios = {"recurrent / chunked": best["recurrent"] / best["chunked"]}
    if "fla naive chunk" in best:
        ratios["fla naive chunk / chunked"] = best["fla naive chunk"] / best["chunked"]
    for name, ratio in ratios.items():
        print(f"  {name}: {ratio:.2f}x")
    if "fla naive chunk" not in best:
        print("  fla naive chunk: skipped (" + ("fla-core is not installed" if fla is None else
                                                 "T is not a multiple of the chunk") + ")")
    return ratios


if __name__ == "__main__":
    main()

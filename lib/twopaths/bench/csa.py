"""Time the decode of one token with CSA and with dense attention, from 1K to 64K tokens of context.

``python -m twopaths.bench.csa [--contexts 1024 ... 65536] [--repeats R] [--threads T]`` builds one toy
layer of each (V4's shared 512-channel key/value head; CSA with its 4:1 compressor, 128-token window and
an indexer picking 512 entries; dense attention reading every past token, the absorbed-MLA form) and
prints the median time per decoded token at each context, and the dense/CSA ratio at the longest.

Each cache is filled directly with random entries for the context (prefilling 64K tokens through a
toy layer would take far longer than the decode being timed, and the cost of a decode step does not
depend on the entries' values). One thread by default: the CPU is shared with other jobs.
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch

from ..errors import check_int
from ..layers.compressor import CompressorState
from ..layers.csa_hca import CSA
from ..layers.window import AttentionCache, WindowAttention

CONTEXTS = (1024, 2048, 4096, 8192, 16384, 32768, 65536)


def layers(d_model: int = 1024, heads: int = 16, head_dim: int = 512, topk: int = 512, seed: int = 0,
           index_dim: int = 128):
    """(dense, CSA): the same query/key/value shapes; CSA adds the compressor and the indexer."""
    torch.manual_seed(seed)
    common = dict(heads=heads, head_dim=head_dim, q_rank=d_model // 2, rope_dim=64)
    dense = WindowAttention(d_model, window=None, **common)
    csa = CSA(d_model, 4, window=128, topk=topk, index_heads=16, index_dim=index_dim, **common)
    return dense.eval(), csa.eval()


def _state(ratio: int, dim: int, tokens: int, overlap: bool, gen) -> CompressorState:
    width = 2 * dim if overlap else dim
    rand = lambda *shape: torch.randn(*shape, generator=gen)   # noqa: E731
    prev = (rand(1, ratio, dim), rand(1, ratio, dim)) if overlap and tokens >= ratio else None
    return CompressorState(ratio, rand(1, tokens // ratio, dim), (rand(1, tokens % ratio, width),) * 2, prev)


def filled_cache(layer: WindowAttention, tokens: int, seed: int = 0) -> AttentionCache:
    """``layer``'s cache as it stands after ``tokens`` tokens, with random entries."""
    gen = torch.Generator().manual_seed(seed)
    cache = layer.new_cache()
    kept = tokens if layer.window is None else min(tokens, layer.window)
    cache.raw, cache.length = torch.randn(1, kept, layer.head_dim, generator=gen), tokens
    if isinstance(layer, CSA):
        cache.compressor = _state(layer.ratio, layer.head_dim, tokens, True, gen)
        cache.indexer = _state(layer.ratio, layer.indexer.dim, tokens, True, gen)
    return cache


def time_decode(layer: WindowAttention, tokens: int, repeats: int = 5, seed: int = 0) -> list[float]:
    """Seconds for each of ``repeats`` single-token decode steps after ``tokens`` tokens (after a warm-up)."""
    check_int("tokens", tokens, minimum=1)
    check_int("repeats", repeats, minimum=1)
    x = torch.randn(1, 1, layer.wq_a.in_features, generator=torch.Generator().manual_seed(seed))
    times = []
    with torch.no_grad():
        for i in range(repeats + 1):
            cache = filled_cache(layer, tokens, seed)
            start = time.perf_counter()
            layer(x, cache)
            if i:
                times.append(time.perf_counter() - start)
    return times


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--contexts", type=int, nargs="+", default=list(CONTEXTS))
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--threads", type=int, default=1, help="torch CPU threads")
    args = parser.parse_args(argv)
    torch.set_num_threads(check_int("threads", args.threads, minimum=1))
    contexts = sorted(check_int("contexts", c, minimum=1) for c in args.contexts)
    dense, csa = layers()
    print(f"torch {torch.__version__}, {torch.get_num_threads()} thread(s), float32; one layer, 16 heads of 512; "
          f"CSA 4:1, 128-token window, top-{csa.indexer.topk} of 16 indexer heads of 128")
    print(f"{'context':>9}  {'dense ms/token':>15}  {'CSA ms/token':>13}  {'dense/CSA':>9}")
    rows = []
    for tokens in contexts:
        rows.append([statistics.median(time_decode(layer, tokens, args.repeats)) for layer in (dense, csa)])
        d, c = rows[-1]
        print(f"{tokens:>9,}  {d * 1e3:>15.2f}  {c * 1e3:>13.2f}  {d / c:>9.2f}")
    (d0, c0), (d, c) = rows[0], rows[-1]
    print(f"from {contexts[0]:,} to {contexts[-1]:,} tokens: dense x{d / d0:.1f}, CSA x{c / c0:.1f} per token; "
          f"at {contexts[-1]:,} dense takes {d / c:.1f} times as long as CSA")


if __name__ == "__main__":
    main()

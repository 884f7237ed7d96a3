"""calc.bare: the bare-memory count, on numbers small enough to add by hand."""

from twopaths.calc.bare import bare, bare_gpus


def test_split_of_the_bare_count():
    # 150 GB of weights + 100 GB of cache over 100 GB GPUs: 2.5 -> 3 GPUs; weights alone 1.5 -> 2
    c = bare_gpus(150e9, 100e9, 100e9)
    assert (c.total, c.weights_gpus, c.kv_gpus) == (3, 2, 1)
    assert c.weights_share == 0.6          # 150 / 250


def test_bare_reads_context_and_capacity():
    # V4-Pro stated: 1.6 TB of weights; one request of 1,000 tokens at 12.2 kB -> 12.2 MB of cache.
    # Over 1 TB GPUs: 1.6000122 -> 2 GPUs (over the H200's 141 GB it would be 12)
    c = bare("deepseek-v4-pro", concurrency=1, context=1000, capacity_bytes=1e12)
    assert c.kv_bytes == 12.2e6
    assert (c.total, c.weights_gpus) == (2, 2)

"""calc.decode's step bounds against figures worked by hand.

The expert bytes a step reads are ``other + expert x (1 - q^t)`` with ``q = 1 - k/E`` and ``t`` the
tokens routed. Differences of steps at three batches cancel ``other`` and ``expert``, so the share
the experts touch can be checked without knowing any weight: (W1 - W2) / (W1 - W3) for t = n, 2n,
3n is (q^n - q^2n) / (q^n - q^3n) = 1 / (1 + q^n)."""

import pytest

from twopaths.calc import decode
from twopaths.calc.placement import Placement, memory
from twopaths.specs.serving import assumptions

K3, V3 = "kimi-k3", "deepseek-v3"


@pytest.mark.parametrize("redundant", [0, 32])
def test_an_ep_group_touches_experts_with_all_its_tokens_and_no_replica(redundant):
    # V3: 256 routed experts, top-8. An EP32 group at batch b routes 32 b tokens, so t = 32, 64, 96;
    # EPLB's 32 replicas (9 slots a GPU) add slots, not experts a token can pick: E stays 256
    w = [decode.deployment_bound(V3, "h200", 32, 4096, batch=b, redundant_experts=redundant).weight_bytes
         for b in (1, 2, 3)]
    q = 1 - 8 / 256
    assert (w[0] - w[1]) / (w[0] - w[2]) == pytest.approx(1 / (1 + q ** 32), rel=1e-9)


def test_a_micro_batch_holds_its_share_of_the_batch_rounded_up():
    # K3 on one node in two pipeline stages (one attention group): a micro-batch of a batch of b
    # holds ceil(b / 2) requests, so 3 and 4 requests touch the same experts, and 2, 4, 6 route
    # t = 1, 2, 3 tokens a micro-batch: (W2 - W4) / (W2 - W6) = 1 / (1 + q), q = 1 - 16/896
    a = assumptions("book").but(max_ep=8)
    m = memory(K3, "h200", Placement(8, 8, dcp=8, pp=2), 500_000, a)
    w = {b: decode.gpu_step(K3, "h200", a, 500_000, m, b).weight_bytes for b in (2, 3, 4, 6)}
    assert w[3] == w[4] and w[3] > w[2]
    assert (w[2] - w[4]) / (w[2] - w[6]) == pytest.approx(1 / (1 + (1 - 16 / 896)), rel=1e-9)


def test_dcp_merge_bytes_count_the_other_ranks_only():
    # V3: 61 MLA layers, 128 heads over attention TP8 = 16 a rank; a query is the 512 latent plus 64
    # rope in BF16, a partial output the 512 latent in BF16 plus one FP32 LSE; dcp - 1 copies come in
    per_head = 2 * (512 + 64) + 2 * 512 + 4                           # 2,180 bytes
    assert decode.dcp_merge_bytes(V3, 8, 2) == 61 * 1 * 16 * per_head   # 2,127,680
    assert decode.dcp_merge_bytes(V3, 8, 4) == 61 * 3 * 16 * per_head
    assert decode.dcp_merge_bytes(V3, 8, 1) == 0.0

"""The runtime reserve: what a serving GPU keeps beside its weights and caches.

An engine sizes its cache pool after setting aside memory for what a forward pass needs. SGLang
0.5.23 writes its rule down (``memory_hook.py``, the reserve behind ``--mem-fraction-static``); the
book evaluates it term by term for each unit (``specs/serving.yaml``, ``reserve_models``), in MiB:

    activations = 1.5 x max(tokens of one forward, 2048)   prefill: the chunked-prefill size over
                                                            the unit's attention-DP ranks;
                                                            decode: max_bs (one token a request)
    cuda graphs = 2 x max_bs (decode)                       max_bs: 256 or 512 by TP and memory
                  1536 (MLA prefill) | 8 x captured sizes (other prefill)
    runtime     = 512 + 1024 x attention TP / 8             metadata; parallel slack
    floor       : activations + graphs + runtime >= 10 GiB on a GPU above 60 GiB
    all-to-all  = DeepEP's low-latency buffer on a decode unit, above the floor

The all-to-all term is where the book departs from SGLang's figure: SGLang reserves a flat 2 GiB,
while the buffer DeepEP allocates (``deepep_buffer_bytes``, its ``get_low_latency_rdma_size_hint``)
grows with the experts of the whole model, the width a token is dispatched at
(``calc.all_to_all.width``) and the tokens a rank may dispatch in a step: 2.7 GiB for V4-Pro's 384
experts at 7,168, 3.6 GiB for K3's 896 at its 4,096-wide latent, at SGLang's default 128 tokens a
rank. Those 128 tokens
also bound the requests one attention group decodes at once (``dispatch_cap``). A model routing a
token to more experts than those kernels take (K3: 16 of at most 11) decodes on DeepEP V2, whose
buffer grows with the ranks rather than the experts and has no published size formula; the legacy
buffer stands in for it.

Two more readings differ from SGLang's code, both because the book's units span many nodes:
- the parallel term counts the attention TP group, where SGLang's counts ``--tp-size`` (the whole
  unit under DeepEP, 224 GPUs for K3: 28 GiB of slack per GPU);
- the DP-attention padding (max_bs x DP size x 3 MiB) is left out: at a unit's DP size it passes the
  GPU itself, and large-EP deployments cap the captured batch instead.

On a GPU above 60 GiB the floor decides a decode unit's reserve (12 GiB with DeepEP), and the
chunked-prefill size a prefill unit's (15 GiB on an H200 for an MLA model, 27 GiB on a B300).

``reserve(model, gpu, placement, role, a)`` gives a ``Reserve``; it does not depend on the
requests a GPU ends up holding, so a plan's cache room is known before its requests are counted.
``least(gpu, a)`` is the least any GPU keeps (what the bare count of ``calc.bare`` subtracts).
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass

from ..errors import check_choice
from ..specs import GPUSpec, gpu as gpu_spec, model as model_spec
from ..specs.serving import Assumptions, reserve_models
from . import all_to_all
from .moe import routed_experts

MIB = 2**20
ROLES = ("decode", "prefill", "aggregated")   # aggregated: a unit that decodes and prefills (chunked)


@dataclass(frozen=True)
class Reserve:
    """One GPU's runtime reserve, in bytes."""
    activations: float
    cuda_graphs: float
    runtime: float
    floor_top_up: float          # what the engine's floor adds to the three above
    all_to_all: float
    chunk_tokens: int            # tokens of one prefill forward on one attention rank (prefill units)

    @property
    def total(self) -> float:
        return self.activations + self.cuda_graphs + self.runtime + self.floor_top_up + self.all_to_all


NONE = Reserve(0.0, 0.0, 0.0, 0.0, 0.0, 0)


def _mla(model: str) -> bool:
    return any(g.kind in ("mla", "dsa") for g in model_spec(model).attention)


def _prefill_graph_sizes(max_tokens: int) -> int:
    """How many token counts SGLang captures prefill graphs for, up to ``max_tokens``
    (``cuda_graph_hook.generate_prefill_cuda_graph_batch_sizes``)."""
    sizes = [*range(4, 33, 4), *range(48, 257, 16), *range(288, 513, 32), *range(576, 1025, 64),
             *range(1280, 4097, 256), *range(4608, max_tokens + 1, 512)]
    return sum(s <= max_tokens for s in sizes)


def defaults(gpu: GPUSpec | str, attention_tp: int, a: Assumptions) -> tuple[int, int]:
    """(chunked-prefill tokens, decode graphs' max batch) the reserve model sets for ``gpu``."""
    r = reserve_models()[a.reserve]
    g = gpu_spec(gpu) if isinstance(gpu, str) else gpu
    rows = r["by_memory"]
    row = rows[bisect.bisect_right([float(b) for b, *_ in rows], a.capacity_bytes(g) / MIB)]
    return int(row[1]), int(row[2] if attention_tp < 4 else row[3])


def deepep_buffer_bytes(experts: int, tokens_per_rank: int, hidden: int) -> int:
    """The low-latency RDMA buffer DeepEP allocates per GPU (``Config::get_low_latency_rdma_size_hint``
    in DeepEP's csrc/config.hpp, legacy kernels): a send and a receive buffer, each twice (double
    buffering), sized for ``tokens_per_rank`` tokens from every one of the model's ``experts``. A
    dispatch message carries the token in FP8 with one FP32 scale per 128 channels (or BF16 if
    larger) and 16 bytes of header; a combine message the token in BF16 and BF16 scales. It does not
    depend on the number of ranks."""
    scales = hidden // 128
    dispatch = 16 + max(2 * hidden, hidden + 4 * scales)
    combine = 4 * scales + 2 * hidden
    send = max(tokens_per_rank * dispatch, experts * tokens_per_rank * combine)
    receive = experts * tokens_per_rank * max(dispatch, combine)
    signals = -(-4 * experts // 128) * 128
    total = 2 * send + 2 * receive + 2 * signals
    return (total + 128) // 128 * 128


def dispatch_cap(placement, role: str, a: Assumptions) -> int | None:
    """The most requests one attention group of a decode unit can decode in a step: the tokens a
    rank may dispatch through DeepEP's low-latency kernels (one a request); None where there is no
    such bound (prefill, a unit that dispatches nothing, ``calc.all_to_all.dispatches``, no reserve
    model)."""
    r = reserve_models()[a.reserve]
    if role == "prefill" or not all_to_all.dispatches(placement) or "deepep_tokens_per_rank" not in r:
        return None
    return int(r["deepep_tokens_per_rank"])


def reserve(model: str, gpu: GPUSpec | str, placement, role: str, a: Assumptions) -> Reserve:
    """The reserve of one GPU of ``placement`` serving ``role`` ("decode", "prefill" or
    "aggregated") under ``a.reserve``. An aggregated unit runs chunked prefill forwards and decode
    steps in one engine, so it keeps the larger of the two reserves, term by term."""
    check_choice("role", role, ROLES)
    if "base_mib" not in reserve_models()[a.reserve]:
        return NONE
    if role == "aggregated":
        return _larger(*(reserve(model, gpu, placement, r, a) for r in ("decode", "prefill")))
    cap = dispatch_cap(placement, role, a)
    slots = routed_experts(model, "public") + a.redundant_experts if cap else 0
    deepep = deepep_buffer_bytes(slots, cap, all_to_all.width(model)) if cap else 0
    groups = placement.attention_groups if placement.routed else 1
    return _terms(gpu, placement.attention_tp, groups, role, _mla(model), float(deepep), a)


def _larger(decode: Reserve, prefill: Reserve) -> Reserve:
    """The reserve of a unit that runs both: each term the larger, the floor topping up what the
    larger of the two floors asks, the decode unit's all-to-all buffer, the prefill chunk."""
    terms = [max(getattr(decode, f), getattr(prefill, f)) for f in ("activations", "cuda_graphs", "runtime")]
    floored = max(r.total - r.all_to_all for r in (decode, prefill))
    return Reserve(*terms, max(floored - sum(terms), 0.0), decode.all_to_all, prefill.chunk_tokens)


def least(gpu: GPUSpec | str, a: Assumptions) -> Reserve:
    """The least reserve any GPU keeps: a one-GPU decode unit's, with no all-to-all buffer."""
    if "base_mib" not in reserve_models()[a.reserve]:
        return NONE
    return _terms(gpu, 1, 1, "decode", False, 0.0, a)


def _terms(gpu: GPUSpec | str, attention_tp: int, groups: int, role: str, mla: bool, deepep: float,
           a: Assumptions) -> Reserve:
    r = reserve_models()[a.reserve]
    g = gpu_spec(gpu) if isinstance(gpu, str) else gpu
    chunk, max_bs = defaults(g, attention_tp, a)
    if role == "prefill":     # SGLang divides the chunk among a unit's attention-DP ranks
        chunk = max(chunk // groups, 1)
    tokens = chunk if role == "prefill" else max_bs
    activations = r["mib_per_activation_token"] * max(tokens, r["min_activation_tokens"])
    if role == "decode":
        graphs = r["decode_graph_mib_per_bs"] * max_bs
    elif mla:
        graphs = r["mla_prefill_graph_mib"]
    else:
        graphs = r["prefill_graph_mib_per_size"] * _prefill_graph_sizes(chunk)
    runtime = r["base_mib"] + r["mib_per_8_tp"] * attention_tp / 8
    below = activations + graphs + runtime
    floor = r["floor_mib"] if a.capacity_bytes(g) / MIB > r["floor_above_mib"] else 0
    return Reserve(activations * MIB, graphs * MIB, runtime * MIB, max(floor - below, 0) * MIB, deepep,
                   chunk if role == "prefill" else 0)

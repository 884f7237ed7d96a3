"""Where weights and caches sit on the GPUs of one decode unit, and whether every GPU holds them.

A decode unit is one EP group of ``ep`` GPUs that holds one copy of the weights (part III, Step 2).

- **Routed experts** are spread over the ``ep`` GPUs, ``redundant_experts`` extra replicas per MoE
  layer included (``calc.weights.experts_per_gpu``).
- **Attention** runs in groups of ``attention_tp`` GPUs, ``ep / attention_tp`` groups serving
  requests side by side.
  - ``attention_tp = 1`` is attention data parallelism: every non-expert weight sits on every GPU,
    and each request's cache sits on the one GPU whose attention serves it. Whole requests must fit
    on one GPU; a unit's cache room is never pooled.
  - ``attention_tp = n`` shards the non-expert weights that belong to heads ``n`` ways (attention
    by heads, the output head and dense FFN by columns; ``specs.params.tp_replicated`` lists what
    stays whole). A request's *per-head* cache (GQA K/V heads, the KDA and Mamba-2 states)
    shards too. Its *per-token* entries (MLA's single latent, V4's shared K=V entries, compressed
    entries, indexer keys) belong to no head, so under TP alone every rank of the group holds all
    of them: TP shrinks the weights but not those caches.
  - ``dcp = c`` (decode context parallelism, dividing ``attention_tp``) stripes a request's
    per-token entries of the kinds an engine stripes (``dcp_stripes``: MLA latents and V3.2's
    indexer keys) over ``c`` ranks of its group, rank r keeping the positions p with p mod c = r;
    the per-head caches (the KDA state) stay split by heads. A decode step then merges the ranks'
    partial outputs (``calc.decode.dcp_merge_bytes``).

A placement is tried only where an engine of ``specs.engines`` can launch it (``engine_for``,
``can_launch``): its parallelism, its KV dtype and, for DCP, the model's family.

A GPU holds ``weights + runtime reserve + overhead + requests x its share of one request`` within
``usable_fraction x capacity``; the reserve (``calc.reserve``) depends on whether the unit decodes or
prefills. A placement is *valid* for a context when at least one request fits on every GPU.

A dense model has no experts to spread: its unit (``routed=False``) is one attention group of
``attention_tp`` GPUs holding every weight split ``attention_tp`` ways (the MLP by columns too).

Pipeline parallelism puts ``pp`` stages of such a unit one after another (``stage_bytes``): a
stage holds its share of the decoder layers, the embedding or the output head, and its layers'
share of every request's cache, so a request's cache is split over the stages as DCP splits MLA's.
A stage is one TP group of a node, and a MoE model's experts are spread over its GPUs (vLLM
0.33.0: the EP group is DP x TP within a stage, ``distributed/parallel_state.py``). One group a
stage keeps to the launch vLLM documents across nodes, a stage a node; SGLang 0.5.23 refuses stages
for DeepSeek V4.1 and states none for K3 (``specs/engines.yaml``).

A unit may be smaller than a node (EP 1, 2, 4; a dense TP group): several then share a node, and a
fleet counts GPUs, its nodes being the GPUs over ``gpus_per_node`` rounded up (``calc.fleet``).

``Placement``; ``memory(model, gpu, placement, context, a)`` gives a ``GPUMemory``;
``placements(model, a)`` the candidates a planner tries (EP sizes that divide a node or are whole
nodes and spread the expert slots evenly, attention TP sizes that divide the heads and a node);
``whole_node_placements`` those of whole nodes, which the chapters' tables show. For a chapter's
tables of any model: ``no_unit_reason(model, a)`` says why a model has no such placement (a dense model; expert
slots that split over no whole-node EP size), ``unit_rows`` gives one GPU of each unit with attention
DP and the widest TP (``UnitRow``), ``non_expert_bytes`` what a GPU holds outside the experts.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from ..errors import ParameterError, check_int
from ..specs import GPUSpec, gpu as gpu_spec, model as model_spec
from ..specs.deployment import deployment
from ..specs.engines import Engine, engines
from ..specs.params import PLAIN_TP_REPLICATED, TP_REPLICATED_GROUPS
from ..specs.serving import Assumptions
from . import kv
from .attention_flops import attention_layers, layer_bytes_read
from .ep import article_expert_bytes
from .moe import is_moe, routed_experts
from .request import request_bytes
from .reserve import Reserve, dispatch_cap, least, reserve
from .weights import experts_per_gpu, weights_per_gpu

PER_HEAD = ("kda", "mha")        # cache kinds that belong to heads and shard with attention TP


@dataclass(frozen=True)
class Placement:
    ep: int                      # GPUs in the EP group, i.e. the decode unit
    attention_tp: int = 1        # GPUs per attention group; 1 is attention DP
    routed: bool = True          # False: a dense model's unit, a node of TP groups (no experts)
    dcp: int = 1                 # decode context parallelism: ranks of an attention group that
                                 # stripe each request's per-token entries (1: none)
    pp: int = 1                  # pipeline stages of ``ep`` GPUs each (1: none)

    def __post_init__(self):
        check_int("ep", self.ep, minimum=1)
        check_int("attention_tp", self.attention_tp, minimum=1)
        check_int("dcp", self.dcp, minimum=1)
        if self.ep % self.attention_tp:
            raise ParameterError("attention_tp", self.attention_tp, f"a divisor of the EP size ({self.ep})")
        if self.attention_tp % self.dcp:
            raise ParameterError("dcp", self.dcp, f"a divisor of the attention TP size ({self.attention_tp})")
        check_int("pp", self.pp, minimum=1)
        if self.pp > 1 and self.attention_groups > 1:
            raise ParameterError("pp", self.pp, "1 for a unit of several attention groups (a stage is one TP group)")

    @property
    def gpus(self) -> int:
        """GPUs in one unit: ``pp`` stages of ``ep`` GPUs."""
        return self.ep * self.pp

    @property
    def attention_groups(self) -> int:
        return self.ep // self.attention_tp

    @property
    def name(self) -> str:
        dcp = f", DCP{self.dcp}" if self.dcp > 1 else ""
        if not self.routed and self.attention_groups > 1:      # a node of TP groups, as chapters size one
            return f"dense, {'DP' if self.attention_tp == 1 else f'TP{self.attention_tp}'}{dcp} x {self.attention_groups}"
        if not self.routed:
            tp = f"TP{self.attention_tp}" if self.attention_tp > 1 else "one GPU"
            return f"dense, {tp}{dcp}" + (f" x PP{self.pp}" if self.pp > 1 else "")
        attention = "attention DP" if self.attention_tp == 1 else f"attention TP{self.attention_tp}"
        return f"EP{self.ep}, {attention}{dcp}" + (f" x PP{self.pp}" if self.pp > 1 else "")


@dataclass(frozen=True)
class GPUMemory:
    """One GPU of a decode unit: what it must hold and how many requests fit beside it."""

    placement: Placement
    capacity: float              # bytes the GPU offers (the capacity convention)
    usable: float                # usable_fraction x capacity
    expert_bytes: float          # routed experts on this GPU
    other_bytes: float           # non-expert weights on this GPU (its attention shard)
    overhead_bytes: float
    request_bytes: float         # this GPU's share of one request's cache
    requests: int                # requests whose cache this GPU holds (0: the placement is invalid)
    reserve: Reserve             # activations, CUDA graphs, all-to-all buffers, runtime
    request_cap: int | None = None   # the most an attention group decodes at once (calc.reserve.dispatch_cap)
    layer_share: float = 1.0     # the share of the decoder layers this GPU's pipeline stage holds

    @property
    def weights(self) -> float:
        return self.expert_bytes + self.other_bytes

    @property
    def kv_room(self) -> float:
        """HBM left for caches (negative when the weights alone do not fit)."""
        return self.usable - self.weights - self.reserve.total - self.overhead_bytes

    @property
    def cache_bytes(self) -> float:
        return self.requests * self.request_bytes

    @property
    def used(self) -> float:
        return self.weights + self.reserve.total + self.overhead_bytes + self.cache_bytes

    @property
    def spare(self) -> float:
        """Usable bytes left after the weights and the requests it holds."""
        return self.usable - self.used

    @property
    def valid(self) -> bool:
        return self.requests >= 1


def _check_tp(model: str, tp: int, a: Assumptions) -> None:
    if tp > 1 and a.inputs != "public":
        raise ParameterError("attention_tp", tp, "1 under the article's figures, which have no heads to split")
    for h in _heads(model):
        if h % tp:
            raise ParameterError("attention_tp", tp, f"a divisor of {model}'s {h} attention heads")
    spec = model_spec(model)
    for g in spec.attention:
        heads = g.dims.get("kv_heads") if g.kind == "mha" else None
        if heads and heads % tp and tp % heads:
            raise ParameterError("attention_tp", tp, f"a divisor or multiple of {model}'s {heads} K/V heads")


def uneven(model: str, placement: Placement, a: Assumptions) -> bool:
    """Whether ``placement`` spreads ``model``'s expert slots unevenly (vLLM's expert map then
    gives some GPUs one more; ``placements`` offers it only in units of one attention group)."""
    if not placement.routed:
        return False
    slots = routed_experts(model, "public" if a.inputs == "public" else "article") + a.redundant_experts
    return slots % placement.ep != 0


def whole_groups(model: str, placement: Placement, a: Assumptions) -> tuple[str, ...]:
    """The parameter groups each rank of ``placement``'s attention TP groups holds whole: in one
    plain TP group (a dense model's, or a MoE unit of one attention group), what belongs to no head
    (``specs.params.PLAIN_TP_REPLICATED``); beside data-parallel attention, what the engine that
    launches the placement keeps whole there (``specs/engines.yaml``, tensor_parallel ``whole``:
    SGLang the embedding too, vLLM not)."""
    if not placement.routed or placement.attention_groups == 1:
        return PLAIN_TP_REPLICATED
    e = engine_for(model, placement, a)
    tp = e.feature("tensor_parallel") if e else None
    return tp.whole if tp and tp.whole else TP_REPLICATED_GROUPS


@cache
def _weights(model: str, placement: Placement, a: Assumptions) -> tuple[float, float]:
    """(routed-expert bytes, other bytes) on one GPU."""
    if a.inputs == "public":
        w = weights_per_gpu(model, placement.ep, tp=placement.attention_tp, redundant_experts=a.redundant_experts,
                            formats=a.formats(), uneven=uneven(model, placement, a),
                            whole=whole_groups(model, placement, a))
        return w.expert_bytes, w.other_bytes
    # The article's method: equal experts at one byte a parameter, and its per-GPU allowance for
    # attention and embedding (5 GB for K3, 3 GB for V4-Pro) as the non-expert weights.
    per_gpu = experts_per_gpu(routed_experts(model, "article"), placement.ep, a.redundant_experts)
    return per_gpu * article_expert_bytes(model), deployment(model).overhead_bytes


def stage_layers(layers: int, pp: int) -> tuple[int, ...]:
    """Decoder layers per pipeline stage, as vLLM 0.33.0 splits them by default
    (``distributed/utils.py``, ``get_pp_indices``): ``layers // pp`` each, the remainder one a stage
    from the second-to-last stage backwards (the last holds the output head and norm)."""
    base, extra = divmod(check_int("layers", layers, minimum=1), check_int("pp", pp, minimum=1))
    return tuple(base + (pp - 1 - extra <= s <= pp - 2) for s in range(pp))


def stage_bytes(model: str, placement: Placement, a: Assumptions) -> tuple[tuple[float, float, float], ...]:
    """Per pipeline stage of ``placement``, (routed-expert bytes, other bytes, share of the decoder
    layers) on one of its GPUs: its layers at the average layer's weight (experts included), plus
    the embedding on the first stage and the output head on the last; one stage holds everything."""
    w = weights_per_gpu(model, placement.ep if placement.routed else 1, tp=placement.attention_tp,
                        redundant_experts=a.redundant_experts if placement.routed else 0,
                        formats=a.formats(), uneven=uneven(model, placement, a),
                        whole=whole_groups(model, placement, a)).by_group
    embedding, head, expert = w.get("embedding", 0.0), w.get("head", 0.0), w.get("routed_experts", 0.0)
    other = sum(w.values()) - embedding - head - expert
    total = int(model_spec(model).config["num_hidden_layers"])
    counts = stage_layers(total, placement.pp)
    return tuple((expert * n / total, other * n / total + embedding * (s == 0) + head * (s == len(counts) - 1),
                  n / total) for s, n in enumerate(counts))


def _head_share(kv_heads: int, attention_tp: int) -> float:
    """The share of a cache one rank of an attention group holds or reads: K/V heads split over the
    ranks (replicated where there are fewer heads than ranks); with no K/V heads (0: MLA's one
    latent, V4's shared entries) each rank holds every entry."""
    return max(kv_heads // attention_tp, 1) / kv_heads if kv_heads else 1.0


def dcp_stripes(model: str) -> tuple[str, ...]:
    """The cache kinds decode context parallelism stripes for ``model``: those of the first engine
    (``specs.engines``) that has DCP for its family; none where no engine has it."""
    family = model_spec(model).raw.get("family")
    for e in engines():
        if e.supports("decode_context_parallel", family):
            return e.feature("decode_context_parallel").stripes
    return ()


def _split(g, attention_tp: int, dcp: int, striped: tuple[str, ...]) -> float:
    """The share of group ``g``'s bytes one rank of an attention group holds or reads: per-head
    kinds split by heads, the kinds DCP stripes split over its ``dcp`` ranks, the rest whole."""
    if g.kind == "mha" or g.kind == "window" and "kv_heads" in g.dims:    # GQA heads, full or windowed
        return _head_share(g["kv_heads"], attention_tp)
    if g.kind in PER_HEAD:
        return 1 / attention_tp
    return 1 / dcp if g.kind in striped else 1.0


@cache
def request_share(model: str, context: int, attention_tp: int, a: Assumptions, dcp: int = 1) -> float:
    """Bytes of one request's cache on one GPU of an attention group of ``attention_tp`` GPUs, of
    which ``dcp`` stripe the per-token entries DCP applies to (``dcp_stripes``)."""
    if a.inputs != "public":
        return request_bytes(model, context, a.inputs)
    striped = dcp_stripes(model) if dcp > 1 else ()
    return sum(b * _split(g, attention_tp, dcp, striped)
               for g, b in kv.group_bytes(model_spec(model), context, a.kv_dtype, a.state_dtype))


def _read_split(g, attention_tp: int, dcp: int, striped: tuple[str, ...]) -> float:
    """The share of what attention layers ``g`` (``calc.attention_flops``) read that one rank reads:
    its K/V heads of a GQA cache; its stripe of MLA latents (and of V3.2's indexer keys) under DCP;
    otherwise every entry."""
    if g.kv_heads:
        return _head_share(g.kv_heads, attention_tp)
    return 1 / dcp if g.kind in ("mla", "dsa") and "mla" in striped else 1.0


@cache
def read_share(model: str, context: int, attention_tp: int, a: Assumptions, dcp: int = 1) -> float:
    """Bytes of one request's cache one GPU reads in a decode step: what its attention touches
    (``calc.attention_flops``: MLA's every latent; V4's window, the top-k CSA entries, every HCA
    entry and every indexer key; this rank's K/V heads of a GQA cache; this rank's stripe under
    DCP) plus the KDA state, split by heads. The article's figures read the whole cache."""
    if a.inputs != "public":
        return request_share(model, context, attention_tp, a)
    spec = model_spec(model)
    striped = dcp_stripes(model) if dcp > 1 else ()
    touched = sum(g.layers * layer_bytes_read(spec, g, context, a.kv_dtype) * _read_split(g, attention_tp, dcp, striped)
                  for g in attention_layers(spec) if g.kind != "kda")
    state = sum(b for g, b in kv.group_bytes(spec, context, a.kv_dtype, a.state_dtype) if g.kind == "kda")
    return touched + state / attention_tp


def memory(model: str, gpu: GPUSpec | str, placement: Placement, context: int, a: Assumptions,
           role: str = "decode") -> GPUMemory:
    """One GPU of ``placement`` serving requests of ``context`` tokens under assumptions ``a``, in
    a unit that decodes or (``role="prefill"``) prefills."""
    g = gpu_spec(gpu) if isinstance(gpu, str) else gpu
    _check_tp(model, placement.attention_tp, a)
    context = check_int("context", context, minimum=1, maximum=kv.MAX_TOKENS)
    if uneven(model, placement, a) and (placement.attention_groups > 1 or a.inputs != "public"):
        slots = routed_experts(model, "public" if a.inputs == "public" else "article") + a.redundant_experts
        raise ParameterError("ep", placement.ep, f"a divisor of the {slots} expert slots per layer (an uneven "
                             "split only in a unit of one attention group, which dispatches nothing)")
    capacity = a.capacity_bytes(g)
    whole = request_share(model, context, placement.attention_tp, a, placement.dcp)
    held = reserve(model, g, placement, role, a)
    # each stage holds its layers' weights and their share of every cache; the stage that holds the
    # fewest requests bounds the unit (share > 0: a request of one token holds bytes)
    stages = ((*_weights(model, placement, a), 1.0),) if placement.pp == 1 else stage_bytes(model, placement, a)
    room = lambda e, o: a.usable_fraction * capacity - e - o - held.total - a.overhead_bytes  # noqa: E731
    expert, other, part = min(stages, key=lambda st: (max(int(room(st[0], st[1]) // (whole * st[2])), 0),
                                                      -(st[0] + st[1])))
    share = whole * part
    requests = max(int(room(expert, other) // share), 0)
    cap = dispatch_cap(placement, role, a)
    return GPUMemory(placement, capacity, a.usable_fraction * capacity, expert, other, a.overhead_bytes,
                     share, requests if cap is None else min(requests, cap), held, cap, part)


def cache_capacity(gpu: GPUSpec | str, a: Assumptions) -> float:
    """What one GPU gives weights and caches if memory were pooled (the bare count, ``calc.bare``):
    its usable bytes less the least runtime reserve any GPU keeps (``calc.reserve.least``: on a GPU
    above 60 GiB, SGLang's 10 GiB floor)."""
    g = gpu_spec(gpu) if isinstance(gpu, str) else gpu
    return a.usable_bytes(g) - least(g, a).total


def _heads(model: str) -> list[int]:
    """Head counts attention TP must divide: the query heads, KDA's, and Mamba-2's heads and the
    n_groups its B and C come in (a rank's conv state then holds 1 / tp of them, as ``_split`` takes)."""
    spec = model_spec(model)
    keys = ("num_attention_heads", "linear_attn_config.num_heads")
    if spec.raw.get("family") == "nemotron_h":
        keys += ("mamba_num_heads", "n_groups")
    return [spec.config[k] for k in keys if spec.config.get(k)]


def can_launch(e: Engine, model: str, p: Placement, a: Assumptions) -> bool:
    """Whether engine ``e`` has every feature placement ``p`` needs for ``model`` under ``a``: its
    parallelism, its KV dtype, and DCP for the model's family (with attention DP where it has one)."""
    family = model_spec(model).raw.get("family")
    kv_dtypes = e.feature("kv_cache_dtype")
    if a.inputs == "public" and (kv_dtypes is None or a.kv_dtype not in kv_dtypes.values
                                 or a.kv_dtype not in kv_dtypes.family_values.get(family, (a.kv_dtype,))):
        return False
    needs = ["tensor_parallel"] if p.attention_tp > 1 else []
    needs += ["pipeline_parallel"] if p.pp > 1 else []
    if p.pp > 1 and p.routed and not getattr(e.feature("pipeline_parallel"), "with_expert_parallel", False):
        return False
    if p.routed and p.ep == 1:      # one GPU holds every expert: no expert parallelism to launch
        needs += ["redundant_experts"] if a.redundant_experts else []
    elif p.routed:
        needs += ["expert_parallel"] + (["data_parallel"] if p.attention_groups > 1 else [])
        needs += ["redundant_experts"] if a.redundant_experts else []
    elif p.attention_groups > 1:
        needs.append("replicas")
    if not all(e.supports(n) for n in needs):
        return False
    if uneven(model, p, a):      # no all-to-all kernel takes an uneven split (specs/engines.yaml)
        ep = e.feature("expert_parallel")
        if not (ep and ep.uneven and p.attention_groups == 1 and not a.redundant_experts):
            return False
    if p.dcp > 1:
        dcp = e.feature("decode_context_parallel")
        return (e.supports("decode_context_parallel", family)
                and (p.attention_groups == 1 or dcp.with_attention_dp))
    return True


def engine_for(model: str, placement: Placement, a: Assumptions) -> Engine | None:
    """The first engine of ``specs.engines`` that can launch ``placement`` for ``model`` under
    ``a`` (its parallelism, its KV dtype, DCP for the model's family); None where none can."""
    return next((e for e in engines() if can_launch(e, model, placement, a)), None)


PP_STAGES = range(2, 9)      # pipeline stages tried, up to 8 a unit


@cache
def placements(model: str, a: Assumptions) -> tuple[Placement, ...]:
    """The placements a planner tries, fewest GPUs first (then narrowest TP, then DCP), those some
    engine can launch (``engine_for``):

    - a MoE model: EP sizes up to ``a.max_ep`` GPUs that spread the expert slots evenly, either
      dividing a node (1, 2, 4 GPUs, so a model that fits one GPU is not spread over a node; several
      such units share a node) or whole nodes; and, where an engine allows it (vLLM without EPLB),
      sizes within a node that do not spread them evenly, in units of one attention group, which
      dispatch nothing (``calc.all_to_all.dispatches``), the busiest GPU holding one expert more;
      with the public configs, also ``PP_STAGES`` pipeline stages of one node-wide TP group each;
    - a dense model: one TP group (TP 1, 2, 4 ... up to a node), each unit holding its share of
      every weight (``weights_per_gpu``) and serving requests of its own; several share a node. For
      weights no node holds, ``PP_STAGES`` pipeline stages of a node-wide TP group each;

    times attention TP sizes up to ``a.max_attention_tp`` that divide the attention heads, the node
    and the EP size, times DCP sizes that divide the attention TP, up to ``a.max_dcp``. Which PP
    size a plan may use is the planner's choice (``calc.fleet.staged``)."""
    n = a.gpus_per_node
    dense = not is_moe(model)
    tps = [t for t in range(1, a.max_attention_tp + 1)
           if n % t == 0 and all(h % t == 0 for h in _heads(model))]
    odd: list[int] = []
    if dense:
        units = [(t, 1) for t in tps] + [(n, pp) for pp in PP_STAGES if n in tps]
    else:
        slots = routed_experts(model, "public" if a.inputs == "public" else "article") + a.redundant_experts
        sizes = [e for e in range(1, n) if n % e == 0] + list(range(n, min(slots, a.max_ep) + 1, n))
        even = [e for e in sizes if e <= a.max_ep and slots % e == 0]
        # uneven splits only where nothing is dispatched: one attention group, within a node
        odd = [e for e in sizes if e <= min(n, a.max_ep) and slots % e] \
            if a.inputs == "public" and not a.redundant_experts else []
        staged = PP_STAGES if a.inputs == "public" else ()     # the article's allowance has no layers
        units = sorted((e, 1) for e in even + odd) + [(n, pp) for pp in staged if n in even + odd]
    out = []
    for e, pp in units:
        for t in tps:
            if e % t or (dense or pp > 1 or e in odd) and t != e:       # one TP group
                continue
            try:
                _check_tp(model, t, a)
            except ParameterError:
                continue
            for c in (c for c in range(1, min(t, a.max_dcp) + 1) if t % c == 0):
                p = Placement(e, t, routed=not dense, dcp=c, pp=pp)
                if engine_for(model, p, a) is not None:
                    out.append(p)
    return tuple(sorted(out, key=lambda p: (p.gpus, p.attention_tp, p.dcp)))


def whole_node_placements(model: str, a: Assumptions) -> tuple[Placement, ...]:
    """The placements of ``placements`` whose unit is whole nodes, pipeline stages aside: the units
    the chapters' tables of EP sizes show (part III sizes EP in nodes); a dense model's is its node
    of one TP8 group."""
    return tuple(p for p in placements(model, a) if p.pp == 1 and p.ep % a.gpus_per_node == 0)


def untried_tp(model: str, a: Assumptions) -> dict[int, str]:
    """The attention TP sizes up to ``a.max_attention_tp`` that divide the node but that
    ``placements`` does not try for ``model``, each with why (heads it does not divide), so a plan
    left with attention DP says so instead of passing over them in silence."""
    out = {}
    for t in range(2, a.max_attention_tp + 1):
        if a.gpus_per_node % t:
            continue
        try:
            _check_tp(model, t, a)
        except ParameterError as e:
            out[t] = e.allowed
    return out


def no_unit_reason(model: str, a: Assumptions) -> str | None:
    """Why ``model`` has no decode unit of whole nodes to size under ``a``, as a table row says it;
    None when it has one. A dense model has no routed experts to spread; a MoE model's expert slots
    may split evenly over no whole-node EP size up to ``a.max_ep`` GPUs."""
    if not is_moe(model):
        return "a dense model: no routed experts, so expert parallelism does not apply"
    if whole_node_placements(model, a):
        return None
    slots = routed_experts(model, "public" if a.inputs == "public" else "article") + a.redundant_experts
    return (f"its {slots} expert slots per layer split evenly over no EP size of whole "
            f"{a.gpus_per_node}-GPU nodes up to {a.max_ep} GPUs")


@dataclass(frozen=True)
class UnitRow:
    """One GPU of a decode unit, with the expert slots it holds."""
    memory: GPUMemory
    experts_per_gpu: int
    gpus_per_node: int

    @property
    def nodes(self) -> float:
        return self.memory.placement.ep / self.gpus_per_node

    @property
    def requests_per_unit(self) -> int:
        return self.memory.requests * self.memory.placement.attention_groups


def unit_rows(model: str, gpu: GPUSpec | str, context: int, a: Assumptions,
              maximum: int = 128) -> tuple[UnitRow, ...]:
    """One GPU of each whole-node decode unit of up to ``maximum`` GPUs, with attention DP and with
    the widest attention TP the model and ``a`` allow; empty when ``no_unit_reason`` gives one."""
    if no_unit_reason(model, a):
        return ()
    cands = [p for p in whole_node_placements(model, a) if p.ep <= maximum]
    widest = max((p.attention_tp for p in cands), default=1)
    slots = routed_experts(model, "public" if a.inputs == "public" else "article")
    return tuple(UnitRow(memory(model, gpu, p, context, a),
                         experts_per_gpu(slots, p.ep, a.redundant_experts, uneven=uneven(model, p, a)),
                         a.gpus_per_node)
                 for p in cands if p.attention_tp in (1, widest))


def non_expert_bytes(model: str, attention_tp: int, a: Assumptions) -> float | None:
    """Every weight but the routed experts on one GPU of an attention group of ``attention_tp``
    GPUs beside data-parallel attention (a unit of two such groups, as any larger EP size gives it);
    None for a dense model or where the heads do not split ``attention_tp`` ways."""
    if not is_moe(model):
        return None
    try:
        _check_tp(model, attention_tp, a)
    except ParameterError:
        return None
    if a.inputs != "public":     # the article's per-GPU allowance, as in _weights
        return deployment(model).overhead_bytes
    beside = Placement(2 * attention_tp, attention_tp)
    return weights_per_gpu(model, 1, tp=attention_tp, redundant_experts=a.redundant_experts, formats=a.formats(),
                           whole=whole_groups(model, beside, a)).other_bytes

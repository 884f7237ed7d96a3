"""The fleet for a workload: decode units that physically fit, and the prefill nodes beside them
(part III, Steps 2 to 5, and B300).

A plan takes one ``Assumptions`` value (``specs.serving``) and a ``Workload``: ``concurrency``
sessions of ``context`` tokens, a share ``rho`` of them decoding at once (``calc.offload``).

    resident          = ceil(concurrency x rho)
    requests per unit = attention groups x requests per group   (calc.placement: whole requests
                                                                  on every GPU, never pooled)
    decode units      = ceil(resident / requests per unit)
    decode nodes      = ceil(units x ep / gpus per node)
    prefill nodes     = ceil(decode nodes / pd_ratio), in whole prefill units (the article's ratio)
    prefill by work   = ceil(prompt tokens/s / tokens/s a GPU sustains), in whole prefill units
    prompt tokens/s   = resident x session speed / output tokens a turn x prompt tokens a turn

The prompt tokens come at the pace the plan decodes: a resident session finishes a turn every
``output_tokens / speed`` seconds, ``speed`` being one token a step on a full decode GPU, the same
bound the fleet's output tokens are priced at (``calc.cost``). A plan slower than the article's 200
tokens/s takes in fewer turns a second, not the article's.

A prefill unit is the smallest valid placement for the context: it must hold the weights and one
request per attention group. ``plan`` tries every placement ``calc.placement.placements`` offers
(or the one it is given), keeps those where every GPU holds its weights plus its requests, and
returns the one with the fewest nodes, decode and prefill at the P:D ratio (the smaller unit on a
tie). No invalid plan is returned: when
none is valid, ``NoValidPlan`` says so and names the smallest change that makes one valid.
``full_gpu_speed`` is the speed of one session on a full decode GPU of the plan for every session.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from functools import cache

from ..errors import ParameterError, check_int, check_real
from ..specs import gpu as gpu_spec, max_position
from ..specs.deployment import deployment, workload as article_workload
from ..specs.engines import Engine, engines
from ..specs.serving import Assumptions
from .decode import fastest_batch, gpu_step
from .offload import check_rho, decode_seconds
from .placement import GPUMemory, Placement, can_launch, memory, placements
from .prefill import tokens_per_s_per_gpu


@dataclass(frozen=True)
class Workload:
    concurrency: int
    context: int
    rho: float = 1.0
    output_tokens: int | None = None           # a turn's output tokens (None: the article's)

    def __post_init__(self):
        check_int("concurrency", self.concurrency, minimum=1)
        check_int("context", self.context, minimum=1)
        check_rho(self.rho)
        if self.output_tokens is not None:
            check_int("output_tokens", self.output_tokens, minimum=1)

    @property
    def resident(self) -> int:
        """Sessions whose cache must be on a GPU: concurrency x rho, rounded up."""
        return math.ceil(round(self.concurrency * self.rho, 9))

    @property
    def turn_tokens(self) -> int:
        """Output tokens a turn decodes (the article's 1,000 unless set)."""
        return article_workload().output_tokens if self.output_tokens is None else self.output_tokens

    def turns_per_s(self, speed: float) -> float:
        """Turns the resident sessions finish a second, each decoding at ``speed`` tokens/s: one
        every ``decode_seconds(turn_tokens, speed)`` a session (Little's law at the decode stage)."""
        return self.resident / decode_seconds(self.turn_tokens, speed)


def workload(concurrency: int | None = None, context: int | None = None, rho: float = 1.0,
             output_tokens: int | None = None) -> Workload:
    """The article's workload (10,000 sessions of 500K tokens, turns of 1,000 output tokens) with
    any field changed."""
    w = article_workload()
    return Workload(w.concurrency if concurrency is None else concurrency,
                    w.average_context if context is None else context, rho, output_tokens)


@dataclass(frozen=True)
class Prefill:
    unit: Placement              # the smallest valid placement: it holds the weights and a request
    unit_nodes: int
    by_ratio: int                # nodes at the P:D ratio, whole units
    tokens_per_s: float          # prompt tokens a second the fleet must take in, at the plan's speed
    tokens_per_s_per_gpu: float
    by_work: int                 # nodes that sustain them, whole units
    aggregated: bool = False     # no prefill unit: the decode units prefill too (chunked), 0 nodes


@dataclass(frozen=True)
class Plan:
    model: str
    gpu: str
    assumptions: Assumptions
    work: Workload
    decode: GPUMemory            # one decode GPU: weights, overhead and the requests it holds
    requests_per_unit: int
    units: int
    d_nodes: int
    prefill: Prefill
    speed: float | None = None   # the tokens/s per session it was planned to meet (None: none)

    @property
    def session_speed(self) -> float:
        """Tokens/s one session gets on a full decode GPU: one token a step (``plan_step``)."""
        return session_speed(self.model, self.gpu, self.assumptions, self.work.context, self.decode)

    @property
    def placement(self) -> Placement:
        return self.decode.placement

    @property
    def engine(self) -> Engine | None:
        """The first engine (``specs.engines``) that launches both units; None for the article's
        own figures, which no engine serves."""
        if self.assumptions.inputs != "public":
            return None
        return next(e for e in engines() if all(can_launch(e, self.model, p, self.assumptions)
                                                for p in (self.placement, self.prefill.unit)))

    @property
    def ep(self) -> int:
        return self.placement.ep

    @property
    def concurrency(self) -> int:
        return self.work.concurrency

    @property
    def p_nodes(self) -> int:
        return self.prefill.by_ratio

    @property
    def nodes(self) -> int:
        return self.d_nodes + self.p_nodes

    @property
    def gpus(self) -> int:
        """The decode units' GPUs plus the prefill nodes' (whole nodes at the P:D ratio)."""
        return self.d_gpus + self.p_nodes * self.assumptions.gpus_per_node

    @property
    def gpus_by_work(self) -> int:
        """The decode units' GPUs plus the prefill nodes' sized by work instead of the P:D ratio."""
        return self.d_gpus + self.prefill.by_work * self.assumptions.gpus_per_node

    @property
    def nodes_by_work(self) -> int:
        """Decode nodes plus prefill nodes sized by work instead of the P:D ratio."""
        return self.d_nodes + self.prefill.by_work

    @property
    def beyond_max_position(self) -> bool:
        """Whether the context is past what the model's config declares (``specs.max_position``):
        the plan is priced all the same, and every page and the ``plan`` command flag it."""
        return max_position.beyond(self.model, self.work.context)

    @property
    def aggregated(self) -> bool:
        return self.prefill.aggregated

    @property
    def d_gpus(self) -> int:
        """GPUs of the decode units, several small units sharing a node."""
        return self.units * self.placement.gpus


class NoValidPlan(ParameterError):
    """No placement holds the weights and a request on every GPU; ``fix`` names the smallest change."""

    def __init__(self, model: str, gpu: str, work: Workload, fix: str):
        self.model, self.gpu, self.work, self.fix = model, gpu, work, fix
        super().__init__("context", work.context, f"a context whose cache fits beside {model}'s weights on "
                         f"some placement on {gpu}; none does. Smallest change that makes one valid: {fix}")


def _units(n_gpus: int, a: Assumptions) -> int:
    return math.ceil(n_gpus / a.gpus_per_node)


def _candidates(model: str, a: Assumptions, placement: Placement | None) -> tuple[Placement, ...]:
    if placement is None:
        return placements(model, a)
    return (placement,)


@cache
def prefill_unit(model: str, gpu: str, context: int, a: Assumptions, dcp: int = 1) -> GPUMemory | None:
    """The smallest valid unit for one request (fewest GPUs, then narrowest attention TP) with the
    decode unit's DCP size ``dcp``: the caches a prefill unit hands over keep their layout, and
    vLLM 0.33.0's NIXL transfer of a hybrid MLA + linear-attention model needs one DCP size on both
    sides (specs/engines.yaml, disaggregation)."""
    cands = tuple(p for p in placements(model, a) if p.dcp == dcp)
    valid = [m for m in (memory(model, gpu, p, context, a, "prefill") for p in staged(model, gpu, context, a, cands,
                                                                                       role="prefill"))
             if m.valid]
    return min(valid, key=lambda m: (m.placement.gpus, m.placement.attention_tp), default=None)


def _by_ratio(d_nodes: int, unit_nodes: int, a: Assumptions) -> int:
    """Prefill nodes at the P:D ratio, in whole prefill units of ``unit_nodes``."""
    return unit_nodes * math.ceil(round(math.ceil(round(d_nodes / a.pd_ratio, 9)) / unit_nodes, 9))


def prefill_rate(model: str, gpu: str, context: int, a: Assumptions) -> float:
    """Prompt tokens/s one GPU prefills at ``a.prefill_mfu`` (``calc.prefill``)."""
    active = deployment(model).activated_params if a.inputs != "public" else None
    return tokens_per_s_per_gpu(model, gpu, context, mfu=a.prefill_mfu, activated_params=active,
                                new_tokens=a.prompt_tokens_per_turn)


def session_speed(model: str, gpu: str, a: Assumptions, context: int, m: GPUMemory) -> float:
    """Tokens/s a session gets on a full GPU ``m``: one token a step (``calc.decode.gpu_step``)."""
    return 1 / gpu_step(model, gpu, a, context, m, m.requests).step


def prompt_demand(work: Workload, a: Assumptions, speed: float) -> float:
    """Prompt tokens/s the resident sessions bring, each decoding at ``speed`` tokens/s: turns a
    second x new prompt tokens a turn."""
    return work.turns_per_s(speed) * a.prompt_tokens_per_turn


def _prefill(model: str, gpu: str, work: Workload, d_nodes: int, a: Assumptions, unit: GPUMemory,
             speed: float) -> Prefill:
    unit_nodes = _units(unit.placement.gpus, a)
    by_ratio = _by_ratio(d_nodes, unit_nodes, a)
    demand, rate = prompt_demand(work, a, speed), prefill_rate(model, gpu, work.context, a)
    by_work = unit_nodes * math.ceil(round(_units(math.ceil(demand / rate), a) / unit_nodes, 9))
    return Prefill(unit.placement, unit_nodes, by_ratio, demand, rate, by_work)


def _co_located(model: str, gpu: str, work: Workload, a: Assumptions, p: Placement,
                speed: float | None) -> tuple[GPUMemory, int] | None:
    """``p``'s units serving aggregated, as (one GPU, units), or None where the rule refuses: the
    units' reserve holds a chunked-prefill forward beside the decode graphs (``calc.reserve``), and
    the fleet is served aggregated only when its decode units hold at most ``a.aggregate_max_gpus``
    GPUs and those GPUs could prefill the prompt tokens/s at ``a.prefill_mfu``. Decode steps read
    HBM while chunked prefill computes, so prefill rides in them (Sarathi-Serve's chunked prefill);
    the check counts the prefill FLOPs only, a first-order bound."""
    if a.aggregate_max_gpus < p.gpus:
        return None
    m = _requests(model, gpu, work.context, a, p, speed, "aggregated")
    if not m.valid:
        return None
    units = math.ceil(work.resident / (p.attention_groups * m.requests))
    gpus = units * p.gpus
    demand = prompt_demand(work, a, session_speed(model, gpu, a, work.context, m))
    if gpus > a.aggregate_max_gpus or demand > gpus * prefill_rate(model, gpu, work.context, a):
        return None
    return m, units


def _requests(model: str, gpu: str, context: int, a: Assumptions, p: Placement, speed: float | None,
              role: str = "decode") -> GPUMemory:
    """One GPU of ``p`` in ``role``, holding as many requests as fit (and, with ``speed``, as
    decode each at ``speed``)."""
    m = memory(model, gpu, p, context, a, role)
    if m.valid and speed is not None:      # fewer requests a GPU, each decoding at ``speed``
        m = replace(m, requests=fastest_batch(model, gpu, a, context, m, speed))
    return m


def staged(model: str, gpu: str, context: int, a: Assumptions, cands: tuple[Placement, ...],
           speed: float | None = None, role: str = "decode") -> tuple[Placement, ...]:
    """The candidates a plan chooses among. With a speed target, all of them: the target prices what
    stages cost. Without one, those without pipeline stages, or, where none of those holds the
    weights and a request on every GPU, those of the fewest stages that do. A stage holds its
    share of every request's cache, so under a plan that fills every GPU more stages hold more
    requests, each decoding slower (a GPU reads its weights once a micro-batch): with no target,
    the fewest nodes would always be bought with speed (for K3 at the headline workload, fewer
    nodes at about half the speed a session: ``fewest_with_stages``, chapter 11), so stages
    compete only where a target says what speed is worth. A prefill unit (``role``) takes stages on the
    same rule, having no speed target."""
    if speed is not None:
        return cands
    flat = tuple(p for p in cands if p.pp == 1)
    if any(memory(model, gpu, p, context, a, role).valid for p in flat):
        return flat
    fits = [p.pp for p in cands if p.pp > 1 and memory(model, gpu, p, context, a, role).valid]
    return tuple(p for p in cands if fits and p.pp == min(fits)) or flat


@cache
def _plan(model: str, gpu: str, a: Assumptions, work: Workload, placement: Placement | None,
          speed: float | None = None) -> Plan | None:
    best, n = None, a.gpus_per_node
    for p in staged(model, gpu, work.context, a, _candidates(model, a, placement), speed):
        m = _requests(model, gpu, work.context, a, p, speed)
        if not m.valid:
            continue
        together = _co_located(model, gpu, work, a, p, speed)
        if together is not None:
            m, units = together
            key = (units * p.gpus, _units(units * p.gpus, a), p.gpus, p.attention_tp, p.dcp)
            if best is None or key < best[0]:
                best = (key, m, units, None)
            continue
        unit = prefill_unit(model, gpu, work.context, a, p.dcp)
        if unit is None:         # a plan needs a prefill unit of its DCP size
            continue
        units = math.ceil(work.resident / (p.attention_groups * m.requests))
        d_nodes = _units(units * p.gpus, a)
        p_nodes = _by_ratio(d_nodes, _units(unit.placement.gpus, a), a)
        key = (units * p.gpus + p_nodes * n, d_nodes + p_nodes, p.gpus, p.attention_tp, p.dcp)
        if best is None or key < best[0]:
            best = (key, m, units, unit)
    if best is None:
        return None
    _, m, units, unit = best
    per_unit = m.placement.attention_groups * m.requests
    d_nodes = _units(units * m.placement.gpus, a)
    pace = session_speed(model, gpu, a, work.context, m)     # what the sessions decode at, at least ``speed``
    if unit is None:
        pre = Prefill(m.placement, 0, 0, prompt_demand(work, a, pace), prefill_rate(model, gpu, work.context, a), 0,
                      True)
    else:
        pre = _prefill(model, gpu, work, d_nodes, a, unit, pace)
    return Plan(model, gpu, a, work, m, per_unit, units, d_nodes, pre, speed)


def plan(model: str, gpu: str, a: Assumptions, work: Workload | None = None, *,
         placement: Placement | None = None, speed: float | None = None) -> Plan:
    """The valid plan with the fewest decode nodes for ``work`` (default: the article's workload),
    over every placement or only ``placement``; with ``speed``, the cheapest whose every session
    decodes at least ``speed`` tokens/s (each GPU holding only as many requests as allow it).
    Raises ``NoValidPlan`` when none is valid."""
    gpu = gpu_spec(gpu).id
    work = workload() if work is None else work
    if speed is not None:
        check_real("speed", speed, minimum=0, open_min=True)
    out = _plan(model, gpu, a, work, placement, speed)
    if out is None:
        if speed is not None and _plan(model, gpu, a, work, placement) is not None:
            raise ParameterError("speed", speed, f"a decode speed some placement of {model} on {gpu} reaches; "
                                 f"at most {max_speed(model, gpu, a, work):.1f} tokens/s a session")
        raise NoValidPlan(model, gpu, work, smallest_change(model, gpu, a, work, placement))
    return out


def plan_if_valid(model: str, gpu: str, a: Assumptions, work: Workload, placement: Placement,
                  speed: float | None = None) -> Plan | None:
    """The plan on ``placement`` (meeting ``speed`` if given), or None where it is not valid."""
    return _plan(model, gpu_spec(gpu).id, a, work, placement, speed)


def fewest_with_stages(model: str, gpu: str, a: Assumptions, work: Workload) -> Plan | None:
    """The plan with the fewest nodes among placements with pipeline stages, every GPU filled:
    what ``staged`` keeps out when no speed target stands; None where none is valid."""
    found = (plan_if_valid(model, gpu, a, work, p) for p in placements(model, a) if p.pp > 1)
    return min((q for q in found if q), key=lambda q: (q.nodes, q.placement.gpus), default=None)


def max_speed(model: str, gpu: str, a: Assumptions, work: Workload) -> float:
    """The fastest one request decodes alone on a GPU of any valid placement, tokens/s."""
    mems = [m for m in (memory(model, gpu, p, work.context, a) for p in placements(model, a)) if m.valid]
    return max(1 / gpu_step(model, gpu, a, work.context, m, 1).step for m in mems)


def plan_or_reason(model: str, gpu: str, a: Assumptions, work: Workload | None = None,
                   speed: float | None = None) -> Plan | str:
    """``plan``, or the sentence a table row shows where there is none, so a model the book cannot
    plan is a row that says why instead of a traceback: the smallest change that makes a plan valid,
    the fastest a session can decode when ``speed`` is out of reach, or the attention whose prefill
    FLOPs the planner does not count."""
    try:
        return plan(model, gpu, a, work, speed=speed)
    except NoValidPlan as e:
        return f"no valid plan; smallest change that makes one valid: {e.fix}"
    except ParameterError as e:
        if e.name == "speed" and speed is not None:
            fastest = max_speed(model, gpu_spec(gpu).id, a, workload() if work is None else work)
            return f"no plan reaches {speed:g} tokens/s a session; at most {fastest:.1f}"
        if e.name != "model":
            raise
        return f"not planned: prefill is sized by attention FLOPs, counted only for {e.allowed}"


def fits(model: str, gpu: str, a: Assumptions, work: Workload, placement: Placement | None = None) -> bool:
    return _plan(model, gpu_spec(gpu).id, a, work, placement) is not None


def smallest_change(model: str, gpu: str, a: Assumptions, work: Workload,
                    placement: Placement | None = None) -> str:
    """The first of these that makes a plan valid: another placement, FP8 non-expert weights, FP8
    cache, or more HBM (how much)."""
    if placement is not None and fits(model, gpu, a, work):
        return "another placement (" + plan(model, gpu, a, work).placement.name + " is valid)"
    if a.inputs == "public" and a.weights == "shipped" and fits(model, gpu, a.but(weights="fp8-non-expert"), work):
        return "FP8 non-expert weights (weights='fp8-non-expert')"
    if a.inputs == "public" and a.kv_dtype == "bf16" and fits(model, gpu, a.but(kv_dtype="fp8"), work):
        return "an FP8 cache (kv_dtype='fp8')"
    need = min(m.weights + m.reserve.total + m.overhead_bytes + m.request_bytes
               for m in (memory(model, gpu, p, work.context, a) for p in _candidates(model, a, placement)))
    return f"a GPU with at least {need / a.usable_fraction / 1e9:.1f} GB of HBM"


def ratio(model_a: str, model_b: str, gpu: str, a: Assumptions, work: Workload | None = None) -> float:
    """Nodes of ``model_a`` over nodes of ``model_b`` for the same workload and assumptions."""
    return plan(model_a, gpu, a, work).nodes / plan(model_b, gpu, a, work).nodes


def gain(model: str, old: str, new: str, a: Assumptions, work: Workload | None = None) -> float:
    """How many times fewer nodes ``new`` GPUs need than ``old`` ones, all else equal."""
    return plan(model, old, a, work).nodes / plan(model, new, a, work).nodes


def full_gpu_speed(model: str, gpu: str, a, concurrency: int, context: int):
    """Tokens/s one session decodes on a full decode GPU of the plan for every session (rho = 1),
    or why there is no plan: one token a step, and a step reads the weights its tokens touch and
    every cache the GPU holds (``calc.decode.plan_step``)."""
    p = plan_or_reason(model, gpu, a, Workload(concurrency, context, 1.0))
    return p if isinstance(p, str) else p.session_speed

"""Checks for part III's serving figures (``serving.yaml``): PD handoff, decode-unit concurrency, node
counts on H200 and B300, duty-cycle offload, decode step times, the 50 ms budget.

A request's cache is recomputed from the article's cache model, as the KV-cache checks do
(``specs.model(id, "article")``). Every later step starts from the figures the article carries into
it (``calc.request``'s "stated" basis: 207 MB of KDA state, 30.9 GB and 6.1 GB a 500K-token request,
``specs/deployment.yaml``'s EP sizes, overheads, P:D 1:2.5 and scenarios), rounded as the article
rounds (``rounding="article"``: counts to the nearest, rho times the upper bound), so an error is
reported where it is made (``calc.article_fleet``, which reproduces its arithmetic and is never a
plan). Public: the plan ``calc.fleet`` makes under the book's serving assumptions
(``specs.serving.assumptions("book")``): the public configs, the valid placement with the fewest
nodes, every GPU holding its weights plus whole requests.
"""

from __future__ import annotations

import math
from functools import cache

from ...calc import decode, disagg, fleet, offload, placement, prefill
from ...calc.article_fleet import COUNTS, ArticlePlan, article_gain, article_plan, steps, whole_units
from ...calc.request import request_bytes
from ...specs.deployment import deployment, hardware, scenarios, standard_scenario, workload
from ...specs.alternatives import alternative
from ...specs.serving import assumptions
from ..audit import check
from .architecture import stated
from .kv_cache import art, part, pub, request

K3, PRO = "kimi-k3", "deepseek-v4-pro"
TAG = {K3: "k3", PRO: "v4"}
CONTEXT = workload().average_context
RHO_TAG = {"rho25": "api", "rho50": "agent"}     # the columns of the Chinese correction tables
BOOK = assumptions("book")


def rho(scenario: str) -> float:
    """A scenario's duty cycle: 1,000 tokens at 200 tokens/s against its idle time."""
    w = workload()
    return offload.duty_cycle(offload.decode_seconds(w.output_tokens, w.decode_tokens_per_s),
                              scenarios()[scenario].w_idle)


def art_plan(model: str, gpu: str = "h200", scenario: str | None = None) -> ArticlePlan:
    return article_plan(model, gpu, rho(scenario) if scenario else 1.0)


@cache
def pub_plan(model: str, gpu: str = "h200", scenario: str | None = None, capacity: str | None = None) -> fleet.Plan:
    """The book's plan; ``capacity`` is an option of ``h200-capacity`` (specs/alternatives.yaml)."""
    a = BOOK if capacity is None else assumptions(
        "book", **alternative("h200-capacity").option(capacity).settings)
    return fleet.plan(model, gpu, a, fleet.workload(rho=rho(scenario) if scenario else 1.0))


AT_ARTICLE_EP = ("kv_per_gpu", "unit_kv", "requests_per_unit", "units")


def field(plan, name: str) -> float:
    """A figure of the article's arithmetic or of a book plan. The per-unit figures of a book plan are
    taken at the article's EP size with attention DP, so both columns describe the same unit: a GPU's
    cache room, their sum over the unit (room is never pooled for one request), the whole requests
    the unit holds and the units the sessions need (inf where none fits)."""
    if not isinstance(plan, fleet.Plan) or name not in AT_ARTICLE_EP:
        return getattr(plan, name)
    unit = placement.Placement(deployment(plan.model).ep)
    m = placement.memory(plan.model, plan.gpu, unit, plan.work.context, plan.assumptions)
    per_unit = unit.attention_groups * m.requests
    return {"kv_per_gpu": m.kv_room, "unit_kv": m.kv_room * unit.ep, "requests_per_unit": per_unit,
            "units": math.ceil(plan.work.resident / per_unit) if per_unit else math.inf}[name]


# The article sums a unit's free memory and divides by a request, as if one pool; under attention DP
# each GPU holds its weights and whole requests, so every count from there on rests on that method.
POOLED = ("pools the unit's free memory across GPUs, while each GPU must hold its share of every "
          "request it serves beside its weights (a whole request under attention DP, a stripe of it "
          "under decode context parallelism): the requests that fit are fewer")
POOLED_FIELDS = ("requests_per_unit", "units", "d_nodes", "p_nodes", "nodes", "gpus")


def planned(claim_id: str, model: str, gpu: str, name: str, scenario: str | None = None, **explained):
    """Register a figure of a deployment plan: the article's, and the public configs' (on an H200
    under each of its capacity figures). Counts that follow from the pooled unit fail on reasoning; a
    count's arithmetic is its need with earlier counts rounded as capacity needs (``steps``)."""
    if name in POOLED_FIELDS:
        explained["reasoning"] = "; ".join(filter(None, (POOLED, explained.get("reasoning"))))
    if gpu == "h200":
        explained["depends"] = ("h200-capacity", lambda o: field(pub_plan(model, gpu, scenario, o), name))
    article = lambda: field(art_plan(model, gpu, scenario), name)   # noqa: E731
    if name in COUNTS:
        r = rho(scenario) if scenario else 1.0
        article = lambda: steps(model, gpu, r)[name].need            # noqa: E731
        explained["carried"] = lambda: steps(model, gpu, r)[name].carried
    check(claim_id, public=lambda: field(pub_plan(model, gpu, scenario), name), **explained)(article)


def scaled_bound(model: str, gpu: str, scenario: str) -> str:
    """What is wrong with the article's decode nodes at a duty cycle, its upper bound times rho, or
    "" where its whole units hold every resident session."""
    r = rho(scenario)
    units, held, need = whole_units(model, gpu, r)
    resident = workload().concurrency * r
    nodes = deployment(model).ep // hardware().gpus_per_node
    whole = f"{resident:,.0f} resident sessions need {need} whole units, {need * nodes} decode nodes"
    if units != int(units):
        return (f"the upper bound times rho: {units * nodes:g} decode nodes are {units:g} units of {nodes} "
                f"nodes, not whole units; {whole}")
    if held < resident:
        return (f"the upper bound times rho: {units:g} whole units hold {units:g} x "
                f"{art_plan(model, gpu).requests_per_unit} = {held:,} sessions, short of {resident:,.0f}; "
                f"{whole}")
    return ""


def ratio(name: str, a: tuple, b: tuple, plan=art_plan) -> float:
    return field(plan(*a), name) / field(plan(*b), name)


def ttft_headroom(model: str, basis: str = "stated") -> float:
    """1 - time to first token / budget, the first token waiting at least for its prompt's prefill
    (the average context, at peak FP8 on the GPUs of one deployment unit)."""
    return 1 - prefill_seconds(model, basis) / workload().latency_budget


def prefill_seconds(model: str, basis: str = "stated") -> float:
    """The least time a 500K-token prompt's prefill takes: at the peak FP8 rate of the GPUs of one
    deployment unit (``calc.prefill.ttft_bound``)."""
    return prefill.ttft_bound(model, "h200", CONTEXT, deployment(model).ep, basis=basis)


def smaller_beyond(a: str, b: str, basis: str = "stated") -> float:
    """The context past which a request of ``a`` holds fewer cache bytes than one of ``b`` (inf if none):
    past any window both caches grow linearly, so two long contexts fix each line."""
    t0, t1 = 10**6, 2 * 10**6
    ra, rb = (request_bytes(m, t0, basis) for m in (a, b))
    slope_a, slope_b = ((request_bytes(m, t1, basis) - r) / (t1 - t0) for m, r in ((a, ra), (b, rb)))
    if slope_a >= slope_b:
        return math.inf if ra >= rb else 0.0
    return max(t0 - (ra - rb) / (slope_a - slope_b), 0.0)


# ---- Step 3: PD disaggregation ----

check("kda-state-transfer-time", public=lambda: disagg.handoff(K3, CONTEXT, "public").state_seconds)(
    lambda: disagg.handoff(K3, CONTEXT, "stated", "article").state_seconds)
check("k3-mla-kv-500k", public=lambda: part(pub(K3), "MLA latent", CONTEXT))(
    lambda: part(art(K3), "MLA latent", CONTEXT))
check("k3-request-500k", public=lambda: request(pub(K3), CONTEXT))(lambda: request(art(K3), CONTEXT))
check("k3-kda-share-500k", public=lambda: part(pub(K3), "KDA state", CONTEXT) / request(pub(K3), CONTEXT))(
    lambda: part(art(K3), "KDA state", CONTEXT) / request(art(K3), CONTEXT))
check("v4-request-500k", public=lambda: request(pub(PRO), CONTEXT), reason="unit slip",
      explain="the 12.2 KiB per token (printed as KB) is multiplied by 500K as if it were 12.2 kB")(
    lambda: request(art(PRO), CONTEXT))
check("v4-kv-transfer-time", public=lambda: disagg.handoff(PRO, CONTEXT, "public").kv_seconds)(
    lambda: disagg.handoff(PRO, CONTEXT, "stated", "article").kv_seconds)

# "multi-second to tens-of-seconds": true where a 500K-token prompt's prefill takes at least a second
check("prefill-takes-seconds", public=lambda: float(prefill_seconds(K3, "public") >= 1),
      basis="a 500K-token prompt's prefill at the peak FP8 rate of the GPUs of one deployment unit")(
    lambda: float(prefill_seconds(K3) >= 1))

# ---- Step 4 and B300: one decode unit, the nodes and GPUs for 10,000 sessions ----

for m in (K3, PRO):
    t = TAG[m]
    planned(f"{t}-unit-kv", m, "h200", "unit_kv")
    planned(f"{t}-requests-per-unit", m, "h200", "requests_per_unit")
    planned(f"{t}-d-units", m, "h200", "units")
    for name in ("d_nodes", "p_nodes"):
        planned(f"{t}-{name.replace('_', '-')}", m, "h200", name)
        planned(f"{t}-b300-{name.replace('_', '-')}", m, "b300", name)
    planned(f"{t}-nodes-h200", m, "h200", "nodes")
    planned(f"{t}-gpus-h200", m, "h200", "gpus")
    planned(f"{t}-b300-kv-per-gpu", m, "b300", "kv_per_gpu")
    planned(f"{t}-b300-unit-kv", m, "b300", "unit_kv")
    planned(f"{t}-b300-requests-per-unit", m, "b300", "requests_per_unit")
    planned(f"{t}-b300-d-units", m, "b300", "units")
    planned(f"{t}-nodes-b300", m, "b300", "nodes")
    planned(f"{t}-gpus-b300", m, "b300", "gpus")
    check(f"{t}-b300-improvement", public=lambda m=m: ratio("nodes", (m, "h200"), (m, "b300"), pub_plan),
      reasoning=POOLED)(
        lambda m=m: article_gain(m, "h200", "b300"))

check("node-ratio-h200", public=lambda: ratio("nodes", (K3,), (PRO,), pub_plan),
      reasoning=POOLED)(lambda: ratio("nodes", (K3,), (PRO,)))
check("node-ratio-b300", public=lambda: ratio("nodes", (K3, "b300"), (PRO, "b300"), pub_plan),
      reasoning=POOLED)(
    lambda: ratio("nodes", (K3, "b300"), (PRO, "b300")))
check("gpu-ratio-b300", public=lambda: ratio("gpus", (K3, "b300"), (PRO, "b300"), pub_plan),
      reasoning=POOLED)(
    lambda: ratio("gpus", (K3, "b300"), (PRO, "b300")))
check("v4-b300-kv-headroom-gain", public=lambda: ratio("kv_per_gpu", (PRO, "b300"), (PRO,), pub_plan))(
    lambda: ratio("kv_per_gpu", (PRO, "b300"), (PRO,)))

# ---- Step 5: HiCache offload ----

check("w-decode")(lambda: offload.decode_seconds(workload().output_tokens, workload().decode_tokens_per_s))
check("rho-agent")(lambda: rho("agent"))
check("rho-api")(lambda: rho("api"))
check("rho-batch")(lambda: rho("batch"))
check("rho-batch-floor", explain="its own batch scenario, 5 s of decoding in 45 s, is 11%, about 10%")(
    lambda: rho("batch"))
check("hicache-gpu-share")(lambda: 1 - stated("hicache-gpu-reduction"))

for m in (K3, PRO):
    for gpu in ("h200", "b300"):
        for col, scenario in RHO_TAG.items():
            prefix = f"{TAG[m]}-{gpu}"
            planned(f"{prefix}-d-nodes-{col}", m, gpu, "d_nodes", scenario,
                    reasoning=scaled_bound(m, gpu, scenario))
            planned(f"{prefix}-nodes-{col}", m, gpu, "nodes", scenario)
def workload_over_architecture(plan=art_plan) -> float:
    """K3's agent-to-batch node ratio over its node ratio to DSV4 at the standard scenario (H200)."""
    std = standard_scenario()
    return (ratio("nodes", (K3, "h200", "agent"), (K3, "h200", "batch"), plan)
            / ratio("nodes", (K3, "h200", std), (PRO, "h200", std), plan))


# Both ratios come from pooled units, but the book's plans, which do not pool, rank them the same way.
check("workload-over-architecture", public=lambda: float(workload_over_architecture(pub_plan) > 1))(
    lambda: float(workload_over_architecture() > 1))
check("workload-architecture-same-order", public=lambda: workload_over_architecture(pub_plan))(
    workload_over_architecture)
std = standard_scenario()
check("node-ratio-all-scenarios", public=lambda: ratio("nodes", (K3, "h200", std), (PRO, "h200", std), pub_plan),
      reason="arithmetic", explain="at rho = 25% its own node counts give 203/48 = 4.23; 4.27 holds for the upper "
                                   "bound and rho = 50%", reasoning=POOLED)(
    lambda: ratio("nodes", (K3, "h200", std), (PRO, "h200", std)))
check("workload-node-ratio", public=lambda: ratio("nodes", (K3, "h200", "agent"), (K3, "h200", "batch"), pub_plan),
      reasoning=POOLED)(
    lambda: ratio("nodes", (K3, "h200", "agent"), (K3, "h200", "batch")))

# ---- 50 ms TTFT: decode steps ----

for m in (K3, PRO):
    for gpu in ("h200", "b300"):
        cid = f"{TAG[m]}-decode-step-{gpu}"
        if m == K3 or gpu == "h200":
            check(cid, public=lambda m=m, g=gpu: decode.single_request_step(m, g, basis="public"))(
                lambda m=m, g=gpu: decode.single_request_step(m, g, basis="stated", rounding="article"))
    check(f"{TAG[m]}-ttft-headroom", public=lambda m=m: ttft_headroom(m, "public"), reason="wrong term",
          explain="the step time is a time per output token; a first token waits for its prompt's prefill, "
                  "which at 500K tokens takes over a second even at the peak FP8 rate of a whole unit")(
        lambda m=m: ttft_headroom(m))

# ---- decode speed against the article's own step times ----

def session_cap(model: str, basis: str = "stated") -> float:
    """Tokens a second one session can decode at most: one token a step, at the article's own printed
    step time (``stated``) or the book's bound for one request on the article's unit (``public``)."""
    if basis == "stated":
        return 1 / stated(f"{TAG[model]}-decode-step-h200")
    return 1 / decode.single_request_step(model, "h200", basis="public")


def faster_than_steps(*models: str) -> str:
    caps = " and ".join(f"{1e3 * stated(f'{TAG[m]}-decode-step-h200'):g} ms for {m}" for m in models)
    return (f"an assumed speed above what the article's own step times allow: one token a step at {caps} "
            f"caps a lone session at " + " and ".join(f"{session_cap(m):.0f}" for m in models) + " tokens/s")


check("decode-speed", public=lambda: max(session_cap(m, "public") for m in (K3, PRO)),
      reason="inconsistent assumption", fails="reasoning", explain=faster_than_steps(K3, PRO), fact=True,
      basis="the faster of the article's own step times (DSV4's)")(
    lambda: max(session_cap(m) for m in (K3, PRO)))
for end in ("low", "high"):
    check(f"k3-decode-speed-{end}", public=lambda: session_cap(K3, "public"), reason="inconsistent assumption",
          fails="reasoning", explain=faster_than_steps(K3), basis="K3's own step time", fact=True)(
        lambda: session_cap(K3))

# ---- Mitigation ----

for cid in ("kda-advantage-context", "assessment-lower-ceiling"):
    check(cid, public=lambda: smaller_beyond(K3, PRO, "public"), reason="inconsistent assumption",
          fails="reasoning",
          explain="K3's 24 MLA layers still grow with the context, faster per token than DSV4's whole cache, "
                  "so K3 holds more at every length")(lambda: smaller_beyond(K3, PRO))

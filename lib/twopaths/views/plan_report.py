"""What ``python -m twopaths.plan`` prints: one model on one GPU for a long-context workload.

The cache one request holds (bytes a token, the fixed state, one whole request), the weights (in
total, and on one GPU of each valid placement) and the fleet plan: the placement with the fewest
nodes, decode plus prefill. Every figure comes from the calculators the serving chapters use
(``calc.kv``, ``calc.placement``, ``calc.fleet``) under the assumptions it is given; what is
decided here is only how they read, and, for the fixed state, which dtype the config ships it in
beside the one priced.

``report(model, gpu, a, work)`` returns the figures as a dict (the ``--format json`` output);
``table(report)`` the same as text that fits ``WIDTH`` columns.
"""

from __future__ import annotations

import shlex
from dataclasses import asdict

from .. import specs
from ..specs import checkpoint, max_position
from ..calc import fleet, kv, weights
from ..calc.cost import fleet_cost, usd_per_million_tokens
from ..calc.decode import plan_step
from ..calc.placement import GPUMemory, memory, placements, untried_tp
from ..calc.request import model_weight_bytes
from ..errors import ParameterError
from ..specs.lookup import shipped_state_dtype
from ..specs.serving import Assumptions, reserve_models, weight_scenarios
from . import context_limit, launch

GB = 1e9
WIDTH = 100


def state_note(r: dict) -> str:
    """Which dtype a report priced the recurrent state in, against the one its config ships; the
    short convolution's tail stays in BF16 either way (``calc.kv.kda_state_bytes``), as engines keep it."""
    shipped, used = r["shipped_state_dtype"], r["state_dtype"]
    if r["fixed_bytes_per_request"] == 0 and shipped is None:
        return f"state {used}"
    if shipped is None:
        return f"recurrent state {used} (the config names no state dtype)"
    if shipped == used:
        return f"recurrent state {used}, as the config ships it (conv tail bf16)"
    return (f"recurrent state {used} (the config ships it in {shipped}, conv tail bf16: "
            f"{r['fixed_bytes_per_request_shipped'] / 1e6:,.1f} MB fixed state)")


def memory_dict(m: GPUMemory) -> dict:
    """One decode GPU of a placement: what it holds and how many requests fit beside it."""
    return {"placement": m.placement.name, "ep": m.placement.ep, "attention_tp": m.placement.attention_tp,
            "dcp": m.placement.dcp, "pp": m.placement.pp,
            "capacity_bytes": m.capacity, "usable_bytes": m.usable, "expert_bytes_per_gpu": m.expert_bytes,
            "other_weight_bytes_per_gpu": m.other_bytes, "weight_bytes_per_gpu": m.weights,
            "reserve_bytes_per_gpu": m.reserve.total, "reserve": asdict(m.reserve),
            "overhead_bytes_per_gpu": m.overhead_bytes, "request_bytes_per_gpu": m.request_bytes,
            # the requests whose cache this GPU holds a share of: its attention group's, and a unit
            # of several groups holds that many in each
            "requests_per_gpu": m.requests, "requests_per_attention_group": m.requests,
            "requests_per_unit": m.requests * m.placement.attention_groups,
            "used_bytes_per_gpu": m.used, "spare_bytes_per_gpu": m.spare}


def plan_dict(p: fleet.Plan, price: float | None = None) -> dict:
    """A plan: its decode GPU (``memory_dict``), its node counts, the engine that launches it,
    each able engine's command lines (``views.launch``) and, given a ``price`` a GPU-hour, its cost
    (``calc.cost.fleet_cost``: at the bandwidth bound, every GPU paid)."""
    engine = p.engine
    cost = fleet_cost(p, price) if price is not None else None
    return {**memory_dict(p.decode), "engine": engine.label if engine else None, "launch": launch.as_dict(p),
            "usd_per_hour": cost.usd_per_hour if cost else None,
            "usd_per_million_output_tokens": cost.usd_per_million_tokens if cost else None,
            # the same fleet with prefill sized by the prompt tokens it takes in, not the P:D ratio
            "usd_per_hour_prefill_by_work": p.gpus_by_work * cost.usd_per_gpu_hour if cost else None,
            "usd_per_million_output_tokens_prefill_by_work":
                usd_per_million_tokens(p.gpus_by_work, price, cost.tokens_per_s) if cost else None,
            "gpus_by_work": p.gpus_by_work,
            # what the prefill nodes at the P:D ratio take in, against what the sessions bring
            "prefill_tokens_per_s_at_ratio": p.p_nodes * p.assumptions.gpus_per_node * p.prefill.tokens_per_s_per_gpu,
            "session_tokens_per_s": p.session_speed, "step_s": plan_step(p).step,
            # the turns its resident sessions finish at that speed, and the prompt tokens they bring
            "turns_per_s": p.work.turns_per_s(p.session_speed), "prompt_tokens_per_s": p.prefill.tokens_per_s,
            "all_to_all_s": plan_step(p).all_to_all,
            "requests_per_unit": p.requests_per_unit, "units": p.units,
            "decode_nodes": p.d_nodes, "prefill_nodes": p.p_nodes, "prefill_nodes_by_work": p.prefill.by_work,
            "nodes": p.nodes, "gpus": p.gpus, "nodes_by_work": p.nodes_by_work, "aggregated": p.aggregated,
            "beyond_max_position": p.beyond_max_position}


def fleet_plans(model: str, gpu: str, a: Assumptions, work: fleet.Workload, valid: list,
                speed: float | None = None, price: float | None = None) -> dict:
    """The plan of each valid placement, fewest nodes first, and the best; or why there is none:
    no placement holds a request (``smallest_change``), or the planner cannot size this model
    (``unsized``: prefill by work needs attention FLOPs ``calc.attention_flops`` does not count)."""
    try:
        best = fleet.plan(model, gpu, a, work, speed=speed)
        plans = sorted((q for q in (fleet.plan_if_valid(model, gpu, a, work, p, speed) for p in valid) if q),
                       key=lambda p: (p.nodes, p.ep, p.placement.attention_tp))
    except fleet.NoValidPlan as e:
        return {"plans": [], "best": None, "smallest_change": e.fix, "unsized": None}
    except ParameterError as e:
        if e.name != "model":
            raise
        return {"plans": [], "best": None, "smallest_change": None,
                "unsized": "prefill nodes are sized by attention FLOPs, which calc.attention_flops counts "
                           f"only for {e.allowed}"}
    return {"plans": [plan_dict(p, price) for p in plans], "best": plan_dict(best, price), "smallest_change": None,
            "unsized": None}


def unpriced_groups(spec, a: Assumptions) -> list[str]:
    """The weight groups with no format the book prices, after the weight scenario's overrides."""
    chosen = {**weights.shipped_formats(spec), **a.formats()}
    return sorted(g for g, f in chosen.items() if f not in weights.WEIGHT_FORMATS)


def checkpoint_fields(spec, computed: float | None) -> dict:
    """A checkpoint folder's own weight bytes, and a warning where the config's (``computed``, None
    when unknown) differ from them."""
    found = spec.raw.get("checkpoint")
    return {"weight_bytes_checkpoint": found.bytes if found else None,
            "weight_bytes_checkpoint_source": found.source if found else None,
            "weights_warning": checkpoint.mismatch(computed, found) if found and computed is not None else None}


def report(model: str, gpu: str, a: Assumptions, work: fleet.Workload, speed: float | None = None,
           price: float | None = None) -> dict:
    """Every figure the command prints, from the calculators; ``price``: USD a GPU-hour."""
    spec, g = specs.model(model), specs.gpu(gpu)
    shipped = shipped_state_dtype(spec)
    cache = {
        "model": model, "model_name": spec.name, "gpu": g.id, "gpu_name": g.name,
        # what joins a node's GPUs: a PCIe-only part (an L40S) is no NVLink domain (specs.GPUSpec.scale_up)
        "scale_up": g.scale_up, "scale_up_bandwidth": g.nvlink_bandwidth,
        "workload": {"concurrency": work.concurrency, "context": work.context, "rho": work.rho,
                     "resident": work.resident, "output_tokens_per_turn": work.turn_tokens,
                     "prompt_tokens_per_turn": a.prompt_tokens_per_turn,
                     # set by the command when it chose the context: the default it was past
                     "context_default_past_limit": None},
        "usd_per_gpu_hour": price,
        # transformers' default for a config without num_key_value_heads: one K/V head per query head
        "mha_by_default": "num_key_value_heads" not in spec.config and any(
            g.kind in ("mha", "window") and "kv_heads" in g.dims for g in spec.attention),
        "assumptions": a.as_dict(),
        # the longest context the config declares: a longer one is priced, and flagged (specs.max_position)
        "max_position_embeddings": max_position.limit(spec),
        "beyond_max_position": max_position.beyond(spec, work.context),
        "kv_dtype": a.kv_dtype, "state_dtype": a.state_dtype, "shipped_state_dtype": shipped,
        "kv_bytes_per_token": kv.kv_bytes_per_token(spec, a.kv_dtype, a.state_dtype),
        "fixed_bytes_per_request": kv.fixed_bytes(spec, work.context, a.kv_dtype, a.state_dtype),
        "fixed_bytes_per_request_shipped": kv.fixed_bytes(spec, work.context, a.kv_dtype, shipped)
        if shipped else None,
        "request_bytes": kv.request_kv_bytes(spec, work.context, a.kv_dtype, a.state_dtype),
        "kv_breakdown": kv.kv_breakdown(spec, work.context, a.kv_dtype, a.state_dtype),
        "weights": weight_scenarios()[a.weights]["label"],
        "speed_target": speed,
    }
    try:
        total = model_weight_bytes(model, "public", a.formats())
    except ParameterError as e:
        if e.name != "quantization_config":
            raise
        # the cache does not depend on the weights' format: it is still priced, and nothing is placed
        return {**cache, "weight_bytes_total": None, "weights_unknown": e.got,
                **checkpoint_fields(spec, None), "placements_tried": 0, "attention_tp_not_tried": {},
                "placements": [], "plans": [], "best": None, "smallest_change": None,
                "unsized": f"the weights cannot be priced ({e.got}); under --formats {a.weights} "
                           f"{', '.join(unpriced_groups(spec, a))} still have no format"}
    # the placements the planner chooses among: pipeline stages only where memory demands them,
    # or under a speed target (calc.fleet.staged)
    tried = fleet.staged(model, g.id, work.context, a, placements(model, a), speed)
    valid = [m for m in (memory(model, g, p, work.context, a) for p in tried) if m.valid]
    return {
        **cache, "weight_bytes_total": total, "weights_unknown": None,
        # a checkpoint folder's own count (specs.checkpoint), shown beside the config's
        **checkpoint_fields(spec, total),
        "placements_tried": len(tried),
        "attention_tp_not_tried": {str(t): why for t, why in untried_tp(model, a).items()},
        "placements": [memory_dict(m) for m in valid],
        **fleet_plans(model, g.id, a, work, [m.placement for m in valid], speed, price),
    }


def _rate(x: float) -> str:
    """A rate as the reader compares it: whole above 100 a second, else three figures (12.8, not 13)."""
    return f"{x:,.0f}" if x >= 100 else f"{x:.3g}"


def _bytes(x: float) -> str:
    """Bytes a token: a whole count without decimals (8,192), a fractional one (FP8 scales) with one."""
    return f"{x:,.0f}" if x == int(x) else f"{x:,.1f}"


def _context_source(w: dict) -> str:
    """Where the context came from when the command chose it: the config's limit, past which the
    default would have been."""
    fallback = w.get("context_default_past_limit")
    return f" (the config's max_position_embeddings: the default, {fallback:,}, is past it)" if fallback else ""


def _step_terms(b: dict) -> str:
    """What a plan's decode step counts, naming only the terms it has: a dense model has no EP
    all-to-all, a plan without DCP no merge."""
    terms = ["HBM reads"] + (["DCP merge"] if b["dcp"] > 1 else [])
    if b["all_to_all_s"] > 0:
        terms.append(f"{1e3 * b['all_to_all_s']:.1f} ms of EP all-to-all")
    return terms[0] if len(terms) == 1 else ", ".join(terms[:-1]) + " and " + terms[-1]


def _row(cells, widths) -> str:
    return "  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths)))


SHOWN = 10   # placements the text lists unless asked for all: the plan is the first row


def table(r: dict, every: bool = False) -> str:
    """The report as text, every line at most ``WIDTH`` characters; the ``SHOWN`` placements with
    the fewest nodes, or ``every`` one."""
    w, a = r["workload"], r["assumptions"]
    lines = [f"{r['model_name']} on {r['gpu_name']}: {w['resident']:,} sessions resident on decode GPUs",
             f"{w['concurrency']:,} sessions x {w['context']:,} tokens{_context_source(w)}, rho {w['rho']:g} "
             f"(the share resident); turns of {w['prompt_tokens_per_turn']:,} prompt and "
             f"{w['output_tokens_per_turn']:,} output tokens",
             f"KV {r['kv_dtype']}, {state_note(r)}, weights {r['weights']}; "
             f"{100 * a['usable_fraction']:g}% of each GPU usable less a runtime reserve "
             f"({reserve_models()[a['reserve']]['label']}), {a['gpus_per_node']} GPUs a node"]
    if r["scale_up"] == "pcie":
        lines.append(f"NOTE: {r['gpu_name']} has no NVLink: a node's GPUs share PCIe, "
                     f"{r['scale_up_bandwidth'] / GB:g} GB/s a direction, which DCP's merge and the all-to-all "
                     "within a node are priced at; attention TP's all-reduces are left out of every bound, "
                     "which understates a PCIe node's decode step more than an NVLink node's")
    if r["mha_by_default"]:
        lines.append("NOTE: the config gives no num_key_value_heads, so each query head keeps its own K/V "
                     "(MHA, transformers' default)")
    if r["beyond_max_position"]:
        lines.append(f"FLAG: {w['context']:,} tokens is {context_limit.flag(r['model'], w['context'])}: "
                     "every figure below is computed there, but the model was not built for it")
    lines += ["",
              "cache of one request",
              f"  bytes a token (all layers)  {_bytes(r['kv_bytes_per_token']):>16} B",
              (f"  fixed state                 {r['fixed_bytes_per_request'] / 1e6:>16,.1f} MB"
               if r["fixed_bytes_per_request"] else "  fixed state: none, every layer's cache grows"),
              f"  at {w['context']:,} tokens".ljust(30) + f"{r['request_bytes'] / GB:>16,.2f} GB"]
    lines += [f"    {label}".ljust(30) + f"{b / GB:>16,.2f} GB" for label, b in r["kv_breakdown"].items()]
    lines += ["", f"weights ({r['weights']})".ljust(30) + (
        f"{r['weight_bytes_total'] / GB:>16,.1f} GB" if r["weights_unknown"] is None else
        f"{'unknown':>16}: {r['weights_unknown']}")]
    if r["weight_bytes_checkpoint"] is not None:
        lines.append("  in the checkpoint's files".ljust(30) + f"{r['weight_bytes_checkpoint'] / GB:>16,.1f} GB "
                     f"({r['weight_bytes_checkpoint_source']})")
    if r["weights_warning"]:
        lines.append(f"WARNING: {r['weights_warning']}")
    lines.append("")
    rows = r["plans"] or r["placements"]      # without a fleet, each placement's GPU alone
    if r["weights_unknown"] is None:          # else nothing was placed
        lines.append(f"valid placements: {len(rows)} of {r['placements_tried']} tried, fewest nodes first, "
                     "the smaller unit on a tie")
        lines.append("  (GB a GPU: weights and this GPU's share of one request; reqs a decode unit holds; "
                     "nodes decode + prefill at P:D)")
    for t, why in r["attention_tp_not_tried"].items():
        lines.append(f"  attention TP{t} not tried: it must be {why}")
    widths = [27, 7, 7, 6, 11, 5, 6, 7, 6]
    if rows:
        lines.append(_row(["placement", "weights", "request", "reqs", "used/usable", "units", "decode",
                           "prefill", "nodes"], widths))
    for p in rows if every else rows[:SHOWN]:
        fleet_cells = [f"{p[k]:,}" if k in p else "-" for k in ("units", "decode_nodes", "prefill_nodes", "nodes")]
        lines.append(_row([p["placement"], f"{p['weight_bytes_per_gpu'] / GB:.1f}",
                           f"{p['request_bytes_per_gpu'] / GB:.2f}", f"{p['requests_per_unit']:,}",
                           f"{p['used_bytes_per_gpu'] / GB:.1f}/{p['usable_bytes'] / GB:.1f}",
                           *fleet_cells], widths))
    if not every and len(rows) > SHOWN:
        lines.append(f"  ... and {len(rows) - SHOWN:,} more, each with at least as many nodes (--all lists them)")
    lines.append("")
    b = r["best"]
    if r["unsized"]:
        lines.append(f"no fleet plan: {r['unsized']}.")
    elif b is None:
        lines.append("no valid plan: no placement holds the weights and one request on every GPU.")
        lines.append(f"smallest change that makes one valid: {r['smallest_change']}")
        lines.append("(on the command line --formats sets weights, --kv-dtype sets kv_dtype)")
    else:
        lines.append(f"plan: {b['placement']}, {b['nodes']:,} nodes ({b['gpus']:,} GPUs): "
                     f"{b['decode_nodes']:,} decode + {b['prefill_nodes']:,} prefill"
                     + (" [FLAG]" if b["beyond_max_position"] else ""))   # the FLAG line above says why
        target = f", planned for at least {r['speed_target']:g}" if r["speed_target"] else ""
        lines.append(f"  each session decodes at most {b['session_tokens_per_s']:.1f} tokens/s{target} (a bound: "
                     f"{_step_terms(b)} in a {1e3 * b['step_s']:.1f} ms step)")
        lines.append(f"  its prefill nodes are the article's P:D ratio; at that speed its sessions finish "
                     f"{_rate(b['turns_per_s'])} turns/s ({_rate(b['prompt_tokens_per_s'])} prompt tokens/s), "
                     f"which take {b['prefill_nodes_by_work']:,} prefill "
                     f"node{'' if b['prefill_nodes_by_work'] == 1 else 's'} "
                     f"({b['nodes_by_work']:,} in all)")
        if not b["aggregated"] and b["prefill_tokens_per_s_at_ratio"] < b["prompt_tokens_per_s"]:
            share = b["prefill_tokens_per_s_at_ratio"] / b["prompt_tokens_per_s"]
            lines.append(f"  PREFILL-BOUND at the ratio: its {b['prefill_nodes']:,} prefill nodes take in "
                         f"{share:.0%} of those prompt tokens, so sessions would wait or decode slower; "
                         f"the {b['nodes_by_work']:,} nodes sized by work carry the load")
        if r["usd_per_gpu_hour"] is not None:
            lines += cost_lines(r, every)
        for launch in b["launch"].values():
            n = launch["decode_nodes_per_unit"]
            lines.append(f"{launch['engine']}, on each decode node:" if n == 1 else
                         f"{launch['engine']}, on the first node of each decode unit of {n} nodes "
                         "(the others take their own rank):")
            lines += _command_lines(launch["decode"])
    return "\n".join(line if line.endswith("\\") or line.startswith("  ") and "--" in line else _wrap(line)
                     for line in lines)


def cost_lines(r: dict, every: bool = False) -> list[str]:
    """Each plan's cost at ``usd_per_gpu_hour``, as chapter 13 prices a fleet (``calc.cost``): with
    prefill nodes at the article's P:D ratio, as the plan counts them, and sized by work; the
    ``SHOWN`` plans with the fewest nodes, or ``every`` one."""
    out = [f"cost at ${r['usd_per_gpu_hour']:g} a GPU-hour (each GPU a unit or prefill node uses is paid, not a "
           "node's idle ones; output tokens at the bandwidth bound)",
           "  prefill nodes at the P:D ratio, as planned, then sized by the prompt tokens (work); "
           "$/M out: a million output tokens"]
    widths = [27, 8, 9, 9, 9, 9, 9]
    out.append("  " + _row(["placement", "P:D GPUs", "$ an hour", "$/M out", "work GPUs", "$ an hour",
                            "$/M out"], widths))
    for p in r["plans"] if every else r["plans"][:SHOWN]:
        out.append("  " + _row([p["placement"], f"{p['gpus']:,}", f"{p['usd_per_hour']:,.0f}",
                                f"{p['usd_per_million_output_tokens']:,.2f}", f"{p['gpus_by_work']:,}",
                                f"{p['usd_per_hour_prefill_by_work']:,.0f}",
                                f"{p['usd_per_million_output_tokens_prefill_by_work']:,.2f}"], widths))
    return out


def _command_lines(command: str) -> list[str]:
    """A command line within ``WIDTH`` columns, each line but the last ending in a backslash, so
    it pastes into a shell as it is."""
    words, lines = shlex.split(command), []
    for w in words:
        w = shlex.quote(w)
        if lines and len(lines[-1]) + len(w) < WIDTH - 2:
            lines[-1] += " " + w
        else:
            lines.append("  " + w)
    return [line + " \\" for line in lines[:-1]] + lines[-1:]


def _wrap(line: str, width: int = WIDTH) -> str:
    """Long free-text lines (a smallest-change sentence) broken at spaces within ``WIDTH``; the
    lines after the first are indented two spaces, so they break two sooner."""
    if len(line) <= width:
        return line
    cut = line.rfind(" ", 0, width)
    return line[:cut] + "\n  " + _wrap(line[cut + 1:], WIDTH - 2)

"""``python -m twopaths.plan``: what one model needs on one GPU for a long-context workload.

It prints the cache one request holds (bytes a token, the fixed state, one whole request), the
weights (in total, and on one GPU of each valid placement) and the fleet plan: the placement with
the fewest nodes, decode plus prefill. Every figure comes from the calculators the serving
chapters use (``calc.kv``, ``calc.placement``, ``calc.fleet``) under the book's serving assumptions
(``specs.serving``), changed only by the flags; the two things decided here are which cache groups
have stopped growing (the fixed state) and, for the state, which dtype the config ships it in
beside the one priced (``--state-dtype``; the book's BF16 by default). MODEL is a registry id or a config.json, which
``specs.add_model`` reads through ``specs.from_config`` and registers under its file's name.

``report(model, gpu, a, work)`` returns the figures as a dict (the ``--format json`` output);
``table(report)`` the same as text that fits 100 columns; ``main(argv)`` is the command.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import re
import sys
from pathlib import Path

from . import specs
from .calc import fleet, kv
from .calc.placement import GPUMemory, memory, placements
from .calc.request import model_weight_bytes
from .errors import ParameterError, check_int, check_real
from .specs import GPU_FIELDS, add_gpu  # noqa: F401  (the command's --gpu-spec)
from .specs.serving import KV_DTYPES, STATE_DTYPES, Assumptions, assumptions, weight_scenarios

EXAMPLES = """\
examples:
  python -m twopaths.plan kimi-k3 --gpu h200
  python -m twopaths.plan deepseek-v4-pro --gpu b300 --context 1M --concurrency 10000 --rho 0.25
  python -m twopaths.plan kimi-k3 --gpu h200 --kv-dtype fp8 --formats fp8-non-expert
  python -m twopaths.plan deepseek-v4-flash --gpu gb200 --gpus-per-node 4 --format json
  python -m twopaths.plan path/to/config.json --gpu mi355x
  python -m twopaths.plan Qwen--Qwen3.5-397B-A17B --gpu gb300 --gpus-per-node 4
  python -m twopaths.plan Qwen--Qwen3.5-397B-A17B --state-dtype shipped
  python -m twopaths.plan kimi-k3 --gpu-spec my-gpus.json --gpu my-gpu

Defaults are the article's workload (10,000 sessions of 500K tokens) at the duty cycle of its
standard scenario, and the book's serving assumptions (specs/serving.yaml), among them a BF16
linear-attention state, as the article sizes K3's; the output says which state dtype the config
ships (Qwen3.5's FP32), and --state-dtype shipped prices that one. Counts take
1000000, 1_000_000, 1e6, 500K or 1M.

exit status: 0 a plan; 1 no plan: no placement holds a request (the output names the smallest
change that makes one valid) or the planner cannot size this model's prefill (the output says
why, and still shows each placement's GPU); 2 bad input.
"""

# Which flag a library ParameterError's parameter name comes from, so the message names the flag.
FLAGS = {"model": "MODEL", "config": "MODEL", "gpu": "--gpu", "context": "--context", "concurrency": "--concurrency",
         "rho": "--rho", "kv_dtype": "--kv-dtype", "state_dtype": "--state-dtype", "weights": "--formats",
         "gpus_per_node": "--gpus-per-node", "max_attention_tp": "--gpus-per-node"}
SUFFIXES = {"k": 10**3, "m": 10**6, "g": 10**9}
GB = 1e9
WIDTH = 100


def count(text: str) -> int:
    """A whole count from the command line: 1000000, 1_000_000, 1,000,000, 1e6, 500K or 1M."""
    t = text.strip().replace("_", "").replace(",", "")
    m = re.fullmatch(r"(\d+(?:\.\d+)?)([kKmMgG]?)|(\d+(?:\.\d+)?[eE]\d+)", t)
    if not m:
        raise argparse.ArgumentTypeError(f"got {text!r}; allowed: a whole number such as 500000, 500K or 1e6")
    value = float(m.group(3)) if m.group(3) else float(m.group(1)) * SUFFIXES.get(m.group(2).lower(), 1)
    if value != int(value):
        raise argparse.ArgumentTypeError(f"got {text!r}; allowed: a whole number of tokens or sessions")
    return int(value)


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m twopaths.plan", epilog=EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter,
        description="KV bytes, weights and the fleet plan for one model on one GPU.")
    p.add_argument("model", metavar="MODEL", help="a registry model id (" + ", ".join(
        specs.model_ids(include_reference=True)) + "), a path to a config.json, or a name in "
                   "AIConfigurator's corpus (Qwen--Qwen3-235B-A22B)")
    p.add_argument("--gpu", default="h200", help="accelerator: one of " + ", ".join(specs.gpu_ids())
                   + " (specs/gpus.yaml; default h200) or one --gpu-spec adds")
    p.add_argument("--gpu-spec", metavar="FILE.json",
                   help='accelerators the registry lacks, as a JSON object: {"my-gpu": {"hbm_bytes": 192e9, '
                        '"hbm_bandwidth": 8e12, "bf16_flops": 2.5e15, "fp8_flops": 5e15, "nvlink_bandwidth": '
                        '900e9}} (bytes, bytes/s, dense FLOP/s, link bytes/s a direction; optional name, '
                        'source, device_bytes)')
    p.add_argument("--context", type=count, default=None, help="tokens a session holds (default 500K)")
    p.add_argument("--concurrency", type=count, default=None, help="sessions open at once (default 10,000)")
    p.add_argument("--rho", type=float, default=None,
                   help="share of sessions decoding at once, in (0, 1] (default: the article's standard scenario)")
    p.add_argument("--kv-dtype", choices=KV_DTYPES, default=None,
                   help="cache entry format (default bf16; fp8 is each model's shipped FP8 layout)")
    p.add_argument("--state-dtype", choices=(*STATE_DTYPES, "shipped"), default=None,
                   help="fixed (linear-attention) state format (default bf16, the book's assumption; "
                        "shipped: the dtype the config names, the book's where it names none)")
    p.add_argument("--formats", choices=list(weight_scenarios()), default=None,
                   help="weight formats: as shipped, FP8 non-expert weights, or every linear layer in FP8")
    p.add_argument("--gpus-per-node", type=int, default=None,
                   help="GPUs a node holds (default 8; 4 for a GB200 or GB300 compute tray); "
                        "attention TP stays within a node")
    p.add_argument("--format", choices=("table", "json"), default="table", help="output (default table)")
    return p


def flag_message(err: ParameterError) -> str:
    """A library ParameterError as one line that names the flag it came from."""
    flag = f"--gpu-spec {err.name}" if err.name.startswith("gpu_specs") else FLAGS.get(err.name, err.name)
    return f"{flag}: got {err.got!r}; allowed: {err.allowed}"


def add_gpu_file(path: str) -> list[str]:
    """``add_gpu`` for each accelerator of a JSON file ``{id: {field: value}}``; their ids."""
    try:
        data = json.loads(Path(path).read_text())
    except OSError as e:
        raise ParameterError("gpu_specs", path, f"a readable JSON file ({e.strerror})") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise ParameterError("gpu_specs", path, f"a file holding JSON ({e})") from None
    if not isinstance(data, dict) or not data:
        raise ParameterError("gpu_specs", path, 'a JSON object of GPU ids to their figures, {"my-gpu": {...}}')
    return [add_gpu(gid, fields) for gid, fields in data.items()]


def corpus_path(name: str) -> Path | None:
    """The file of ``name`` (``Org--Model``) in AIConfigurator's bundled corpus, if it is installed
    and holds one (found without importing the package)."""
    spec = importlib.util.find_spec("aiconfigurator_core")
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(list(spec.submodule_search_locations)[0]) / "model_configs" / f"{name}_config.json"
    return path if path.is_file() else None


def resolve_model(arg: str, name: str = "MODEL") -> str:
    """The id a model argument names: a registry id, or a config (a path ending .json or a name in
    AIConfigurator's corpus) added to the registry for this process by ``specs.add_model``. Anything else, or a bad config file (missing, not JSON, not a
    config, a key its family lacks), is a ``ParameterError`` named ``name``."""
    ids = specs.model_ids(include_reference=True)
    if not isinstance(arg, (str, Path)):
        raise ParameterError(name, arg, "a registry id, a path to a config.json or a corpus name (text)")
    if arg in ids:
        return arg
    path = arg if Path(arg).suffix == ".json" else corpus_path(arg)
    if path is None:
        raise ParameterError(name, arg, "a registry id (" + ", ".join(ids) + "), a path to a config.json, "
                             "or a name in AIConfigurator's corpus such as 'Qwen--Qwen3-235B-A22B'")
    try:
        return specs.add_model(str(Path(path).resolve()))   # resolved: ./config.json is named by its folder
    except ParameterError as e:
        if e.name == "config":                # the file itself: missing, unreadable, not JSON
            raise ParameterError(name, arg, e.allowed) from None
        raise ParameterError(name, arg, f"a config the book reads ({e})") from None


def serving(args, model: str | None = None) -> Assumptions:
    """The book's assumptions with the flags' changes (each checked by ``Assumptions``);
    ``--state-dtype shipped`` takes ``model``'s (``shipped_state_dtype``)."""
    a = assumptions("book")
    changes = {}
    if args.kv_dtype:
        changes["kv_dtype"] = args.kv_dtype
    if args.state_dtype:
        changes["state_dtype"] = (shipped_state_dtype(model) or a.state_dtype if args.state_dtype == "shipped"
                                  else args.state_dtype)
    if args.formats:
        changes["weights"] = args.formats
    if args.gpus_per_node is not None:
        n = check_int("gpus_per_node", args.gpus_per_node, minimum=1)
        changes.update(gpus_per_node=n, max_attention_tp=min(a.max_attention_tp, n))
    return a.but(**changes)


def default_rho() -> float:
    """The duty cycle of the article's standard scenario (``plans.scenario_rho``; imported late:
    it brings the chapter helpers, which a run given ``--rho`` does not need)."""
    from .views.plans import scenario_rho
    from .specs.deployment import standard_scenario
    return scenario_rho(standard_scenario())


def shipped_state_dtype(model) -> str | None:
    """The dtype ``model``'s config keeps its fixed state in (``mamba_ssm_dtype``); None where the
    config names none or the model keeps no linear-attention state."""
    spec = specs.model(model) if isinstance(model, str) else model
    has_state = any(g.kind == "kda" for g in spec.attention)
    return spec.raw.get("shipped_state_dtype") if has_state else None


def state_note(r: dict) -> str:
    """Which state dtype a report priced, against the one its config ships."""
    shipped, used = r["shipped_state_dtype"], r["state_dtype"]
    if r["fixed_bytes_per_request"] == 0 and shipped is None:
        return f"state {used}"
    if shipped is None:
        return f"state {used} (the config names no state dtype)"
    if shipped == used:
        return f"state {used}, as the config ships it"
    return (f"state {used} (the config ships {shipped}: "
            f"{r['fixed_bytes_per_request_shipped'] / 1e6:,.1f} MB fixed state)")


def fixed_bytes(spec, context: int, a: Assumptions) -> float:
    """Bytes of one request's cache that no longer grow past ``context`` tokens: recurrent state
    and full sliding windows (each group compared at ``context`` and at the longest context)."""
    now = kv.group_bytes(spec, context, a.kv_dtype, a.state_dtype)
    last = kv.group_bytes(spec, kv.MAX_TOKENS, a.kv_dtype, a.state_dtype)
    return float(sum(b for (_, b), (_, b_last) in zip(now, last) if b == b_last))


def memory_dict(m: GPUMemory) -> dict:
    """One decode GPU of a placement: what it holds and how many requests fit beside it."""
    return {"placement": m.placement.name, "ep": m.placement.ep, "attention_tp": m.placement.attention_tp,
            "capacity_bytes": m.capacity, "usable_bytes": m.usable, "expert_bytes_per_gpu": m.expert_bytes,
            "other_weight_bytes_per_gpu": m.other_bytes, "weight_bytes_per_gpu": m.weights,
            "overhead_bytes_per_gpu": m.overhead_bytes, "request_bytes_per_gpu": m.request_bytes,
            "requests_per_gpu": m.requests, "used_bytes_per_gpu": m.used, "spare_bytes_per_gpu": m.spare}


def plan_dict(p: fleet.Plan) -> dict:
    """A plan: its decode GPU (``memory_dict``) and its node counts."""
    return {**memory_dict(p.decode), "requests_per_unit": p.requests_per_unit, "units": p.units,
            "decode_nodes": p.d_nodes, "prefill_nodes": p.p_nodes, "prefill_nodes_by_work": p.prefill.by_work,
            "nodes": p.nodes, "gpus": p.gpus, "nodes_by_work": p.nodes_by_work}


def fleet_plans(model: str, gpu: str, a: Assumptions, work: fleet.Workload, valid: list) -> dict:
    """The plan of each valid placement, fewest nodes first, and the best; or why there is none:
    no placement holds a request (``smallest_change``), or the planner cannot size this model
    (``unsized``: prefill by work needs attention FLOPs ``calc.attention_flops`` does not count)."""
    try:
        plans = sorted((fleet.plan(model, gpu, a, work, placement=p) for p in valid),
                       key=lambda p: (p.nodes, p.ep, p.placement.attention_tp))
        best = fleet.plan(model, gpu, a, work)
    except fleet.NoValidPlan as e:
        return {"plans": [], "best": None, "smallest_change": e.fix, "unsized": None}
    except ParameterError as e:
        if e.name != "model":
            raise
        return {"plans": [], "best": None, "smallest_change": None,
                "unsized": "prefill nodes are sized by attention FLOPs, which calc.attention_flops counts "
                           f"only for {e.allowed}"}
    return {"plans": [plan_dict(p) for p in plans], "best": plan_dict(best), "smallest_change": None,
            "unsized": None}


def report(model: str, gpu: str, a: Assumptions, work: fleet.Workload) -> dict:
    """Every figure the command prints, from the calculators."""
    spec, g = specs.model(model), specs.gpu(gpu)
    shipped = shipped_state_dtype(spec)
    tried = placements(model, a)
    valid = [m for m in (memory(model, g, p, work.context, a) for p in tried) if m.valid]
    return {
        "model": model, "model_name": spec.name, "gpu": g.id, "gpu_name": g.name,
        "workload": {"concurrency": work.concurrency, "context": work.context, "rho": work.rho,
                     "resident": work.resident},
        "assumptions": a.as_dict(),
        # the longest context the config declares: a longer one is priced, but the model was not built for it
        "max_position_embeddings": spec.config.get("max_position_embeddings"),
        "kv_dtype": a.kv_dtype, "state_dtype": a.state_dtype, "shipped_state_dtype": shipped,
        "kv_bytes_per_token": kv.kv_bytes_per_token(spec, a.kv_dtype, a.state_dtype),
        "fixed_bytes_per_request": fixed_bytes(spec, work.context, a),
        "fixed_bytes_per_request_shipped": fixed_bytes(spec, work.context, a.but(state_dtype=shipped))
        if shipped else None,
        "request_bytes": kv.request_kv_bytes(spec, work.context, a.kv_dtype, a.state_dtype),
        "kv_breakdown": kv.kv_breakdown(spec, work.context, a.kv_dtype, a.state_dtype),
        "weight_bytes_total": model_weight_bytes(model, "public", a.formats()),
        "weights": weight_scenarios()[a.weights]["label"],
        "placements_tried": len(tried),
        "placements": [memory_dict(m) for m in valid],
        **fleet_plans(model, g.id, a, work, [m.placement for m in valid]),
    }


def _row(cells, widths) -> str:
    return "  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths)))


def table(r: dict) -> str:
    """The report as text, every line at most ``WIDTH`` characters."""
    w, a = r["workload"], r["assumptions"]
    lines = [f"{r['model_name']} on {r['gpu_name']}",
             f"{w['concurrency']:,} sessions x {w['context']:,} tokens, rho {w['rho']:g}: "
             f"{w['resident']:,} resident",
             f"KV {r['kv_dtype']}, {state_note(r)}, weights {r['weights']}; "
             f"{100 * a['usable_fraction']:g}% of each GPU usable, {a['gpus_per_node']} GPUs a node"]
    longest = r["max_position_embeddings"]
    if longest and w["context"] > longest:
        lines += [f"note: {w['context']:,} tokens is beyond the config's max_position_embeddings "
                  f"({longest:,});", "  the figures price the cache there, not what the model can do"]
    lines += ["",
              "cache of one request",
              f"  bytes a token (all layers)  {r['kv_bytes_per_token']:>16,.1f} B",
              f"  fixed state                 {r['fixed_bytes_per_request'] / 1e6:>16,.1f} MB",
              f"  at {w['context']:,} tokens".ljust(30) + f"{r['request_bytes'] / GB:>16,.2f} GB"]
    lines += [f"    {label}".ljust(30) + f"{b / GB:>16,.2f} GB" for label, b in r["kv_breakdown"].items()]
    lines += ["", f"weights ({r['weights']})".ljust(30) + f"{r['weight_bytes_total'] / GB:>16,.1f} GB", ""]
    rows = r["plans"] or r["placements"]      # without a fleet, each placement's GPU alone
    lines.append(f"valid placements: {len(rows)} of {r['placements_tried']} tried "
                 "(GB a GPU; nodes decode + prefill at P:D)")
    widths = [21, 8, 8, 5, 13, 6, 7, 7, 6]
    if rows:
        lines.append(_row(["placement", "weights", "request", "reqs", "used/usable", "units", "decode",
                           "prefill", "nodes"], widths))
    for p in rows:
        fleet_cells = [f"{p[k]:,}" if k in p else "-" for k in ("units", "decode_nodes", "prefill_nodes", "nodes")]
        lines.append(_row([p["placement"], f"{p['weight_bytes_per_gpu'] / GB:.1f}",
                           f"{p['request_bytes_per_gpu'] / GB:.2f}", f"{p['requests_per_gpu']:,}",
                           f"{p['used_bytes_per_gpu'] / GB:.1f}/{p['usable_bytes'] / GB:.1f}",
                           *fleet_cells], widths))
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
                     f"{b['decode_nodes']:,} decode + {b['prefill_nodes']:,} prefill")
        lines.append(f"  prefill sized by work instead of P:D: {b['prefill_nodes_by_work']:,} prefill nodes, "
                     f"{b['nodes_by_work']:,} in all")
    return "\n".join(_wrap(line) for line in lines)


def _wrap(line: str) -> str:
    """Long free-text lines (a smallest-change sentence) broken at spaces within ``WIDTH``."""
    if len(line) <= WIDTH:
        return line
    cut = line.rfind(" ", 0, WIDTH)
    return line[:cut] + "\n  " + _wrap(line[cut + 1:])


def main(argv: list[str] | None = None) -> int:
    cli = parser()
    args = cli.parse_args(argv)
    try:     # every check before the long work; argparse's error() prints usage and exits 2
        if args.gpu_spec:
            add_gpu_file(args.gpu_spec)
        gpu = specs.gpu(args.gpu.lower() if args.gpu.lower() in specs.gpu_ids() else args.gpu).id
        model = resolve_model(args.model)
        a = serving(args, model)
        rho = default_rho() if args.rho is None else args.rho
        work = fleet.workload(args.concurrency, args.context, rho)
        check_int("context", work.context, minimum=1, maximum=kv.MAX_TOKENS)
        if not placements(model, a):
            cli.error(f"--gpus-per-node: got {a.gpus_per_node}; allowed: a node size whose multiples up "
                      f"to {a.max_ep} GPUs spread {model}'s expert slots evenly")
        r = report(model, gpu, a, work)
    except ParameterError as e:
        cli.error(flag_message(e))
    print(json.dumps(r, indent=1) if args.format == "json" else table(r))
    return 0 if r["best"] is not None else 1


if __name__ == "__main__":
    sys.exit(main())

"""``python -m twopaths.plan``: what one model needs on one GPU for a long-context workload.

The command's front door: its flags, their checks and its output. The figures are
``views.plan_report``'s (the cache of one request, the weights, each valid placement and the
fleet plan, from the calculators the serving chapters use), under the book's serving assumptions
(``specs.serving``) changed only by the flags. MODEL is a registry id, a config.json or a name in
AIConfigurator's corpus (``specs.lookup.resolve_model``).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import textwrap

from . import specs
from .calc import fleet, kv
from .calc.placement import no_unit_reason, placements
from .errors import ParameterError, check_int, check_real
from .specs import max_position
from .specs.lookup import add_gpu_file, resolve_model, shipped_state_dtype
from .specs.serving import KV_DTYPES, STATE_DTYPES, Assumptions, assumptions, weight_scenarios
from .views.plan_report import SHOWN, report, table

EXAMPLES = """\
examples:
  python -m twopaths.plan kimi-k3 --gpu h200
  python -m twopaths.plan deepseek-v4-pro --gpu b300 --context 1M --concurrency 10000 --rho 0.25
  python -m twopaths.plan kimi-k3 --gpu h200 --kv-dtype fp8 --formats fp8-non-expert
  python -m twopaths.plan deepseek-v4-pro --gpu h200 --rho 0.25 --speed 100
  python -m twopaths.plan Qwen--Qwen3-32B --gpu h100 --context 128Ki --concurrency 1000 --price 2.5
  python -m twopaths.plan kimi-k3 --prompt-tokens 8K --output-tokens 500
  python -m twopaths.plan deepseek-v4-flash --gpu gb200 --gpus-per-node 4 --format json
  python -m twopaths.plan path/to/config.json --gpu mi355x
  python -m twopaths.plan path/to/checkpoint-folder --gpu h200
  python -m twopaths.plan Qwen--Qwen3.5-397B-A17B --gpu gb300 --gpus-per-node 4
  python -m twopaths.plan Qwen--Qwen3.5-397B-A17B --state-dtype shipped
  python -m twopaths.plan kimi-k3 --gpu-spec my-gpus.json --gpu my-gpu

Defaults are the article's workload (10,000 sessions of 500K tokens), every session resident on
a decode GPU as an engine's max_num_seqs counts them (--rho 0.25 is the article's standard
scenario, where a quarter are), and the book's serving assumptions (specs/serving.yaml), among
them a BF16 linear-attention state, as the article sizes K3's; the output says which state dtype
the config ships (Qwen3.5's FP32), and --state-dtype shipped prices that one. Each turn brings
2,000 new prompt tokens and decodes 1,000 output tokens at the plan's own speed (one token a
step on a full decode GPU), so prefill sized by work takes in the turns the plan decodes.

Counts take 1000000, 1_000_000, 1e6, 500K or 1M: K, M and G are powers of ten (32K = 32,000),
Ki, Mi and Gi powers of two (32Ki = 32,768, a context length as engines often give it).

exit status: 0 a plan; 1 no plan: no placement holds a request (the output names the smallest
change that makes one valid) or the planner cannot size this model's prefill (the output says
why, and still shows each placement's GPU); 2 bad input.
"""

# Which flag a library ParameterError's parameter name comes from, so the message names the flag.
FLAGS = {"model": "MODEL", "config": "MODEL", "gpu": "--gpu", "context": "--context", "concurrency": "--concurrency",
         "rho": "--rho", "kv_dtype": "--kv-dtype", "state_dtype": "--state-dtype", "weights": "--formats",
         "gpus_per_node": "--gpus-per-node", "max_attention_tp": "--gpus-per-node", "max_dcp": "--max-dcp",
         "speed": "--speed", "prompt_tokens_per_turn": "--prompt-tokens", "output_tokens": "--output-tokens",
         "usd_per_gpu_hour": "--price"}
SUFFIXES = {"k": 10**3, "m": 10**6, "g": 10**9, "ki": 2**10, "mi": 2**20, "gi": 2**30}


def count(text: str) -> int:
    """A whole count from the command line: 1000000, 1_000_000, 1,000,000, 1e6, 500K, 1M (powers of
    ten) or 32Ki, 1Mi (powers of two)."""
    t = text.strip().replace("_", "").replace(",", "")
    m = re.fullmatch(r"(\d+(?:\.\d+)?)((?:[kKmMgG]i?)?)|(\d+(?:\.\d+)?[eE]\d+)", t)
    if not m:
        raise argparse.ArgumentTypeError(f"got {text!r}; allowed: a whole number such as 500000, 500K, "
                                         "32Ki or 1e6")
    value = float(m.group(3)) if m.group(3) else float(m.group(1)) * SUFFIXES.get(m.group(2).lower(), 1)
    if value != int(value):
        raise argparse.ArgumentTypeError(f"got {text!r}; allowed: a whole number of tokens or sessions")
    return int(value)


def families() -> str:
    """The config families MODEL may be, each with its model_types, wrapped for --help."""
    from .specs.from_config import FAMILIES
    lines = [textwrap.fill(f"{f.name}: {', '.join(f.model_types)}", 79, initial_indent="  ", subsequent_indent="    ")
             for f in FAMILIES]
    return "config.json families the book reads (model_type):\n" + "\n".join(lines) + "\n"


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m twopaths.plan", epilog=EXAMPLES + "\n" + families(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="KV bytes, weights and the fleet plan for one model on one GPU.")
    p.add_argument("model", metavar="MODEL", help="a registry model id (" + ", ".join(
        specs.model_ids(include_reference=True)) + "), a checkpoint folder (its config.json, and the bytes "
                   "its safetensors files hold, shown beside the config's), a path to a config.json, or a name in "
                   "AIConfigurator's corpus (Qwen--Qwen3-235B-A22B)")
    p.add_argument("--gpu", default="h200", help="accelerator: one of " + ", ".join(specs.gpu_ids())
                   + " (specs/gpus.yaml; default h200) or one --gpu-spec adds")
    p.add_argument("--gpu-spec", metavar="FILE.json",
                   help='accelerators the registry lacks, as a JSON object: {"my-gpu": {"hbm_bytes": 192e9, '
                        '"hbm_bandwidth": 8e12, "bf16_flops": 2.5e15, "fp8_flops": 5e15, "nvlink_bandwidth": '
                        '900e9}} (bytes, bytes/s, dense FLOP/s, link bytes/s a direction; optional name, '
                        'source, device_bytes)')
    p.add_argument("--context", type=count, default=None,
                   help="tokens a session holds (default 500K, or the config's max_position_embeddings where "
                        "that is shorter); past that limit the plan is still computed, and flagged (FLAG; "
                        "beyond_max_position in JSON)")
    p.add_argument("--concurrency", type=count, default=None, help="sessions open at once (default 10,000)")
    p.add_argument("--rho", type=float, default=1.0,
                   help="share of sessions resident on decode GPUs at once, in (0, 1] (default 1: every "
                        "session, as max_num_seqs counts them; 0.25 is the article's standard scenario)")
    p.add_argument("--prompt-tokens", type=count, default=None,
                   help="new prompt tokens a turn brings past the cached prefix (default 2,000): prefill work")
    p.add_argument("--output-tokens", type=count, default=None,
                   help="tokens a turn decodes (default 1,000, the article's): with the plan's speed, how "
                        "often turns finish, so how much prompt prefill must take in")
    p.add_argument("--price", type=float, default=None, metavar="USD",
                   help="price of one GPU an hour, in US dollars: each plan's cost an hour and per million "
                        "output tokens (at the bandwidth bound, every GPU of the plan paid)")
    p.add_argument("--kv-dtype", choices=KV_DTYPES, default=None,
                   help="cache entry format (default bf16; fp8 is each model's shipped FP8 layout)")
    p.add_argument("--state-dtype", choices=(*STATE_DTYPES, "shipped"), default=None,
                   help="fixed (linear-attention) state format (default bf16, the book's assumption; "
                        "shipped: the dtype the config names, the book's where it names none)")
    p.add_argument("--formats", choices=list(weight_scenarios()), default=None,
                   help="weight formats: as shipped, FP8 non-expert weights, or every linear layer in FP8")
    p.add_argument("--max-dcp", type=int, default=None,
                   help="largest decode context parallelism tried inside an attention TP group (default: the "
                        "book's; 1 turns it off); a plan uses it only where an engine has it for the family")
    p.add_argument("--speed", type=float, default=None,
                   help="tokens/s every decoding session must get: the cheapest plan that gives it (a bound: "
                        "HBM reads, DCP's merge and the EP all-to-all); default: no target")
    p.add_argument("--gpus-per-node", type=int, default=None,
                   help="GPUs a node holds (default 8; 4 for a GB200 or GB300 compute tray); "
                        "attention TP stays within a node")
    p.add_argument("--format", choices=("table", "json"), default="table", help="output (default table)")
    p.add_argument("--all", action="store_true",
                   help=f"list every valid placement (default: the {SHOWN} with the fewest nodes; json has them all)")
    return p


def flag_message(err: ParameterError) -> str:
    """A library ParameterError as one line that names the flag it came from."""
    flag = f"--gpu-spec {err.name}" if err.name.startswith("gpu_specs") else FLAGS.get(err.name, err.name)
    return f"{flag}: got {err.got!r}; allowed: {err.allowed}"


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
    if args.prompt_tokens is not None:
        changes["prompt_tokens_per_turn"] = args.prompt_tokens
    if args.gpus_per_node is not None:
        n = check_int("gpus_per_node", args.gpus_per_node, minimum=1)
        changes.update(gpus_per_node=n, max_attention_tp=min(a.max_attention_tp, n))
        changes["max_dcp"] = min(a.max_dcp, n)
    if args.max_dcp is not None:
        changes["max_dcp"] = args.max_dcp
    return a.but(**changes)


def main(argv: list[str] | None = None) -> int:
    cli = parser()
    args = cli.parse_args(argv)
    try:     # every check before the long work; argparse's error() prints usage and exits 2
        if args.gpu_spec:
            add_gpu_file(args.gpu_spec)
        gpu = specs.gpu(args.gpu.lower() if args.gpu.lower() in specs.gpu_ids() else args.gpu).id
        model = resolve_model(args.model)
        a = serving(args, model)
        # no --context: the article's 500K, or the config's limit where that is shorter (and said so)
        default = fleet.workload().context
        context = args.context if args.context is not None else max_position.capped(model, default)
        work = fleet.workload(args.concurrency, context, args.rho, output_tokens=args.output_tokens)
        check_int("context", work.context, minimum=1, maximum=kv.MAX_TOKENS)
        if args.price is not None:
            check_real("usd_per_gpu_hour", args.price, minimum=0, open_min=True)
        if not placements(model, a):     # say why: the expert slots, or no engine for the layout
            cli.error(f"MODEL: got {args.model!r}; allowed: a model the planner can place: "
                      + (no_unit_reason(model, a) or "no engine of specs/engines.yaml launches its units")
                      + " (--gpus-per-node changes the node size)")
        r = report(model, gpu, a, work, args.speed, args.price)
        r["workload"]["context_default_past_limit"] = default if context < default and args.context is None else None
    except ParameterError as e:
        cli.error(flag_message(e))
    try:
        print(json.dumps(r, indent=1) if args.format == "json" else table(r, every=args.all))
        sys.stdout.flush()
    except BrokenPipeError:      # `plan ... | head`: the reader has what it wanted
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return 0 if r["best"] is not None else 1


if __name__ == "__main__":
    sys.exit(main())

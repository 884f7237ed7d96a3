"""``make mutants``: how many of mutmut's mutants of twopaths' layers, calculators, claims and specs the
tests kill.

A mutant is the source with one small change (an operator, a constant, a dropped argument); a test
suite that can see the change fails and "kills" it. Per module, a seeded sample of the mutants is
run against the oracle and unit tests that reach the mutated function (mutmut records which), and
the table gives killed / (sampled - equivalent), where an equivalent mutant is one no test can
kill because it computes the same thing (listed, with why, in ``equivalent-mutants.txt`` here).
``raise ParameterError(...)`` statements are not mutated: the tests pin which parameter an error
names (``raises_param``), not the wording of the sentence that explains it to a reader.

mutmut (pinned in requirements-dev.txt, outside ``make test``) is run on a copy, in a scratch
folder: the working tree is never mutated. The copy lays the package out as ``src/twopaths``,
the one layout besides ``./`` under which mutmut finds packages and names their mutants.

    python tools/mutants.py [--sample 30] [--seed 14] [--skip calc/fleet.py ...] [--rev HEAD]
"""

from __future__ import annotations

import argparse
import fnmatch
import json
import os
import random
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EQUIVALENT = Path(__file__).with_name("equivalent-mutants.txt")
PACKAGES = ("layers", "calc", "claims", "claims/checks", "specs")
# The tests that exercise each package; per mutant mutmut runs only those that reach its function.
TESTS = {
    "layers": ["attnres", "compressor", "csa_hca", "dsa", "ffn", "hyper_connections", "indexer", "kda",
               "latent_moe", "mhc", "mla", "mtp", "quantile_balancing", "recall", "routers", "speculative",
               "attention_flops", "kv", "layer_inputs", "layer_details"],
    "calc": ["attention_flops", "kv", "params", "sensitivity", "speculative", "deploy", "deploy_errors",
             "deploy_properties", "peer_aiconfigurator", "fleet", "audit", "audit_architecture", "audit_serving",
             "claims", "claims_data", "trends", "specs", "calc_inputs", "serving_details"],
    # the audit: its policy, its judgments and the checks of every topic
    "claims": ["claims", "claims_data", "claims_coverage", "audit", "audit_architecture", "audit_serving",
               "audit_alternatives", "audit_wording"],
    "specs": ["specs", "gpus", "params", "from_config", "excerpts", "trends", "engines", "kv", "context_limit",
              "claims", "audit_architecture"],
}
KILLED = {"killed", "timeout", "segfault"}      # a mutant that hangs or crashes the tests is seen too

# mutmut generates every mutant (a file of mutants per module, plus a .meta of their names) and then
# runs the ones it is given; this is its generation step alone, so that a sample can be drawn first.
GENERATE = """
import os
from mutmut.__main__ import create_mutants, store_lines_covered_by_tests
from mutmut.utils.file_utils import copy_also_copy_files, copy_src_dir, setup_source_paths
os.makedirs("mutants", exist_ok=True)
copy_src_dir(); copy_also_copy_files(); setup_source_paths(); store_lines_covered_by_tests(); create_mutants(1)
"""


def copy_sources(scratch: Path, rev: str | None) -> None:
    """lib/twopaths as src/twopaths and tests/, from the working tree or from git revision ``rev``."""
    if rev is None:
        shutil.copytree(ROOT / "lib" / "twopaths", scratch / "src" / "twopaths",
                        ignore=shutil.ignore_patterns("__pycache__"))
        shutil.copytree(ROOT / "tests", scratch / "tests", ignore=shutil.ignore_patterns("__pycache__"))
        return
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", rev, "lib/twopaths", "tests"],
                             check=True, capture_output=True).stdout
    with tempfile.TemporaryFile() as f:
        f.write(archive)
        f.seek(0)
        with tarfile.open(fileobj=f) as tar:
            tar.extractall(scratch, filter="data")
    (scratch / "src").mkdir()
    (scratch / "lib" / "twopaths").rename(scratch / "src" / "twopaths")


def modules(package: Path, patterns: list[str], skip: list[str]) -> list[str]:
    """Module paths relative to ``package`` ("layers/kda.py") that match ``patterns`` and not ``skip``."""
    # a package's __init__ counts where it holds code (the precision policy lives in claims/__init__.py)
    found = sorted(f"{p}/{f.name}" for p in PACKAGES for f in (package / p).glob("*.py")
                   if f.name != "__init__.py" or "\ndef " in f.read_text())
    chosen = [m for m in found if any(fnmatch.fnmatch(m, p) for p in patterns)
              and not any(fnmatch.fnmatch(m, s) for s in skip)]
    if not chosen:
        raise SystemExit(f"no module of {found} matches {patterns} without {skip}")
    return chosen


def write_config(scratch: Path, chosen: list[str]) -> None:
    tests = sorted({f"tests/test_{t}.py" for m in chosen for t in TESTS[m.split("/")[0]]})
    tests = [t for t in tests if (scratch / t).exists()]
    lines = ["[tool.pytest.ini_options]", 'addopts = "-p no:cacheprovider -q"',
             "markers = [\"notebooks: chapters\", \"site: the built site\"]", "",
             "[tool.mutmut]", 'source_paths = ["src"]',
             f"only_mutate = {json.dumps([f'src/twopaths/{m}' for m in chosen])}",
             f"pytest_add_cli_args_test_selection = {json.dumps(tests)}",
             'pytest_add_cli_args = ["-m", "not notebooks and not site"]',
             "do_not_mutate_patterns = ['raise ParameterError\\(']",
             "use_git_change_detection = false"]
    (scratch / "pyproject.toml").write_text("\n".join(lines) + "\n")


def mutants_by_module(scratch: Path, chosen: list[str]) -> dict[str, dict[str, int | None]]:
    """{module: {mutant name: exit code or None}} from mutmut's .meta files."""
    out = {}
    for m in chosen:
        meta = scratch / "mutants" / "src" / "twopaths" / (m + ".meta")
        out[m] = json.loads(meta.read_text())["exit_code_by_key"] if meta.exists() else {}
    return out


def equivalent_names() -> set[str]:
    lines = EQUIVALENT.read_text().splitlines() if EQUIVALENT.exists() else []
    return {line.split()[0] for line in lines if line.strip() and not line.startswith("#")}


def table(results: dict[str, dict[str, int | None]], sample: dict[str, list[str]]) -> list[str]:
    from mutmut.stats import status_by_exit_code

    equivalent = equivalent_names()
    rows = [f"{'module':<28} {'mutants':>7} {'sampled':>7} {'killed':>6} {'survived':>8} {'no tests':>8} "
            f"{'equiv':>5} {'score':>6}"]
    survivors = []
    for m, names in sample.items():
        status = {n: status_by_exit_code[results[m][n]] for n in names}
        killed = sum(s in KILLED for s in status.values())
        eq = sum(n in equivalent for n in names)
        alive = [n for n, s in status.items() if s not in KILLED and n not in equivalent]
        survivors += [f"  {status[n]:<9} {n}" for n in alive]
        counted = len(names) - eq
        score = f"{100 * killed / counted:5.1f}%" if counted else "    -"
        rows.append(f"{m:<28} {len(results[m]):>7} {len(names):>7} {killed:>6} "
                    f"{sum(status[n] == 'survived' for n in alive):>8} "
                    f"{sum(status[n] == 'no tests' for n in alive):>8} {eq:>5} {score:>6}")
    return rows + ["", "not killed (mutmut show NAME in the scratch folder gives the diff):"] + survivors


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("modules", nargs="*", default=["layers/*.py", "calc/*.py"],
                    help="module globs relative to twopaths/ (default: every module of layers and calc; "
                         "'claims/*.py claims/checks/*.py specs/*.py' for the audit and the specs)")
    ap.add_argument("--skip", nargs="*", default=[], help="module globs to leave out")
    ap.add_argument("--sample", type=int, default=30, help="mutants per module (all, where it has fewer)")
    ap.add_argument("--seed", type=int, default=14)
    ap.add_argument("--rev", help="mutate this git revision instead of the working tree")
    ap.add_argument("--scratch", type=Path, default=Path(tempfile.gettempdir()) / "twopaths-mutants")
    ap.add_argument("--workers", type=int, default=1, help="mutants run at once (one leaves the other cores free)")
    args = ap.parse_args(argv)
    if args.sample < 1:
        raise SystemExit(f"--sample must be at least 1, not {args.sample}")
    shutil.rmtree(args.scratch, ignore_errors=True)
    args.scratch.mkdir(parents=True)
    copy_sources(args.scratch, args.rev)
    chosen = modules(args.scratch / "src" / "twopaths", args.modules, args.skip)
    write_config(args.scratch, chosen)
    # one thread per test process: the mutants run one at a time and leave the other cores alone.
    # TWOPATHS_FRESH_CACHES: every test recomputes what the calculators memoise (tests/conftest.py),
    # so mutmut sees each test that reaches a function, not only the first one to ask for a value.
    env = dict(os.environ, OMP_NUM_THREADS="1", MKL_NUM_THREADS="1", TWOPATHS_FRESH_CACHES="1")
    made = subprocess.run([sys.executable, "-c", GENERATE], cwd=args.scratch, env=env, capture_output=True, text=True)
    if made.returncode:
        print(made.stdout[-3000:], made.stderr[-3000:])
        return made.returncode
    # seeded per module, so a module's sample does not depend on which other modules are run
    sample = {m: sorted(random.Random(f"{args.seed}:{m}").sample(sorted(names), min(args.sample, len(names))))
              for m, names in mutants_by_module(args.scratch, chosen).items()}
    names = [n for ns in sample.values() for n in ns]
    mutmut, log = Path(sys.executable).with_name("mutmut"), args.scratch / "mutmut.log"
    print(f"{len(names)} mutants of {len(chosen)} modules; mutmut's progress in {log}", flush=True)
    with open(log, "w") as out:
        done = subprocess.run([str(mutmut), "run", "--max-children", str(args.workers), *names],
                              cwd=args.scratch, env=env, stdout=out, stderr=subprocess.STDOUT)
    if done.returncode:
        print(log.read_text()[-3000:])
        return done.returncode
    print(f"\nseed {args.seed}, up to {args.sample} mutants per module; scratch folder {args.scratch}\n")
    print("\n".join(table(mutants_by_module(args.scratch, chosen), sample)))
    return 0


if __name__ == "__main__":
    sys.exit(main())

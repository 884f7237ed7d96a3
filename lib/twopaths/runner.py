"""Execute the book's chapters with papermill, collect their glued results, build the site.

    python -m twopaths.runner run --profile smoke            # every chapter in _toc.yml
    python -m twopaths.runner chapter notebooks/01-kv-wall.ipynb -p context_tokens 2000000
    python -m twopaths.runner compare --profile default      # glued numbers against results/
    python -m twopaths.runner site                           # Jupyter Book, warnings as errors

Executed notebooks go to ``_build/src/notebooks`` beside a copy of the book's sources, never into
``notebooks/``; the site is built from ``_build/src`` with execution off, so every number on it
comes from the run just made.
"""

from __future__ import annotations

import argparse
import ast
import json
import platform
import shutil
import subprocess
import sys
import time
from datetime import datetime, timezone
from importlib import metadata
from pathlib import Path

import yaml

from .chapter import DEVICES, GLUE_META, PROFILES


def _find_root(start: Path) -> Path:
    """The book's root: the nearest folder at or above ``start`` holding ``_toc.yml``."""
    for folder in (start, *start.parents):
        if (folder / "_toc.yml").is_file():
            return folder
    return start   # commands that need the toc say so when they cannot read it


ROOT = _find_root(Path.cwd())
BUILD = ROOT / "_build"
SRC = BUILD / "src"
PACKAGES = ("torch", "numpy", "matplotlib", "papermill", "jupyter-book", "myst-nb", "sphinx")


class RunError(RuntimeError):
    """A chapter failed or was given parameters it does not accept; the message says which."""


def toc_notebooks(root: Path = ROOT) -> list[Path]:
    """The chapters listed in ``_toc.yml``, in book order."""
    if not (root / "_toc.yml").is_file():
        raise RunError(f"no _toc.yml in {root} or above it: run from the book's repository")
    toc = yaml.safe_load((root / "_toc.yml").read_text())
    files: list[str] = []

    def walk(node):
        if isinstance(node, dict):
            if "file" in node:
                files.append(node["file"])
            for v in node.values():
                walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)

    walk(toc)
    return [root / f"{f}.ipynb" for f in files if f.startswith("notebooks/")]


def parse_value(text: str):
    """A ``-p`` value: int (``1e6`` too), float, bool, list or dict (Python or YAML literal), else the
    string as given, which the chapter's own checks then accept or refuse by name."""
    try:
        return int(text)
    except ValueError:
        pass
    try:
        number = float(text)
        return int(number) if number.is_integer() and "e" in text.lower() else number
    except ValueError:
        pass
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        pass
    try:
        loaded = yaml.safe_load(text)
    except yaml.YAMLError:
        return text
    return loaded if isinstance(loaded, (list, dict, bool)) else text


def check_parameters(nb: Path, params: dict) -> None:
    """Refuse names the chapter's ``parameters`` cell does not define, before anything runs."""
    import papermill

    known = papermill.inspect_notebook(str(nb))
    unknown = sorted(set(params) - set(known))
    if unknown:
        raise RunError(f"{nb.name}: unknown parameter(s) {', '.join(unknown)}; "
                       f"this chapter takes: {', '.join(sorted(known))}")
    if params.get("profile", "default") not in PROFILES:
        raise RunError(f"{nb.name}: profile: got {params['profile']!r}; allowed: {', '.join(PROFILES)}")
    if params.get("device", "auto") not in DEVICES:
        raise RunError(f"{nb.name}: device: got {params['device']!r}; allowed: {', '.join(DEVICES)}")


def glued(nb_path: Path) -> dict[str, dict]:
    """The values a chapter glued through ``twopaths.chapter.glue``, with units."""
    nb = json.loads(nb_path.read_text())
    out = {}
    for cell in nb["cells"]:
        for output in cell.get("outputs", []):
            meta = output.get("metadata", {})
            if GLUE_META not in meta:
                continue
            name = meta["scrapbook"]["name"]
            text = next(v for k, v in output["data"].items() if k.endswith("text/plain"))
            text = "".join(text) if isinstance(text, list) else text
            try:
                value = ast.literal_eval(text)
            except (ValueError, SyntaxError):
                value = text
            out[name] = {"value": value, **meta[GLUE_META]}
    return out


def execute(nb: Path, out_nb: Path, params: dict) -> float:
    """Run one chapter with papermill; return its wall time. A failing cell raises RunError."""
    import papermill
    from papermill.exceptions import PapermillExecutionError

    check_parameters(nb, params)
    out_nb.parent.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    try:   # run beside the executed copy, so nothing a chapter writes lands in notebooks/
        papermill.execute_notebook(str(nb), str(out_nb), parameters=params, cwd=str(out_nb.parent),
                                   kernel_name=kernel(), progress_bar=False, log_output=False)
    except PapermillExecutionError as e:
        raise RunError(f"{nb.name} failed in cell {e.exec_count} ({e.ename}): {e.evalue}\n"
                       f"executed notebook with the traceback: {out_nb}") from None
    return time.perf_counter() - start


KERNEL = "twopaths"


def kernel() -> str:
    """A kernelspec inside this environment, so papermill runs this Python and no user-level one."""
    from jupyter_client.kernelspec import KernelSpecManager

    if KERNEL not in KernelSpecManager().find_kernel_specs():
        from ipykernel.kernelspec import install

        install(kernel_name=KERNEL, display_name="Python (twopaths)", prefix=sys.prefix)
    return KERNEL


def _device_name(device: str) -> str:
    import torch

    if device == "cuda" or (device == "auto" and torch.cuda.is_available()):
        return f"cuda ({torch.cuda.get_device_name(0)})"
    return f"cpu ({platform.processor() or platform.machine()})"


def _commit() -> str:
    try:
        sha = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                             check=True, cwd=ROOT).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], capture_output=True,
                               text=True, cwd=ROOT).stdout.strip()
        return sha + ("+local changes" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def environment() -> dict:
    versions = {}
    for p in PACKAGES:
        try:
            versions[p] = metadata.version(p)
        except metadata.PackageNotFoundError:
            versions[p] = "not installed"
    return {"python": platform.python_version(), "packages": versions, "commit": _commit(),
            "date": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")}


def stage_sources(root: Path = ROOT, src: Path = SRC) -> None:
    """Copy the book's prose and config beside the executed notebooks."""
    src.mkdir(parents=True, exist_ok=True)
    for name in ("_config.yml", "_toc.yml"):
        shutil.copy2(root / name, src / name)
    shutil.copytree(root / "book", src / "book", dirs_exist_ok=True)


def write_status(results: dict, src: Path = SRC) -> Path:
    """The status page: what ran, where, how long, with which versions, from which commit."""
    env = results["environment"]
    lines = ["# Build status", "",
             "Generated by `python -m twopaths.runner` when the site was built: every chapter below was",
             "executed by papermill in this build, and its numbers come from that run.", "",
             f"- profile: `{results['profile']}`",
             f"- commit: `{env['commit']}`, built {env['date']}",
             f"- Python {env['python']}; " + ", ".join(f"{k} {v}" for k, v in env["packages"].items()), "",
             "| chapter | run time (s) | profile | device | glued values |", "|---|---:|---|---|---:|"]
    for name, r in results["notebooks"].items():
        lines.append(f"| [{name}](../notebooks/{name}.ipynb) | {r['runtime_s']:.1f} | {results['profile']} "
                     f"| {r['device']} | {len(r['values'])} |")
    path = src / "book" / "status.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n")
    return path


def run(profile: str, device: str, notebooks: list[Path] | None = None, params: dict | None = None,
        out_dir: Path = SRC / "notebooks") -> dict:
    """Execute ``notebooks`` (default: every chapter in the toc); return the results document."""
    notebooks = notebooks or toc_notebooks()
    results = {"profile": profile, "device_param": device, "environment": environment(), "notebooks": {}}
    for nb in notebooks:
        p = {"profile": profile, "device": device, **(params or {})}
        out_nb = out_dir / nb.name
        print(f"[twopaths] running {nb.relative_to(ROOT) if nb.is_relative_to(ROOT) else nb} "
              f"(profile={profile}, device={device})", flush=True)
        runtime = execute(nb, out_nb, p)
        results["notebooks"][nb.stem] = {"runtime_s": round(runtime, 2), "device": _device_name(device),
                                         "parameters": p, "executed": str(out_nb), "values": glued(out_nb)}
        print(f"[twopaths]   done in {runtime:.1f} s, {len(results['notebooks'][nb.stem]['values'])} glued values",
              flush=True)
    return results


def drift(reference: dict, current: dict, rel_tol: float = 1e-9) -> list[str]:
    """Deterministic glued values that differ from the committed reference (or went missing)."""
    problems = []
    for nb, ref in reference["notebooks"].items():
        cur = current["notebooks"].get(nb)
        if cur is None:
            problems.append(f"{nb}: not run")
            continue
        for name, r in ref["values"].items():
            if not r.get("deterministic", True):
                continue
            c = cur["values"].get(name)
            if c is None:
                problems.append(f"{nb}.{name}: missing (reference {r['value']!r} {r['unit']})")
            elif c["unit"] != r["unit"] or not _same(c["value"], r["value"], rel_tol):
                problems.append(f"{nb}.{name}: {c['value']!r} {c['unit']} now, reference {r['value']!r} {r['unit']}")
        for name in sorted(set(cur["values"]) - set(ref["values"])):
            if cur["values"][name].get("deterministic", True):
                problems.append(f"{nb}.{name}: new value {cur['values'][name]['value']!r}, not in the reference")
    for nb in sorted(set(current["notebooks"]) - set(reference["notebooks"])):
        problems.append(f"{nb}: ran, but has no reference values")
    return problems


def _same(a, b, rel_tol: float) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return abs(a - b) <= rel_tol * max(abs(a), abs(b)) or a == b
    return a == b


def reference_values(results: dict) -> dict:
    """What ``results/<profile>.json`` keeps: the glued values, without times and paths."""
    return {"profile": results["profile"],
            "notebooks": {nb: {"values": r["values"]} for nb, r in results["notebooks"].items()}}


def build_site(src: Path = SRC, root: Path = ROOT) -> Path:
    """Jupyter Book over the staged sources, execution off, warnings as errors."""
    if not (src / "_toc.yml").is_file() or not (src / "notebooks").is_dir():
        raise RunError(f"nothing to build in {src}: execute the chapters first (python -m twopaths.runner run)")
    cmd = [str(Path(sys.executable).parent / "jupyter-book"), "build", str(src), "--path-output", str(root),
           "-W", "-n", "--keep-going"]
    if subprocess.run(cmd).returncode:
        raise RunError("the site build failed (warnings count as errors); see the messages above")
    return root / "_build" / "html" / "index.html"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m twopaths.runner", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run", help="execute every chapter in the toc")
    r.add_argument("--profile", default="default", choices=PROFILES)
    r.add_argument("--device", default="auto", choices=DEVICES)
    r.add_argument("--results", type=Path, help="also write the reference values here (e.g. results/gpu-h200.json)")
    c = sub.add_parser("chapter", help="re-run one chapter with other parameters")
    c.add_argument("notebook", type=Path)
    c.add_argument("-p", nargs=2, action="append", default=[], metavar=("NAME", "VALUE"))
    cmp_ = sub.add_parser("compare", help="compare glued values with the committed results/<profile>.json")
    cmp_.add_argument("--profile", default="default", choices=PROFILES)
    rf = sub.add_parser("refresh", help="overwrite results/<profile>.json with the last run's values, on purpose")
    rf.add_argument("--profile", default="default", choices=PROFILES)
    sub.add_parser("site", help="build the HTML from the last run")
    args = ap.parse_args(argv)

    try:
        if args.cmd == "run":
            notebooks = toc_notebooks()
            shutil.rmtree(SRC, ignore_errors=True)   # no executed copy of a removed chapter survives
            stage_sources()
            results = run(args.profile, args.device, notebooks)
            out = BUILD / "results" / f"{args.profile}.json"
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_text(json.dumps(results, indent=1) + "\n")
            write_status(results)
            if args.results:
                args.results.write_text(json.dumps(reference_values(results), indent=1) + "\n")
            print(f"[twopaths] results: {out}")
        elif args.cmd == "chapter":
            nb = args.notebook.resolve()
            if not nb.is_file():
                raise RunError(f"notebook: {args.notebook} does not exist; chapters are in notebooks/")
            params = {k: parse_value(v) for k, v in args.p}
            out_dir = BUILD / "chapters" / nb.stem
            results = run(params.pop("profile", "default"), params.pop("device", "auto"), [nb], params, out_dir)
            (out_dir / "results.json").write_text(json.dumps(results, indent=1) + "\n")
            print(f"[twopaths] executed notebook: {out_dir / nb.name}\n[twopaths] results: {out_dir / 'results.json'}")
        elif args.cmd in ("compare", "refresh"):
            last_run = BUILD / "results" / f"{args.profile}.json"
            if not last_run.is_file():
                raise RunError(f"no results of a {args.profile} run at {last_run}: "
                               f"run `python -m twopaths.runner run --profile {args.profile}` first")
            current = json.loads(last_run.read_text())
            ref_path = ROOT / "results" / f"{args.profile}.json"
            if args.cmd == "refresh":
                ref_path.write_text(json.dumps(reference_values(current), indent=1) + "\n")
                print(f"[twopaths] wrote {ref_path}; review the diff before committing it")
                return 0
            if not ref_path.exists():
                raise RunError(f"no reference {ref_path}; create it with: make refresh-results PROFILE={args.profile}")
            problems = drift(json.loads(ref_path.read_text()), current)
            if problems:
                raise RunError("glued numbers drifted from " + str(ref_path) + ":\n  " + "\n  ".join(problems)
                               + f"\nIf the change is intended: make refresh-results PROFILE={args.profile}")
            print(f"[twopaths] glued values match {ref_path.relative_to(ROOT)}")
        elif args.cmd == "site":
            print(f"[twopaths] site: {build_site()}")
    except RunError as e:
        print(f"[twopaths] ERROR: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Execute the book's chapters with papermill, collect their glued results, build the site.

    python -m twopaths.machinery.runner run --profile smoke            # every chapter in _toc.yml
    python -m twopaths.machinery.runner run --jobs 4 --force           # 4 workers; ignore the execution cache
    python -m twopaths.machinery.runner chapter notebooks/01-kv-wall.ipynb -p context 2000000
    python -m twopaths.machinery.runner compare --profile default      # glued numbers against results/, within
                                                             # each value's tolerance (--strict: fail)
    python -m twopaths.machinery.runner site                           # Jupyter Book, warnings as errors
    python -m twopaths.machinery.runner pdf                            # the whole book as one PDF, from the
                                                             # same run (after `site`)

Executed notebooks go to ``_build/src/notebooks`` beside a copy of the book's sources, never into
``notebooks/``; the site is built from ``_build/src`` with execution off, so every number on it
comes from the run just made. A chapter whose inputs have not changed since its last execution is
served from the execution cache (``twopaths.machinery.cache``) instead of being executed again.
"""

from __future__ import annotations

import argparse
import ast
import atexit
import functools
import json
import math
import multiprocessing
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from datetime import datetime, timezone
from importlib import metadata
from pathlib import Path

import yaml

from concurrent.futures import ProcessPoolExecutor, as_completed

from . import cache as cache_mod
from . import drift as drift_mod
from . import rerun as rerun_mod
from .chapter import DEVICES, GLUE_META, PROFILES
from .launch import LaunchError, launch_config
from .variation import DIFFERENCE_CONFIDENCE, RERUN_CONFIDENCE, t_quantile


def _find_root(start: Path) -> Path:
    """The book's root: the nearest folder at or above ``start`` holding ``_toc.yml``."""
    for folder in (start, *start.parents):
        if (folder / "_toc.yml").is_file():
            return folder
    return start   # commands that need the toc say so when they cannot read it


ROOT = _find_root(Path.cwd())
# TWOPATHS_BUILD puts a run's executed notebooks and results elsewhere (the kernel-path check does);
# the execution cache stays shared, since its keys already name the CPU kernels.
BUILD = Path(os.environ.get("TWOPATHS_BUILD") or ROOT / "_build").resolve()
SRC = BUILD / "src"
CACHE = ROOT / "_build" / "cache"
# The CPU kernel paths `kernels` re-runs the book under, besides the machine's own.
OTHER_KERNELS = ("default", "avx2")
LIB = Path(__file__).resolve().parents[2]   # the folder holding the twopaths package
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


PATH_PARAMETERS = ("configs", "gpu_specs")   # parameters that may name files (config.json, GPU figures)


def absolute_paths(params: dict, cwd: Path) -> dict:
    """``params`` with each relative ``.json`` path of ``PATH_PARAMETERS`` made absolute from ``cwd``:
    a chapter runs in its re-run folder, where a path typed relative to the shell would not resolve."""
    def fix(v):
        return str((cwd / v).resolve()) if isinstance(v, str) and v.endswith(".json") and not Path(v).is_absolute() else v
    out = dict(params)
    for k in PATH_PARAMETERS:
        if isinstance(out.get(k), list):
            out[k] = [fix(v) for v in out[k]]
        elif k in out:
            out[k] = fix(out[k])
    return out


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
    """The values a chapter glued through ``twopaths.machinery.chapter.glue``, with units."""
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
            out[name] = {"value": value, "unit": meta[GLUE_META]["unit"], "vary": meta[GLUE_META]["vary"]}
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
                                   kernel_name=kernel(), progress_bar=False, log_output=False,
                                   kernel_manager_class=_ipc_kernel_manager())
    except PapermillExecutionError as e:
        raise RunError(f"{nb.name} failed in cell {e.exec_count} ({e.ename}): {e.evalue}\n"
                       f"executed notebook with the traceback: {out_nb}") from None
    hide_injected(out_nb)
    return time.perf_counter() - start


def hide_injected(out_nb: Path) -> None:
    """Tag papermill's injected-parameters cell ``remove-cell``: the site shows the chapter's own
    parameters cell, not a second one that repeats the run's values."""
    import nbformat

    book = nbformat.read(str(out_nb), as_version=4)
    for cell in book.cells:
        tags = cell.metadata.setdefault("tags", [])
        if "injected-parameters" in tags and "remove-cell" not in tags:
            tags.append("remove-cell")
    nbformat.write(book, str(out_nb))


@functools.cache
def _socket_folder() -> Path:
    """One folder per process for the kernels' sockets, removed when the process ends."""
    folder = Path(tempfile.mkdtemp(prefix="twopaths-kernels-"))
    atexit.register(shutil.rmtree, folder, True)
    return folder


def _ipc_kernel_manager():
    """A kernel manager that talks to the kernel over Unix sockets (no TCP ports, and no warning
    about unencrypted TCP in every chapter's log) and stops an idle kernel without first sending it
    SIGINT (which it logs as a 'KeyboardInterrupt' error)."""
    from jupyter_client.manager import AsyncKernelManager
    from traitlets import default

    class IPCKernelManager(AsyncKernelManager):
        @default("transport")
        def _default_transport(self):
            return "ipc"

        @default("ip")
        def _default_ip(self):
            # An absolute socket path: the kernel runs in the chapter's folder, this process does not.
            return str(_socket_folder() / f"kernel-{uuid.uuid4().hex[:12]}")

        async def _async_interrupt_kernel(self):
            if not self.shutting_down:   # a chapter that ended has an idle kernel: nothing to interrupt
                await super()._async_interrupt_kernel()

    return IPCKernelManager


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
    """Copy the book's prose and config beside the executed notebooks (the config through
    ``launch.launch_config``)."""
    src.mkdir(parents=True, exist_ok=True)
    try:
        config = launch_config(yaml.safe_load((root / "_config.yml").read_text()))
    except LaunchError as e:
        raise RunError(str(e)) from None
    (src / "_config.yml").write_text(yaml.safe_dump(config, sort_keys=False, allow_unicode=True))
    shutil.copy2(root / "_toc.yml", src / "_toc.yml")
    # copied with new times: Sphinx reads a page again only if its file is newer than its last read,
    # and an edit made before an earlier site build would otherwise keep its old mtime, and its old page
    shutil.copytree(root / "book", src / "book", dirs_exist_ok=True, copy_function=shutil.copy)


def machine(device: str) -> dict:
    """What picks the kernels a chapter's numbers come from; part of every cache key."""
    import torch

    return {"cpu_capability": torch.backends.cpu.get_cpu_capability(), "device": _device_name(device),
            "python": platform.python_version(), **{k: os.environ.get(k, "") for k in cache_mod.KERNEL_ENV}}


def parse_jobs(text: str | None) -> int:
    """``JOBS``: worker processes; empty means one per core."""
    if text in (None, ""):
        return os.cpu_count() or 1
    try:
        jobs = int(text)
    except ValueError:
        jobs = 0
    if jobs < 1:
        raise RunError(f"JOBS: got {text!r}; allowed: a whole number >= 1 "
                       f"(default: the number of cores, {os.cpu_count()} here)")
    return jobs


def _log(chapter: str, text: str) -> None:
    print(f"[twopaths] {chapter}: {text}", flush=True)


def _execute_in_worker(nb: Path, out_nb: Path, params: dict) -> float:
    """One chapter in a worker process; it says when it starts, so the log shows what runs now."""
    _log(nb.stem, f"running (profile={params['profile']}, device={params['device']})")
    return execute(nb, out_nb, params)


def _runtimes_path() -> Path:
    return CACHE / "runtimes.json"


def _last_runtimes() -> dict:
    try:
        return json.loads(_runtimes_path().read_text())
    except (OSError, ValueError):
        return {}


def run(profile: str, device: str, notebooks: list[Path] | None = None, params: dict | None = None,
        out_dir: Path = SRC / "notebooks", jobs: int = 1, use_cache: bool = True) -> dict:
    """Execute ``notebooks`` (default: every chapter in the toc) in ``jobs`` worker processes,
    reusing cached executions whose key has not changed; return the results document."""
    notebooks = notebooks or toc_notebooks()
    mach = machine(device)
    results = {"profile": profile, "device_param": device, "environment": environment(), "machine": mach,
               "notebooks": {}}
    store = cache_mod.Cache(CACHE)
    todo, keys, done = [], {}, {}
    for nb in notebooks:
        p = {"profile": profile, "device": device, **(params or {})}
        check_parameters(nb, p)
        k = cache_mod.key(nb, p, LIB, ROOT / "requirements.txt", mach)
        keys[nb.stem] = k
        hit = None
        if use_cache:
            try:
                hit = store.get(nb.stem, k)
            except cache_mod.CorruptEntry as e:
                _log(nb.stem, f"cache entry is damaged, executing again ({e})")
                store.discard(nb.stem, k)
        if hit is not None:
            cached_nb, entry = hit
            out_dir.mkdir(parents=True, exist_ok=True)
            shutil.copy2(cached_nb, out_dir / nb.name)
            done[nb.stem] = {**entry, "executed": str(out_dir / nb.name), "cached": True,
                             "values": glued(out_dir / nb.name)}
            _log(nb.stem, f"unchanged since it last ran, reused ({len(done[nb.stem]['values'])} glued values)")
        else:
            todo.append((nb, p))
    runtimes = _last_runtimes()
    last = runtimes.setdefault(profile, {})
    todo.sort(key=lambda item: -last.get(item[0].stem, 0.0))   # longest first: the workers finish together
    failures = []
    if todo:
        workers = min(jobs, len(todo))
        ctx = multiprocessing.get_context("spawn")
        with ProcessPoolExecutor(max_workers=workers, mp_context=ctx) as pool:
            futures = {}
            for nb, p in todo:
                futures[pool.submit(_execute_in_worker, nb, out_dir / nb.name, p)] = (nb, p)
            for fut in as_completed(futures):
                nb, p = futures[fut]
                try:
                    runtime = fut.result()
                except Exception as e:   # a failure (even a kernel that never started) fails its chapter;
                                         # the other chapters still finish and are cached
                    failures.append(str(e) if isinstance(e, RunError) else f"{nb.name} failed: {type(e).__name__}: {e}")
                    _log(nb.stem, "FAILED")
                    continue
                out_nb = out_dir / nb.name
                entry = {"runtime_s": round(runtime, 2), "device": mach["device"], "parameters": p}
                store.put(nb.stem, keys[nb.stem], out_nb, entry)
                done[nb.stem] = {**entry, "executed": str(out_nb), "cached": False, "values": glued(out_nb)}
                last[nb.stem] = runtime
                _log(nb.stem, f"done in {runtime:.1f} s, {len(done[nb.stem]['values'])} glued values")
        _runtimes_path().parent.mkdir(parents=True, exist_ok=True)
        tmp = _runtimes_path().with_name(f"runtimes.{os.getpid()}.tmp")   # a reader never sees half a file
        tmp.write_text(json.dumps(runtimes, indent=1) + "\n")
        os.replace(tmp, _runtimes_path())
    if failures:
        raise RunError("\n".join(failures))
    results["notebooks"] = {nb.stem: done[nb.stem] for nb in notebooks}   # book order
    return results


def _rerun_execute(nb: Path, out_dir: Path, params: dict) -> dict:
    """One chapter, uncached, into ``out_dir``: what ``chapter`` hands to ``rerun``."""
    rest = {k: v for k, v in params.items() if k not in ("profile", "device")}
    return run(params["profile"], params["device"], [nb], rest, out_dir, use_cache=False)


def reference_path(profile: str) -> Path:
    return ROOT / "results" / f"{profile}.json"


def drift_against_reference(results: dict) -> drift_mod.DriftReport | None:
    """The run against ``results/<profile>.json``; None where that profile has no reference."""
    path = reference_path(results["profile"])
    if not path.is_file():
        return None
    try:
        reference = json.loads(path.read_text())
    except ValueError as e:
        raise RunError(f"{path} is not valid JSON ({e}); restore it from git or make refresh-results") from None
    try:
        return drift_mod.compare(reference, results, str(path.relative_to(ROOT)))
    except drift_mod.ReferenceError as e:
        raise RunError(str(e)) from None


def write_status(results: dict, report: drift_mod.DriftReport | None, src: Path = SRC) -> Path:
    """The status page: what ran, where, how long, with which versions and CPU kernels, from which
    commit, and how its numbers compare with the committed reference."""
    env, mach = results["environment"], results["machine"]
    kernel_env = ", ".join(f"{k}={mach[k]}" for k in cache_mod.KERNEL_ENV if mach.get(k))
    lines = ["# Build status", "",
             "Generated by `python -m twopaths.machinery.runner` when the site was built: every chapter below was",
             "executed by papermill, in this build or in an earlier one whose inputs (notebook, parameters,",
             "library code and data, pinned requirements, CPU kernels) were the same.", "",
             f"- profile: `{results['profile']}`",
             f"- commit: `{env['commit']}`, built {env['date']}",
             f"- CPU kernels: torch `{mach['cpu_capability']}`" + (f" ({kernel_env})" if kernel_env else ""),
             f"- device: {mach['device']}",
             f"- Python {env['python']}; " + ", ".join(f"{k} {v}" for k, v in env["packages"].items()), ""]
    if report is None:
        lines += ["No reference results for this profile: nothing was compared.", ""]
    else:
        lines += [f"The glued values against the committed reference `{report.reference_path}` (which a "
                  "build never rewrites; `make refresh-results` does, on purpose): "
                  f"{report.matched_text()}. Each value is compared within its own tolerance: exact, "
                  "float rounding, seed spread or bound. Timings are glued but never compared, so a "
                  "chapter compares fewer values than it glues. A re-run on other CPU kernels draws each "
                  "seed's training afresh, so a seed-spread mean is compared by a two-sample t-test that "
                  f"{RERUN_CONFIDENCE:.1%} of honest re-runs pass, value by value: the two means may differ "
                  "by up to Student's t times the pooled sd of the two runs' seeds times sqrt(1/n + 1/m). "
                  f"With equal sds that is {t_quantile(RERUN_CONFIDENCE, 4) * math.sqrt(2 / 3):.1f} sd at "
                  f"three seeds and {t_quantile(RERUN_CONFIDENCE, 2):.1f} sd at two; where seeds disagree "
                  "widely it can span the whole range of "
                  "the value, and the page's prose then says the toy cannot tell outcomes apart.", "",
                  "Prose compares two outcomes by a two-sided Welch t-test over their seeds at "
                  f"{DIFFERENCE_CONFIDENCE:.0%}, with a gap past the larger seed sd: at three seeds "
                  f"against three with equal sds a gap must exceed "
                  f"{t_quantile(DIFFERENCE_CONFIDENCE, 4) * math.sqrt(2 / 3):.2f} sd to count, and "
                  f"{t_quantile(DIFFERENCE_CONFIDENCE, 2) / math.sqrt(3):.2f} sd against a fixed "
                  "threshold.", ""]
    by_chapter = {c.chapter: c for c in report.chapters} if report else {}
    lines += ["Chapters in book order. A cached chapter's run time is that of the build that executed it.", "",
              "| chapter | run time (s) | executed | device | glued values | within tolerance |",
              "|---|---:|---|---|---:|---:|"]
    for name, r in results["notebooks"].items():
        c = by_chapter.get(name)
        within = f"{c.matched} of {c.compared}" if c else "not compared"
        lines.append(f"| [{name}](../notebooks/{name}.ipynb) | {r['runtime_s']:.1f} | "
                     f"{'earlier (cached)' if r['cached'] else 'this build'} | {r['device']} | "
                     f"{len(r['values'])} | {within} |")
    moved = report.lines() if report else []
    if moved:
        lines += ["", "## Values outside their tolerance", "",
                  "These differ from the reference by more than their stated tolerance: either the book "
                  "changed, or this machine computes differently.", ""]
        lines += [f"- `{m}`" for m in moved]
    path = src / "book" / "status.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    (src / "book" / "chapter-times.json").write_text(
        json.dumps({name: round(r["runtime_s"], 1) for name, r in results["notebooks"].items()}, indent=1) + "\n")
    path.write_text("\n".join(lines) + "\n")
    return path


def reference_values(results: dict) -> dict:
    """What ``results/<profile>.json`` keeps: the glued values with units and tolerances, without
    times and paths."""
    return {"profile": results["profile"],
            "notebooks": {nb: {"values": r["values"]} for nb, r in results["notebooks"].items()}}


def _jupyter_book(builder: str, src: Path, root: Path) -> Path:
    """Jupyter Book's ``builder`` over the staged sources, execution off, warnings as errors; the
    folder it wrote."""
    if not (src / "_toc.yml").is_file() or not (src / "notebooks").is_dir():
        raise RunError(f"nothing to build in {src}: execute the chapters first (python -m twopaths.machinery.runner run)")
    cmd = [str(Path(sys.executable).parent / "jupyter-book"), "build", str(src), "--builder", builder,
           "--path-output", str(root), "-W", "-n", "--keep-going"]
    if subprocess.run(cmd).returncode:
        raise RunError(f"the {builder} build failed (warnings count as errors); see the messages above")
    return root / "_build" / builder


# Where the site links the workshop's notebooks from (book/workshop.md), zipped beside the pages.
KITS_IN_SITE = Path("_static") / "downloads"


def build_kits(root: Path = ROOT, out: Path | None = None) -> dict[str, Path]:
    """The package's wheel (``machinery.kit``) and the student and instructor notebooks of every
    chapter (``machinery.student``), zipped, in the site's downloads (the site's own folder when
    ``out`` is None)."""
    from . import kit, student

    out = out or root / "_build" / "html" / KITS_IN_SITE
    notebooks = sorted((root / "notebooks").glob("*.ipynb"))
    try:
        wheel = kit.build_wheel(root, out)
        return {**student.write_kits(notebooks, out, wheel), "wheel": wheel}
    except (student.StudentError, kit.KitError) as e:
        raise RunError(str(e)) from None


WHEELHOUSE = BUILD / "wheelhouse"
KIT = BUILD / "twopaths-workshop-kit.zip"
SETUP_SHEET = ROOT / "book" / "workshop-setup.md"


def build_wheelhouse(root: Path = ROOT, out: Path = WHEELHOUSE) -> Path:
    """Every wheel a learner's install needs on this platform (``kit.wheelhouse``), with the
    package's own; torch from ``TORCH_INDEX`` when it is set."""
    from . import kit

    try:
        wheel = kit.build_wheel(root, BUILD / "dist")
        return kit.wheelhouse(root, wheel, out, os.environ.get("TORCH_INDEX", ""))
    except kit.KitError as e:
        raise RunError(str(e)) from None


def build_workshop_kit(root: Path = ROOT) -> Path:
    """The site, the notebooks, the wheelhouse and the setup sheet in one zip (``kit.workshop_kit``)."""
    from . import kit

    site = root / "_build" / "html"
    kits = {k: site / KITS_IN_SITE / f"twopaths-{k}-notebooks.zip" for k in ("student", "instructor")}
    try:
        return kit.workshop_kit(site, kits, WHEELHOUSE, SETUP_SHEET, KIT)
    except kit.KitError as e:
        raise RunError(str(e)) from None


def build_site(src: Path = SRC, root: Path = ROOT) -> Path:
    """The HTML site, with the workshop's notebooks among its downloads."""
    index = _jupyter_book("html", src, root) / "index.html"
    build_kits(root, index.parent / KITS_IN_SITE)
    return index


PDF = BUILD / "pdf" / "twopaths.pdf"
# Where the site links the PDF from (book/how-to-use.md): html_static_path is copied only when the
# site is built, and the PDF is printed from a build of its own, so it is put there afterwards.
PDF_IN_SITE = Path("_static") / "downloads" / PDF.name


def build_single_page(src: Path = SRC, root: Path = ROOT) -> Path:
    """The whole book as one HTML page (Sphinx's singlehtml builder), from the same staged sources
    and executed notebooks as the site. Sphinx writes it as the toc's root page (book/intro.html)
    with every address relative to the folder above, so it is moved there, with its links into
    itself made plain anchors (a PDF keeps those as links within the document)."""
    out = _jupyter_book("singlehtml", src, root)
    page = f"{yaml.safe_load((src / '_toc.yml').read_text())['root']}.html"
    single = out / "twopaths.html"
    single.write_text((out / page).read_text().replace(f'href="{page}#', 'href="#'))
    return single


# What the PDF's contents page lists: each chapter's title and its sections (its bookmarks go
# one level deeper, to every heading).
PDF_CONTENTS = "main section > h1, main section > h2"


def build_pdf(root: Path = ROOT, pdf: Path = PDF) -> Path:
    """Print the single-page book to ``pdf`` with the system Chromium once MathJax has typeset it,
    with bookmarks and a contents page that gives each chapter's and section's page; refuse a PDF
    with untypeset math, missing images or a contents entry without its page, and put a copy beside
    the HTML site."""
    from . import browser

    try:
        printed = browser.print_pdf(build_single_page(root=root), pdf, contents=PDF_CONTENTS)
    except FileNotFoundError as e:
        raise RunError(str(e)) from None
    if problems := printed.problems():
        raise RunError(f"{pdf}: " + "; ".join(problems))
    c = printed.content
    site = root / "_build" / "html"
    if (site / "index.html").is_file():
        (site / PDF_IN_SITE).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(pdf, site / PDF_IN_SITE)
    print(f"[twopaths] printed {c['typesetMath']} typeset formulas, {c['images']} images, {c['figures']} figures "
          f"and {c['tables']} tables, {c['contents']} contents entries with their pages and "
          f"{len(browser.outline_titles(pdf))} bookmarks; {pdf.stat().st_size / 1e6:.1f} MB", flush=True)
    return pdf


def check_other_kernels(profile: str, jobs: str, force: bool) -> None:
    """Run every chapter under each of ``OTHER_KERNELS`` (``ATEN_CPU_CAPABILITY``), each into its own
    build folder, and compare strictly with ``results/<profile>.json``: the tolerances must hold on
    machines whose CPUs round differently from the one that wrote the reference."""
    parse_jobs(jobs)
    failed = []
    for capability in OTHER_KERNELS:
        env = {**os.environ, "ATEN_CPU_CAPABILITY": capability,
               "TWOPATHS_BUILD": str(ROOT / "_build" / "kernels" / capability)}
        print(f"[twopaths] CPU kernels '{capability}': running the {profile} profile", flush=True)
        cmd = [sys.executable, "-m", "twopaths.machinery.runner"]
        ran = subprocess.run(cmd + ["run", "--profile", profile, "--jobs", jobs] + (["--force"] if force else []),
                             env=env, cwd=ROOT)
        if ran.returncode or subprocess.run(cmd + ["compare", "--profile", profile, "--strict"], env=env,
                                            cwd=ROOT).returncode:
            failed.append(capability)
    if failed:
        raise RunError(f"the {profile} profile leaves its tolerances under CPU kernels {', '.join(failed)} "
                       "(see above)")
    print(f"[twopaths] every value within tolerance under CPU kernels {', '.join(OTHER_KERNELS)}")


def _read_results(path: Path, what: str) -> dict:
    if not path.is_file():
        raise RunError(f"no {what} at {path}")
    try:
        return json.loads(path.read_text())
    except ValueError as e:
        raise RunError(f"{what} {path} is not valid JSON ({e})") from None


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m twopaths.machinery.runner", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run", help="execute every chapter in the toc")
    r.add_argument("--profile", default="default", choices=PROFILES)
    r.add_argument("--device", default="auto", choices=DEVICES)
    r.add_argument("--jobs", default="", help="worker processes (default: one per core)")
    r.add_argument("--force", action="store_true", help="execute every chapter, cached or not")
    r.add_argument("--results", type=Path, help="also write the reference values here (e.g. results/gpu-h200.json)")
    c = sub.add_parser("chapter", help="re-run one chapter with other parameters")
    c.add_argument("notebook", type=Path)
    c.add_argument("-p", nargs=2, action="append", default=[], metavar=("NAME", "VALUE"))
    cmp_ = sub.add_parser("compare", help="compare glued values with the committed results/<profile>.json")
    cmp_.add_argument("--profile", default="default", choices=PROFILES)
    cmp_.add_argument("--strict", action="store_true", help="fail when any value leaves its tolerance")
    rf = sub.add_parser("refresh", help="overwrite results/<profile>.json with the last run's values, on purpose")
    rf.add_argument("--profile", default="default", choices=PROFILES)
    k = sub.add_parser("kernels", help="run and strictly compare under torch's other CPU kernel paths")
    k.add_argument("--profile", default="smoke", choices=PROFILES)
    k.add_argument("--jobs", default="", help="worker processes (default: one per core)")
    k.add_argument("--force", action="store_true", help="execute every chapter, cached or not")
    sub.add_parser("site", help="build the HTML from the last run")
    sub.add_parser("pdf", help="print the whole book from the last run into one PDF")
    sub.add_parser("student", help="the student and instructor notebooks, zipped into the site's downloads")
    sub.add_parser("wheelhouse", help="download every wheel a learner's install needs (torch from $TORCH_INDEX)")
    sub.add_parser("kit", help="zip the site, the notebooks, the wheelhouse and the setup sheet")
    args = ap.parse_args(argv)

    try:
        if args.cmd == "run":
            jobs = parse_jobs(args.jobs)
            notebooks = toc_notebooks()
            shutil.rmtree(SRC, ignore_errors=True)   # no executed copy of a removed chapter survives
            stage_sources()
            results = run(args.profile, args.device, notebooks, jobs=jobs, use_cache=not args.force)
            out = BUILD / "results" / f"{args.profile}.json"
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_text(json.dumps(results, indent=1) + "\n")
            write_status(results, drift_against_reference(results))
            if args.results:
                args.results.write_text(json.dumps(reference_values(results), indent=1) + "\n")
            print(f"[twopaths] results: {out}")
        elif args.cmd == "chapter":
            nb = args.notebook.resolve()
            if not nb.is_file():
                raise RunError(f"notebook: {args.notebook} does not exist; chapters are in notebooks/")
            params = {"profile": "default", "device": "auto", **{k: parse_value(v) for k, v in args.p}}
            params = absolute_paths(params, Path.cwd())
            check_parameters(nb, params)   # before a folder is made or a kernel started
            folder = rerun_mod.rerun(nb, params, BUILD, ROOT, _rerun_execute)
            print(f"[twopaths] re-run folder: {folder}\n[twopaths] executed notebook: {folder / nb.name}\n"
                  f"[twopaths] results: {folder / 'results.json'}\n[twopaths] page: {folder / 'html' / (nb.stem + '.html')}"
                  f"\n[twopaths] figures: {folder / 'figures'}")
        elif args.cmd in ("compare", "refresh"):
            current = _read_results(BUILD / "results" / f"{args.profile}.json", f"results of a {args.profile} run")
            ref_path = reference_path(args.profile)
            if args.cmd == "refresh":
                ref_path.write_text(json.dumps(reference_values(current), indent=1) + "\n")
                print(f"[twopaths] wrote {ref_path}; review the diff before committing it")
                return 0
            if not ref_path.exists():
                raise RunError(f"no reference {ref_path}; create it with: make refresh-results PROFILE={args.profile}")
            report = drift_against_reference(current)
            if report.ok:
                print(f"[twopaths] {report.summary()}")
                return 0
            message = ("glued numbers left their tolerance against " + str(ref_path) + ":\n  "
                       + "\n  ".join(report.lines()) + f"\n[twopaths] {report.summary()}"
                       + f"\nIf the change is intended: make refresh-results PROFILE={args.profile}")
            if args.strict:
                raise RunError(message)
            print(f"[twopaths] WARNING: {message}\n[twopaths] the site is built all the same; "
                  "its status page lists these (STRICT=1 makes this an error)", file=sys.stderr)
        elif args.cmd == "kernels":
            check_other_kernels(args.profile, args.jobs, args.force)
        elif args.cmd == "site":
            print(f"[twopaths] site: {build_site()}")
        elif args.cmd == "student":
            for kind, path in build_kits().items():
                print(f"[twopaths] {kind}: {path}")
        elif args.cmd == "wheelhouse":
            from .kit import size_bytes
            house = build_wheelhouse()
            print(f"[twopaths] wheelhouse: {house} ({len(list(house.glob('*.whl')))} wheels, "
                  f"{size_bytes(house) / 1e6:,.0f} MB)")
        elif args.cmd == "kit":
            path = build_workshop_kit()
            print(f"[twopaths] workshop kit: {path} ({path.stat().st_size / 1e6:,.0f} MB)")
        elif args.cmd == "pdf":
            print(f"[twopaths] pdf: {build_pdf()}")
    except RunError as e:
        print(f"[twopaths] ERROR: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

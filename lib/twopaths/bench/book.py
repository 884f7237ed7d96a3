"""How long `make book` takes: cold, again with nothing changed, and after editing one chapter.

    python -m twopaths.bench.book                      # default profile, one worker per core
    python -m twopaths.bench.book --profile smoke --jobs 1 --chapter notebooks/01-kv-wall.ipynb

Works on a copy of the book's tracked files in a temporary folder, so the copy starts with an
empty execution cache and this checkout's cache and notebooks are left alone. Each step runs the
chapters and builds the site, as `make book` does; the times come from this one run and are this
machine's, so read them as ratios (a warm build against a cold one), not as constants.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from ..machinery.runner import ROOT, RunError, parse_jobs


def _copy_tracked(dest: Path) -> None:
    files = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    for name in filter(None, files.decode().split("\0")):
        target = dest / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, target)


def _build(copy: Path, profile: str, jobs: int) -> float:
    env = {**os.environ, "PYTHONPATH": str(copy / "lib")}
    env.pop("TWOPATHS_BUILD", None)
    start = time.perf_counter()
    for step in (["run", "--profile", profile, "--jobs", str(jobs)], ["site"]):
        done = subprocess.run([sys.executable, "-m", "twopaths.machinery.runner", *step], cwd=copy, env=env,
                              capture_output=True, text=True)
        if done.returncode:
            raise RunError(f"{' '.join(step)} failed in {copy}:\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}")
    return time.perf_counter() - start


def _touch_markdown(nb: Path) -> None:
    """An edit that changes the notebook but no number in it: a space after its first paragraph."""
    data = json.loads(nb.read_text())
    cell = next(c for c in data["cells"] if c["cell_type"] == "markdown")
    cell["source"] = "".join(cell["source"]) + " "
    nb.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n")


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(prog="python -m twopaths.bench.book", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--profile", default="default", choices=("default", "smoke"))
    ap.add_argument("--jobs", default="", help="worker processes (default: one per core)")
    ap.add_argument("--chapter", default="notebooks/01-kv-wall.ipynb", help="the chapter to edit")
    args = ap.parse_args(argv)
    jobs = parse_jobs(args.jobs)
    if not (ROOT / args.chapter).is_file():
        raise SystemExit(f"chapter: {args.chapter} does not exist; chapters are in notebooks/")
    with tempfile.TemporaryDirectory(prefix="twopaths-bench-") as tmp:
        copy = Path(tmp)
        _copy_tracked(copy)
        times = {"cold": _build(copy, args.profile, jobs), "nothing changed": _build(copy, args.profile, jobs)}
        _touch_markdown(copy / args.chapter)
        times[f"{Path(args.chapter).stem} edited"] = _build(copy, args.profile, jobs)
    print(f"make book, profile {args.profile}, {jobs} worker(s), on {os.cpu_count()} cores:")
    for step, seconds in times.items():
        print(f"  {step:<32} {seconds:7.1f} s   {seconds / times['cold']:.2f} of cold")
    return times


if __name__ == "__main__":
    main()

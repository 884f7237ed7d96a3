"""``make mutants``, its first half: mutants written by hand, as a developer might really err.

mutmut draws operator flips (``+`` for ``-``, ``<`` for ``<=``); a reviewer's bugs look different:
statements in the wrong order, a slice one short, a mean over the wrong set, a normalisation
dropped, a config key ignored, a count rounded the wrong way. Each mutant here is a small, named
patch of one module: the exact source text it replaces (``old``, found exactly once in that module)
and what it puts there (``new``), with the tests that should see it. The suite lives in
``tools/hand-mutants/<package>/<module>.yaml``, one file per module of ``lib/twopaths``.

Each mutant is applied to a copy of the tree in a scratch folder (the working tree is never
mutated) and its tests are run there. Its status:

- ``killed``: a test failed (``timeout`` too: a mutant that hangs the tests is seen);
- ``survived``: every test passed, so no test can tell the bug from the code;
- ``moved``: ``old`` is no longer in the module exactly once, because a refactor moved the site.
  It is reported, never counted as killed; the mutant has to be written again;
- ``no tests``: its tests were not found, so it says nothing either way.

The score is killed / (killed + survived); ``moved`` and ``no tests`` are listed apart.

    python tools/hand_mutants.py [MODULE_GLOB ...] [--list] [--workers 1]
"""

from __future__ import annotations

import argparse
import fnmatch
import os
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
SUITE = Path(__file__).with_name("hand-mutants")
LIB = ROOT / "lib" / "twopaths"
# the classes of error the suite covers; every mutant names one
KINDS = ("statement order", "off by one", "wrong set", "dropped normalisation", "ignored key",
         "rounding direction", "wrong constant", "wrong operand", "dropped term", "wrong branch")
FIELDS = {"name", "kind", "why", "old", "new", "tests"}
TIMEOUT_S = 600


@dataclass(frozen=True)
class Mutant:
    module: str        # "layers/kda.py", relative to lib/twopaths
    name: str
    kind: str
    why: str
    old: str
    new: str
    tests: tuple[str, ...]

    def site_count(self, source: str) -> int:
        return source.count(self.old)

    def apply(self, source: str) -> str:
        return source.replace(self.old, self.new, 1)


def load(suite: Path = SUITE) -> list[Mutant]:
    """Every mutant of the suite, checked for shape: fields, kinds, unique names, a real change."""
    out, names = [], set()
    for path in sorted(suite.rglob("*.yaml")):
        module = path.relative_to(suite).with_suffix(".py").as_posix()
        if not (LIB / module).is_file():
            raise ValueError(f"{path.name}: no module lib/twopaths/{module} for its mutants")
        for i, entry in enumerate(yaml.safe_load(path.read_text()) or []):
            where = f"{path.relative_to(suite)} entry {i}"
            if set(entry) != FIELDS:
                raise ValueError(f"{where}: fields {sorted(entry)}, expected {sorted(FIELDS)}")
            if entry["kind"] not in KINDS:
                raise ValueError(f"{where}: kind {entry['kind']!r}, allowed {KINDS}")
            if entry["name"] in names:
                raise ValueError(f"{where}: the name {entry['name']!r} is used twice")
            if entry["old"] == entry["new"]:
                raise ValueError(f"{where}: old and new are the same text")
            names.add(entry["name"])
            out.append(Mutant(module, entry["name"], entry["kind"], entry["why"].strip(),
                              entry["old"], entry["new"], tuple(entry["tests"])))
    return out


def copy_tree(scratch: Path) -> Path:
    """The files git would commit (tracked and untracked, not ignored), with ../shared beside them."""
    files = subprocess.run(["git", "-C", str(ROOT), "ls-files", "-co", "--exclude-standard", "-z"],
                           check=True, capture_output=True, text=True).stdout.split("\0")
    repo = scratch / "repo"
    for f in filter(None, files):
        if (ROOT / f).is_file():
            (repo / f).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / f, repo / f)
    if (ROOT.parent / "shared").exists():
        (scratch / "shared").symlink_to(ROOT.parent / "shared")
    return repo


def env_for(repo: Path) -> dict[str, str]:
    # PYTHONPATH comes before the editable install's .pth, so the copy's twopaths is the one imported
    return dict(os.environ, PYTHONPATH=str(repo / "lib"), OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")


def pytest(repo: Path, tests: tuple[str, ...]) -> int:
    cmd = [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider",
           "-m", "not notebooks and not site", *tests]
    try:
        return subprocess.run(cmd, cwd=repo, env=env_for(repo), capture_output=True,
                              timeout=TIMEOUT_S).returncode
    except subprocess.TimeoutExpired:
        return -1


def run_one(mutant: Mutant, scratch: Path) -> str:
    """The mutant's status, from its own copy of the tree (so mutants may run at once)."""
    source = (LIB / mutant.module).read_text()
    if mutant.site_count(source) != 1:
        return "moved"
    if not all((ROOT / t.split("::")[0]).exists() for t in mutant.tests):
        return "no tests"
    mutated = mutant.apply(source)
    compile(mutated, mutant.module, "exec")          # a mutant that does not compile is a typo here
    repo = copy_tree(Path(tempfile.mkdtemp(dir=scratch)))
    (repo / "lib" / "twopaths" / mutant.module).write_text(mutated)
    rc = pytest(repo, mutant.tests)
    shutil.rmtree(repo.parent)
    return {0: "survived", 1: "killed", 2: "killed", -1: "timeout"}.get(rc, "no tests")


def baseline(mutants: list[Mutant], scratch: Path) -> list[str]:
    """The tests the mutants name, run on the unmutated copy: a test that fails already kills nothing."""
    repo = copy_tree(Path(tempfile.mkdtemp(dir=scratch)))
    out = subprocess.run([sys.executable, "-c", "import twopaths; print(twopaths.__file__)"],
                         cwd=repo, env=env_for(repo), capture_output=True, text=True).stdout
    if not out.startswith(str(repo)):
        raise SystemExit(f"the copy's twopaths is not the one imported ({out.strip()})")
    tests = tuple(sorted({t for m in mutants for t in m.tests}))
    rc = pytest(repo, tests)
    shutil.rmtree(repo.parent)
    return [] if rc == 0 else [f"the mutants' tests fail unmutated (pytest exit {rc}): {' '.join(tests)}"]


def table(results: dict[Mutant, str]) -> list[str]:
    rows = [f"{'module':<28} {'mutants':>7} {'killed':>6} {'survived':>8} {'moved':>5} {'no tests':>8} {'score':>6}"]
    for module in sorted({m.module for m in results}):
        st = [s for m, s in results.items() if m.module == module]
        killed = sum(s in ("killed", "timeout") for s in st)
        counted = killed + st.count("survived")
        score = f"{100 * killed / counted:5.1f}%" if counted else "    -"
        rows.append(f"{module:<28} {len(st):>7} {killed:>6} {st.count('survived'):>8} {st.count('moved'):>5} "
                    f"{st.count('no tests'):>8} {score:>6}")
    killed = sum(s in ("killed", "timeout") for s in results.values())
    counted = killed + sum(s == "survived" for s in results.values())
    rows.append(f"{'all':<28} {len(results):>7} {killed:>6} {counted - killed:>8} "
                f"{sum(s == 'moved' for s in results.values()):>5} "
                f"{sum(s == 'no tests' for s in results.values()):>8} "
                f"{100 * killed / max(counted, 1):5.1f}%")
    odd = [f"  {s:<9} {m.module} {m.name}: {m.why}" for m, s in results.items() if s not in ("killed", "timeout")]
    return rows + (["", "not killed:"] + odd if odd else [])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("modules", nargs="*", default=["*"], help="module globs relative to twopaths/ ('layers/*.py')")
    ap.add_argument("--list", action="store_true", help="list the mutants and their sites, run nothing")
    ap.add_argument("--workers", type=int, default=1, help="mutants run at once")
    args = ap.parse_args(argv)
    mutants = [m for m in load() if any(fnmatch.fnmatch(m.module, g) for g in args.modules)]
    if not mutants:
        raise SystemExit(f"no hand-written mutant in a module matching {args.modules}")
    if args.list:
        for m in mutants:
            print(f"{m.module:<28} {m.name:<40} {m.kind}")
        return 0
    scratch = Path(tempfile.mkdtemp(prefix="twopaths-hand-mutants-"))
    try:
        failing = baseline(mutants, scratch)
        if failing:
            print("\n".join(failing))
            return 1
        print(f"{len(mutants)} hand-written mutants of {len({m.module for m in mutants})} modules", flush=True)
        with ThreadPoolExecutor(args.workers) as pool:
            statuses = list(pool.map(lambda m: run_one(m, scratch), mutants))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    results = dict(zip(mutants, statuses))
    print("\n".join(table(results)))
    return 0 if all(s in ("killed", "timeout") for s in statuses) else 1


if __name__ == "__main__":
    sys.exit(main())

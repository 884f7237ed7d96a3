"""The execution cache: a chapter re-executes only when something it depends on changed.

A chapter's key is a SHA-256 over everything that can change what it computes:
- the notebook file and the parameters it runs with;
- every ``twopaths`` module its cells import or run by name (``python -m twopaths.audit``), followed
  through the library's own imports (also those inside functions), and the data files (YAML) beside
  each of those modules;
- ``requirements.txt`` (the pinned versions) and the versions actually installed;
- the machine's kernel path: torch's CPU capability, the environment variables that pick CPU
  kernels (``ATEN_CPU_CAPABILITY``, OpenBLAS's core type), the device, and the Python version.

Entries live under ``_build/cache/<chapter>/<key>/``: the executed notebook and its results entry,
with the notebook's own hash, so a damaged entry is noticed and re-executed, never trusted.
"""

from __future__ import annotations

import ast
import functools
import errno
import hashlib
import json
import os
import re
import shutil
from dataclasses import dataclass
from pathlib import Path

PACKAGE = "twopaths"
KERNEL_ENV = ("ATEN_CPU_CAPABILITY", "OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE", "CUDA_VISIBLE_DEVICES")
_MODULE = re.compile(rf"{PACKAGE}(\.\w+)+")
RENAME_TRIES = 8   # swaps tried before a put yields to other processes putting the same key
KEEP = 4   # entries kept per chapter: native, the two other kernel paths of the test, one spare


def _code_cells(nb: Path) -> list[str]:
    cells = json.loads(nb.read_text())["cells"]
    # IPython's magics and shell escapes are not Python; they import nothing of ours.
    return ["\n".join(line for line in "".join(c["source"]).splitlines()
                      if not line.lstrip().startswith(("%", "!")))
            for c in cells if c["cell_type"] == "code"]


def _imports(tree: ast.AST, package: str | None) -> set[str]:
    """Dotted names of what ``tree`` imports (``from a import b`` gives ``a`` and ``a.b``);
    ``package`` resolves relative imports."""
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                if package is None:
                    continue
                base_parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(base_parts + ([node.module] if node.module else []))
            else:
                base = node.module or ""
            names.add(base)
            names.update(f"{base}.{a.name}" for a in node.names)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and _MODULE.fullmatch(node.value):
            names.add(node.value)   # a module run by name, as in `python -m twopaths.audit`
    return {n for n in names if n == PACKAGE or n.startswith(PACKAGE + ".")}


def _module_file(name: str, lib: Path) -> Path | None:
    """The file of module ``name`` under ``lib`` (the folder holding the package), if it is one."""
    path = lib.joinpath(*name.split("."))
    if (path / "__init__.py").is_file():
        return path / "__init__.py"
    if path.with_suffix(".py").is_file():
        return path.with_suffix(".py")
    return None   # an attribute (a function or constant), not a module


def _data_files(folder: Path) -> set[Path]:
    """Data beside a module: non-Python files in its folder and in sub-folders that are not packages."""
    found = set()
    for p in folder.iterdir():
        if p.is_file() and p.suffix not in (".py", ".pyc"):
            found.add(p)
        elif p.is_dir() and p.name != "__pycache__" and not (p / "__init__.py").exists():
            found.update(q for q in p.rglob("*") if q.is_file() and "__pycache__" not in q.parts)
    return found


def dependencies(nb: Path, lib: Path) -> list[Path]:
    """Every library file a chapter's execution can read: the modules it imports, followed
    transitively, their parent packages, and the data beside them."""
    pending = set()
    for source in _code_cells(nb):
        pending |= _imports(ast.parse(source), None)
    seen_modules: set[str] = set()
    files: set[Path] = set()
    while pending:
        name = pending.pop()
        parts = name.split(".")
        for i in range(1, len(parts) + 1):   # importing a.b.c runs a and a.b first
            mod = ".".join(parts[:i])
            if mod in seen_modules:
                continue
            path = _module_file(mod, lib)
            if path is None:
                continue
            seen_modules.add(mod)
            files.add(path)
            files |= _data_files(path.parent)
            package = mod if path.name == "__init__.py" else mod.rpartition(".")[0]
            pending |= _imports(ast.parse(path.read_text()), package) - seen_modules
    return sorted(files)


@functools.cache
def installed_versions() -> str:
    """Every installed distribution and its version: an upgrade in the environment re-runs the
    chapters even when nobody edited requirements.txt."""
    from importlib import metadata

    return "\n".join(sorted(f"{d.metadata['Name']}=={d.version}" for d in metadata.distributions()))


def key(nb: Path, params: dict, lib: Path, requirements: Path, machine: dict) -> str:
    """The content hash a cached execution of ``nb`` is filed under."""
    h = hashlib.sha256()

    def add(label: str, data: bytes) -> None:
        h.update(label.encode() + b"\0" + hashlib.sha256(data).digest())

    add("notebook", nb.read_bytes())
    add("parameters", json.dumps(params, sort_keys=True, default=str).encode())
    for f in dependencies(nb, lib):
        add("lib:" + f.relative_to(lib).as_posix(), f.read_bytes())
    add("requirements", requirements.read_bytes() if requirements.is_file() else b"")
    add("installed", installed_versions().encode())
    add("machine", json.dumps(machine, sort_keys=True).encode())
    return h.hexdigest()[:24]


class CorruptEntry(Exception):
    """A cache entry that cannot be read back whole; the runner re-executes the chapter."""


@dataclass(frozen=True)
class Cache:
    folder: Path

    def _entry(self, chapter: str, k: str) -> Path:
        return self.folder / chapter / k

    def get(self, chapter: str, k: str) -> tuple[Path, dict] | None:
        """The cached notebook and results entry, None when there is none; CorruptEntry when the
        entry is damaged (unreadable, incomplete, or its notebook no longer matches its hash)."""
        folder = self._entry(chapter, k)
        if not folder.exists():
            return None
        try:
            meta = json.loads((folder / "entry.json").read_text())
            notebook = folder / "notebook.ipynb"
            data = notebook.read_bytes()
            if hashlib.sha256(data).hexdigest() != meta["notebook_sha256"]:
                raise CorruptEntry(f"{folder}: the notebook does not match the hash it was stored with")
            json.loads(data)
            return notebook, meta["result"]
        except CorruptEntry:
            raise
        except (OSError, ValueError, KeyError, TypeError) as e:
            raise CorruptEntry(f"{folder}: {type(e).__name__}: {e}") from None

    def put(self, chapter: str, k: str, notebook: Path, result: dict) -> None:
        """Store an execution, replacing an entry under the same key. Safe beside other processes
        putting entries (pytest's workers, two builds at once): each writes its own temporary
        folder and swaps it in by renames, so a reader sees a whole entry or none, and a folder
        another process removes meanwhile is skipped, not an error."""
        folder = self._entry(chapter, k)
        tmp = folder.with_name(f"{folder.name}.{os.getpid()}.tmp")
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir(parents=True)
        shutil.copy2(notebook, tmp / "notebook.ipynb")
        meta = {"notebook_sha256": hashlib.sha256(notebook.read_bytes()).hexdigest(), "result": result}
        (tmp / "entry.json").write_text(json.dumps(meta, indent=1) + "\n")
        for _ in range(RENAME_TRIES):
            try:
                tmp.rename(folder)   # an interrupted put leaves only a .tmp folder, never a half entry
                break
            except OSError as e:
                if e.errno not in (errno.ENOTEMPTY, errno.EEXIST):
                    raise
            # an entry is in the way: move it aside (its name ends .tmp, so no prune takes it)
            old = folder.with_name(f"{folder.name}.{os.getpid()}.old.tmp")
            try:
                folder.rename(old)
            except FileNotFoundError:   # another process moved or pruned it first: try again
                continue
            shutil.rmtree(old, ignore_errors=True)
        else:   # other processes kept putting this key: theirs is the same execution, keep it
            shutil.rmtree(tmp, ignore_errors=True)
        self._prune(folder)

    @staticmethod
    def _prune(kept: Path) -> None:
        """Keep the KEEP newest entries of a chapter, never a folder still being written."""
        dated = []
        for p in kept.parent.iterdir():
            if p == kept or p.suffix == ".tmp":
                continue
            try:
                if p.is_dir():
                    dated.append((p.stat().st_mtime, p))
            except FileNotFoundError:   # another process pruned it meanwhile
                pass
        for _, p in sorted(dated, reverse=True)[KEEP - 1:]:
            shutil.rmtree(p, ignore_errors=True)

    def discard(self, chapter: str, k: str) -> None:
        shutil.rmtree(self._entry(chapter, k), ignore_errors=True)

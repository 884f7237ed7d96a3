"""The execution cache never serves a stale chapter: its dependencies cover every library file a
chapter imports, an edit re-runs exactly the chapters that import it, and a damaged entry is
executed again."""

import ast
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

import twopaths
from twopaths.machinery import cache, runner

ROOT = Path(__file__).resolve().parents[1]
LIB = Path(twopaths.__file__).resolve().parent.parent
CHAPTERS = runner.toc_notebooks(ROOT)
MACHINE = {"cpu_capability": "TEST", "device": "cpu"}


def _runtime_imports(nb: Path) -> set[Path]:
    """The twopaths files Python really loads for a chapter's import statements (ground truth)."""
    statements = []
    for source in cache._code_cells(nb):
        statements += [ast.unparse(n) for n in ast.walk(ast.parse(source))
                       if isinstance(n, (ast.Import, ast.ImportFrom)) and not getattr(n, "level", 0)]
    probe = "\n".join(statements + [
        "import sys",
        "print('\\n'.join(m.__file__ for n, m in sys.modules.items()"
        " if n.split('.')[0] == 'twopaths' and getattr(m, '__file__', None)))"])
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    return {Path(line).resolve() for line in out.split()}


@pytest.fixture(scope="module")
def loaded():
    return {nb.stem: _runtime_imports(nb) for nb in CHAPTERS}


@pytest.mark.parametrize("nb", CHAPTERS, ids=lambda p: p.stem)
def test_dependencies_cover_every_module_a_chapter_loads(nb, loaded):
    deps = {p.resolve() for p in cache.dependencies(nb, LIB)}
    assert loaded[nb.stem] <= deps, sorted(map(str, loaded[nb.stem] - deps))


def _keys(lib: Path) -> dict[str, str]:
    return {nb.stem: cache.key(nb, {"profile": "smoke"}, lib, ROOT / "requirements.txt", MACHINE) for nb in CHAPTERS}


@pytest.mark.parametrize("module, edit", [
    ("calc/offload.py", lambda s: s.replace("def ", "def _unused():\n    return 0\n\n\ndef ", 1)),
    ("layers/kda.py", lambda s: s + "\n\ndef _edited():\n    return 1\n"),
    ("claims/trends.yaml", lambda s: s + "\n# edited\n"),
])
def test_editing_the_library_reruns_exactly_the_chapters_that_import_it(tmp_path, loaded, module, edit):
    lib = tmp_path / "lib"
    shutil.copytree(LIB / "twopaths", lib / "twopaths", ignore=shutil.ignore_patterns("__pycache__"))
    before = _keys(lib)
    target = lib / "twopaths" / module
    target.write_text(edit(target.read_text()))
    after = _keys(lib)
    rerun = {ch for ch in before if before[ch] != after[ch]}
    # Exactly the chapters whose dependencies hold the file: those that import it, directly, through
    # the library, or inside a library function they call (the audit loads its checks that way).
    reach = {nb.stem for nb in CHAPTERS if (LIB / "twopaths" / module) in cache.dependencies(nb, LIB)}
    assert rerun == reach
    if target.suffix == ".py":   # and at least the chapters whose imports really load it
        assert {ch for ch, files in loaded.items() if (LIB / "twopaths" / module).resolve() in files} <= rerun
    assert rerun and rerun != set(before), rerun   # some chapters, never all of them


def test_the_key_changes_with_parameters_machine_and_requirements(tmp_path):
    nb = CHAPTERS[0]
    base = cache.key(nb, {"profile": "smoke"}, LIB, ROOT / "requirements.txt", MACHINE)
    assert base == cache.key(nb, {"profile": "smoke"}, LIB, ROOT / "requirements.txt", dict(MACHINE))
    assert base != cache.key(nb, {"profile": "default"}, LIB, ROOT / "requirements.txt", MACHINE)
    assert base != cache.key(nb, {"profile": "smoke"}, LIB, ROOT / "requirements.txt",
                             {**MACHINE, "ATEN_CPU_CAPABILITY": "avx2"})
    req = tmp_path / "requirements.txt"
    req.write_text((ROOT / "requirements.txt").read_text() + "extra==1.0\n")
    assert base != cache.key(nb, {"profile": "smoke"}, LIB, req, MACHINE)


def _entry(tmp_path):
    nb = tmp_path / "x.ipynb"
    nb.write_text(json.dumps({"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}))
    store = cache.Cache(tmp_path / "cache")
    store.put("x", "k1", nb, {"runtime_s": 1.0})
    return store


def test_a_damaged_entry_is_refused(tmp_path):
    store = _entry(tmp_path)
    notebook, entry = store.get("x", "k1")
    assert entry == {"runtime_s": 1.0} and json.loads(notebook.read_text())["cells"] == []
    assert store.get("x", "other") is None
    notebook.write_text(notebook.read_text().replace("[]", "[ ]"))        # one byte changed
    with pytest.raises(cache.CorruptEntry, match="does not match"):
        store.get("x", "k1")
    (tmp_path / "cache" / "x" / "k1" / "entry.json").write_text("{not json")
    with pytest.raises(cache.CorruptEntry):
        store.get("x", "k1")


def _put_many(folder: str, nb: str, who: int) -> None:
    store = cache.Cache(Path(folder))
    for i in range(PUTS):
        store.put("x", f"k{i % 3}", Path(nb), {"who": who, "i": i})


PUTS, WRITERS = 60, 6   # enough that the old put (remove, then rename) lost a race on most runs


def test_a_put_replaces_the_entry_under_its_key(tmp_path):
    store = _entry(tmp_path)
    store.put("x", "k1", tmp_path / "x.ipynb", {"runtime_s": 2.0})
    assert store.get("x", "k1")[1] == {"runtime_s": 2.0}
    assert sorted(p.name for p in (store.folder / "x").iterdir()) == ["k1"]


def test_a_put_keeps_the_newest_entries_of_a_chapter(tmp_path):
    store = _entry(tmp_path)
    store.discard("x", "k1")
    for i in range(cache.KEEP + 2):
        store.put("x", f"n{i}", tmp_path / "x.ipynb", {"i": i})
        os.utime(store.folder / "x" / f"n{i}", (1e9 + i, 1e9 + i))   # file times one second apart
    names = sorted(p.name for p in (store.folder / "x").iterdir())
    assert names == [f"n{i}" for i in range(2, cache.KEEP + 2)]


def test_processes_putting_at_once_leave_whole_entries(tmp_path):
    """pytest's workers (and two builds at once) put entries of one chapter together, some under
    the same key: no put fails, no temporary folder is left, and every entry reads back whole.
    One shared temporary name, a prune that takes another process's temporary folder, or one
    that stats a folder another process just removed, fails."""
    import multiprocessing

    store = _entry(tmp_path)
    nb = tmp_path / "x.ipynb"
    ctx = multiprocessing.get_context("fork")
    procs = [ctx.Process(target=_put_many, args=(str(store.folder), str(nb), w)) for w in range(WRITERS)]
    for q in procs:
        q.start()
    for q in procs:
        q.join(60)
    assert [q.exitcode for q in procs] == [0] * WRITERS
    left = sorted(p.name for p in (store.folder / "x").iterdir())
    assert not [n for n in left if n.endswith(".tmp")], left
    for name in left:
        notebook, entry = store.get("x", name)
        assert entry["i"] % 3 == int(name[1:]) and json.loads(notebook.read_text())["cells"] == []


def _tiny_book(root: Path) -> Path:
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    params = nbformat.v4.new_code_cell('profile = "smoke"\ndevice = "cpu"')
    params.metadata["tags"] = ["parameters"]
    nb.cells = [params, nbformat.v4.new_code_cell(
        "from twopaths.machinery import chapter\nrun = chapter.setup(profile, device)\nchapter.glue('x', 2, '1')")]
    path = root / "tiny.ipynb"
    nbformat.write(nb, path)
    return path


@pytest.mark.notebooks
def test_the_runner_reuses_reexecutes_on_change_and_never_trusts_a_damaged_entry(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(runner, "CACHE", tmp_path / "cache")
    nb = _tiny_book(tmp_path)
    out = tmp_path / "out"
    first = runner.run("smoke", "cpu", [nb], out_dir=out)
    second = runner.run("smoke", "cpu", [nb], out_dir=out)
    assert not first["notebooks"]["tiny"]["cached"] and second["notebooks"]["tiny"]["cached"]
    assert second["notebooks"]["tiny"]["values"]["x"]["value"] == 2
    nb.write_text(nb.read_text().replace("'x', 2", "'x', 3"))
    third = runner.run("smoke", "cpu", [nb], out_dir=out)
    assert not third["notebooks"]["tiny"]["cached"] and third["notebooks"]["tiny"]["values"]["x"]["value"] == 3
    entry = max((p for p in (tmp_path / "cache" / "tiny").iterdir() if p.is_dir()), key=lambda p: p.stat().st_mtime)
    (entry / "notebook.ipynb").write_text("damaged")
    capsys.readouterr()
    fourth = runner.run("smoke", "cpu", [nb], out_dir=out)
    assert not fourth["notebooks"]["tiny"]["cached"] and fourth["notebooks"]["tiny"]["values"]["x"]["value"] == 3
    assert "cache entry is damaged, executing again" in capsys.readouterr().out
    forced = runner.run("smoke", "cpu", [nb], out_dir=out, use_cache=False)
    assert not forced["notebooks"]["tiny"]["cached"]


def test_a_module_run_by_name_is_a_dependency():
    audit = ROOT / "notebooks" / "14-audit.ipynb"
    assert "twopaths.audit" in "".join(cache._code_cells(audit))     # it runs `python -m twopaths.audit`
    assert LIB / "twopaths" / "audit.py" in cache.dependencies(audit, LIB)


def test_the_key_follows_the_installed_versions(monkeypatch):
    nb = CHAPTERS[0]
    before = cache.key(nb, {"profile": "smoke"}, LIB, ROOT / "requirements.txt", MACHINE)
    monkeypatch.setattr(cache, "installed_versions", lambda: "torch==9.9")
    assert before != cache.key(nb, {"profile": "smoke"}, LIB, ROOT / "requirements.txt", MACHINE)

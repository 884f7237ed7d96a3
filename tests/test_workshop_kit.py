"""The workshop kit (``machinery.kit``): a learner's environment built from the wheelhouse alone,
with no network and no package index, runs a serving chapter's student notebook; the notebook's
first cell installs twopaths from the wheelhouse where it is missing, and does nothing where it is
installed."""

import ast
import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from twopaths.machinery import kit, student

ROOT = Path(__file__).resolve().parents[1]
CHAPTER = ROOT / "notebooks" / "09-parallelism.ipynb"
# pip loads no config file (this machine's names extra indexes), and any connection it tried would
# go to a closed port
OFFLINE = {"PIP_CONFIG_FILE": os.devnull, "PIP_NO_INDEX": "1", "HTTP_PROXY": "http://127.0.0.1:9",
           "HTTPS_PROXY": "http://127.0.0.1:9", "ALL_PROXY": "http://127.0.0.1:9"}


def run(cmd, **kw):
    ran = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, **kw)
    assert ran.returncode == 0, f"{cmd[:3]}: {ran.stdout[-1500:]}\n{ran.stderr[-3000:]}"
    return ran


def test_the_install_cell_does_nothing_where_twopaths_is_installed(monkeypatch):
    calls = []
    monkeypatch.setattr(subprocess, "check_call", lambda *a, **k: calls.append(a))
    exec(kit.INSTALL_SOURCE, {})
    assert calls == []
    assert max(len(line) for line in kit.INSTALL_SOURCE.splitlines()) <= 79


def test_the_install_cell_takes_the_wheelhouse_where_twopaths_is_missing(monkeypatch, tmp_path):
    import importlib.util

    calls = []
    monkeypatch.setattr(subprocess, "check_call", lambda cmd, **k: calls.append(cmd))
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None)
    (tmp_path / "wheelhouse").mkdir()
    (tmp_path / "notebooks").mkdir()
    monkeypatch.chdir(tmp_path / "notebooks")
    exec(kit.INSTALL_SOURCE, {})
    assert calls == [[sys.executable, "-m", "pip", "install", "-q", "--no-index", "--find-links",
                      str(tmp_path / "wheelhouse"), "twopaths"]]
    calls.clear()
    (tmp_path / "wheelhouse").rmdir()
    with pytest.raises(ModuleNotFoundError, match="put the wheel"):
        exec(kit.INSTALL_SOURCE, {})
    (tmp_path / "notebooks" / "twopaths-0.1.0-py3-none-any.whl").write_bytes(b"")
    exec(kit.INSTALL_SOURCE, {})
    assert calls[0][-1] == str(tmp_path / "notebooks" / "twopaths-0.1.0-py3-none-any.whl")


def test_every_student_notebook_starts_with_the_install_cell():
    nb = student.student(json.loads(CHAPTER.read_text()), 9, CHAPTER.name)
    assert "".join(nb["cells"][0]["source"]) == kit.INSTALL_SOURCE
    codes = [c for c in nb["cells"] if c["cell_type"] == "code"]
    assert codes[0] is nb["cells"][0] and "parameters" in codes[1]["metadata"]["tags"]


def test_the_kit_refuses_a_missing_part(tmp_path):
    with pytest.raises(kit.KitError, match="the site"):
        kit.workshop_kit(tmp_path / "site", {}, tmp_path, tmp_path / "SETUP.md", tmp_path / "kit.zip")


def test_a_wheelhouse_without_network_says_what_it_needs(tmp_path, monkeypatch):
    for k, v in OFFLINE.items():
        monkeypatch.setenv(k, v)
    wheel = tmp_path / "twopaths-0.1.0-py3-none-any.whl"
    wheel.write_bytes(b"")
    with pytest.raises(kit.KitError, match=r"make wheelhouse needs the package index \(PyPI\), reachable"):
        kit.wheelhouse(ROOT, wheel, tmp_path / "wheelhouse")


@pytest.mark.notebooks
def test_a_learner_installs_offline_and_runs_a_serving_chapter(tmp_path):
    wheel = kit.build_wheel(ROOT, tmp_path / "dist")
    house = kit.wheelhouse(ROOT, wheel, tmp_path / "wheelhouse", os.environ.get("TORCH_INDEX", ""))
    assert (house / wheel.name).is_file()
    env = {**os.environ, **OFFLINE, "JUPYTER_DATA_DIR": str(tmp_path / "jupyter")}
    for key in ("VIRTUAL_ENV", "PYTHONPATH"):
        env.pop(key, None)
    venv = tmp_path / "env"
    run([sys._base_executable, "-m", "venv", venv])
    py = venv / "bin" / "python"
    run([py, "-m", "pip", "install", "-q", "--no-index", "--find-links", house, "twopaths[workshop]"], env=env)
    # the learner's notebook must install the package itself, from the wheelhouse beside its folder
    run([py, "-m", "pip", "uninstall", "-q", "-y", "twopaths"], env=env)
    folder = tmp_path / "notebooks"
    folder.mkdir()
    nb = student.student(json.loads(CHAPTER.read_text()), 9, CHAPTER.name)
    (folder / CHAPTER.name).write_text(json.dumps(nb))
    run([venv / "bin" / "jupyter", "nbconvert", "--to", "notebook", "--execute", "--output", "ran.ipynb",
         folder / CHAPTER.name], env=env, cwd=folder)
    ran = json.loads((folder / "ran.ipynb").read_text())
    errors = [(c["metadata"].get("twopaths", {}).get("stub_of"), o["evalue"]) for c in ran["cells"]
              if c["cell_type"] == "code" for o in c.get("outputs", []) if o.get("output_type") == "error"]
    assert errors == [(n, f"Exercise {n}") for n in ("9.1", "9.2", "9.3")]
    # the install cell put twopaths into the learner's environment, not the test's
    run([py, "-c", "import twopaths"], env=env)
    # and the chapter computed what the site shows: its glued plan for K3
    glued = {c["metadata"]["scrapbook"]["name"]: c["data"] for cell in ran["cells"] if cell["cell_type"] == "code"
             for c in cell["outputs"] if "scrapbook" in c.get("metadata", {})}
    reference = json.loads((ROOT / "results" / "default.json").read_text())["notebooks"]["09-parallelism"]["values"]
    shown = {k: v for k, v in glued.items() if k in reference}
    assert len(shown) > 20
    key = "k3_plan_nodes"
    assert ast.literal_eval(glued[key]["application/papermill.record/text/plain"]) == reference[key]["value"]


def test_the_kit_zips_every_part(tmp_path):
    site = tmp_path / "site"
    (site / "notebooks").mkdir(parents=True)
    (site / "index.html").write_text("<html></html>")
    house = tmp_path / "wheelhouse"
    house.mkdir()
    (house / "a-1.0-py3-none-any.whl").write_bytes(b"PK")
    kits = student.write_kits([CHAPTER], tmp_path / "downloads")
    out = kit.workshop_kit(site, kits, house, ROOT / "book" / "workshop-setup.md", tmp_path / "kit.zip")
    with zipfile.ZipFile(out) as z:
        names = set(z.namelist())
    assert names == {"twopaths-kit/SETUP.md", "twopaths-kit/site/index.html",
                     "twopaths-kit/wheelhouse/a-1.0-py3-none-any.whl",
                     f"twopaths-kit/notebooks/{CHAPTER.name}", f"twopaths-kit/instructor/{CHAPTER.name}"}

"""A re-run of one chapter with a reader's own parameters, kept apart from every other re-run.

    python -m twopaths.machinery.runner chapter notebooks/11-prefill-decode.ipynb -p gpus '["b300"]'

Each re-run gets its own folder, ``_build/chapters/<chapter>/<hash>/``, named by a hash of the chapter
and its parameters, holding:

- ``parameters.json``: what the chapter ran with (profile and device included);
- ``<chapter>.ipynb``: the executed notebook;
- ``results.json``: every value the chapter glued, with its unit and how it may vary;
- ``html/<chapter>.html``: the executed chapter as a standalone page (the book's style, offline),
  opening with a box that gives the parameters it ran with (the parameters cell below it shows the
  chapter's defaults, which those replaced);
- ``figures/*.png``: each figure the chapter drew, named by its caption label when it has one.

Every re-run page shares one copy of MathJax (24 MB), in ``_build/chapters/_shared/``, linked from
its ``html/_static/``.

The folder is written whole or not at all: a run that fails leaves ``<hash>.failed/`` (the notebook as
far as it got, no ``results.json``) and removes any earlier ``<hash>/``, so no results file outlives
the run that would have replaced it.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import yaml

from .launch import launch_config


def folder_name(chapter: str, params: dict) -> str:
    """The re-run's folder: a short hash of the chapter and its parameters (order-free)."""
    text = json.dumps({"chapter": chapter, "parameters": params}, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:12]


def extract_figures(nb_path: Path, out: Path) -> list[Path]:
    """Write each PNG output of the executed notebook to ``out``; return the files in page order."""
    nb = json.loads(nb_path.read_text())
    files = []
    for i, cell in enumerate(nb["cells"]):
        label = cell.get("metadata", {}).get("mystnb", {}).get("figure", {}).get("name")
        pngs = [o["data"]["image/png"] for o in cell.get("outputs", [])
                if "image/png" in o.get("data", {})]
        for j, data in enumerate(pngs):
            stem = label or f"cell-{i:02d}"
            name = f"{stem}.png" if len(pngs) == 1 else f"{stem}-{j + 1}.png"
            out.mkdir(parents=True, exist_ok=True)
            path = out / name
            path.write_bytes(base64.b64decode("".join(data) if isinstance(data, list) else data))
            files.append(path)
    return files


def parameters_box(params: dict) -> dict:
    """A markdown cell that says what a re-run ran with: the page's parameters cell, hidden or not,
    shows the chapter's defaults."""
    def shown(v) -> str:
        text = json.dumps(v, default=str)
        return text if len(text) <= 200 else text[:197] + "..."

    rows = "\n".join(f"- `{k} = {shown(v)}`" for k, v in params.items())
    text = ("```{admonition} This page is a re-run\n:class: important\n\nIt ran with these parameters, "
            "in place of the chapter's defaults (which its parameters cell shows):\n\n" + rows + "\n```")
    return {"cell_type": "markdown", "metadata": {}, "source": text}


def render_page(nb_path: Path, root: Path, out: Path, params: dict | None = None) -> Path:
    """The executed chapter as a one-page Jupyter Book under ``out``, with the book's configuration,
    and (given ``params``) a box after its title that names them.

    Links to other chapters cannot resolve in a one-page book, so the build is not run with
    warnings as errors; the full site (``runner site``) is."""
    work = out.parent / (out.name + ".src")
    shutil.rmtree(work, ignore_errors=True)
    (work / "book").mkdir(parents=True)
    nb = json.loads(nb_path.read_text())
    if params:
        nb["cells"].insert(1, parameters_box(params))     # after the title cell
    (work / nb_path.name).write_text(json.dumps(nb, indent=1) + "\n")
    config = launch_config(yaml.safe_load((root / "_config.yml").read_text()))
    config["sphinx"]["config"]["twopaths_index_in"] = ""   # a one-page book has no parts to end
    (work / "_config.yml").write_text(yaml.safe_dump(config, sort_keys=False))
    shutil.copy2(root / "book" / "references.bib", work / "book" / "references.bib")
    if (root / "book" / "_static").is_dir():
        shutil.copytree(root / "book" / "_static", work / "book" / "_static")
    (work / "_toc.yml").write_text(f"format: jb-book\nroot: {nb_path.stem}\n")
    cmd = [str(Path(sys.executable).parent / "jupyter-book"), "build", str(work), "--path-output",
           str(work), "-q"]
    done = subprocess.run(cmd, capture_output=True, text=True)
    html = work / "_build" / "html"
    if done.returncode or not (html / f"{nb_path.stem}.html").is_file():
        raise RuntimeError(f"rendering {nb_path.name} to HTML failed:\n{done.stdout[-2000:]}{done.stderr[-2000:]}")
    shutil.rmtree(out, ignore_errors=True)
    shutil.copytree(html, out)
    shutil.rmtree(work, ignore_errors=True)
    return out / f"{nb_path.stem}.html"


def share_static(html: Path, shared: Path, name: str = "mathjax") -> None:
    """Replace ``html/_static/<name>`` with a relative link to one copy under ``shared``, named by
    its content (file names and sizes), so re-runs built by another version keep their own."""
    here = html / "_static" / name
    if not here.is_dir() or here.is_symlink():
        return
    files = sorted((str(f.relative_to(here)), f.stat().st_size) for f in here.rglob("*") if f.is_file())
    target = shared / f"{name}-{hashlib.sha256(json.dumps(files).encode()).hexdigest()[:12]}"
    if target.is_dir():
        shutil.rmtree(here)
    else:
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.move(str(here), str(target))
    here.symlink_to(os.path.relpath(target, here.parent), target_is_directory=True)


def rerun(nb: Path, params: dict, build: Path, root: Path,
          execute: Callable[[Path, Path, dict], dict]) -> Path:
    """Execute ``nb`` with ``params`` (profile and device included) into its own folder under
    ``build/chapters/<chapter>/`` and return that folder. ``execute(nb, out_dir, params)`` runs the
    notebook into ``out_dir`` and returns the results document; it raises when the chapter fails."""
    base = build / "chapters" / nb.stem
    final = base / folder_name(nb.stem, params)
    partial = final.with_name(final.name + ".partial")
    failed = final.with_name(final.name + ".failed")
    for stale in (partial, failed):
        shutil.rmtree(stale, ignore_errors=True)
    partial.mkdir(parents=True)
    (partial / "parameters.json").write_text(json.dumps({"chapter": nb.stem, **params}, indent=1,
                                                        default=str) + "\n")
    try:
        results = execute(nb, partial, params)
    except BaseException as e:
        shutil.rmtree(final, ignore_errors=True)   # an earlier run's results must not pass for this one's
        partial.rename(failed)
        if isinstance(e, Exception) and len(e.args) == 1 and str(partial) in str(e.args[0]):
            raise type(e)(str(e.args[0]).replace(str(partial), str(failed))) from None   # where it now lies
        raise
    for entry in results.get("notebooks", {}).values():         # where the notebook lies once renamed
        if str(entry.get("executed", "")).startswith(str(partial)):
            entry["executed"] = str(final) + entry["executed"][len(str(partial)):]
    (partial / "results.json").write_text(json.dumps(results, indent=1) + "\n")
    extract_figures(partial / nb.name, partial / "figures")
    render_page(partial / nb.name, root, partial / "html", params)
    share_static(partial / "html", build / "chapters" / "_shared")
    shutil.rmtree(final, ignore_errors=True)
    partial.rename(final)
    return final

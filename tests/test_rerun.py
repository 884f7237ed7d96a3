"""A chapter re-run with a reader's parameters: its own folder, written whole or not at all."""

import base64
import json
import os
import re
import shutil

import nbformat
import pytest

from twopaths.machinery import rerun, runner

PNG = base64.b64encode(bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d4944415478da63f8cfc0f01f0005000201a5f5e1e40000000049454e44ae426082")).decode()


def _notebook(path, figure_name=None):
    nb = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell("plot()")
    cell.outputs = [nbformat.v4.new_output("display_data", data={"image/png": PNG})]
    if figure_name:
        cell.metadata["mystnb"] = {"figure": {"caption": "A caption.", "name": figure_name}}
    nb.cells = [nbformat.v4.new_markdown_cell("# A chapter"), cell]
    nbformat.write(nb, path)


def test_folder_name_depends_on_chapter_and_parameters_not_their_order():
    a = rerun.folder_name("08-x", {"profile": "smoke", "gpus": ["b300"]})
    assert a == rerun.folder_name("08-x", {"gpus": ["b300"], "profile": "smoke"})
    assert a != rerun.folder_name("08-x", {"profile": "smoke", "gpus": ["h200"]})
    assert a != rerun.folder_name("09-x", {"profile": "smoke", "gpus": ["b300"]})


def test_figures_are_written_as_png_named_by_their_label(tmp_path):
    _notebook(tmp_path / "a.ipynb", "fig-01-wall")
    files = rerun.extract_figures(tmp_path / "a.ipynb", tmp_path / "figures")
    assert [f.name for f in files] == ["fig-01-wall.png"]
    assert files[0].read_bytes().startswith(b"\x89PNG")
    _notebook(tmp_path / "b.ipynb")
    assert [f.name for f in rerun.extract_figures(tmp_path / "b.ipynb", tmp_path / "f2")] == ["cell-01.png"]


def _fake_execute(values):
    def execute(nb, out_dir, params):
        out_dir.mkdir(parents=True, exist_ok=True)
        (out_dir / nb.name).write_text(nb.read_text())
        if values is None:
            raise runner.RunError(f"{nb.name} failed in cell 3 (ParameterError); see {out_dir / nb.name}")
        return {"profile": params["profile"], "notebooks": {nb.stem: {"values": values,
                                                                       "executed": str(out_dir / nb.name)}}}
    return execute


def test_a_run_writes_its_folder_whole(tmp_path, monkeypatch):
    monkeypatch.setattr(rerun, "render_page", lambda nb, root, out, params=None: out)
    nb = tmp_path / "08-x.ipynb"
    _notebook(nb, "fig-08-x")
    params = {"profile": "smoke", "device": "cpu", "gpus": ["b300"]}
    folder = rerun.rerun(nb, params, tmp_path / "build", tmp_path, _fake_execute({"n": 1}))
    assert folder.parent == tmp_path / "build" / "chapters" / "08-x"
    assert json.loads((folder / "parameters.json").read_text()) == {"chapter": "08-x", **params}
    assert json.loads((folder / "results.json").read_text())["notebooks"]["08-x"]["values"] == {"n": 1}
    assert (folder / "figures" / "fig-08-x.png").is_file()
    # the results name the notebook where it lies now, not the folder it was written in
    assert json.loads((folder / "results.json").read_text())["notebooks"]["08-x"]["executed"] == str(folder / nb.name)
    # other parameters, another folder: the first run's answers stay where they were
    other = rerun.rerun(nb, {**params, "gpus": ["h200"]}, tmp_path / "build", tmp_path, _fake_execute({"n": 2}))
    assert other != folder and (folder / "results.json").is_file()


def test_a_failed_run_leaves_no_results_behind(tmp_path, monkeypatch):
    monkeypatch.setattr(rerun, "render_page", lambda nb, root, out, params=None: out)
    nb = tmp_path / "08-x.ipynb"
    _notebook(nb)
    params = {"profile": "smoke", "device": "cpu", "concurrency": 5}
    folder = rerun.rerun(nb, params, tmp_path / "build", tmp_path, _fake_execute({"n": 1}))
    assert (folder / "results.json").is_file()
    # the same parameters again, but now the chapter fails (say the code changed): the old results go
    with pytest.raises(runner.RunError) as e:
        rerun.rerun(nb, params, tmp_path / "build", tmp_path, _fake_execute(None))
    assert not folder.exists()
    failed = folder.with_name(folder.name + ".failed")
    assert str(e.value).endswith(f"see {failed / '08-x.ipynb'}")      # the path the reader can open
    assert (failed / "08-x.ipynb").is_file() and not (failed / "results.json").exists()


def test_the_page_renders_standalone_with_the_books_config(tmp_path):
    root = runner.ROOT
    nb = tmp_path / "08-x.ipynb"
    _notebook(nb, "fig-08-x")
    page = rerun.render_page(nb, root, tmp_path / "html", {"profile": "smoke", "gpus": ["b300"]})
    html = page.read_text()
    assert page.name == "08-x.html" and "A chapter" in html and "A caption." in html
    assert (tmp_path / "html" / "_static").is_dir()
    # the box names what it ran with, before the first cell after the title
    assert "This page is a re-run" in html and html.index("re-run") < html.index("A caption.")
    assert "gpus = [&quot;b300&quot;]" in re.sub(r"<[^>]+>", "", html)
    # two pages, one MathJax: the second links to the first's copy
    twin = tmp_path / "twin"
    shutil.copytree(tmp_path / "html", twin, symlinks=True)
    for html_dir in (tmp_path / "html", twin):
        rerun.share_static(html_dir, tmp_path / "_shared")
    shared = list((tmp_path / "_shared").iterdir())
    assert len(shared) == 1 and (shared[0] / "core.js").is_file()
    for html_dir in (tmp_path / "html", twin):
        link = html_dir / "_static" / "mathjax"
        assert link.is_symlink() and link.resolve() == shared[0].resolve() and not os.path.isabs(os.readlink(link))

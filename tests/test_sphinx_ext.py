"""The book's Sphinx extension: each inline script once, the index in the navigation, titles as written."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from docutils import nodes
from docutils.utils import new_document
from pybtex.database import Entry
from sphinx import addnodes
from sphinx.builders.html._assets import _JavaScript

from twopaths.machinery import sphinx_ext

ROOT = Path(__file__).resolve().parent.parent


def test_an_inline_script_registered_as_none_and_as_empty_is_written_once():
    thebe = 'const THEBE_JS_URL = "x"'
    scripts = [_JavaScript("_static/doctools.js", priority=200), _JavaScript("", body=thebe),
               _JavaScript("_static/sphinx-thebe.js", **{"async": "async"}), _JavaScript(None, body=thebe),
               _JavaScript(None, body="var other = 1")]
    assert sphinx_ext.unique_scripts(scripts) == [scripts[0], scripts[1], scripts[2], scripts[4]]
    # the same body at another priority, or a different body, is a different script
    other_priority = [_JavaScript(None, body=thebe), _JavaScript(None, body=thebe, priority=200)]
    assert len(sphinx_ext.unique_scripts(other_priority)) == 2


def toctree(caption: str, entries: list) -> addnodes.toctree:
    node = addnodes.toctree()
    node["caption"], node["entries"] = caption, list(entries)
    return node


def test_the_index_ends_the_part_named():
    doc = new_document("intro")
    doc += [toctree("Parts", [(None, "a")]), toctree("Reference", [(None, "book/glossary")])]
    assert sphinx_ext.add_index_entry(doc, "Reference")
    assert sphinx_ext.add_index_entry(doc, "Reference")   # once, however often the root is read
    trees = list(doc.findall(addnodes.toctree))
    assert trees[0]["entries"] == [(None, "a")]
    assert trees[1]["entries"] == [(None, "book/glossary"), ("Index", "genindex")]
    assert not sphinx_ext.add_index_entry(doc, "Appendix")


def test_the_configured_part_exists():
    config = yaml.safe_load((ROOT / "_config.yml").read_text())["sphinx"]
    assert "twopaths.machinery.sphinx_ext" in config["extra_extensions"]
    captions = [part["caption"] for part in yaml.safe_load((ROOT / "_toc.yml").read_text())["parts"]]
    assert config["config"]["twopaths_index_in"] in captions


@pytest.mark.parametrize("title", ["mHC: Manifold-Constrained Hyper-Connections", "FlashMLA", "Kimi K3 config.json"])
def test_bibliography_titles_keep_their_case(title):
    entry = Entry("misc", fields={"title": title, "year": "2026"})
    text = sphinx_ext.KeepCaseStyle().format_title(entry, "title").format_data({"entry": entry}).render_as("text")
    assert text == f"{title}."
    # what the stock style printed
    from pybtex.style.formatting.alpha import Style

    assert Style().format_title(entry, "title").format_data({"entry": entry}).render_as("text") != f"{title}."


def _doc_with(*children, output=True):
    doc = new_document("test")
    section = nodes.section()
    holder = nodes.container(classes=["cell_output"] if output else [])
    holder.extend(children)
    section += holder
    doc += section
    return doc


def _table():
    table, group = nodes.table(), nodes.tgroup(cols=1)
    group += nodes.colspec(colwidth=1)
    table += group
    return table


def _bold(text):
    # as MyST parses "**title**": a strong between two empty texts
    return nodes.paragraph("", "", nodes.Text(""), nodes.strong(text, text), nodes.Text(""))


def test_a_shown_tables_bold_title_becomes_its_numbered_caption():
    table = _table()
    doc = _doc_with(_bold("Nodes on H200"), table, nodes.paragraph("", "A note."))
    assert len(sphinx_ext.caption_tables(doc)) == 1
    assert isinstance(table[0], nodes.title) and table[0].astext() == "Nodes on H200"
    assert table["ids"]                                   # numfig numbers only tables with an id
    assert [p.astext() for p in doc.findall(nodes.paragraph)] == ["A note."]


@pytest.mark.parametrize("before, output", [
    (lambda: _bold("Prose in bold"), False),             # a table of the prose, not of a cell's output
    (lambda: nodes.paragraph("", "", nodes.Text("Some "), nodes.strong("words", "words")), True),
    (lambda: nodes.paragraph("", "plain"), True),
])
def test_other_tables_are_left_as_they_are(before, output):
    table = _table()
    doc = _doc_with(before(), table, output=output)
    assert sphinx_ext.caption_tables(doc) == {} and not table.next_node(nodes.title)


def test_an_anchored_title_labels_its_table_for_numref():
    """``chapter.show("configs", t)`` on chapter 16 writes an empty anchor before the bold title; the
    caption keeps the title alone, and the table answers to ``tbl-16-configs``."""
    from twopaths.machinery.report import table

    md = table("What the configs say", ["model"], [["K3"]]).markdown(anchor="configs").data
    assert md.startswith('<a id="tbl-configs"></a>**What the configs say**')
    anchor = nodes.raw("", '<a id="tbl-configs">', format="html")
    close = nodes.raw("", "</a>", format="html")
    title = nodes.paragraph("", "", anchor, close, nodes.Text(""), nodes.strong("T", "What the configs say"))
    t = _table()
    doc = _doc_with(title, t)
    assert sphinx_ext.caption_tables(doc, "notebooks/16-your-model") == {
        "tbl-16-configs": ("tbl-16-configs", "What the configs say")}
    assert t[0].astext() == "What the configs say" and doc.ids["tbl-16-configs"] is t
    assert sphinx_ext.table_label("notebooks/findings", "ratios") == "tbl-findings-ratios"
    assert table("T", ["a"], [[1]]).markdown(anchor="units_Kimi K3").data.startswith('<a id="tbl-units-kimi-k3"></a>')
    assert not table("", ["a"], [[1]]).markdown(anchor="x").data.startswith("<a")    # no title, no caption


def test_the_single_page_book_renders_a_hidden_cell_beside_sphinx_exercise(tmp_path):
    """sphinx-exercise registers its nodes for singlehtml by name, after which Sphinx gave that
    builder none of the html handlers: myst-nb's toggle around a hidden input stopped the
    single-page build (make pdf) with NotImplementedError. A real Sphinx build of both, each way."""
    import json

    from sphinx.application import Sphinx

    src = tmp_path / "src"
    src.mkdir()
    (src / "index.md").write_text("# Book\n\n```{toctree}\nchapter\n```\n")
    cell = {"cell_type": "code", "execution_count": 1, "id": "c1", "metadata": {"tags": ["hide-input"]},
            "source": "1 + 1", "outputs": [{"output_type": "execute_result", "execution_count": 1,
                                             "metadata": {}, "data": {"text/plain": "2"}}]}
    (src / "chapter.ipynb").write_text(json.dumps({
        "cells": [{"cell_type": "markdown", "id": "m1", "metadata": {}, "source": "# Chapter"}, cell],
        "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}},
        "nbformat": 4, "nbformat_minor": 5}))

    def build(extra: str) -> Path:
        (src / "conf.py").write_text('extensions = ["myst_nb", "sphinx_exercise"' + extra + ']\n'
                                     'nb_execution_mode = "off"\n')
        out = tmp_path / f"out{len(extra)}"
        Sphinx(str(src), str(src), str(out), str(tmp_path / f"doctrees{len(extra)}"), "singlehtml",
               status=None, warning=None, freshenv=True).build()
        return out / "index.html"

    with pytest.raises(NotImplementedError, match="HideCodeCellNode"):
        build("")
    page = build(', "twopaths.machinery.sphinx_ext"').read_text()
    folded = page[page.index('<details class="admonition hide'):page.index("</details>")]
    assert 'Show code cell source' in folded and '<span class="o">+</span>' in folded   # the input, folded
    assert "<pre><span></span>2\n</pre>" in page[page.index("</details>"):]             # its output, shown

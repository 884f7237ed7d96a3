"""Sphinx extension for the book's site (listed in ``_config.yml``).

- Every inline script is written once. Sphinx 7.4 registers a script added with
  ``app.add_js_file(None, body=...)`` after the builder starts both under the name ``None`` and
  under ``''``, so each page carried it twice; sphinx-thebe's ``const THEBE_JS_URL`` declared twice
  is a SyntaxError in every page's console. Fixed upstream in Sphinx 8.2 (sphinx-doc/sphinx#13402);
  jupyter-book 1 pins Sphinx 7.
- ``twopaths_index_in``: the caption of the ``_toc.yml`` part whose navigation ends with a link to
  the general index. The toc file format has no entry for Sphinx's generated pages, while a
  toctree may name them.
- Bibliography style ``twopaths``: pybtex's ``alpha`` with titles as written. ``alpha`` lowercases
  every title after its first letter ("Mhc", "Flashmla"), which only braces in the .bib prevent.
"""

from __future__ import annotations

from docutils import nodes
from pybtex.plugin import register_plugin
from pybtex.style.formatting.alpha import Style as AlphaStyle
from pybtex.style.template import field, sentence
from sphinx import addnodes

INDEX = ("Index", "genindex")


def _script_key(script) -> tuple:
    return (script.filename or "", script.priority, tuple(sorted(script.attributes.items())))


def unique_scripts(scripts: list) -> list:
    """``scripts`` in order, each once; a body-only script counts the same named None or ''."""
    seen, out = set(), []
    for script in scripts:
        key = _script_key(script)
        if key not in seen:
            seen.add(key)
            out.append(script)
    return out


def _dedupe_scripts(app, pagename, templatename, context, doctree) -> None:
    if "script_files" in context:
        context["script_files"] = unique_scripts(context["script_files"])


def add_index_entry(doctree: nodes.document, caption: str) -> bool:
    """Append the general index to the toctree captioned ``caption``; False when there is none."""
    for toctree in doctree.findall(addnodes.toctree):
        if toctree.get("caption") == caption:
            if INDEX not in toctree["entries"]:
                toctree["entries"].append(INDEX)
            return True
    return False


def _index_in_navigation(app, doctree: nodes.document) -> None:
    caption = app.config.twopaths_index_in
    if caption and app.env.docname == app.config.root_doc and not add_index_entry(doctree, caption):
        raise ValueError(f"twopaths_index_in: got {caption!r}; allowed: the caption of a part in _toc.yml")


def caption_tables(doctree: nodes.document) -> int:
    """Give each table a chapter shows (``machinery.report.Table``: its title in bold, then the
    table, in a cell's output) that title as its caption, so Sphinx numbers it, "Table 11.2", on
    the site and in the PDF, and prose can cite it. The output stays plain Markdown, which Jupyter
    renders as it is. Returns how many were captioned."""
    done = 0
    for table in list(doctree.findall(nodes.table)):
        title = table.previous_sibling()
        inside_output = any("cell_output" in p.get("classes", []) for p in _parents(table))
        # MyST parses "**title**" as a strong between two empty texts
        words = [c for c in title.children if c.astext().strip()] if isinstance(title, nodes.paragraph) else []
        if (inside_output and len(words) == 1 and isinstance(words[0], nodes.strong)
                and not table.next_node(nodes.title)):
            table.insert(0, nodes.title("", "", *words[0].children))
            title.parent.remove(title)
            if not table["ids"]:
                doctree.set_id(table)
            done += 1
    return done


def _parents(node):
    while node.parent is not None:
        node = node.parent
        yield node


def _caption_tables(app, doctree: nodes.document) -> None:
    caption_tables(doctree)


class KeepCaseStyle(AlphaStyle):
    """pybtex's alpha style, titles in the case the .bib gives them."""

    def format_title(self, e, which_field, as_sentence=True):
        title = field(which_field)
        return sentence[title] if as_sentence else title


def setup(app):
    register_plugin("pybtex.style.formatting", "twopaths", KeepCaseStyle)
    app.add_config_value("twopaths_index_in", "", "env")
    app.connect("html-page-context", _dedupe_scripts, priority=900)   # after the themes add theirs
    # Before Sphinx's toctree collector (priority 500) copies the root's toctrees into the navigation;
    # sphinx-external-toc has inserted them by then (a transform).
    app.connect("doctree-read", _index_in_navigation, priority=400)
    app.connect("doctree-read", _caption_tables, priority=400)     # before numfig counts the tables
    return {"parallel_read_safe": True, "parallel_write_safe": True}

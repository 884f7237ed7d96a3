"""Sphinx extension for the book's site (listed in ``_config.yml``).

- Every inline script is written once. Sphinx 7.4 registers a script added with
  ``app.add_js_file(None, body=...)`` after the builder starts both under the name ``None`` and
  under ``''``, so each page carried it twice; sphinx-thebe's ``const THEBE_JS_URL`` declared twice
  is a SyntaxError in every page's console. Fixed upstream in Sphinx 8.2 (sphinx-doc/sphinx#13402);
  jupyter-book 1 pins Sphinx 7.
- ``twopaths_index_in``: the caption of the ``_toc.yml`` part whose navigation ends with a link to
  the general index. The toc file format has no entry for Sphinx's generated pages, while a
  toctree may name them.
- Each chapter page shows, under its title, how long it takes to read, to do its exercises and to
  run (``machinery.timing``); the roles ``chapter-runtime`` and ``chapter-estimate`` give the same
  figures elsewhere (the workshop plan's agenda): ``{chapter-runtime}`09-parallelism```.
- Bibliography style ``twopaths``: pybtex's ``alpha`` with titles as written. ``alpha`` lowercases
  every title after its first letter ("Mhc", "Flashmla"), which only braces in the .bib prevent.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

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


ANCHOR = re.compile(r'<a id="tbl-([a-z0-9-]+)">')


def table_label(docname: str, anchor: str) -> str:
    """The label prose cites a table by: ``tbl-16-configs`` for the table chapter 16
    (``notebooks/16-your-model``) shows as ``configs``; ``tbl-findings-...`` on the findings page."""
    return f"tbl-{docname.rsplit('/', 1)[-1].split('-', 1)[0]}-{anchor}"


def caption_tables(doctree: nodes.document, docname: str = "") -> dict[str, tuple[str, str]]:
    """Give each table a chapter shows (``machinery.report.Table``: its title in bold, then the
    table, in a cell's output) that title as its caption, so Sphinx numbers it, "Table 11.2", on
    the site and in the PDF. A title that carries its anchor (``chapter.show``'s name, as an
    invisible ``<a id="tbl-NAME">`` that Jupyter ignores) labels the table ``table_label``, so
    prose can cite it with ``{numref}``. The output stays plain Markdown, which Jupyter renders as
    it is. Returns ``{label: (table id, caption)}``, one entry a captioned table."""
    done = {}
    for table in list(doctree.findall(nodes.table)):
        title = table.previous_sibling()
        inside_output = any("cell_output" in p.get("classes", []) for p in _parents(table))
        # MyST parses "**title**" as a strong between two empty texts, the anchor as raw HTML
        children = title.children if isinstance(title, nodes.paragraph) else []
        anchors = [m.group(1) for c in children if isinstance(c, nodes.raw) for m in ANCHOR.finditer(c.astext())]
        words = [c for c in children if c.astext().strip() and not isinstance(c, nodes.raw)]
        if (inside_output and len(words) == 1 and isinstance(words[0], nodes.strong)
                and not table.next_node(nodes.title)):
            table.insert(0, nodes.title("", "", *words[0].children))
            title.parent.remove(title)
            if anchors:
                label = table_label(docname, anchors[0])
                table["ids"].insert(0, label)
                table["names"].append(label)
                doctree.ids[label] = table
            elif not table["ids"]:
                doctree.set_id(table)
            done[table["names"][-1] if anchors else table["ids"][0]] = (table["ids"][0], words[0].astext())
    return done


def _parents(node):
    while node.parent is not None:
        node = node.parent
        yield node


def _caption_tables(app, doctree: nodes.document) -> None:
    """Caption the tables and register each anchored one with the std domain, as a label written
    in the source would be (its SphinxDomains transform has already run), so {numref} finds it."""
    docname = app.env.docname
    std = app.env.get_domain("std")
    for label, (table_id, caption) in caption_tables(doctree, docname).items():
        if label.startswith("tbl-"):
            if label in std.anonlabels and std.anonlabels[label][0] != docname:
                raise ValueError(f"table label {label}: shown in {std.anonlabels[label][0]} and {docname}")
            std.anonlabels[label] = (docname, table_id)
            std.labels[label] = (docname, table_id, caption)


# Written by the runner beside the staged pages (``runner.write_status``): {chapter: run time in s}
TIMES = Path("book") / "chapter-times.json"


def _estimate(srcdir: str, chapter: str):
    from .timing import estimate

    nb_path = Path(srcdir) / "notebooks" / f"{chapter}.ipynb"
    if not nb_path.is_file():
        return None
    times = Path(srcdir) / TIMES
    run_s = json.loads(times.read_text()).get(chapter) if times.is_file() else None
    return estimate(json.loads(nb_path.read_text()), nb_path.name, run_s)


def _estimate_under_title(app, doctree: nodes.document) -> None:
    docname = app.env.docname
    if not docname.startswith("notebooks/") or (e := _estimate(app.srcdir, docname.split("/", 1)[1])) is None:
        return
    section = doctree.next_node(nodes.section)
    if section is not None and isinstance(section[0], nodes.title):
        section.insert(1, nodes.paragraph("", "", nodes.emphasis("", e.sentence()), classes=["twopaths-estimate"]))


def _timed_pages(app, env, added, changed, removed) -> list[str]:
    """Pages that use a chapter-time role, read again on every build: the times they show come from
    the run (``TIMES``), which changes while their source does not."""
    return [doc for doc in env.found_docs if doc not in added | changed and doc.startswith("book/")
            and Path(env.doc2path(doc)).suffix == ".md" and "{chapter-" in Path(env.doc2path(doc)).read_text()]


def _chapter_role(kind: str):
    def role(name, rawtext, text, lineno, inliner, options=None, content=None):
        from .timing import run_time

        e = _estimate(inliner.document.settings.env.srcdir, text.strip())
        if e is None or (kind == "runtime" and e.run_s is None):
            what = "a chapter's file name without .ipynb, e.g. 09-parallelism" if e is None else "a chapter this build ran"
            msg = inliner.reporter.error(f"{{{name}}}: got {text!r}; allowed: {what}", line=lineno)
            return [inliner.problematic(rawtext, rawtext, msg)], [msg]
        words = (run_time(e.run_s) if kind == "runtime" else
                 f"{e.reading_min} + {e.exercise_min} min" if e.exercises else f"{e.reading_min} min")
        return [nodes.Text(words)], []
    return role


class KeepCaseStyle(AlphaStyle):
    """pybtex's alpha style, titles in the case the .bib gives them."""

    def format_title(self, e, which_field, as_sentence=True):
        title = field(which_field)
        return sentence[title] if as_sentence else title


def _singlehtml_handlers(app):
    """sphinx-exercise registers its nodes for the ``singlehtml`` builder by name, and Sphinx then
    looks no further for that builder's translators: a node registered for the ``html`` format
    alone (myst-nb's toggle around a hidden cell's input) stopped the single-page book, and with it
    ``make pdf``. Give ``singlehtml`` every ``html`` handler it lacks."""
    handlers = app.registry.translation_handlers
    if app.builder.name == "singlehtml" and "singlehtml" in handlers:
        for node, pair in handlers.get("html", {}).items():
            handlers["singlehtml"].setdefault(node, pair)


def setup(app):
    register_plugin("pybtex.style.formatting", "twopaths", KeepCaseStyle)
    app.add_config_value("twopaths_index_in", "", "env")
    app.connect("html-page-context", _dedupe_scripts, priority=900)   # after the themes add theirs
    app.connect("builder-inited", _singlehtml_handlers)
    # Before Sphinx's toctree collector (priority 500) copies the root's toctrees into the navigation;
    # sphinx-external-toc has inserted them by then (a transform).
    app.connect("doctree-read", _index_in_navigation, priority=400)
    app.connect("doctree-read", _caption_tables, priority=400)     # before numfig counts the tables
    app.connect("doctree-read", _estimate_under_title)
    app.connect("env-get-outdated", _timed_pages)
    app.add_role("chapter-runtime", _chapter_role("runtime"))
    app.add_role("chapter-estimate", _chapter_role("estimate"))
    return {"parallel_read_safe": True, "parallel_write_safe": True}

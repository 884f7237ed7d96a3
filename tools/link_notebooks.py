"""Turn the chapters' plain cross-references into links, in their Markdown cells only.

- An italic page title of two words or more (``*What the checkpoints actually weigh*``, or the
  part of a title before its colon, ``*Residual streams*``), as written but for its first letter,
  becomes a ``{doc}`` link to that page of ``_toc.yml``; a page never links itself.
- The first use in each chapter of each term of ``book/glossary.md`` becomes a ``{term}`` link;
  a term the chapter already links anywhere is left alone.

Never touched: headings, label lines, code (spans and fenced blocks), math, links, HTML, quotations,
any text already inside a role (``{glue:text}``, ``{cite}``, ``{term}``, ...), directive arguments and
options, and directives other than prose ones (exercises, admonitions). Code cells are never read.
Running it again changes nothing.

    python tools/link_notebooks.py            # rewrite notebooks/*.ipynb in place
    python tools/link_notebooks.py --check    # only say what would change; exit 1 if anything would
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from dataclasses import dataclass
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent

# Directives whose body is prose a reader reads; every other directive's body is left alone.
PROSE_DIRECTIVES = {"exercise", "solution", "admonition", "note", "tip", "important", "warning",
                    "caution", "attention", "hint", "seealso", "dropdown", "topic", "sidebar"}
FENCE = re.compile(r"^\s*(?P<mark>`{3,}|~{3,}|:{3,})\s*(?:\{(?P<name>[\w:.-]+)\})?")
SKIP_LINE = re.compile(r"^\s*(?:#{1,6}\s|\(.+\)=\s*$|<!--|\|?\s*:?-{3,})")
OPTION = re.compile(r"^\s*:[\w-]+:")
# Spans inside a prose line that stay as they are, tried in this order.
PROTECTED = re.compile(
    r"\{[^{}\s`]+\}(`+).*?\1"                 # a role: {glue:text}`x`, {term}`KDA`, {cite}`k3`
    r"|(`+).*?\2"                             # code span
    r"|\$\$.*?\$\$|\$(?:\\.|[^$\\])+?\$"      # math
    r"|\\\(.*?\\\)|\\\[.*?\\\]|\\begin\{(\w+\*?)\}.*?\\end\{\3\}"
    r"|!?\[[^\]]*\]\([^)]*\)|!?\[[^\]]*\]\[[^\]]*\]|\[\^[^\]]+\]"   # links, images, footnotes
    r"|<!--.*?-->|<[^>\n]+>|\{\{.*?\}\}"     # HTML, autolinks, substitutions
    r'|"[^"\n]*"|\u201c[^\u201d]*\u201d',   # quotations: someone's words, or a title, as written
    re.S)
ITALIC = re.compile(r"(?<![*\w])\*(?![\s*])([^*\n]+?)(?<!\s)\*(?![*\w])"     # *italic*, not **bold**
                    r"|(?<![_\w])_(?![\s_])([^_\n]+?)(?<!\s)_(?![_\w])")      # _italic_, not snake_case
ROLE_TARGET = re.compile(r"\{term\}`([^`]*)`")


@dataclass(frozen=True)
class Page:
    docname: str      # relative to the book's root, without suffix: notebooks/10-checkpoint-weights
    title: str


def _first_heading(text: str) -> str | None:
    m = re.search(r"^# (.+?)\s*$", text, re.M)
    return m.group(1) if m else None


def _markdown(cell: dict) -> str:
    return "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]


def toc_pages(root: Path) -> list[Page]:
    """Every page of ``_toc.yml`` whose file exists, with its title (its first ``#`` heading)."""
    files: list[str] = []

    def walk(node):
        if isinstance(node, dict):
            for key, value in node.items():
                if key in ("file", "root"):
                    files.append(value)
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(yaml.safe_load((root / "_toc.yml").read_text()))
    pages = []
    for name in files:
        if (root / f"{name}.ipynb").is_file():
            cells = json.loads((root / f"{name}.ipynb").read_text())["cells"]
            text = "\n".join(_markdown(c) for c in cells if c["cell_type"] == "markdown")
        elif (root / f"{name}.md").is_file():
            text = (root / f"{name}.md").read_text()
        else:
            continue
        if title := _first_heading(text):
            pages.append(Page(name, title))
    return pages


def glossary_terms(path: Path) -> list[str]:
    """The terms of the ``{glossary}`` directive in ``path``: its unindented lines."""
    match = re.search(r"^(`{3,}|:{3,})\{glossary\}[^\n]*\n(.*?)^\1", path.read_text(), re.M | re.S)
    if not match:
        raise ValueError(f"{path}: no {{glossary}} directive")
    return [line.strip() for line in match.group(2).splitlines() if line.strip() and not line[0].isspace()]


def _sentence_key(words: str) -> str:
    """A title as it may open a sentence or sit inside one: only its first letter's case is free."""
    return words[:1].lower() + words[1:]


def title_patterns(pages: list[Page]) -> dict[str, Page]:
    """Italic text (as ``_sentence_key`` gives it) -> the page it names: titles of two words or
    more, and the part of a title before its colon when that is two words or more. A one-word
    italic is emphasis."""
    names = {}
    for page in pages:
        short = page.title.split(":")[0].strip()
        if short != page.title and len(short.split()) >= 2:
            names.setdefault(_sentence_key(short), page)
    names.update({_sentence_key(p.title): p for p in pages if len(p.title.split()) >= 2})   # full titles win
    return names


def term_pattern(terms: list[str]) -> re.Pattern:
    """One regex for every term, longest first, as a word with an optional plural 's'. A term
    written like a sentence ('Sliding window') matches in any case; an acronym or a name
    ('KDA', 'mHC', 'Lightning Indexer') only as written."""
    parts = []
    for term in sorted(terms, key=len, reverse=True):
        body = re.escape(term) + "(?:e?s)?"
        if term == term[:1].upper() + term[1:].lower():
            body = f"(?i:{body})"
        parts.append(body)
    return re.compile(r"(?<![\w/-])(?:" + "|".join(parts) + r")(?![\w]|-\w)")


def prose_runs(text: str) -> list[tuple[str, bool]]:
    """``text`` cut into (piece, is_prose): headings, labels, table rules, fence lines, directive
    options, code blocks and the body of any directive but a prose one are not prose."""
    pieces: list[tuple[str, bool]] = []
    stack: list[tuple[str, str | None]] = []    # open fences: (marker, directive name or None for code)
    in_options = False
    for line in text.splitlines(keepends=True):
        fence = FENCE.match(line)
        top = stack[-1] if stack else None
        closes = top and line.strip() == top[0][0] * len(line.strip()) and len(line.strip()) >= len(top[0])
        if closes:
            stack.pop()
        elif fence and (top is None or top[1] is not None):   # a code block's body is literal
            stack.append((fence["mark"], fence["name"] or None))
            in_options = True
        elif in_options and OPTION.match(line):
            pass
        else:
            in_options = False
            prose = all(name in PROSE_DIRECTIVES for _, name in stack) and not SKIP_LINE.match(line)
            pieces.append((line, prose))
            continue
        pieces.append((line, False))
    merged: list[tuple[str, bool]] = []
    for piece, prose in pieces:   # one run per stretch, so math and code spans may cross lines
        if merged and merged[-1][1] == prose:
            merged[-1] = (merged[-1][0] + piece, prose)
        else:
            merged.append((piece, prose))
    return merged


def free_spans(run: str) -> list[tuple[str, bool]]:
    """A prose run cut into (piece, free): protected spans (roles, code, math, links) are not free."""
    out, last = [], 0
    for m in PROTECTED.finditer(run):
        out += [(run[last:m.start()], True), (m.group(0), False)]
        last = m.end()
    out.append((run[last:], True))
    return [(piece, free) for piece, free in out if piece]


def _map_free(text: str, change) -> str:
    """``text`` with ``change`` applied to every free stretch of its prose."""
    out = []
    for run, prose in prose_runs(text):
        spans = free_spans(run) if prose else [(run, False)]
        out += [change(piece) if free else piece for piece, free in spans]
    return "".join(out)


def link_titles(text: str, titles: dict[str, Page], here: str) -> tuple[str, int]:
    """Italic page titles in ``text`` (a cell of page ``here``) as ``{doc}`` links; and how many."""
    count = 0

    def one(m: re.Match) -> str:
        nonlocal count
        words = m.group(1) or m.group(2)
        page = titles.get(_sentence_key(words))
        if page is None or page.docname == here:
            return m.group(0)
        count += 1
        target = os.path.relpath(page.docname, os.path.dirname(here))
        return f"{{doc}}`{target}`" if words == page.title else f"{{doc}}`{words} <{target}>`"

    return _map_free(text, lambda piece: ITALIC.sub(one, piece)), count


def link_terms(text: str, pattern: re.Pattern, canonical: dict[str, str], linked: set[str]) -> tuple[str, int]:
    """The first use of each term not in ``linked`` as a ``{term}`` link; ``linked`` gains it."""
    count = 0

    def one(m: re.Match) -> str:
        nonlocal count
        word = m.group(0)
        low = word.lower()
        term = canonical.get(low) or canonical.get(low[:-1]) or canonical[low[:-2]]   # 'caches', 'boxes'
        if term.lower() in linked:
            return word
        linked.add(term.lower())
        count += 1
        return f"{{term}}`{word}`" if word.lower() == term.lower() else f"{{term}}`{word} <{term}>`"

    return _map_free(text, lambda piece: pattern.sub(one, piece)), count


def already_linked(cells: list[dict]) -> set[str]:
    """Terms (lower case) the chapter's Markdown already links with ``{term}``."""
    found = set()
    for cell in cells:
        if cell["cell_type"] == "markdown":
            for target in ROLE_TARGET.findall(_markdown(cell)):
                m = re.search(r"<([^>]+)>\s*$", target)
                found.add((m.group(1) if m else target).strip().lower())
    return found


def link_notebook(nb: dict, here: str, titles: dict[str, Page], terms: list[str]) -> tuple[int, int]:
    """Link ``nb`` (page ``here``) in place; return (cross-references, terms) linked."""
    pattern = term_pattern(terms)
    canonical = {t.lower(): t for t in terms}
    linked = already_linked(nb["cells"])
    n_titles = n_terms = 0
    for cell in nb["cells"]:
        if cell["cell_type"] != "markdown":
            continue
        text, a = link_titles(_markdown(cell), titles, here)
        text, b = link_terms(text, pattern, canonical, linked)
        if a or b:
            cell["source"] = text.splitlines(keepends=True)
            n_titles, n_terms = n_titles + a, n_terms + b
    return n_titles, n_terms


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--root", type=Path, default=ROOT, help="the book's root (holding _toc.yml)")
    ap.add_argument("--check", action="store_true", help="change nothing; exit 1 if anything would change")
    args = ap.parse_args(argv)
    root = args.root
    titles = title_patterns(toc_pages(root))
    terms = glossary_terms(root / "book" / "glossary.md")
    changed = []
    for path in sorted((root / "notebooks").glob("*.ipynb")):
        nb = json.loads(path.read_text(encoding="utf-8"))
        n_titles, n_terms = link_notebook(nb, f"notebooks/{path.stem}", titles, terms)
        if n_titles or n_terms:
            changed.append(path)
            print(f"{path.name}: {n_titles} cross-reference(s), {n_terms} glossary term(s)")
            if not args.check:
                path.write_text(json.dumps(nb, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    if not changed:
        print("every cross-reference and first glossary use is already linked")
    return 1 if args.check and changed else 0


if __name__ == "__main__":
    sys.exit(main())

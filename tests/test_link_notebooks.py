"""tools/link_notebooks.py on a small synthetic book: what it links, what it leaves, idempotence."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tools"))
import link_notebooks  # noqa: E402

GLOSSARY = """# Glossary

```{glossary}
KV cache
  What attention keeps per token.

KDA
  Kimi Delta Attention.

Gated MLA
  K3's MLA.

MLA
  Multi-head latent attention.

GB
GiB
  Decimal and binary gigabytes.

Sliding window
  The last raw tokens.
```
"""

INTRO_MD = """# The weights

The first use of KDA here, then KDA again, and the KV cache.
"""

# Terms used first where they must not be linked (code, math, glue, links, quotations, a
# directive's title and options), then in prose.
CELL_1 = """# The KDA chapter

## Why KDA matters

Inline `KDA` code, $KDA + MLA$ math, {glue:text}`KDA_b:.1f` glue, [KDA](https://x.org) link, "KDA" and \u201cKDA\u201d quoted.

```python
MLA = 1  # code block, KDA too
```

$$
MLA = KDA
$$

```{exercise} KDA in a title
:label: ex-kda

Prose inside an exercise links the Sliding window.
```

Read *The weights* first, or *the KDA chapter*; *weights* is emphasis, as is *The weights of things*.
KDA folds the KV caches into a state; a sliding window keeps GB and GiB.
Gated MLA is not MLA.
"""

CELL_2 = """Later: KDA, MLA and the sliding window, all linked already.
See *Residual streams* and *the weights* again.
"""

CELL_3 = "A chapter that links {term}`the cache <KV cache>` itself, then says KV cache.\n"


def cell(kind: str, source: str) -> dict:
    extra = {"outputs": [], "execution_count": None} if kind == "code" else {}
    return {"cell_type": kind, "id": f"c{abs(hash(source)) % 10**8}", "metadata": {},
            "source": source.splitlines(keepends=True), **extra}


@pytest.fixture
def book(tmp_path: Path) -> Path:
    (tmp_path / "book").mkdir()
    (tmp_path / "notebooks").mkdir()
    (tmp_path / "book" / "glossary.md").write_text(GLOSSARY)
    (tmp_path / "book" / "intro.md").write_text(INTRO_MD)
    toc = {"format": "jb-book", "root": "book/intro",
           "parts": [{"caption": "P", "chapters": [{"file": "notebooks/01-kda"}, {"file": "notebooks/02-res"},
                                                   {"file": "notebooks/03-own"}, {"file": "book/glossary"}]}]}
    (tmp_path / "_toc.yml").write_text(json.dumps(toc))
    notebooks = {
        "01-kda": [cell("markdown", CELL_1), cell("code", "x = 1  # KDA and *Weights* in code\n"),
                   cell("markdown", CELL_2)],
        "02-res": [cell("markdown", "# Residual streams: mHC and AttnRes\n\nKDA again, *The KDA chapter*.\n")],
        "03-own": [cell("markdown", "# Own\n\n" + CELL_3)],
    }
    for name, cells in notebooks.items():
        nb = {"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
        (tmp_path / "notebooks" / f"{name}.ipynb").write_text(json.dumps(nb, indent=1) + "\n")
    return tmp_path


def markdown(book: Path, name: str) -> list[str]:
    cells = json.loads((book / "notebooks" / f"{name}.ipynb").read_text())["cells"]
    return ["".join(c["source"]) for c in cells]


def test_links_titles_and_first_uses_and_skips_the_rest(book):
    assert link_notebooks.main(["--root", str(book)]) == 0
    first, code, later = markdown(book, "01-kda")
    before = CELL_1.splitlines()
    lines = first.splitlines()
    assert lines[:17] == before[:17]     # headings, protected spans, code, math, the directive's lines
    assert lines[17] == "Prose inside an exercise links the {term}`Sliding window`."
    # a two-word title as written (first letter aside); never emphasis, a longer phrase or the page
    # itself (whose title's terms are linked like any words)
    assert lines[20] == ("Read {doc}`../book/intro` first, or *the {term}`KDA` chapter*; *weights* is emphasis, "
                         "as is *The weights of things*.")
    # first use of each term, plurals and case kept, the longest term first
    assert lines[21] == ("KDA folds the {term}`KV caches <KV cache>` into a state; a sliding window "
                         "keeps {term}`GB` and {term}`GiB`.")
    assert lines[22] == "{term}`Gated MLA` is not {term}`MLA`."
    assert code == "x = 1  # KDA and *Weights* in code\n"
    assert later == ("Later: KDA, MLA and the sliding window, all linked already.\n"
                     "See {doc}`Residual streams <02-res>` and {doc}`the weights <../book/intro>` again.\n")
    # every chapter links its own first use; a full title links without repeating it
    assert markdown(book, "02-res") == ["# Residual streams: mHC and AttnRes\n\n{term}`KDA` again, {doc}`01-kda`.\n"]
    # a term the chapter already links is left alone
    assert markdown(book, "03-own") == ["# Own\n\n" + CELL_3]


def test_running_again_changes_nothing(book, capsys):
    assert link_notebooks.main(["--root", str(book), "--check"]) == 1
    before = {p.name: p.read_text() for p in (book / "notebooks").glob("*.ipynb")}
    assert {p.name: p.read_text() for p in (book / "notebooks").glob("*.ipynb")} == before   # --check writes nothing
    link_notebooks.main(["--root", str(book)])
    once = {p.name: p.read_text() for p in (book / "notebooks").glob("*.ipynb")}
    assert once != before
    capsys.readouterr()
    assert link_notebooks.main(["--root", str(book), "--check"]) == 0
    assert "already linked" in capsys.readouterr().out
    link_notebooks.main(["--root", str(book)])
    assert {p.name: p.read_text() for p in (book / "notebooks").glob("*.ipynb")} == once


def test_notebook_layout_is_kept(book):
    before = json.loads((book / "notebooks" / "01-kda.ipynb").read_text())
    link_notebooks.main(["--root", str(book)])
    text = (book / "notebooks" / "01-kda.ipynb").read_text()
    after = json.loads(text)
    assert text.endswith("}\n") and text.startswith('{\n "cells": [\n  {\n')   # indent=1, trailing newline
    assert [(c["cell_type"], c["id"]) for c in after["cells"]] == [(c["cell_type"], c["id"]) for c in before["cells"]]


def test_glossary_without_the_directive_is_an_error(tmp_path):
    (tmp_path / "g.md").write_text("# Glossary\n\nKDA: a layer.\n")
    with pytest.raises(ValueError, match="no {glossary} directive"):
        link_notebooks.glossary_terms(tmp_path / "g.md")


def test_the_books_own_glossary_and_titles_are_read():
    root = link_notebooks.ROOT
    terms = link_notebooks.glossary_terms(root / "book" / "glossary.md")
    assert {"KV cache", "KDA", "GB", "GiB", "TTFT", "TPOT"} <= set(terms)
    titles = link_notebooks.title_patterns(link_notebooks.toc_pages(root))
    assert titles["residual streams"].docname == "notebooks/06-residual-streams"
    assert titles["how to use this book"].docname == "book/how-to-use"

"""Prose a reader can follow: sentences of readable length, and no bookkeeping in the text.

A reader's complaint (issue 28, "Prose for a reader") measured the pages' sentences at 30 words on
average, a fifth of them past 40 words, the longest at 184. The rules here hold every page to:

- no sentence over ``SENTENCE_MAX`` (60) words, and a page mean of at most ``MEAN_MAX`` (35);
- no code names for the book's cases ("under A", "(ART)", "(`A`)"), no chapter file numbers
  ("chapter 09") and no edition history ("an earlier edition of this page") in reader text.

What is measured is the markdown a reader reads: every markdown cell of ``notebooks/*.ipynb`` and
the book's prose pages (``PAGES``). The glossary is measured too: its definitions are prose a reader
reads, one unit per definition (its term lines are headings). The bibliography page is a directive
and holds no prose.

What is not prose is dropped: code fences and their contents (a ``{code-cell}`` or a shell block),
the fence lines of directives (the text inside an admonition, exercise, solution or glossary is
kept, since a reader reads it, but a directive's title and ``:option:`` lines are not), display
math (``$$ ... $$``), table rows (a line starting with ``|``), headings, run-in headings (a bold
phrase opening a paragraph or list item, "**The claim.**") and HTML comments.

Inline, each of these counts as one word, as a reader takes it in: a glued value
(``{glue:text}`name:fmt```, ``{glue}`name```; a glued number or a short glued phrase is one word to
a reader, and a glued value cannot be seen without executing the chapter), inline math, inline
code, and a ``{doc}``, ``{numref}``, ``{ref}``, ``{cite}`` or other role that shows a title or a
number. A role written ``text <target>`` counts as its visible text, and a ``{term}`` role without a
target as the term it shows. Links count as their text.

A sentence ends at ``.``, ``!`` or ``?`` (and any closing quote, parenthesis or emphasis) followed by
a space and a letter (upper case, or lower case for names such as vLLM and fla), a quote, a
parenthesis, or the end of its unit; an ellipsis does not end one. A paragraph and a
list item are units of their own, so a list item without a final period is still one sentence.
Abbreviations ("e.g.", "i.e.", "vs.", "cf.", "et al.") and decimal numbers do not end one.

``python tests/test_prose.py`` prints each page's counts, and with ``--long N`` every sentence
over N words.
"""

from __future__ import annotations

import json
import re
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
PAGES = [ROOT / "book" / name for name in
         ("intro.md", "how-to-use.md", "workshop.md", "workshop-setup.md", "glossary.md")]

SENTENCE_MAX = 60   # words
MEAN_MAX = 35       # words, a page's mean

# Code names, chapter file numbers and edition history: bookkeeping a reader should not meet.
BOOKKEEPING = [re.compile(p) for p in (
    r"\b[Uu]nder `?A\b`?", r"\(ART\)", r"\(`A`\)", r"[Cc]hapter 0\d", r"earlier edition")]

# One placeholder word for what a reader takes in as one word. Upper case, so that a sentence
# opening with a value or a code name still starts a new sentence.
WORD = "X"

ABBREVIATIONS = ("e.g.", "i.e.", "i.i.d.", "vs.", "cf.", "et al.", "etc.", "approx.", "resp.", "Fig.", "Eq.",
                 "No.", "Ref.")
_FENCE = re.compile(r"^(\s*)(`{3,}|:{3,})\s*(.*)$")
_OPTION = re.compile(r"^\s*:[\w-]+:(\s|$)")
_ITEM = re.compile(r"^\s*([-*+]|\d+[.)])\s+")
_ROLE = re.compile(r"\{([\w:-]+)\}`([^`]*)`")
_CODE = re.compile(r"`+[^`\n]*`+")
_MATH = re.compile(r"(?<![\\$])\$(?!\$)[^$\n]+?(?<!\\)\$")
_LINK = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")
_TAG = re.compile(r"</?[a-zA-Z][^>]*>")
_COMMENT = re.compile(r"<!--.*?-->", re.S)
# A run-in heading ("**The claim.** The article ..."): a heading, not a sentence.
_RUN_IN = re.compile(r"^\*\*[^*]+[.?!:]\*\*\s*")
# Where a sentence ends: the stop and whatever closes with it, then a space and what may open one.
_END = re.compile(r"(?<!\.)[.!?][\"'”’)\]*_]*(?=\s+[A-Za-z\"'“‘(\[*_]|\s*$)")
# Code, data and listing directives whose contents a reader does not read as prose.
_CODE_DIRECTIVES = ("code-cell", "code-block", "code", "math", "bibliography", "raw", "mermaid")


def _role(match: re.Match) -> str:
    name, text = match.group(1), match.group(2)
    if "<" in text and text.rstrip().endswith(">"):
        visible = text[:text.rindex("<")].strip()
        return visible or WORD
    if name == "term":
        return text
    return WORD


def inline(text: str) -> str:
    """The text as a reader counts its words: roles, code, math and links replaced."""
    text = _ROLE.sub(_role, text)
    text = _CODE.sub(WORD, text)
    text = _MATH.sub(WORD, text)
    text = _LINK.sub(lambda m: "" if m.group(0).startswith("!") else m.group(1), text)
    text = _TAG.sub("", text)
    return text


def units(markdown: str) -> list[str]:
    """The prose of a markdown source as paragraphs and list items, inline markup replaced."""
    markdown = _COMMENT.sub("", markdown)
    out: list[list[str]] = []
    current: list[str] = []
    stack: list[tuple[str, str, str]] = []   # (fence, kind, directive name) per open fence
    in_math = False

    def flush():
        nonlocal current
        if current:
            out.append(current)
        current = []

    for line in markdown.splitlines():
        stripped = line.strip()
        fence = _FENCE.match(line)
        if fence and not in_math:
            mark, info = fence.group(2), fence.group(3).strip()
            top = stack[-1] if stack else None
            if top and top[1] == "code":
                if not info and mark[0] == top[0][0] and len(mark) >= len(top[0]):
                    stack.pop()
                continue
            if not info and top and mark[0] == top[0][0]:
                stack.pop()
                flush()
                continue
            directive = re.match(r"\{([\w:-]+)\}", info)
            name = directive.group(1) if directive else ""
            kind = "code" if not directive or name in _CODE_DIRECTIVES else "directive"
            stack.append((mark, kind, name))
            flush()
            continue
        if stack and stack[-1][1] == "code":
            continue
        if in_math:
            if stripped.endswith("$$"):
                in_math = False
            continue
        if stripped.startswith("$$"):
            flush()
            if not (len(stripped) > 2 and stripped.endswith("$$")):
                in_math = True
            continue
        if not stripped or stripped.startswith(("#", "|")) or _OPTION.match(line):
            flush()
            continue
        if stack and stack[-1][2] == "glossary" and not line[0].isspace():
            flush()   # a term: the definition that follows is its own unit
            continue
        if _ITEM.match(line):
            flush()
            line = _ITEM.sub("", line, count=1)
        current.append(line.strip())
    flush()
    joined = (_RUN_IN.sub("", " ".join(lines)) for lines in out)
    return [u for u in (" ".join(inline(text).split()) for text in joined) if u]


def split_sentences(unit: str) -> list[str]:
    """A unit's sentences: it ends at a stop followed by an opening, never inside an abbreviation."""
    protected = unit
    for abbreviation in ABBREVIATIONS:
        protected = re.sub(r"(?<!\w)" + re.escape(abbreviation),
                           abbreviation.replace(".", "\0"), protected)
    sentences, start = [], 0
    for end in _END.finditer(protected):
        sentences.append(protected[start:end.end()])
        start = end.end()
    sentences.append(protected[start:])
    return [s.replace("\0", ".").strip() for s in sentences if s.strip()]


def count_words(sentence: str) -> int:
    """Words as a reader counts them: whitespace-separated tokens holding a letter or a digit."""
    return sum(1 for token in sentence.split() if re.search(r"\w", token))


def markdown_sources(path: Path) -> list[str]:
    if path.suffix == ".ipynb":
        nb = json.loads(path.read_text(encoding="utf-8"))
        return ["".join(c["source"]) if isinstance(c["source"], list) else c["source"]
                for c in nb["cells"] if c["cell_type"] == "markdown"]
    return [path.read_text(encoding="utf-8")]


def sentences(path: Path) -> list[str]:
    return [s for source in markdown_sources(path) for u in units(source) for s in split_sentences(u)]


@dataclass
class Stats:
    page: str
    n: int
    mean: float
    longest: int
    over_60: int
    over_40: int


def stats(path: Path) -> Stats:
    counts = [count_words(s) for s in sentences(path)]
    return Stats(path.name, len(counts), sum(counts) / len(counts) if counts else 0.0,
                 max(counts, default=0), sum(c > 60 for c in counts), sum(c > 40 for c in counts))


ALL = NOTEBOOKS + PAGES


def test_sentences_fit_a_reader():
    """No sentence over 60 words, and no page whose mean passes 35."""
    problems = []
    for path in ALL:
        for sentence in sentences(path):
            n = count_words(sentence)
            if n > SENTENCE_MAX:
                problems.append(f"{path.name}: {n} words: {sentence[:80]}")
        s = stats(path)
        if s.mean > MEAN_MAX:
            problems.append(f"{path.name}: mean {s.mean:.1f} words over {s.n} sentences")
    assert not problems, "\n".join(problems)


def test_the_measure_can_fail():
    """The splitter and counter on crafted text: each rule that could let a long sentence pass."""
    long = "Word " + " ".join(["word"] * 59) + " more."
    assert [count_words(s) for s in split_sentences(long)] == [61]
    assert [count_words(s) for s in split_sentences("Short one. " + long)] == [2, 61]
    # A glue role, inline code and inline math are one word; a term shows its words.
    [u] = units("It holds {glue:text}`k3_kv_GB:.1f` GB and `kv.kv_breakdown` of $T \\cdot b$ here.")
    assert count_words(u) == 9
    [u] = units("A {term}`KV room` and a {term}`delta-rule <Delta rule>` and {doc}`../notebooks/x`.")
    assert u == "A KV room and a delta-rule and X."
    # Abbreviations and decimals do not end a sentence; a stop before a capital or a quote does.
    assert len(split_sentences("Costs rise, e.g. at Kimi, i.e. everywhere, vs. V4 at 0.5 GB.")) == 1
    assert len(split_sentences("Smith et al. Found it.")) == 1
    assert split_sentences('It ends. "Quoted" starts. (So does this.) And this?') == [
        "It ends.", '"Quoted" starts.', "(So does this.)", "And this?"]
    assert len(split_sentences("Version 3.2 ships. vLLM starts one, e.g. vLLM does not.")) == 2
    assert len(split_sentences('It says "in every seed, though ... too uncertain" here.')) == 1
    # Units: paragraphs and list items; code, math, tables, headings, options and comments dropped,
    # directive text kept.
    page = "\n".join([
        "# A heading", "", "First paragraph", "runs on.", "", "- an item", "- another item",
        "  continued", "", "| a | table |", "", "```{admonition} Title", "Kept text.", "```", "",
        "```{code-cell} python", "x = 1. Not prose.", "```", "", "```{solution-start} ex", ":class: dropdown",
        "```", "", "$$", "E = mc^2. Not prose.", "$$", "<!-- a comment. -->", "```bash", "make book", "```"])
    assert units(page) == ["First paragraph runs on.", "an item", "another item continued", "Kept text."]
    assert units("**The claim.** It holds.\n\n- **Units.** Binary ones.") == ["It holds.", "Binary ones."]
    assert units("```{glossary}\nKV cache\n  The keys, kept.\n\nGB\n  Bytes.\n```") == [
        "The keys, kept.", "Bytes."]
    # The whole test fails on a page holding a 61-word sentence.
    assert max(count_words(s) for u in units(long) for s in split_sentences(u)) > SENTENCE_MAX


def reader_text(path: Path) -> str:
    return "\n".join(_raw_prose(source) for source in markdown_sources(path))


def _raw_prose(markdown: str) -> str:
    """The reader's lines with inline code kept as written (the patterns look inside it)."""
    markdown = _COMMENT.sub("", markdown)
    lines, stack = [], []
    for line in markdown.splitlines():
        fence = _FENCE.match(line)
        if fence:
            mark, info = fence.group(2), fence.group(3).strip()
            if stack and not info and mark[0] == stack[-1][0][0]:
                stack.pop()
            elif not (stack and stack[-1][1] == "code"):
                directive = re.match(r"\{([\w:-]+)\}", info)
                code = not directive or directive.group(1) in _CODE_DIRECTIVES
                stack.append((mark, "code" if code else "directive"))
                if not code:
                    lines.append(info[directive.end():])   # a directive's title is read too
            continue
        if not (stack and stack[-1][1] == "code"):
            lines.append(line)
    return "\n".join(lines)


def bookkeeping(text: str) -> list[str]:
    return [m.group(0) for p in BOOKKEEPING for m in p.finditer(text)]


def test_no_bookkeeping_in_reader_text():
    problems = [f"{path.name}: {hit!r}" for path in ALL
                for hit in bookkeeping(" ".join(reader_text(path).split()))]
    assert not problems, "\n".join(problems)


def test_bookkeeping_patterns_catch():
    assert bookkeeping("the fleet under A holds") == ["under A"]
    assert bookkeeping("Under `A`, the fleet holds") == ["Under `A`"]
    assert bookkeeping("the article (ART) and the book (`A`)") == ["(ART)", "(`A`)"]
    assert bookkeeping("as chapter 09 and Chapter 02 say") == ["chapter 09", "Chapter 02"]
    assert bookkeeping("An earlier edition of this page said") == ["earlier edition"]
    assert bookkeeping("under Article's inputs, chapter 9, chapter 14, under a plan") == []
    assert _raw_prose("text\n```python\nunder A\n```\n```{admonition} Under `A` here\n```") == \
        "text\n Under `A` here"


def main(argv: list[str]) -> None:
    long = int(argv[argv.index("--long") + 1]) if "--long" in argv else None
    rows = [stats(p) for p in ALL]
    print(f"{'page':40} {'sent':>5} {'mean':>5} {'max':>4} {'>60':>4} {'>40':>4}")
    for s in rows:
        print(f"{s.page:40} {s.n:5d} {s.mean:5.1f} {s.longest:4d} {s.over_60:4d} {s.over_40:4d}")
    counts = [count_words(x) for p in ALL for x in sentences(p)]
    print(f"{'all':40} {len(counts):5d} {sum(counts) / len(counts):5.1f} {max(counts):4d} "
          f"{sum(c > 60 for c in counts):4d} {sum(c > 40 for c in counts):4d}")
    if long is not None:
        for p in ALL:
            for x in sentences(p):
                if count_words(x) > long:
                    print(f"\n{p.name} [{count_words(x)}]: {x}")


if __name__ == "__main__":
    main(sys.argv[1:])


def test_every_chapter_links_the_chapters_it_builds_on():
    """A reader who lands on a chapter finds the ones it rests on: every chapter's markdown cites
    another page of the book with {doc}, and the line under its takeaway names them."""
    import json

    for nb in sorted((ROOT / "notebooks").glob("[0-9][0-9]-*.ipynb")):
        cells = json.loads(nb.read_text())["cells"]
        text = "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")
        others = set(re.findall(r"\{doc\}`(?:[^`<]*<)?([^`>]+)>?`", text)) - {nb.stem}
        assert others, f"{nb.name} links no other chapter"
        after = next(i for i, c in enumerate(cells) if "{admonition} Takeaway" in "".join(c["source"])) + 1
        assert re.match(r"\*(Builds on|Leads to)\*", "".join(cells[after]["source"])), nb.name

"""What a reader sees of each chapter: code that fits the column, no reprs, captioned figures, no
bookkeeping on show.

The conventions these rules hold a chapter to:
- a shown code cell (not tagged ``remove-input`` or ``remove-cell``) has lines of at most 79
  characters and at most 25 lines; longer logic goes into ``twopaths``;
- no shown output is a repr (``np.float64(``, ``torch.Size(``, ``tensor(``, ``Setup(``, a bare
  tuple, list or dict): format numbers with units, tables (``report.markdown_table``) or sentences;
  no cell ends in a bare expression such as ``run`` or ``x, y``;
- a cell that shows a figure shows one, and carries
  ``{"mystnb": {"figure": {"caption": ..., "name": "fig-<nn>-<what>"}, "image": {"alt": ...}}}``
  in its metadata; figures use ``twopaths.machinery.figures`` (``figures.size(...)``, ``figures.log_axis``)
  and stay within ``figures.MAX_PX`` once executed;
- a cell that only glues or asserts is tagged ``remove-input``; slider cells ``remove-cell``;
- the parameters cell and the setup cell (the one calling ``chapter.setup``) are folded with
  ``hide-input``: a re-run's reader opens them, the page's reader starts at the argument;
- papermill's injected-parameters cell is tagged ``remove-cell`` by the runner;
- an exercise's solution reads only names its page shows the definition of.

The rules read the notebooks' sources (cheap, always) and the executed copies of the book's last run
(``_build/src/notebooks``), in ``make test``'s site stage, after the smoke run. Each rule is also run on a small synthetic notebook holding its defect, so
none of them passes by being unable to fail.
"""

from __future__ import annotations

import ast
import base64
import json
import re
import struct
from pathlib import Path

import pytest

from cell_names import BUILTINS, defined, read
from twopaths.machinery import chapter, figures, runner

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
# Only the book's last run: re-runs under _build/chapters keep whatever an older checkout wrote.
EXECUTED = sorted((ROOT / "_build" / "src" / "notebooks").glob("*.ipynb"))

LINE_MAX = 79    # characters of the content column's code block
CELL_MAX = 25    # lines of a shown cell
NOT_SHOWN = {"remove-cell", "remove-input"}   # hide-input is still on the page, one click away
NO_OUTPUT = {"remove-cell", "remove-output"}
# Reprs that say the author printed an object instead of a sentence, table or figure.
REPRS = re.compile(r"np\.(float|int)\d+\(|torch\.Size\(|\btensor\(|\bSetup\(|\barray\(|"
                   r"<Figure size |dtype=|device\(type=")
# Rich outputs in myst-nb's order of preference for HTML: a display shows the first it holds.
RICH = ("application/vnd.jupyter.widget-view+json", "text/html", "image/svg+xml", "image/png",
        "image/jpeg", "text/markdown", "text/latex")
# Expressions whose value a cell would print as a repr when they end it.
BARE = (ast.Name, ast.Tuple, ast.Dict, ast.List, ast.Set, ast.Attribute, ast.Subscript,
        ast.Constant, ast.BinOp, ast.Compare)


def tags(cell) -> set[str]:
    return set(cell.get("metadata", {}).get("tags", []))


def source(cell) -> str:
    text = cell.get("source", "")
    return "".join(text) if isinstance(text, list) else text


def code_cells(nb, hidden: set[str] = NOT_SHOWN):
    for i, cell in enumerate(nb["cells"]):
        if cell["cell_type"] == "code" and not tags(cell) & hidden:
            yield i, cell


def parse(text: str):
    """The cell as Python; IPython magics and shell lines are blanked first."""
    lines = ["" if ln.lstrip().startswith(("%", "!")) else ln for ln in text.splitlines()]
    try:
        return ast.parse("\n".join(lines))
    except SyntaxError:
        return None


# (a) Code that fits the column.
def long_lines(nb) -> list[str]:
    return [f"cell {i}: {len(ln)} chars: {ln[:40]}..." for i, cell in code_cells(nb)
            for ln in source(cell).splitlines() if len(ln) > LINE_MAX]


def long_cells(nb) -> list[str]:
    return [f"cell {i}: {n} lines" for i, cell in code_cells(nb)
            if (n := len(source(cell).rstrip().splitlines())) > CELL_MAX]


# (b) No reprs.
def shown_text(output) -> str:
    """The text a reader sees of one output, or "" where a rich form is shown instead."""
    if output["output_type"] == "stream":
        return output["text"] if isinstance(output["text"], str) else "".join(output["text"])
    data = output.get("data", {})
    if output["output_type"] not in ("execute_result", "display_data") or any(k in data for k in RICH):
        return ""
    if any(k.startswith("application/papermill.record/") for k in data):
        return ""   # a glued value: the prose shows it, through its format
    text = data.get("text/plain", "")
    return "".join(text) if isinstance(text, list) else text


def repr_outputs(nb) -> list[str]:
    found = []
    for i, cell in code_cells(nb, NO_OUTPUT):
        for output in cell.get("outputs", []):
            text = shown_text(output).strip()
            bare = (output["output_type"] == "execute_result" and text != ""
                    and text[0] in "([{" and text[-1] in ")]}")
            if REPRS.search(text) or bare:
                found.append(f"cell {i}: {text[:60]!r}")
    return found


def bare_last_expressions(nb) -> list[str]:
    """Cells ending in an expression IPython would show as a repr (``run``, ``x, y``, ``d[k]``)."""
    found = []
    for i, cell in code_cells(nb, NO_OUTPUT):
        tree = parse(source(cell))
        last = tree.body[-1] if tree and tree.body else None
        if (isinstance(last, ast.Expr) and isinstance(last.value, BARE)
                and not source(cell).rstrip().endswith(";")):
            found.append(f"cell {i}: ends with {ast.unparse(last)[:40]!r}")
    return found


# (c) Figures with a numbered caption and alt text.
def shows_figure(cell) -> int:
    """How many figures a cell shows: its PNG outputs where executed, else its plt.show calls."""
    images = sum("image/png" in o.get("data", {}) for o in cell.get("outputs", []))
    return images or len(re.findall(r"\bplt\.show\(|\bdisplay\(fig", source(cell)))


def uncaptioned_figures(nb) -> list[str]:
    found = []
    for i, cell in code_cells(nb, NO_OUTPUT):
        count = shows_figure(cell)
        if not count:
            continue
        meta = cell["metadata"].get("mystnb", {})
        figure, alt = meta.get("figure", {}), meta.get("image", {}).get("alt", "")
        if not figure.get("caption") or not str(figure.get("name", "")).startswith("fig-"):
            found.append(f"cell {i}: no mystnb figure caption and fig- name")
        elif len(alt.split()) < 4:
            found.append(f"cell {i}: alt text {alt!r} does not describe the figure")
        elif count > 1:
            found.append(f"cell {i}: {count} figures share one caption; split the cell")
    return found


def figure_names(nb) -> list[str]:
    return [c["metadata"]["mystnb"]["figure"]["name"] for c in nb["cells"]
            if c["metadata"].get("mystnb", {}).get("figure", {}).get("name")]


def png_width(b64: str) -> int:
    return struct.unpack(">I", base64.b64decode(b64[:64])[16:20])[0]


def wide_figures(nb) -> list[str]:
    return [f"cell {i}: {w} px" for i, cell in code_cells(nb, NO_OUTPUT)
            for o in cell.get("outputs", []) if "image/png" in o.get("data", {})
            and (w := png_width(o["data"]["image/png"])) > figures.MAX_PX]


def crowded_figures(nb) -> list[str]:
    """What ``figures.crowding`` found in each shown figure (``chapter.check_figures`` keeps it in
    the PNG's metadata): a legend over the data, tick labels or titles over each other."""
    found = []
    for i, cell in code_cells(nb, NO_OUTPUT):
        for o in cell.get("outputs", []):
            if "image/png" in o.get("data", {}):
                meta = o.get("metadata", {}).get("image/png", {})
                if chapter.CROWDING not in meta:
                    found.append(f"cell {i}: a figure no crowding check saw (shown before chapter.setup?)")
                found += [f"cell {i}: {problem}" for problem in meta.get(chapter.CROWDING, [])]
    return found


# (d) Bookkeeping hidden.
def _is_glue(node) -> bool:
    if not (isinstance(node, ast.Expr) and isinstance(node.value, ast.Call)):
        return False
    func = node.value.func
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
    return name.startswith("glue")


def _shows(node) -> bool:
    """A statement that puts something on the page: any call but a glue, a def, an import."""
    if isinstance(node, (ast.FunctionDef, ast.ClassDef, ast.Import, ast.ImportFrom)):
        return True
    if isinstance(node, ast.Expr):
        return not _is_glue(node)
    return any(_shows(child) for child in getattr(node, "body", []) + getattr(node, "orelse", []))


def shown_bookkeeping(nb) -> list[str]:
    """Cells that glue or assert and show nothing else, with their input on the page."""
    found = []
    for i, cell in code_cells(nb):
        tree = parse(source(cell))
        if tree is None or "parameters" in tags(cell):
            continue
        keeps = any(isinstance(n, ast.Assert) or _is_glue(n) for n in ast.walk(tree))
        if keeps and not any(_shows(n) for n in tree.body):
            found.append(f"cell {i}: glues or asserts only; tag it remove-input")
    return found


def shown_sliders(nb) -> list[str]:
    """Slider cells live in Jupyter only: on the static site a widget has no kernel to drive it."""
    return [f"cell {i}: sliders on the site; tag it remove-cell" for i, cell in code_cells(nb, {"remove-cell"})
            if re.search(r"\bsliders\.show\(|\bipywidgets\b|\binteract(ive)?\(", source(cell))]


def unfolded_setup(nb) -> list[str]:
    """The parameters and ``chapter.setup`` cells, when their input is on the page unfolded."""
    return [f"cell {i}: {'parameters' if 'parameters' in tags(cell) else 'setup'}; fold it with hide-input"
            for i, cell in code_cells(nb)
            if ("parameters" in tags(cell) or re.search(r"\bsetup\(", source(cell)))
            and "hide-input" not in tags(cell)]


def hidden_names_in_solutions(nb) -> list[str]:
    """A solution a reader copies must run in their kernel: it reads only names that shown cells
    (or it) define, never one bound only in a ``remove-input`` cell the page does not show."""
    shown, in_solution, problems = set(BUILTINS), False, []
    for i, cell in enumerate(nb["cells"]):
        text = source(cell)
        if cell["cell_type"] == "markdown":
            start, end = text.rfind("{solution-start}"), text.rfind("{solution-end}")
            in_solution = start > end if start >= 0 or end >= 0 else in_solution   # the last one counts
            continue
        tree = parse(text)
        if tree is None or tags(cell) & NOT_SHOWN:
            continue
        if in_solution:
            problems += [f"cell {i}: {name} is defined only in cells the page does not show"
                         for name in sorted(read(tree) - defined(tree) - shown)]
        shown |= defined(tree)
    return problems


def linter_talk(nb) -> list[str]:
    """Comments addressed to a linter (``# noqa``, ``# type: ignore``) in code a reader sees: they
    teach nothing, and no linter reads the chapters."""
    return [f"cell {i}: {m.group(0)!r}; write the code the linter would not flag"
            for i, cell in code_cells(nb) for m in re.finditer(r"#\s*(noqa|type:\s*ignore|pragma)\b.*", source(cell))]


def injected_shown(nb) -> list[str]:
    return [f"cell {i}" for i, cell in enumerate(nb["cells"])
            if "injected-parameters" in tags(cell) and "remove-cell" not in tags(cell)]


SOURCE_RULES = (long_lines, long_cells, bare_last_expressions, uncaptioned_figures,
                shown_bookkeeping, shown_sliders, unfolded_setup, hidden_names_in_solutions, linter_talk)
EXECUTED_RULES = (repr_outputs, uncaptioned_figures, wide_figures, crowded_figures, injected_shown)


def load(path: Path):
    return json.loads(path.read_text())


@pytest.mark.parametrize("rule", SOURCE_RULES, ids=lambda r: r.__name__)
@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_source(path, rule):
    problems = rule(load(path))
    assert not problems, f"{path.name}, {rule.__name__}:\n  " + "\n  ".join(problems)


@pytest.mark.site   # after make test's smoke run, which leaves the executed copies
@pytest.mark.parametrize("rule", EXECUTED_RULES, ids=lambda r: r.__name__)
def test_executed(rule):
    assert EXECUTED, "no executed notebooks under _build/src/notebooks: run the book first"
    problems = [f"{p.relative_to(ROOT)}: {x}" for p in EXECUTED for x in rule(load(p))]
    assert not problems, f"{rule.__name__}:\n  " + "\n  ".join(problems)


def test_figure_names_are_unique_in_the_book():
    names = [n for p in NOTEBOOKS for n in figure_names(load(p))]
    assert len(names) == len(set(names)), sorted({n for n in names if names.count(n) > 1})


# Every rule on a notebook holding its defect, and on the same notebook repaired.
def nb_of(*cells):
    return {"cells": [{"cell_type": "code", "metadata": m, "source": s, "outputs": o}
                      for s, m, o in cells]}


def text_output(text, kind="execute_result"):
    if kind == "stream":
        return {"output_type": kind, "name": "stdout", "text": text}
    return {"output_type": kind, "data": {"text/plain": text}, "metadata": {}}


CAPTION = {"mystnb": {"figure": {"caption": "Cache per request", "name": "fig-01-cache"},
                      "image": {"alt": "Cache in GB rises with context for both models"}}}
PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n" + struct.pack(">I4sII", 13, b"IHDR", 1280, 400)).decode()
HIDE = {"tags": ["remove-input"]}

DEFECTS = [
    (long_lines, ("x = " + "1 + " * 30 + "1", {}, []), ("x = 1", {}, [])),
    (long_cells, ("\n".join(["x = 1"] * 30), {}, []), ("\n".join(["x = 1"] * 30), HIDE, [])),
    (bare_last_expressions, ("run = 1\nrun", {}, []), ("run = 1", {}, [])),
    (bare_last_expressions, ("a, b", {}, []), ("print(f'{a} and {b}')", {}, [])),
    (repr_outputs, ("x", {}, [text_output("np.float64(74.83)")]), ("x", {}, [text_output("74.8 GB")])),
    (repr_outputs, ("s", {}, [text_output("Setup(profile='default', device=device(type='cpu'))")]),
     ("s", {"tags": ["remove-output"]}, [text_output("Setup(profile='default')")])),
    (repr_outputs, ("t", {}, [text_output("torch.Size([2, 3])\n", "stream")]),
     ("t", {}, [text_output("shape 2 by 3\n", "stream")])),
    (repr_outputs, ("t", {}, [text_output("(3, 4.5)")]), ("t", {}, [text_output("3 of 4.5")])),
    (repr_outputs, ("t", {}, [text_output("[3, 4.5]")]),
     ("t", {}, [{"output_type": "execute_result", "metadata": {},
                 "data": {"text/plain": "", "text/markdown": "| a |"}}])),
    (repr_outputs, ("d", {}, [text_output("{'a': 1}")]),
     ("d", {}, [{"output_type": "display_data", "metadata": {},
                 "data": {"text/plain": "{'a': 1}", "text/markdown": "| a |\n|---|\n| 1 |"}}])),
    (uncaptioned_figures, ("plt.show()", {}, []), ("plt.show()", CAPTION, [])),
    (uncaptioned_figures, ("plt.show()", {"mystnb": {**CAPTION["mystnb"], "image": {"alt": "a3f9"}}}, []),
     ("plt.show()", CAPTION, [])),
    (uncaptioned_figures, ("plt.show()\nplt.show()", CAPTION, []), ("plt.show()", CAPTION, [])),
    (wide_figures, ("plt.show()", CAPTION, [{"output_type": "display_data", "metadata": {},
                                              "data": {"image/png": PNG}}]), ("plt.show()", CAPTION, [])),
    (crowded_figures, ("plt.show()", CAPTION, [{"output_type": "display_data", "data": {"image/png": PNG},
                                                 "metadata": {"image/png": {chapter.CROWDING: ["the legend covers 4"]}}}]),
     ("plt.show()", CAPTION, [{"output_type": "display_data", "data": {"image/png": PNG},
                               "metadata": {"image/png": {"width": 640, chapter.CROWDING: []}}}])),
    (crowded_figures, ("plt.show()", CAPTION, [{"output_type": "display_data", "data": {"image/png": PNG},
                                                 "metadata": {}}]),
     ("plt.show()", CAPTION, [{"output_type": "display_data", "data": {"image/png": PNG},
                               "metadata": {"image/png": {chapter.CROWDING: []}}}])),
    (shown_bookkeeping, ("glue('x', x, 'GB')\nassert x > 0", {}, []),
     ("glue('x', x, 'GB')\nassert x > 0", HIDE, [])),
    (shown_bookkeeping, ("for k in d:\n    chapter.glue(k, d[k], 'GB')", {}, []),
     ("for k in d:\n    chapter.glue(k, d[k], 'GB')\nplt.show()", CAPTION, [])),
    (shown_sliders, ("sliders.show(plot, gpus=(1, 8))", {}, []),
     ("sliders.show(plot, gpus=(1, 8))", {"tags": ["remove-cell"]}, [])),
    (unfolded_setup, ("profile = 'default'", {"tags": ["parameters"]}, []),
     ("profile = 'default'", {"tags": ["parameters", "hide-input"]}, [])),
    (unfolded_setup, ("s = chapter.setup(profile)", {}, []),
     ("s = chapter.setup(profile)", {"tags": ["hide-input"]}, [])),
    (linter_talk, ("f = lambda x: x  # noqa: E731", {}, []), ("def f(x):\n    return x", {}, [])),
    (injected_shown, ("x = 1", {"tags": ["injected-parameters"]}, []),
     ("x = 1", {"tags": ["injected-parameters", "remove-cell"]}, [])),
]


@pytest.mark.parametrize("rule, defect, repaired", DEFECTS,
                         ids=[f"{d[0].__name__}-{i}" for i, d in enumerate(DEFECTS)])
def test_each_rule_catches_its_defect(rule, defect, repaired):
    assert rule(nb_of(defect)), f"{rule.__name__} missed {defect[0]!r}"
    assert not rule(nb_of(repaired)), f"{rule.__name__} flags the repaired {repaired[0]!r}"


def _solution_book(hidden_tags):
    def md(text):
        return {"cell_type": "markdown", "metadata": {}, "source": text}
    nb = nb_of(("k3 = 1", {"tags": hidden_tags}, []), ("shown = 2", {}, []))
    nb["cells"] += [md("```{solution-start} ex\n```"), *nb_of(("print(k3 + shown)", {}, []))["cells"],
                    md("```{solution-end}\n```\n\n```{exercise} Next\n```\n\n```{solution-start} ex2\n```"),
                    *nb_of(("print(shown)", {}, []))["cells"], md("```{solution-end}\n```")]
    return nb


def test_a_solution_reading_a_name_only_a_hidden_cell_defines_is_caught():
    assert hidden_names_in_solutions(_solution_book(["remove-input"])) == [
        "cell 3: k3 is defined only in cells the page does not show"]
    assert hidden_names_in_solutions(_solution_book(["hide-input"])) == []     # folded, still shown


def test_figure_names_must_be_unique():
    book = [nb_of(("plt.show()", CAPTION, [])), nb_of(("plt.show()", CAPTION, []))]
    names = [n for nb in book for n in figure_names(nb)]
    assert len(names) != len(set(names))


def test_runner_hides_the_injected_parameters_cell(tmp_path):
    """papermill's copy of the parameters is removed from the site; the chapter's own cell stays."""
    import nbformat
    from papermill.iorw import load_notebook_node
    from papermill.parameterize import parameterize_notebook

    book = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_code_cell('profile = "default"', metadata={"tags": ["parameters"]}),
        nbformat.v4.new_code_cell("x = 1")],
        metadata={"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}})
    path = tmp_path / "chapter.ipynb"
    nbformat.write(book, str(path))
    book = load_notebook_node(str(path))   # as papermill reads a chapter
    nbformat.write(parameterize_notebook(book, {"profile": "smoke"}), str(path))
    assert injected_shown(load(path))
    runner.hide_injected(path)
    out = load(path)
    assert not injected_shown(out)
    assert [sorted(tags(c)) for c in out["cells"]] == [
        ["parameters"], ["injected-parameters", "remove-cell"], []]


@pytest.mark.notebooks
def test_a_chapter_kernel_records_a_crowded_figure(tmp_path):
    """chapter.setup makes the kernel keep ``figures.crowding``'s findings with each figure it
    shows: a legend over a line is recorded, a clear figure records nothing."""
    import nbformat
    from nbclient import NotebookClient

    draw = ("import matplotlib.pyplot as plt\nfig, ax = plt.subplots()\n"
            "ax.plot([0, 1], [0.95, 0.95], label='flat')\nax.set_ylim(0, 1)\n"
            "ax.legend(loc='{}')\nplt.show()")
    book = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_code_cell("from twopaths.machinery import chapter\nrun = chapter.setup('smoke', 'cpu')"),
        nbformat.v4.new_code_cell(draw.format("upper center"), metadata=CAPTION),
        nbformat.v4.new_code_cell(draw.format("lower center"), metadata=CAPTION)],
        metadata={"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}})
    NotebookClient(book, timeout=120, kernel_name="python3").execute()
    found = crowded_figures(book)
    assert len(found) == 1 and found[0].startswith("cell 1: panel 1: the legend covers"), found


def test_the_findings_page_shows_no_code():
    """The findings page is one screen of results: every code cell's input is removed or folded."""
    nb = load(ROOT / "notebooks" / "findings.ipynb")
    shown = [i for i, c in enumerate(nb["cells"]) if c["cell_type"] == "code"
             and not {"remove-input", "remove-cell", "hide-input"} & set(tags(c))]
    assert shown == [], f"findings.ipynb shows the code of cells {shown}"

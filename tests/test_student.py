"""Student and instructor notebooks (``machinery.student``): a student notebook holds no line of
any solution, runs top to bottom past its stubs, and numbers its exercises as the site does; the
instructor notebook is the chapter; a chapter whose exercises are malformed is named."""

import json
import zipfile
from pathlib import Path

import pytest

from twopaths.machinery import student as st

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))


def load(path: Path) -> dict:
    return json.loads(path.read_text())


def src(cell: dict) -> str:
    return "".join(cell["source"])


def solution_code(nb: dict, spans) -> list[str]:
    """The code cells inside each solution, as text."""
    inside = {ci for s in spans for ci in range(s.start[0], s.end[0] + 1)}
    return [src(c) for ci, c in enumerate(nb["cells"]) if ci in inside and c["cell_type"] == "code"]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_a_student_notebook_holds_no_solution(path):
    nb = load(path)
    spans = st.spans(nb, path.name, st.chapter_number(path))
    out = st.student(nb, st.chapter_number(path), path.name)
    text = json.dumps(out)
    assert "solution-start" not in text and "solution-end" not in text and "{exercise}" not in text
    codes = [src(c) for c in out["cells"] if c["cell_type"] == "code"]
    solutions = solution_code(nb, spans)
    elsewhere = {ln.strip() for c in nb["cells"] if c["cell_type"] == "code" and src(c) not in solutions
                 for ln in src(c).splitlines()}
    shown = {ln.strip() for c in codes for ln in c.splitlines()}
    for code in solutions:
        assert code not in codes
        # no line of it either, but those the chapter's body also has
        own = {ln.strip() for ln in code.splitlines() if len(ln.strip()) > 20} - elsewhere
        assert not own & shown, code[:80]
    stubs = [c["metadata"]["twopaths"]["stub_of"] for c in out["cells"] if "stub_of" in c["metadata"].get("twopaths", {})]
    assert stubs == [s.number for s in spans]
    assert all(c.get("outputs", []) == [] for c in out["cells"] if c["cell_type"] == "code")
    # each question is still there, as plain Markdown numbered as the site numbers it
    for s in spans:
        assert f"**Exercise {s.number}" in text


def test_exercises_are_numbered_by_chapter_and_order():
    path = ROOT / "notebooks" / "09-parallelism.ipynb"
    out = st.student(load(path), 9, path.name)
    heads = [ln for c in out["cells"] if c["cell_type"] == "markdown" for ln in c["source"]
             if ln.startswith("**Exercise")]
    assert [h.split(":")[0] for h in heads] == ["**Exercise 9.1", "**Exercise 9.2", "**Exercise 9.3"]
    assert heads[1].startswith("**Exercise 9.2: The smallest EP on a B300**")
    stub = next(c for c in out["cells"] if c["metadata"].get("twopaths", {}).get("stub_of") == "9.2")
    assert src(stub).endswith('raise NotImplementedError("Exercise 9.2")') and "raises-exception" in stub["metadata"]["tags"]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_the_instructor_notebook_is_the_chapter_with_its_solutions_marked(path):
    nb = load(path)
    out = st.instructor(nb, st.chapter_number(path), path.name)
    assert [src(c) for c in out["cells"]] == [src(c) for c in nb["cells"]]
    assert [c["cell_type"] for c in out["cells"]] == [c["cell_type"] for c in nb["cells"]]
    marked = {c["metadata"]["twopaths"]["solution_of"] for c in out["cells"]
              if "solution_of" in c["metadata"].get("twopaths", {})}
    assert marked == {s.number for s in st.spans(nb, path.name, st.chapter_number(path))}


def md(text):
    return {"cell_type": "markdown", "metadata": {}, "source": text}


def code(text):
    return {"cell_type": "code", "metadata": {}, "source": text, "outputs": [], "execution_count": None}


EX = "```{exercise} Title\n:label: ex-a\n\nWhat?\n```\n\n"


@pytest.mark.parametrize("cells, message", [
    ([md(EX)], "07-x.ipynb: exercise ex-a has no solution block"),
    ([md(EX + "```{solution-start} ex-a\n:class: dropdown\n```"), code("x = 1")],
     "07-x.ipynb: solution ex-a is never closed"),
    ([md("```{solution-start} ex-b\n```"), code("x = 1"), md("```{solution-end}\n```")],
     "07-x.ipynb: solution ex-b follows no exercise labelled so"),
    ([md(EX + "```{solution-end}\n```")], "07-x.ipynb: a solution-end (cell 0) closes no solution"),
])
def test_malformed_exercises_are_named(cells, message):
    with pytest.raises(st.StudentError) as info:
        st.student({"cells": cells}, 7, "07-x.ipynb")
    assert str(info.value).startswith(message)


def test_a_solution_that_ends_inside_a_cell_keeps_the_prose_after_it():
    cells = [md("Intro.\n\n" + EX + "```{solution-start} ex-a\n:class: dropdown\n```"), code("answer = 42"),
             md("The answer is 42.\n\n```{solution-end}\n```\n\nMore prose."), code("print('after')")]
    out = st.student({"cells": cells}, 7, "07-x.ipynb")
    assert out["cells"][0]["id"] == "install-twopaths"
    assert [(c["cell_type"], src(c)) for c in out["cells"][1:]] == [
        ("markdown", "Intro.\n\n**Exercise 7.1: Title**\n\nWhat?"),
        ("code", '# Exercise 7.1: your answer here\n...\nraise NotImplementedError("Exercise 7.1")'),
        ("markdown", "More prose."),
        ("code", "print('after')")]


def test_a_question_of_several_paragraphs_stays_whole():
    text = "```{exercise} T\n:label: x\n:class: hard\n\nOne\nline two.\n\nTwo.\n```\nAfter."
    assert st.plain_exercises(text, ["1.1"]) == "**Exercise 1.1: T**\n\nOne\nline two.\n\nTwo.\n\nAfter."


def test_the_kits_zip_every_chapter(tmp_path):
    kits = st.write_kits(NOTEBOOKS, tmp_path)
    for kind, path in kits.items():
        with zipfile.ZipFile(path) as z:
            assert sorted(z.namelist()) == sorted(f"twopaths-{kind}/{p.name}" for p in NOTEBOOKS)


@pytest.mark.notebooks
def test_a_student_notebook_runs_top_to_bottom_past_its_stubs(tmp_path):
    """Chapter 9 in the smoke profile: every cell but the stubs runs, each stub raises its exercise's
    NotImplementedError, and nothing else fails (a later cell needing a solution's names would)."""
    import papermill
    from twopaths.machinery.runner import kernel

    path = ROOT / "notebooks" / "09-parallelism.ipynb"
    nb = st.student(load(path), 9, path.name)
    given = tmp_path / path.name
    given.write_text(json.dumps(nb))
    # nbclient runs on past a cell tagged raises-exception; papermill then reports the last error
    with pytest.raises(papermill.PapermillExecutionError, match="Exercise 9.3"):
        papermill.execute_notebook(str(given), str(tmp_path / "out.ipynb"), parameters={"profile": "smoke"},
                                   cwd=str(ROOT / "notebooks"), progress_bar=False, kernel_name=kernel())
    ran = load(tmp_path / "out.ipynb")
    errors = [(c["metadata"].get("twopaths", {}).get("stub_of"), o["evalue"]) for c in ran["cells"]
              if c["cell_type"] == "code" for o in c.get("outputs", []) if o.get("output_type") == "error"]
    assert errors == [(n, f"Exercise {n}") for n in ("9.1", "9.2", "9.3")]

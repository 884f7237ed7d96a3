"""The time estimates under each chapter's title and in the workshop plan (``machinery.timing``):
prose words outside solutions and markup, at the stated rate; exercises at the stated allowance;
run times as the agenda prints them."""

import json
from pathlib import Path

import pytest

from twopaths.machinery import sphinx_ext, timing

ROOT = Path(__file__).resolve().parents[1]


def md(text):
    return {"cell_type": "markdown", "metadata": {}, "source": text}


def code(text):
    return {"cell_type": "code", "metadata": {}, "source": text, "outputs": [], "execution_count": None}


NB = {"cells": [
    md("# Title here\n\nOne two three {term}`KV` four.\n\n<a id=\"x\"></a>"),
    code("words in code do not count"),
    md("```{exercise} Ex\n:label: ex-a\n\nDo this now.\n```\n\n```{solution-start} ex-a\n:class: dropdown\n```"),
    code("answer = 1"),
    md("Solution prose is skipped.\n\n```{solution-end}\n```\n\nAfter it counts."),
]}


def test_words_leave_out_solutions_code_and_markup():
    # "Title here" 2 (not the "#"), "One two three KV four." 5 (the role name is markup, its text
    # a word), the question 3 (its fence line, title included, is markup), "After it counts." 3
    assert timing.prose_words(NB) == 2 + 5 + 3 + 3


def test_the_estimate_counts_exercises_at_the_allowance():
    e = timing.estimate(NB, "07-x.ipynb", run_s=83.4)
    assert (e.words, e.exercises, e.reading_min, e.exercise_min) == (13, 1, 1, timing.MINUTES_PER_EXERCISE)
    assert e.sentence() == ("Estimated time: about 1 minute to read (13 words at 200 a minute), "
                            "10 for its 1 exercise (10 each); it runs in 1 min 23 s on the machine that "
                            "built this site.")


def test_reading_rounds_up_to_whole_minutes():
    assert timing.Estimate(201, 0, None).reading_min == 2
    assert timing.Estimate(200, 0, None).reading_min == 1
    assert timing.Estimate(0, 0, None).reading_min == 1


@pytest.mark.parametrize("seconds, text", [(0.2, "1 s"), (9.4, "9 s"), (59.6, "1 min"), (107, "1 min 47 s"),
                                           (120, "2 min")])
def test_run_times_read_as_the_agenda_prints_them(seconds, text):
    assert timing.run_time(seconds) == text


def test_a_chapter_estimate_reads_its_notebook_and_the_builds_times(tmp_path):
    (tmp_path / "notebooks").mkdir()
    (tmp_path / "notebooks" / "07-x.ipynb").write_text(json.dumps(NB))
    assert sphinx_ext._estimate(str(tmp_path), "07-x").run_s is None     # no build has timed it
    (tmp_path / sphinx_ext.TIMES).parent.mkdir()
    (tmp_path / sphinx_ext.TIMES).write_text(json.dumps({"07-x": 12.0}))
    assert sphinx_ext._estimate(str(tmp_path), "07-x").run_s == 12.0
    assert sphinx_ext._estimate(str(tmp_path), "07-y") is None             # the role then names the error


def test_every_chapter_the_workshop_plan_times_exists():
    import re

    named = re.findall(r"\{chapter-(?:runtime|estimate)\}`([^`]+)`", (ROOT / "book" / "workshop.md").read_text())
    assert named and all((ROOT / "notebooks" / f"{n}.ipynb").is_file() for n in named)

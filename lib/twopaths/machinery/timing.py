"""How long a chapter takes a reader, a learner and the machine: the estimate each chapter page
shows under its title, and the workshop plan's agenda (``sphinx_ext``'s ``chapter-time`` role).

- Reading: the words of the chapter's prose, its exercise solutions left out (a learner reads them
  after trying), at ``WORDS_PER_MINUTE``. Brysbaert (2019) finds silent reading of non-fiction
  averages 238 words a minute; these pages carry numbers, tables and formulas to check, so the
  estimate takes 200.
- Exercises: ``MINUTES_PER_EXERCISE`` each, the workshop's allowance, not a measurement.
- Running: the chapter's measured execution time in the build that made the site (status page).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from .student import spans

WORDS_PER_MINUTE = 200
MINUTES_PER_EXERCISE = 10
# MyST that is markup, not prose: directive fences and their options, HTML, role names (a brace
# group before a backtick: a formula's {silu} stays), labels
MARKUP = re.compile(r"^(```|:::|:[\w-]+:).*$|<[^>]+>|\{[\w:-]+\}(?=`)|\([\w-]+\)=", re.M)


@dataclass(frozen=True)
class Estimate:
    words: int
    exercises: int
    run_s: float | None     # None where no build has timed the chapter

    @property
    def reading_min(self) -> int:
        return max(1, math.ceil(self.words / WORDS_PER_MINUTE))

    @property
    def exercise_min(self) -> int:
        return self.exercises * MINUTES_PER_EXERCISE

    def sentence(self) -> str:
        minutes = f"{self.reading_min} minute{'s' * (self.reading_min > 1)}"
        parts = [f"about {minutes} to read ({self.words:,} words at {WORDS_PER_MINUTE} a minute)"]
        if self.exercises:
            parts.append(f"{self.exercise_min} for its {self.exercises} exercise{'s' * (self.exercises > 1)} "
                         f"({MINUTES_PER_EXERCISE} each)")
        text = "Estimated time: " + ", ".join(parts)
        if self.run_s is not None:
            text += f"; it runs in {run_time(self.run_s)} on the machine that built this site"
        return text + "."


def run_time(seconds: float) -> str:
    """"9 s", "1 min 47 s": a measured run time as the agenda shows it."""
    s = max(1, round(seconds))
    return f"{s} s" if s < 60 else f"{s // 60} min {s % 60} s" if s % 60 else f"{s // 60} min"


def solution_lines(nb: dict, name: str = "notebook") -> set[tuple[int, int]]:
    """(cell, line) of every line inside an exercise solution, its fences included."""
    inside = set()
    for sp in spans(nb, name, None):
        for ci in range(sp.start[0], sp.end[0] + 1):
            first = sp.start[1] if ci == sp.start[0] else 0
            last = sp.end[1] if ci == sp.end[0] else len(_source(nb["cells"][ci]).split("\n"))
            inside |= {(ci, li) for li in range(first, last)}
    return inside


def prose_words(nb: dict, name: str = "notebook") -> int:
    """Words (tokens with a letter or digit: not a heading's "#") in the markdown cells of ``nb``,
    outside its exercise solutions and markup."""
    inside, words = solution_lines(nb, name), 0
    for ci, cell in enumerate(nb["cells"]):
        if cell["cell_type"] == "markdown":
            lines = _source(cell).split("\n")
            kept = "\n".join(line for li, line in enumerate(lines) if (ci, li) not in inside)
            words += sum(any(ch.isalnum() for ch in w) for w in MARKUP.sub(" ", kept).split())
    return words


def _source(cell: dict) -> str:
    src = cell["source"]
    return "".join(src) if isinstance(src, list) else src


def estimate(nb: dict, name: str, run_s: float | None = None) -> Estimate:
    """The estimate for the chapter ``nb`` (``name`` names it in errors)."""
    return Estimate(prose_words(nb, name), len(spans(nb, name, None)), run_s)

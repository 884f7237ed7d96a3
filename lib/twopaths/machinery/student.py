"""Student and instructor notebooks, from the chapters (``make student``; ``make book`` runs it).

A chapter marks its exercises as sphinx-exercise does: a markdown cell holds an ``{exercise}``
block with its ``:label:``, then a ``{solution-start} label`` block; the solution (code cells, and
prose) runs to the ``{solution-end}`` block, which may sit in a later markdown cell.

- ``student(nb, chapter)``: first a cell that installs the package where it is missing
  (``kit.INSTALL_SOURCE``: Colab, a bare Jupyter), then the chapter with each solution removed, its
  prose and its code, and one stub code cell put where it ended (``...`` and ``raise NotImplementedError("Exercise 9.2")``, tagged
  ``raises-exception`` so that a notebook run top to bottom goes past it). Exercises are numbered as
  the site numbers them: chapter, then order on the page.
- ``instructor(nb, chapter)``: the chapter itself, each solution cell's metadata marked with its
  exercise (``twopaths.solution_of``); no source changes.
- ``write_kits(notebooks, out, wheel)``: both versions of every chapter, zipped, the student zip
  with the package's wheel beside the notebooks (upload both to Colab).

A solution without its exercise, an exercise without a solution, or a solution left open stops
with the notebook and the exercise named (``StudentError``).
"""

from __future__ import annotations

import copy
import json
import re
import zipfile
from dataclasses import dataclass
from pathlib import Path

from .kit import install_cell

EXERCISE = re.compile(r"^```\{exercise\}")
LABEL = re.compile(r"^:label:\s*(\S+)")
START = re.compile(r"^```\{solution-start\}\s*(\S+)")
END = re.compile(r"^```\{solution-end\}")
FENCE = "```"
EXERCISE_BLOCK = re.compile(r"^```\{exercise\}[ \t]*([^\n]*)\n((?::[\w-]+:[^\n]*\n)*)\n?(.*?)\n```[ \t]*$",
                            re.M | re.S)


# The kernel every Jupyter has (ipykernel's), not the book's own build kernel: a learner's Jupyter
# would otherwise ask which kernel to start.
KERNEL = {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}


class StudentError(ValueError):
    """A chapter whose exercises cannot be turned into a student notebook, named."""


@dataclass(frozen=True)
class Span:
    """Where one solution sits: (cell, line) of its start block and of the line after its end block."""
    label: str
    number: str            # "9.2", as the site numbers it
    start: tuple[int, int]
    end: tuple[int, int]


def _lines(cell: dict) -> list[str]:
    src = cell["source"]
    return ("".join(src) if isinstance(src, list) else src).split("\n")


def _block_end(lines: list[str], i: int) -> int:
    """The line after the fence that closes the directive opened on line ``i``."""
    for j in range(i + 1, len(lines)):
        if lines[j].strip() == FENCE:
            return j + 1
    return len(lines)


def chapter_number(path: Path) -> int | None:
    """9 for ``09-parallelism.ipynb``: the site numbers chapters as the files do."""
    head = path.stem.split("-", 1)[0]
    return int(head) if head.isdigit() else None


def spans(nb: dict, name: str, chapter: int | None) -> list[Span]:
    """Every solution of ``nb`` with its exercise's number; ``name`` names the notebook in errors."""
    numbers, out, open_ = {}, [], None
    pending = None       # an exercise block whose label is not read yet
    for ci, cell in enumerate(nb["cells"]):
        if cell["cell_type"] != "markdown":
            continue
        lines = _lines(cell)
        for li, line in enumerate(lines):
            if EXERCISE.match(line):
                pending = len(numbers) + 1
                numbers[f"#{pending}"] = pending
            elif pending is not None and (m := LABEL.match(line)):
                numbers[m.group(1)] = numbers.pop(f"#{pending}")
                pending = None
            elif m := START.match(line):
                if open_ is not None:
                    raise StudentError(f"{name}: solution {open_[0]} has no solution-end before solution {m.group(1)}")
                if m.group(1) not in numbers:
                    raise StudentError(f"{name}: solution {m.group(1)} follows no exercise labelled so")
                open_ = (m.group(1), (ci, li))
            elif END.match(line):
                if open_ is None:
                    raise StudentError(f"{name}: a solution-end (cell {ci}) closes no solution")
                label, start = open_
                number = f"{chapter}.{numbers[label]}" if chapter is not None else str(numbers[label])
                out.append(Span(label, number, start, (ci, _block_end(lines, li))))
                open_ = None
    if open_ is not None:
        raise StudentError(f"{name}: solution {open_[0]} is never closed (no solution-end)")
    unsolved = sorted(set(numbers) - {s.label for s in out})
    if unsolved:
        raise StudentError(f"{name}: exercise {', '.join(unsolved)} has no solution block")
    return out


def _stub(number: str) -> dict:
    return {"cell_type": "code", "execution_count": None, "id": f"stub-{number.replace('.', '-')}",
            "metadata": {"tags": ["raises-exception"], "twopaths": {"stub_of": number}}, "outputs": [],
            "source": [f"# Exercise {number}: your answer here\n", "...\n",
                       f'raise NotImplementedError("Exercise {number}")']}


def _markdown(lines: list[str], template: dict, part: int) -> dict | None:
    text = "\n".join(lines).strip("\n")
    if not text.strip():
        return None
    cell = copy.deepcopy(template)
    cell["source"] = text.splitlines(keepends=True)
    if part:      # a cell split around a solution: each part its own id
        cell["id"] = f"{cell.get('id', 'cell')}-{part}"
    return cell


def _blank_outputs(cell: dict) -> dict:
    kept = copy.deepcopy(cell)
    if kept["cell_type"] == "code":
        kept["outputs"], kept["execution_count"] = [], None
    return kept


def plain_exercises(text: str, numbers: list[str]) -> str:
    """Each ``{exercise}`` block of ``text`` as Markdown any Jupyter shows: "**Exercise 9.2: Title**"
    and its question, numbered from ``numbers`` in order (consumed)."""
    def one(m):
        title = m.group(1).strip()
        return f"**Exercise {numbers.pop(0)}{': ' + title if title else ''}**\n\n{m.group(3).strip()}\n"
    return EXERCISE_BLOCK.sub(one, text)


def student(nb: dict, chapter: int | None, name: str = "notebook") -> dict:
    """``nb`` with every solution replaced by its stub and each exercise in plain Markdown (see the
    module's docstring), no outputs."""
    found = spans(nb, name, chapter)
    starts, numbers = {s.start: s for s in found}, [s.number for s in sorted(found, key=lambda s: int(s.number.rsplit(".", 1)[-1]))]
    cells, inside = [], None
    for ci, cell in enumerate(nb["cells"]):
        if cell["cell_type"] != "markdown":
            if inside is None:
                cells.append(_blank_outputs(cell))
            continue
        lines, keep, part = _lines(cell), [], 0
        for li in range(len(lines) + 1):
            if inside is not None and inside.end == (ci, li):     # the solution ended above this line
                if (md := _markdown(keep, cell, part)) is not None:
                    cells.append(md)
                    part += 1
                cells.append(_stub(inside.number))
                keep, inside = [], None
            if li == len(lines):
                break
            inside = inside or starts.get((ci, li))
            if inside is None:
                keep.append(lines[li])
        if (md := _markdown(keep, cell, part)) is not None:
            cells.append(md)
    for cell in cells:
        if cell["cell_type"] == "markdown":
            cell["source"] = plain_exercises("".join(cell["source"]), numbers).rstrip("\n").splitlines(keepends=True)
    return {**nb, "metadata": {**nb.get("metadata", {}), "kernelspec": KERNEL}, "cells": [install_cell(), *cells]}


def instructor(nb: dict, chapter: int | None, name: str = "notebook") -> dict:
    """``nb`` as it is, each cell of a solution marked with its exercise's number."""
    marked = copy.deepcopy(nb)
    marked.setdefault("metadata", {})["kernelspec"] = KERNEL
    for s in spans(nb, name, chapter):
        for ci in range(s.start[0], s.end[0] + 1):
            marked["cells"][ci].setdefault("metadata", {}).setdefault("twopaths", {})["solution_of"] = s.number
    return marked


def write_kits(notebooks: list[Path], out: Path, wheel: Path | None = None) -> dict[str, Path]:
    """``twopaths-student-notebooks.zip`` and ``twopaths-instructor-notebooks.zip`` in ``out``; the
    student one holds ``wheel`` too, when given."""
    out.mkdir(parents=True, exist_ok=True)
    kits = {}
    for kind, make in (("student", student), ("instructor", instructor)):
        path = out / f"twopaths-{kind}-notebooks.zip"
        with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
            for nb_path in notebooks:
                nb = json.loads(nb_path.read_text())
                made = make(nb, chapter_number(nb_path), nb_path.name)
                z.writestr(f"twopaths-{kind}/{nb_path.name}", json.dumps(made, indent=1, ensure_ascii=False) + "\n")
            if wheel is not None and kind == "student":
                z.write(wheel, f"twopaths-{kind}/{wheel.name}")
        kits[kind] = path
    return kits

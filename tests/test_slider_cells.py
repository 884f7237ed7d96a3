"""A slider cell runs live in Jupyter only (``machinery.sliders``: papermill builds never reach it),
so nothing executes it in CI. Each one must still run where a student runs it, top to bottom:
every name it reads is defined in it or in a cell above it (chapter 12's once drew with ``plt``
imported only further down, a NameError in a live kernel)."""

import ast
import json
from pathlib import Path

import pytest

from cell_names import BUILTINS, defined, read

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))


def code_cells(path: Path) -> list[str]:
    return ["".join(c["source"]) for c in json.loads(path.read_text())["cells"] if c["cell_type"] == "code"]


def undefined_in_sliders(cells: list[str]) -> list[str]:
    """The names each slider cell reads that neither it nor a cell above it defines."""
    problems, above = [], set(BUILTINS)
    for i, source in enumerate(cells):
        tree = ast.parse(source)
        if "sliders.show(" in source:
            missing = sorted(read(tree) - defined(tree) - above)
            problems += [f"code cell {i}: {name} is not defined above it" for name in missing]
        above |= defined(tree)
    return problems


SLIDERS = [p for p in NOTEBOOKS if any("sliders.show(" in s for s in code_cells(p))]


def test_some_chapters_have_sliders():
    assert SLIDERS


@pytest.mark.parametrize("path", SLIDERS, ids=lambda p: p.stem)
def test_a_slider_cell_reads_only_names_defined_above_it(path):
    assert undefined_in_sliders(code_cells(path)) == []


def test_a_name_imported_only_below_is_caught():
    cells = ["x = 1", "sliders = None\nsliders.show(lambda a=x: plt.plot(a, y))", "import matplotlib.pyplot as plt"]
    assert undefined_in_sliders(cells) == ["code cell 1: plt is not defined above it",
                                           "code cell 1: y is not defined above it"]

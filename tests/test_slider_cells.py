"""A slider cell runs live in Jupyter only (``machinery.sliders``: papermill builds never reach it),
so nothing executes it in CI. Each one must still run where a student runs it, top to bottom:
every name it reads is defined in it or in a cell above it (chapter 12's once drew with ``plt``
imported only further down, a NameError in a live kernel)."""

import ast
import builtins
import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))


def code_cells(path: Path) -> list[str]:
    return ["".join(c["source"]) for c in json.loads(path.read_text())["cells"] if c["cell_type"] == "code"]


def defined(tree: ast.AST) -> set[str]:
    """Every name a cell binds: assignments, imports, functions, classes, loop and with targets,
    parameters, comprehension variables."""
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            names.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names |= {(a.asname or a.name).split(".")[0] for a in node.names}
        elif isinstance(node, ast.arg):
            names.add(node.arg)
    return names


def read(tree: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


def undefined_in_sliders(cells: list[str]) -> list[str]:
    """The names each slider cell reads that neither it nor a cell above it defines."""
    problems, above = [], set(dir(builtins)) | {"display", "get_ipython"}
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

"""What each install gets: pyproject.toml names the packages (the chapters' runtime, then the
workshop, book and test extras), requirements.txt pins every version. A chapter must run with the
runtime alone, so the library may import only what the runtime names, but for the three modules
that build the book (they may use the book extra too)."""

import ast
import json
import re
import sys
import tomllib
from functools import cache
from importlib import metadata
from pathlib import Path

import need
import pytest

from twopaths.specs import lookup

ROOT = Path(__file__).resolve().parent.parent
LIB = ROOT / "lib" / "twopaths"
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
BUILDS_THE_BOOK = {"machinery/runner.py", "machinery/sphinx_ext.py", "machinery/browser.py"}


def canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def pins() -> dict[str, str]:
    out = {}
    for line in (ROOT / "requirements.txt").read_text().splitlines():
        if line and not line.startswith("#"):
            name, version = line.split("==")
            out[canonical(name)] = version
    return out


RUNTIME = {canonical(n) for n in PROJECT["dependencies"]}
EXTRAS = {k: {canonical(n) for n in v} for k, v in PROJECT["optional-dependencies"].items()}


def third_party_imports(path: Path) -> set[str]:
    """Top-level modules ``path`` imports that are neither the standard library nor twopaths."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0:
            found.add(node.module.split(".")[0])
    return {m for m in found if m not in sys.stdlib_module_names and m != "twopaths"}


@cache
def provided() -> dict[str, list[str]]:
    return metadata.packages_distributions()


def distributions(module: str) -> set[str]:
    """The installed distributions that provide ``module`` (``yaml``: pyyaml)."""
    return {canonical(d) for d in provided().get(module, [])}


def undeclared(path: Path, allowed: set[str]) -> list[str]:
    return sorted(f"{path.relative_to(LIB)} imports {m} ({', '.join(sorted(distributions(m))) or 'not installed'})"
                  for m in third_party_imports(path) if not distributions(m) & allowed)


def test_every_package_named_is_pinned():
    pinned = pins()
    named = RUNTIME.union(*EXTRAS.values())
    assert sorted(named - set(pinned)) == []


def test_the_extras_are_the_ones_the_makefile_and_the_kit_install():
    assert set(EXTRAS) == {"workshop", "book", "test"}
    assert "jupyterlab" in EXTRAS["workshop"]


def test_the_library_imports_only_the_runtime_outside_the_book_builders():
    problems = []
    for path in sorted(LIB.rglob("*.py")):
        rel = str(path.relative_to(LIB))
        allowed = RUNTIME | EXTRAS["book"] if rel in BUILDS_THE_BOOK else RUNTIME
        problems += undeclared(path, allowed)
    assert problems == []


def test_a_chapter_import_outside_the_runtime_is_caught(tmp_path):
    # the check above can fail: a module importing papermill is not allowed the runtime alone
    bad = LIB / "calc" / "kv.py"
    assert undeclared(bad, RUNTIME) == []
    fake = tmp_path / "x.py"
    fake.write_text("import papermill\nimport numpy\nfrom yaml import safe_load\n")
    assert third_party_imports(fake) == {"papermill", "numpy", "yaml"}
    assert distributions("papermill") & RUNTIME == set()
    assert distributions("yaml") == {"pyyaml"}


def chapter_default_configs() -> set[str]:
    """Every corpus name a chapter's parameters cell takes by default."""
    names = set()
    for nb in sorted((ROOT / "notebooks").glob("*.ipynb")):
        for cell in json.loads(nb.read_text())["cells"]:
            if "parameters" in cell.get("metadata", {}).get("tags", []):
                for node in ast.parse("".join(cell["source"])).body:
                    if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", "") == "configs":
                        names |= {n for n in ast.literal_eval(node.value) if not n.endswith(".json")}
    return names


def test_every_default_corpus_config_is_shipped():
    shipped = {p.name.removesuffix("_config.json") for p in lookup.SHIPPED.glob("*_config.json")}
    assert chapter_default_configs()            # chapter 16 takes three by default
    assert sorted(chapter_default_configs() - shipped) == []


@pytest.mark.parametrize("path", sorted(lookup.SHIPPED.glob("*_config.json")), ids=lambda p: p.stem)
def test_a_shipped_config_is_aiconfigurators_file_byte_for_byte(path):
    need.module("aiconfigurator_core", "pip install -c requirements.txt '.[test]'")
    corpus = lookup._corpus()
    assert (corpus / path.name).read_bytes() == path.read_bytes()

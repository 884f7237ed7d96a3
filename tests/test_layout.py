"""The package's layers (``[tool.importlinter]`` in pyproject.toml) hold, and an import that runs the
wrong way breaks them.

Each case copies ``lib/twopaths`` under another name (so the installed package cannot stand in for
the copy), makes one change a developer might make, and runs ``lint-imports`` on the copy with
the project's own contracts renamed to it.
"""

import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PROBE = "twopaths_probe"
LINT = Path(sys.executable).parent / "lint-imports"


def contracts_for(name: str) -> str:
    """The project's import-linter contracts as an INI file about package ``name``."""
    cfg = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    rename = lambda text: re.sub(r"\btwopaths\b", name, text)  # noqa: E731
    lines = ["[importlinter]", f"root_package = {rename(cfg['root_package'])}"]
    for c in cfg["contracts"]:
        lines.append(f"[importlinter:contract:{c['id']}]")
        for key, value in c.items():
            if key == "id":
                continue
            if isinstance(value, list):
                lines.append(f"{key} =\n" + "\n".join(f"    {rename(v)}" for v in value))
            else:
                lines.append(f"{key} = {rename(str(value))}")
    return "\n".join(lines) + "\n"


def copy(tmp_path: Path, change=None) -> Path:
    """The package copied under ``PROBE``, with ``change`` made to it, and its contracts."""
    pkg = tmp_path / PROBE
    shutil.copytree(ROOT / "lib" / "twopaths", pkg, ignore=shutil.ignore_patterns("__pycache__"))
    if change:
        change(pkg)
    (tmp_path / "contracts.ini").write_text(contracts_for(PROBE))
    return tmp_path


def lint(folder: Path, contract: str | None = None) -> subprocess.CompletedProcess:
    """``lint-imports`` on the copy in ``folder``: every contract, or the one named."""
    only = ["--contract", contract] if contract else []
    return subprocess.run([str(LINT), "--config", "contracts.ini", "--no-cache", "--no-logo", *only],
                          cwd=folder, env={"PYTHONPATH": str(folder), "PATH": "/usr/bin:/bin"},
                          capture_output=True, text=True, timeout=300)


def add_import(module: str, line: str):
    """A change: ``line`` appended to the copy's ``module`` (a path under the package)."""
    def change(pkg: Path) -> None:
        path = pkg / module
        path.write_text(path.read_text() + f"\n{line}\n")
    return change


def test_the_layers_hold(tmp_path):
    done = lint(copy(tmp_path))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Contracts: 2 kept, 0 broken." in done.stdout, done.stdout


LAYERS, DOMAIN = "layers", "domain-builds-no-pages"


@pytest.mark.parametrize("module, line, broken", [
    # a calculator reaching up for a chapter's table
    ("calc/kv.py", "from ..views import plans", LAYERS),
    # the facts importing the calculators again (the circle calc.params closed)
    ("specs/params.py", "from ..calc import kv", LAYERS),
    # the machinery learning about models
    ("machinery/report.py", "from .. import specs", LAYERS),
    # a toy layer and a calculator, siblings that stay apart
    ("layers/window.py", "from ..calc import kv", LAYERS),
    # a front door the views call (views.scenario once imported the plan command)
    ("views/scenario.py", "from .. import plan", LAYERS),
    # a calculator building a table: the layers allow it (calc sits above machinery), the
    # second contract does not
    ("calc/fleet.py", "from ..machinery import report", DOMAIN),
    # an experiment using more of the machinery than its spread
    ("experiments/recall.py", "from ..machinery import chapter", DOMAIN),
])
def test_a_wrong_way_import_breaks_its_contract(tmp_path, module, line, broken):
    folder = copy(tmp_path, add_import(module, line))
    done = lint(folder, broken)
    assert done.returncode == 1 and "Contracts: 0 kept, 1 broken." in done.stdout, done.stdout
    assert f"{PROBE}.{module.removesuffix('.py').replace('/', '.')} ->" in done.stdout, done.stdout
    if broken == DOMAIN:     # only the second contract sees it
        assert lint(folder, LAYERS).returncode == 0


def test_a_new_module_at_the_root_must_be_placed_in_a_layer(tmp_path):
    done = lint(copy(tmp_path, lambda pkg: (pkg / "helpers.py").write_text('"""A loose module."""\n')))
    assert done.returncode != 0
    assert f"{PROBE}.helpers" in done.stdout + done.stderr, done.stdout + done.stderr

"""The workshop kit: the package as a wheel, the wheels it installs from with no network, and one zip
a teacher hands out (``make workshop-kit``).

- ``build_wheel(out)``: the ``twopaths`` wheel, built from a clean copy of the sources (setuptools'
  in-tree ``build/`` would keep a deleted module in every later wheel).
- ``INSTALL_CELL``: the first cell of every student notebook. Where ``twopaths`` is missing (Colab,
  a bare Jupyter), it installs it from a ``wheelhouse`` folder beside the notebook or above it,
  with no network, else from a wheel uploaded beside the notebook. Where it is installed, it does
  nothing.
- ``wheelhouse(wheel, out)``: every wheel the runtime and the workshop extra need on this platform,
  at the versions requirements.txt pins, downloaded once (the only step that needs the network).
- ``workshop_kit(...)``: the site, the student and instructor notebooks, the wheelhouse and the
  setup sheet, in one zip.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

INSTALL_SOURCE = '''\
# Installs the book's package only where it is missing (Colab, a new Jupyter):
# from the workshop kit's wheelhouse beside this folder (no network), else
# from the wheel of the book's downloads, uploaded beside this notebook.
import importlib.util
import pathlib
import subprocess
import sys

if importlib.util.find_spec("twopaths") is None:
    here = [pathlib.Path.cwd(), pathlib.Path.cwd().parent]
    house = [p / "wheelhouse" for p in here if (p / "wheelhouse").is_dir()]
    wheel = sorted(w for p in here for w in p.glob("twopaths-*.whl"))
    if house:
        args = ["--no-index", "--find-links", str(house[0]), "twopaths"]
    elif wheel:
        args = [str(wheel[-1])]
    else:
        raise ModuleNotFoundError(
            "twopaths is not installed: put the wheel from the book's"
            " downloads beside this notebook")
    pip = [sys.executable, "-m", "pip", "install", "-q"]
    subprocess.check_call(pip + args)
    importlib.invalidate_caches()'''


def install_cell() -> dict:
    return {"cell_type": "code", "execution_count": None, "id": "install-twopaths",
            "metadata": {"tags": ["install"]}, "outputs": [],
            "source": INSTALL_SOURCE.splitlines(keepends=True)}


class KitError(RuntimeError):
    """A step of the kit that could not be done, with what it needs."""


def _pip(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pip", *args], capture_output=True, text=True)


def build_wheel(root: Path, out: Path) -> Path:
    """``twopaths-<version>-py3-none-any.whl`` in ``out``, built offline (no build isolation: the
    environment's pinned setuptools builds it) from a copy of ``pyproject.toml`` and ``lib/``."""
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        shutil.copy2(root / "pyproject.toml", tmp)
        shutil.copytree(root / "lib", Path(tmp) / "lib", ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
        for old in out.glob("twopaths-*.whl"):
            old.unlink()
        ran = _pip("wheel", "--quiet", "--no-deps", "--no-build-isolation", "--wheel-dir", str(out), tmp)
    if ran.returncode:
        raise KitError(f"building the twopaths wheel failed:\n{ran.stderr.strip()}")
    (wheel,) = out.glob("twopaths-*.whl")
    return wheel


def wheelhouse(root: Path, wheel: Path, out: Path, torch_index: str = "") -> Path:
    """Every wheel ``twopaths[workshop]`` installs on this platform, at requirements.txt's pins, and
    the twopaths wheel itself, in ``out``. ``torch_index`` (``TORCH_INDEX``: PyTorch's CPU index,
    https://download.pytorch.org/whl/cpu) takes torch from there, so a laptop gets the CPU build
    rather than PyPI's CUDA one."""
    out.mkdir(parents=True, exist_ok=True)
    pins = root / "requirements.txt"
    steps = []
    if torch_index:
        torch_pin = next(line for line in pins.read_text().splitlines() if line.startswith("torch=="))
        steps.append(["download", "--quiet", "--no-deps", "--only-binary=:all:", "--index-url", torch_index,
                      "--dest", str(out), torch_pin])
    steps.append(["download", "--quiet", "--only-binary=:all:", "--constraint", str(pins), "--find-links", str(out),
                  "--dest", str(out), f"{wheel}[workshop]"])
    for step in steps:
        ran = _pip(*step)
        if ran.returncode:
            raise KitError("make wheelhouse needs the package index (PyPI"
                           + (f" and {torch_index}" if torch_index else "") + "), reachable from this machine, "
                           f"to download the wheels once; pip said:\n{ran.stderr.strip()[-2000:]}")
    return out


def size_bytes(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file() and not p.is_symlink())


def workshop_kit(site: Path, kits: dict[str, Path], house: Path, sheet: Path, out: Path) -> Path:
    """One zip: ``site/`` (open ``site/index.html``), ``notebooks/`` (the student notebooks),
    ``instructor/``, ``wheelhouse/`` and ``SETUP.md``. Every part must exist."""
    for what, path in (("the site", site / "index.html"), ("the setup sheet", sheet), ("the wheelhouse", house),
                       *((f"the {k} notebooks", p) for k, p in kits.items())):
        if not path.exists():
            raise KitError(f"the workshop kit needs {what} ({path}); run make book and make wheelhouse first")
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_suffix(".zip.tmp")
    with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as z:
        z.write(sheet, "twopaths-kit/SETUP.md")
        for path in sorted(site.rglob("*")):
            if path.is_file():
                z.write(path, f"twopaths-kit/site/{path.relative_to(site)}")
        for path in sorted(house.glob("*.whl")):
            z.write(path, f"twopaths-kit/wheelhouse/{path.name}", compress_type=zipfile.ZIP_STORED)
        for kind, folder in (("student", "notebooks"), ("instructor", "instructor")):
            with zipfile.ZipFile(kits[kind]) as nbs:
                for name in nbs.namelist():
                    if name.endswith(".ipynb"):
                        z.writestr(f"twopaths-kit/{folder}/{Path(name).name}", nbs.read(name))
    os.replace(tmp, out)
    return out

"""What every chapter does first: check its profile and device, seed, and glue its results.

A chapter's ``parameters`` cell sets ``profile`` and ``device``; its next cell calls ``setup``.
``glue`` stores a number for the prose (myst-nb's ``{glue:text}`` role) and, in the same output's
metadata, its unit and how it may vary (``twopaths.machinery.variation``), which the runner collects into
results JSON and the drift check honours.
"""

from __future__ import annotations

import math
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import torch

from ..errors import ParameterError, check_choice
from . import figures
from .report import Table
from .variation import EXACT, Spread, Variation, bound, bound_text

PROFILES = ("default", "smoke", "gpu")
DEVICES = ("auto", "cpu", "cuda")
GLUE_META = "twopaths"   # the metadata key the runner reads
# The MIME prefix myst-nb reads glued outputs by (myst_nb.ext.glue.GLUE_PREFIX, tests/test_chapter.py
# keeps them equal): spelled here so that a chapter runs without the site builder installed.
GLUE_PREFIX = "application/papermill.record/"
# Seeds an experiment that supports a sentence runs over: enough for a spread in every profile.
SEEDS = {"smoke": 2, "default": 3, "gpu": 5}


@dataclass(frozen=True)
class Setup:
    profile: str
    device: torch.device
    seed: int
    seeds: tuple[int, ...]   # the seeds of this profile's experiments, ``seed`` first


def resolve_device(device: str) -> torch.device:
    """``"auto"`` picks CUDA when present; asking for CUDA on a machine without it is an error."""
    check_choice("device", device, DEVICES)
    if device == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if device == "cuda" and not torch.cuda.is_available():
        raise ParameterError("device", device, "'cuda' only where torch sees a GPU; here use 'cpu' or 'auto'")
    return torch.device(device)


CROWDING = "twopaths_crowding"   # a shown figure's metadata key: what ``figures.crowding`` found


def _wrap_png_formatter(ip) -> None:
    """Put ``figures.crowding`` in front of the kernel's PNG formatter for figures, once."""
    from matplotlib.figure import Figure

    png = ip.display_formatter.formatters["image/png"]
    try:
        draw = png.lookup_by_type(Figure)
    except KeyError:     # the inline backend registers it at the end of the cell importing pyplot
        return
    if getattr(draw, "checks_crowding", False):
        return

    def checked(fig, *args, **kwargs):
        found = figures.crowding(fig)
        out = draw(fig, *args, **kwargs)
        if out is None:
            return out
        data, meta = out if isinstance(out, tuple) else (out, {})
        return data, {**meta, CROWDING: found}

    checked.checks_crowding = True
    png.for_type(Figure, checked)


def check_figures() -> None:
    """In a Jupyter kernel, run ``figures.crowding`` on every figure the chapter shows and keep what
    it finds (an empty list when nothing) in the PNG output's metadata under ``CROWDING``, where
    the style test of executed chapters reads it: a figure without the key went unchecked, and
    fails that test too. The reader sees the figure as drawn. Outside a kernel, nothing."""
    try:
        from IPython import get_ipython
    except ImportError:
        return
    ip = get_ipython()
    if ip is None or not hasattr(ip, "display_formatter"):
        return
    import importlib

    plt = importlib.import_module("matplotlib.pyplot")
    plt.close(plt.figure())   # the inline backend is chosen, and registers its formatter, on a first figure
    _wrap_png_formatter(ip)
    callbacks = ip.events.callbacks["pre_run_cell"]
    if not any(getattr(f, "wraps_png", False) for f in callbacks):
        def wrap(*_):
            _wrap_png_formatter(ip)
        wrap.wraps_png = True
        ip.events.register("pre_run_cell", wrap)


def setup(profile: str, device: str, seed: int = 0) -> Setup:
    """Validate the two parameters every chapter has, seed every generator and set the book's
    figure style. Assign the result (``run = chapter.setup(...)``): the page shows no repr."""
    check_choice("profile", profile, PROFILES)
    dev = resolve_device(device)
    figures.apply()
    check_figures()
    # One CPU thread: the toy layers are small, and on a shared machine OpenMP threads mostly wait
    # for each other; it also keeps float reductions in one order, so glued numbers repeat exactly.
    torch.set_num_threads(1)
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    return Setup(profile, dev, seed, tuple(range(seed, seed + SEEDS[profile])))


def _plain(value):
    """Python scalars, so the glued text is ``61440`` and never ``np.int64(61440)``."""
    if isinstance(value, (np.generic, torch.Tensor)):
        return value.item()
    return value


def glue(name: str, value, unit: str, *, vary: Variation = EXACT) -> None:
    """Glue ``value`` (in ``unit``) under ``name`` for the prose and the results file.

    ``vary`` says how the value may change on another machine (``twopaths.machinery.variation``): exact by
    default; ``FLOAT32`` or ``rounding(...)`` for float32 tensor results; ``MACHINE`` for timings,
    which the drift check skips. Experiment outcomes go through ``glue_spread``, rounding errors
    through ``glue_bound``.
    """
    from IPython.core.formatters import format_display_data
    from IPython.display import display

    if not isinstance(vary, Variation):
        raise ParameterError("vary", vary, "a twopaths.machinery.variation.Variation (EXACT, FLOAT32, MACHINE, ...)")
    value = _plain(value)
    bundle, metadata = format_display_data(value)
    # The same shape myst_nb.glue(name, value, display=False) writes, with our unit beside it.
    metadata["scrapbook"] = {"name": name, "mime_prefix": GLUE_PREFIX}
    metadata[GLUE_META] = {"unit": unit, "vary": vary.as_dict()}
    display({GLUE_PREFIX + k: v for k, v in bundle.items()}, raw=True, metadata=metadata)


def glue_spread(name: str, outcome: Spread, unit: str) -> None:
    """Glue an experiment outcome over seeds: its mean as ``name``, its standard deviation over
    seeds as ``name_sd``, both with the tolerance the spread gives."""
    glue(name, outcome.mean, unit, vary=outcome.variation())
    glue(f"{name}_sd", outcome.sd, unit, vary=outcome.variation())


def glue_bound(name: str, value: float, limit: float, unit: str) -> None:
    """Glue a rounding error as the bound it meets (``1e-5``): its own digits are noise that other
    CPU kernels change. Fails, naming the value, when the bound does not hold."""
    value = float(_plain(value))
    if not value < limit:
        raise AssertionError(f"{name}: {value:.3g} {unit} is not below the stated bound {limit:g}")
    glue(name, bound_text(limit), unit, vary=bound(limit))


def show(name: str, table: Table, *, vary: Variation = EXACT):
    """Display ``table`` and glue its title and every cell, under ``name[row].header``, so a
    re-run's results file holds each number the table shows for that scenario. The cell's last
    line: ``chapter.show("bare", t)``."""
    if not isinstance(table, Table):
        raise ParameterError("table", type(table).__name__, "a twopaths.machinery.report.Table")
    glue(f"{name}.title", table.title, "text")
    for row, header, value, unit in table.cells():
        glue(f"{name}[{row}].{header}", value, unit, vary=vary if unit != "text" else EXACT)
    return table.markdown(anchor=name)


MAX_SERIES = 1_000   # IPython abbreviates longer lists in the text the glue is read back from


def _series(name: str, values) -> list:
    out = [None if v is None or not math.isfinite(float(_plain(v))) else _plain(v) for v in values]
    if len(out) > MAX_SERIES:
        raise ValueError(f"{name}: {len(out)} points; a figure records at most {MAX_SERIES} a series")
    return out


def glue_figure(name: str, title: str, x: Sequence, x_unit: str, series: Mapping[str, Sequence],
                unit: str, *, vary: Variation = EXACT) -> None:
    """Glue the data a figure draws, so a re-run's results file holds it: its title, the x values
    (``name.x``) and each line's y values (``name[label]``), a point that is not drawn (infinite,
    NaN: no valid plan) as None."""
    glue(f"{name}.title", title, "text")
    glue(f"{name}.x", _series(name, x), x_unit, vary=vary)
    for label, ys in series.items():
        ys = _series(name, ys)
        if len(ys) != len(x):
            raise ValueError(f"{name}[{label}]: {len(ys)} points against {len(x)} x values")
        glue(f"{name}[{label}]", ys, unit, vary=vary)

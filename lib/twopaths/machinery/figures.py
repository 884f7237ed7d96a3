"""The book's one figure style, and the few helpers its chapters share.

The site's content column is about 670 px wide (in a 1280-px window) and the figures are PNGs at
100 dpi, so a figure ``WIDTH`` inches wide is shown at its own size: a 9-point label stays 9 points
on the page.
Wider figures are shrunk to the column and their text with them; ``tests/test_notebook_style.py``
fails a chapter whose executed figure is wider than ``MAX_PX``. The face is opaque white, so the
Okabe-Ito colours (distinguishable with the common colour-vision deficiencies) sit on the same
background in the site's light and dark modes. ``chapter.setup`` applies the style.
"""

from __future__ import annotations

import functools
import math

import matplotlib
from cycler import cycler
from matplotlib import ticker

from ..errors import ParameterError

WIDTH = 6.7   # inches: the content column (672 px in a 1280-px window) at DPI
HEIGHT = 3.6
DPI = 100
MAX_PX = 720   # the widest executed PNG allowed: shown at 93% or more (a tight bbox adds a little)

# Okabe & Ito, "Color universal design" (2008): black omitted, it is the text colour.
PALETTE = ("#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#F0E442", "#000000")
# Lines also cycle their dash, so one drawn on top of another still shows, in grey print too.
DASHES = ("-", "--", "-.", ":")

STYLE = {
    "figure.figsize": (WIDTH, HEIGHT),
    "figure.dpi": DPI,
    "savefig.dpi": DPI,
    "figure.facecolor": "white",
    "axes.facecolor": "white",
    "savefig.facecolor": "white",
    "savefig.transparent": False,
    "figure.autolayout": True,   # tight layout without a call in every cell
    "font.size": 10,
    "axes.titlesize": 11,
    "axes.labelsize": 10,
    "xtick.labelsize": 9,
    "ytick.labelsize": 9,
    "legend.fontsize": 9,
    "legend.framealpha": 0.9,
    "lines.linewidth": 1.8,
    "lines.markersize": 5,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.prop_cycle": cycler(color=PALETTE) + cycler(linestyle=DASHES * 2),
}


def apply() -> None:
    """Set the book's style for every figure drawn after this call."""
    matplotlib.rcParams.update(STYLE)


def size(height: float = HEIGHT, share: float = 1.0) -> tuple[float, float]:
    """A ``figsize`` for the column: ``share`` of its width, ``height`` inches tall."""
    return (WIDTH * share, height)


def plain(value: float, _pos=None, si: bool = True) -> str:
    """A tick label in plain decimals, thousands as k, M and G (``si``; else powers of ten from
    10⁴, for ratios that are not counts): 0.5, 2, 30, 4k, 1M; below 0.001 a power of ten (10⁻⁷,
    2×10⁻⁵), which decimals would spell out in zeros."""
    if si:
        for scale, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
            if abs(value) >= scale:
                return f"{value / scale:g}{suffix}"
    if value and not 1e-3 <= abs(value) < 1e4:
        exponent = math.floor(math.log10(abs(value)) + 1e-9)
        mantissa = round(value / 10**exponent, 6)
        head = "" if mantissa == 1 else f"{mantissa:g}\\times"
        return f"${head}10^{{{exponent}}}$"
    return f"{value:g}"


def log_axis(ax, which: str = "x", subs: tuple[float, ...] | None = None, si: bool = True) -> None:
    """Put ``ax``'s ``which`` axis ("x" or "y") on a log scale with labels in plain decimals
    (``plain``, with k, M and G unless ``si`` is False), never "6×10⁰"; the minor ticks stay,
    unlabelled. Call it after plotting: by default the labelled multiples of each decade follow the
    span of the data (1, 2, 5 over up to about two decades, 1 and 3 up to four, powers of ten
    beyond)."""
    if which not in ("x", "y"):
        raise ParameterError("which", which, "'x' or 'y'")
    axis = ax.xaxis if which == "x" else ax.yaxis
    (ax.set_xscale if which == "x" else ax.set_yscale)("log")
    if subs is None:
        lo, hi = ax.get_xlim() if which == "x" else ax.get_ylim()
        decades = math.log10(hi / lo) if lo > 0 else math.inf
        subs = (1.0, 2.0, 5.0) if decades <= 2.5 else (1.0, 3.0) if decades <= 4.5 else (1.0,)
    axis.set_major_locator(ticker.LogLocator(base=10, subs=subs))
    axis.set_major_formatter(ticker.FuncFormatter(functools.partial(plain, si=si)))
    axis.set_minor_formatter(ticker.NullFormatter())

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
from matplotlib import ticker, transforms

from ..errors import ParameterError

WIDTH = 6.7   # inches: the content column (672 px in a 1280-px window) at DPI
HEIGHT = 3.6
DPI = 100
LEGEND_PT = 9   # the smallest legend text a reader can read at column width
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


def _densify(xy, step: float = 3.0):
    """Display-space points along a polyline, at most ``step`` pixels apart: a legend over the
    middle of a long segment covers the line as surely as one over a vertex."""
    import numpy as np

    xy = np.asarray(xy, dtype=float)
    xy = xy[np.isfinite(xy).all(axis=1)] if xy.ndim == 2 else np.empty((0, 2))
    if len(xy) < 2:
        return xy
    out = [xy[:1]]
    for a, b in zip(xy[:-1], xy[1:]):
        n = max(1, int(np.hypot(*(b - a)) // step))
        out.append(a + (b - a) * (np.arange(1, n + 1)[:, None] / n))
    return np.concatenate(out)


def _drawn(ax):
    """Display-space points of what ``ax`` plots (lines, markers, error bars) inside its frame, and
    the display boxes of its bars."""
    import numpy as np
    from matplotlib.collections import LineCollection, PathCollection
    from matplotlib.patches import Rectangle

    frame, pts = ax.get_window_extent(), []
    for line in ax.lines:
        if line.get_visible() and len(line.get_xydata()):
            xy = line.get_transform().transform(line.get_xydata())
            pts.append(_densify(xy) if line.get_linestyle() not in ("None", "", " ") else xy)
    for c in ax.collections:
        if not c.get_visible():
            continue
        if isinstance(c, PathCollection) and len(c.get_offsets()):
            pts.append(c.get_offset_transform().transform(c.get_offsets()))
        elif isinstance(c, LineCollection):
            pts += [_densify(c.get_transform().transform(s)) for s in c.get_segments() if len(s)]
    pts = np.concatenate(pts) if pts else np.empty((0, 2))
    inside = (pts[:, 0] >= frame.x0) & (pts[:, 0] <= frame.x1) & (pts[:, 1] >= frame.y0) & (pts[:, 1] <= frame.y1)
    bars = [p.get_window_extent() for p in ax.patches if isinstance(p, Rectangle) and p.get_visible()
            and p.get_width() and p.get_height()]
    return pts[inside], [b for b in bars if b.overlaps(frame)]


def _name(ax, i: int) -> str:
    title = ax.get_title() or ax.get_ylabel() or ax.get_xlabel()
    return f"panel {i + 1}" + (f" ({title[:40]})" if title else "")


def _clashes(texts) -> list[tuple[str, str]]:
    """Pairs of visible, non-empty texts whose boxes overlap by more than a pixel each way."""
    boxes = [(t.get_text(), t.get_window_extent()) for t in texts if t.get_visible() and t.get_text().strip()]
    out = []
    for i, (a, box_a) in enumerate(boxes):
        for b, box_b in boxes[i + 1:]:
            w = min(box_a.x1, box_b.x1) - max(box_a.x0, box_b.x0)
            h = min(box_a.y1, box_b.y1) - max(box_a.y0, box_b.y0)
            if w > 1 and h > 1:
                out.append((a, b))
    return out


def _tick_labels(axis) -> list:
    """The tick labels ``axis`` draws: a locator also returns ticks past the view limits, whose
    labels are never drawn and keep stale positions."""
    lo, hi = sorted(axis.get_view_interval())
    return [t for loc, t in zip(axis.get_majorticklocs(), axis.get_ticklabels())
            if lo - 1e-9 * abs(hi - lo) <= loc <= hi + 1e-9 * abs(hi - lo)]


def _texts(fig) -> list:
    """The visible, non-empty titles, axis labels and tick labels of ``fig``, and its suptitle."""
    out = [fig._suptitle] if getattr(fig, "_suptitle", None) is not None else []
    for ax in fig.axes:
        if ax.get_visible() and ax.axison:
            out += [ax.title, ax.xaxis.label, ax.yaxis.label, *_tick_labels(ax.xaxis), *_tick_labels(ax.yaxis)]
    return [t for t in out if t.get_visible() and t.get_text().strip()]


def _probe(fig) -> None:
    """Draw ``fig`` to measure it, quietly: a trial legend too wide for the layout warns, and the
    warning would print on the page under a figure that ends up fitting."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fig.canvas.draw()


def legend_outside(ax, ncol: int | None = None, below: bool | None = None, **kwargs):
    """``ax``'s legend in rows above the axes, or under its x label (``below``; by default where
    the axes has a title above it), where it covers no data: the fix for a legend ``crowding``
    finds over the curves. ``ncol`` defaults to one row of up to four entries; ``kwargs`` go to
    ``ax.legend`` (a ``title``, say)."""
    handles = kwargs.get("handles") or ax.get_legend_handles_labels()[0]
    ncol = ncol or min(4, max(1, len(handles)))
    if below is None:
        below = bool(ax.get_title())
    # clear of the labels as drawn now (tick labels poke past the frame), an offset in points:
    # the layout may shrink the axes afterwards, but not the labels around it
    fig = ax.figure
    _probe(fig)
    frame, tight = ax.get_window_extent(), ax.get_tightbbox()
    gap = ((frame.y0 - tight.y0) if below else (tight.y1 - frame.y1)) * 72 / fig.dpi + 3
    shift = transforms.ScaledTranslation(0, (-gap if below else gap) / 72, fig.dpi_scale_trans)
    for n in range(ncol, 0, -1):     # fewer columns where a row of long labels is wider than the figure
        leg = ax.legend(loc="upper center" if below else "lower center", bbox_to_anchor=(0.5, 0 if below else 1),
                        bbox_transform=ax.transAxes + shift, ncol=n, frameon=False, **kwargs)
        _probe(fig)
        box = leg.get_window_extent()
        if box.x0 >= 0 and box.x1 <= fig.bbox.width:
            break
    return leg


def crowding(fig) -> list[str]:
    """What a reader cannot read in ``fig`` as drawn, one sentence each: a legend over plotted
    points, lines or bars, or over a title or label, or written under ``LEGEND_PT``; tick labels of one axis, or labels written
    onto the plot, that overlap each other; titles and axis labels that collide. Empty when nothing does. ``chapter.setup`` runs it on every figure a chapter
    shows, and the executed chapters' style test fails on anything it finds."""
    fig.canvas.draw()
    out = []
    axes = [ax for ax in fig.axes if ax.get_visible() and ax.axison]
    for i, ax in enumerate(axes):
        legends = [ax.get_legend()] if ax.get_legend() else []
        pts, bars = _drawn(ax)
        for leg in legends + list(fig.legends):
            if not leg.get_visible():
                continue
            box = leg.get_window_extent().padded(-2)
            covered = int(((pts[:, 0] > box.x0) & (pts[:, 0] < box.x1) &
                           (pts[:, 1] > box.y0) & (pts[:, 1] < box.y1)).sum()) if len(pts) else 0
            hit = sum(1 for b in bars if b.padded(-1).overlaps(box))
            if covered or hit:
                what = " and ".join(x for x in (f"{covered} plotted points" if covered else "",
                                                 f"{hit} bars" if hit else "") if x)
                out.append(f"{_name(ax, i)}: the legend covers {what}")
        for leg in legends:
            small = min((t.get_fontsize() for t in leg.get_texts()), default=LEGEND_PT)
            if leg.get_visible() and small < LEGEND_PT:
                out.append(f"{_name(ax, i)}: legend text at {small:g} pt, under {LEGEND_PT:g}")
            if leg.get_visible():
                box = leg.get_window_extent().padded(-1)
                hit = [t.get_text() for t in _texts(fig) if t.get_window_extent().overlaps(box)]
                if hit:
                    out.append(f"{_name(ax, i)}: the legend covers the text {hit[0][:40]!r}")
        for axis, label in ((ax.xaxis, "x"), (ax.yaxis, "y")):
            for a, b in _clashes(_tick_labels(axis)):
                out.append(f"{_name(ax, i)}: {label} tick labels {a!r} and {b!r} overlap")
                break
        for a, b in _clashes(ax.texts)[:1]:     # labels written onto the plot (annotations)
            out.append(f"{_name(ax, i)}: the labels {a[:40]!r} and {b[:40]!r} on the plot overlap")
    titles = [t for ax in axes for t in (ax.title, ax.xaxis.label, ax.yaxis.label)]
    titles += [fig._suptitle] if getattr(fig, "_suptitle", None) is not None else []
    for a, b in _clashes(titles):
        out.append(f"the labels {a[:40]!r} and {b[:40]!r} overlap")
    return out

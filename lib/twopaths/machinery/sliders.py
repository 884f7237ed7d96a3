"""Sliders for a chapter's main assumptions, shown only where someone can move them.

``live()`` says whether the running cell was sent by an interactive Jupyter front end: JupyterLab,
Notebook 7 and VS Code send a ``cellId`` with every execute request, papermill (nbclient) sends
none. The built site comes from papermill runs, so it never carries a widget it could not drive;
chapters plot a precomputed sweep there instead. ``show(fn, **controls)`` displays
``ipywidgets.interactive(fn, **controls)`` when ``live()`` and nothing otherwise.
"""

from __future__ import annotations


def live() -> bool:
    try:
        from IPython import get_ipython
    except ImportError:
        return False
    kernel = getattr(get_ipython(), "kernel", None)
    if kernel is None:
        return False
    return "cellId" in (kernel.get_parent("shell") or {}).get("metadata", {})


def show(fn, **controls) -> None:
    """Display ``fn`` under sliders (ipywidgets controls or ``interact`` abbreviations) when live."""
    if live():
        import ipywidgets
        from IPython.display import display

        display(ipywidgets.interactive(fn, **controls))

"""The machinery of an executable book, which knows nothing of models or GPUs.

It executes chapters (``runner``, with papermill), caches their executions (``cache``), glues
values with their units and how each may vary (``chapter``, ``variation``), compares them with
the committed references (``drift``), re-runs a chapter with a reader's parameters (``rerun``),
and builds the site and the PDF (``sphinx_ext``, ``browser``). ``report`` (tables), ``figures``
and ``sliders`` are the display types chapters fill with the domain's numbers.

A contract in ``pyproject.toml`` (``lint-imports``) keeps it free of every domain package.
"""

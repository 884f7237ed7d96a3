"""twopaths: calculators, toy layers and the machinery behind the executable book "Two Paths".

The package is layered; a layer may import the ones below it, never one above (siblings on one
line do not import each other). ``lint-imports`` checks it in ``make test`` (pyproject.toml):

- ``plan``, ``audit``: the two commands, flags and output only;
- ``views``, ``bench``: what chapters show (tables, boxes, figures) built from the domain;
  benchmark scripts;
- ``claims``, ``experiments``: the article's figures as data and the audit; seeded training loops;
- ``layers``, ``calc``: toy PyTorch layers; calculators in SI units, returning numbers and frozen
  values, never tables;
- ``specs``: model and hardware facts (YAML, each figure with its source), configs read and
  parameters counted;
- ``machinery``: executes the chapters, glues and compares their values, caches, builds the site
  and the PDF; it knows nothing of models or GPUs;
- ``errors``: one error type for bad input, and the checks that raise it.
"""

__version__ = "0.1.0"

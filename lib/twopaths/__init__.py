"""twopaths: calculators and toy layers behind the executable book "Two Paths".

The package is split the way the book is:
- ``specs``: model and hardware facts (YAML, each figure with its source),
- ``calc``: calculators, plain functions over specs in SI units,
- ``layers``: toy PyTorch layers,
- ``claims``: the article's stated figures as data,
- ``runner``: executes the chapters and collects their glued results.
"""

__version__ = "0.1.0"

"""Benchmarks, one module per topic, run as ``python -m twopaths.bench.<topic>``."""

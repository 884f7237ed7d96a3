"""The one way a test is skipped for something missing: an oracle package, AIConfigurator's corpus,
a browser or a built site. Under CI (``CI`` set to a truthy value: 1, true, yes, on) whatever is
missing is a failure, so a broken install cannot turn the run green; elsewhere the test skips
and the reason names what to install."""

from __future__ import annotations

import importlib
import importlib.util
import os

import pytest

TRUTHY = ("1", "true", "yes", "on")


def ci() -> bool:
    return os.environ.get("CI", "").strip().lower() in TRUTHY


def missing(what: str, fix: str):
    """Skip (or, under CI, fail) because ``what`` is missing; ``fix`` says how to get it."""
    if ci():
        pytest.fail(f"CI: {what} is missing and a test needs it ({fix})", pytrace=False)
    pytest.skip(f"{what} is missing: {fix}", allow_module_level=True)


def module(name: str, fix: str = "pip install -r requirements.txt"):
    """``name`` imported, or ``missing``."""
    if importlib.util.find_spec(name.split(".")[0]) is None:
        missing(f"the test dependency {name}", fix)
    try:
        return importlib.import_module(name)
    except ImportError as e:
        missing(f"the test dependency {name} ({e})", fix)

import os

import pytest
from hypothesis import settings

import need

# The same examples on every run: CI on a shared machine must not meet a new one by chance.
settings.register_profile("twopaths", derandomize=True, deadline=None)
settings.load_profile("twopaths")


@pytest.fixture(autouse=os.environ.get("TWOPATHS_FRESH_CACHES") == "1")
def fresh_caches():
    """Under `make mutants`, clear every functools cache in twopaths before each test: a memoised
    plan computed by an earlier test would hide from mutmut that this test reaches the function."""
    import sys

    for name, module in list(sys.modules.items()):
        if name.startswith("twopaths."):
            for value in vars(module).values():
                if callable(getattr(value, "cache_clear", None)):
                    value.cache_clear()


@pytest.fixture
def raises_param():
    """Assert that a call raises ParameterError naming ``name`` (and, if given, the bad value)."""
    from twopaths.errors import ParameterError

    def check(name, fn, *args, **kwargs):
        with pytest.raises(ParameterError) as info:
            fn(*args, **kwargs)
        assert info.value.name == name
        assert str(info.value).startswith(f"{name}: got ")
        return info.value

    return check


# In CI a missing oracle must fail, never skip: a module-level importorskip would otherwise turn a
# broken install green. Locally it still skips, with its reason in the summary. Tests skip through
# need.py; this catches an importorskip written anyway.
if need.ci():
    _importorskip = pytest.importorskip

    def _import_or_fail(modname, *args, **kwargs):
        try:
            return _importorskip(modname, *args, **kwargs)
        except pytest.skip.Exception as e:
            raise ImportError(f"CI: {modname} is a test dependency and must be installed ({e})") from None

    pytest.importorskip = _import_or_fail

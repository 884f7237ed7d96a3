import pytest
from hypothesis import settings

# The same examples on every run: CI on a shared machine must not meet a new one by chance.
settings.register_profile("twopaths", derandomize=True, deadline=None)
settings.load_profile("twopaths")


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

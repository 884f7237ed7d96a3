import pytest


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

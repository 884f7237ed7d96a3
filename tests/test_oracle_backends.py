"""The oracles run the code we think they run: transformers' torch fallbacks on a CPU, never fla's
Triton kernels, and a missing oracle fails CI instead of skipping."""

import inspect
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import torch

KERNEL_FUNCTIONS = ("chunk_kimi_delta_attention", "recurrent_kimi_delta_attention", "causal_conv1d_fn",
                    "causal_conv1d_update")


@pytest.mark.skipif(torch.cuda.is_available(), reason="on a GPU transformers may bind fla's kernels on purpose")
@pytest.mark.parametrize("model", ["glm5_next", "kimi_linear"])
def test_transformers_kda_oracles_use_the_torch_fallback_on_cpu(model):
    module = __import__(f"transformers.models.{model}.modeling_{model}", fromlist=["_"])
    for name in KERNEL_FUNCTIONS:
        fn = getattr(module, name, None)
        if fn is None:
            continue
        bound = inspect.getclosurevars(fn).nonlocals.get("implementation")
        assert bound is not None, f"{model}.{name}: transformers no longer wraps it the way this test reads"
        # The torch fallback is the function defined in transformers' own module; fla's would live in fla.
        assert bound.__module__ == module.__name__, f"{model}.{name} is bound to {bound.__module__}"


def _pytest_on(source: str, ci: str | None, tmp_path) -> subprocess.CompletedProcess:
    test = tmp_path / "test_probe.py"
    test.write_text(textwrap.dedent(source))
    for name in ("conftest.py", "need.py"):
        (tmp_path / name).write_text((Path(__file__).parent / name).read_text())
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    if ci is not None:
        env["CI"] = ci
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(test)],
                          capture_output=True, text=True, env=env, cwd=tmp_path)


PROBE = """
    import pytest
    missing = pytest.importorskip("twopaths_no_such_oracle")

    def test_uses_it():
        assert missing
"""


# The one helper every test skips through (tests/need.py): a missing oracle inside a test, one at
# module level, and a missing corpus file, beside a test that needs nothing and must still run.
NEED_PROBE = """
    import need

    def test_oracle_inside():
        need.module("twopaths_no_such_oracle")

    def test_corpus_missing():
        need.missing("AIConfigurator's corpus", "pip install -r requirements.txt")

    def test_needs_nothing():
        assert 1 + 1 == 2
"""
NEED_MODULE_PROBE = """
    import need
    missing = need.module("twopaths_no_such_oracle")

    def test_uses_it():
        assert missing
"""


@pytest.mark.parametrize("ci", ["true", "1", "yes", "TRUE"])
def test_a_missing_oracle_fails_under_ci(tmp_path, ci):
    done = _pytest_on(PROBE, ci, tmp_path)
    assert done.returncode != 0 and "must be installed" in done.stdout, done.stdout
    done = _pytest_on(NEED_PROBE, ci, tmp_path)
    assert done.returncode != 0 and "2 failed, 1 passed" in done.stdout, done.stdout
    assert "CI: the test dependency twopaths_no_such_oracle is missing" in done.stdout
    done = _pytest_on(NEED_MODULE_PROBE, ci, tmp_path)
    assert done.returncode != 0 and "CI: the test dependency" in done.stdout, done.stdout


@pytest.mark.parametrize("ci", [None, "", "0", "false"])
def test_a_missing_oracle_skips_outside_ci(tmp_path, ci):
    done = _pytest_on(PROBE, ci, tmp_path)
    assert "1 skipped" in done.stdout and "must be installed" not in done.stdout, done.stdout
    done = _pytest_on(NEED_PROBE, ci, tmp_path)
    assert done.returncode == 0 and "1 passed, 2 skipped" in done.stdout, done.stdout
    done = _pytest_on(NEED_MODULE_PROBE, ci, tmp_path)       # 5: the module skipped, nothing ran
    assert done.returncode == 5 and "1 skipped" in done.stdout, done.stdout


def test_every_skip_goes_through_the_helper():
    """No test file calls pytest.skip or importorskip itself (this file's probes aside): a skip
    written anywhere else would stay a skip under CI."""
    here = Path(__file__).parent
    for f in sorted(here.glob("test_*.py")):
        if f.name == Path(__file__).name:
            continue
        text = f.read_text()
        assert "pytest.skip(" not in text and "importorskip(" not in text, f.name

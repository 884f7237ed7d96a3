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
    (tmp_path / "conftest.py").write_text((Path(__file__).parent / "conftest.py").read_text())
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


def test_a_missing_oracle_fails_under_ci(tmp_path):
    done = _pytest_on(PROBE, "true", tmp_path)
    assert done.returncode != 0 and "must be installed" in done.stdout, done.stdout


def test_a_missing_oracle_skips_outside_ci(tmp_path):
    done = _pytest_on(PROBE, None, tmp_path)
    assert "1 skipped" in done.stdout and "must be installed" not in done.stdout, done.stdout

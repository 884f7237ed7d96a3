"""The runner: parameters, drift against the reference within tolerances, workers, and chapters that refuse
bad input early."""

import json
import os
import re
from pathlib import Path

import pytest

from twopaths.machinery import drift, runner

ROOT = Path(__file__).resolve().parents[1]
KV_WALL = ROOT / "notebooks" / "01-kv-wall.ipynb"


def test_parse_value():
    assert runner.parse_value("2000000") == 2_000_000
    assert runner.parse_value("1e6") == 1_000_000 and isinstance(runner.parse_value("1e6"), int)
    assert runner.parse_value("0.5") == 0.5
    assert runner.parse_value("[h200") == "[h200"      # left for the chapter's check to refuse by name
    assert runner.parse_value('["h100", "b200"]') == ["h100", "b200"]
    assert runner.parse_value("true") is True
    assert runner.parse_value("fp8") == "fp8"


def test_every_toc_chapter_exists_and_has_a_parameters_cell():
    import papermill

    chapters = runner.toc_notebooks(ROOT)
    assert chapters, "the toc lists no chapter"
    for nb in chapters:
        assert nb.is_file(), nb
        params = papermill.inspect_notebook(str(nb))
        assert {"profile", "device"} <= set(params), nb
        first_code = next(c for c in json.loads(nb.read_text())["cells"] if c["cell_type"] == "code")
        assert "parameters" in first_code["metadata"].get("tags", []), f"{nb.name}: first code cell is not 'parameters'"
        # Every top-level assignment must be one papermill can read, or `make chapter -p` refuses it.
        assigned = {line.split("=")[0].strip() for line in "".join(first_code["source"]).splitlines()
                    if "=" in line and line[:1].isidentifier()}
        assert assigned <= set(params), f"{nb.name}: papermill cannot read {sorted(assigned - set(params))}"


def test_no_outputs_committed_in_notebooks():
    for nb in (ROOT / "notebooks").glob("*.ipynb"):
        for cell in json.loads(nb.read_text())["cells"]:
            if cell["cell_type"] == "code":
                assert not cell["outputs"] and cell["execution_count"] is None, nb.name


def _results(values):
    return {"profile": "smoke", "notebooks": {"ch": {"values": values}}}


EXACT, MACHINE = {"kind": "exact"}, {"kind": "machine"}
F32 = {"kind": "rounding", "rtol": 1e-5}


def test_drift_reports_changed_missing_and_new_values_but_not_timings():
    ref = _results({"a": {"value": 1.0, "unit": "B", "vary": EXACT}, "b": {"value": 2, "unit": "x", "vary": EXACT},
                    "t": {"value": 0.5, "unit": "s", "vary": MACHINE}})
    same = _results({"a": {"value": 1.0, "unit": "B", "vary": EXACT}, "b": {"value": 2, "unit": "x", "vary": EXACT},
                     "t": {"value": 9.0, "unit": "s", "vary": MACHINE}})
    report = drift.compare(ref, same)
    assert report.ok and report.lines() == [] and report.chapters[0].matched == 2
    changed = _results({"a": {"value": 1.5, "unit": "B", "vary": EXACT}, "c": {"value": 3, "unit": "x", "vary": EXACT}})
    lines = drift.compare(ref, changed).lines()
    assert any(p.startswith("ch.a: 1.5 B now, reference 1.0 (+50%; allowed: exact)") for p in lines), lines
    assert any(p.startswith("ch.b: missing") for p in lines)
    assert any(p.startswith("ch.c: new value") for p in lines)
    assert drift.compare(ref, {"notebooks": {}}).lines() == ["ch: not run"]
    extra = {"notebooks": {**same["notebooks"], "new": {"values": {}}}}
    assert drift.compare(ref, extra).lines() == ["new: ran, but has no reference values"]
    flag = drift.compare(_results({"f": {"value": True, "unit": "flag", "vary": EXACT}}),
                         _results({"f": {"value": 1, "unit": "flag", "vary": EXACT}}))
    assert not flag.ok
    became_exact = _results({"t": {"value": 9.0, "unit": "s", "vary": EXACT}})
    assert any("a timing in the reference" in line for line in drift.compare(
        _results({"t": {"value": 0.5, "unit": "s", "vary": MACHINE}}), became_exact).lines())


def test_drift_honours_each_values_tolerance():
    ref = _results({"r": {"value": 2.0, "unit": "1", "vary": F32},
                    "s": {"value": 0.50, "unit": "1", "vary": {"kind": "spread", "atol": 0.02}}})
    inside = _results({"r": {"value": 2.0 * (1 + 9e-6), "unit": "1", "vary": F32},
                       "s": {"value": 0.515, "unit": "1", "vary": {"kind": "spread", "atol": 0.03}}})
    assert drift.compare(ref, inside).ok       # the reference's tolerance rules, not the run's
    outside = _results({"r": {"value": 2.0 * (1 + 2e-5), "unit": "1", "vary": F32},
                        "s": {"value": 0.525, "unit": "1", "vary": {"kind": "spread", "atol": 0.02}}})
    assert [m.name for m in drift.compare(ref, outside).chapters[0].moved] == ["r", "s"]
    kind_changed = _results({"r": {"value": 2.0, "unit": "1", "vary": EXACT},
                             "s": {"value": 0.5, "unit": "1", "vary": {"kind": "spread", "atol": 0.02}}})
    assert any("rounding" in line for line in drift.compare(ref, kind_changed).lines())


def test_a_reference_without_tolerances_is_refused_with_a_remedy():
    old = _results({"a": {"value": 1.0, "unit": "B", "deterministic": True}})
    with pytest.raises(drift.ReferenceError, match="no tolerance.*make refresh-results"):
        drift.compare(old, old, "results/smoke.json")


@pytest.mark.parametrize("text", ["0", "abc", "-2", "1.5"])
def test_bad_jobs_is_refused_by_name(text):
    with pytest.raises(runner.RunError, match=f"JOBS: got '{re.escape(text)}'; allowed: a whole number >= 1"):
        runner.parse_jobs(text)


def test_jobs_defaults_to_the_cores():
    assert runner.parse_jobs("") == (os.cpu_count() or 1) and runner.parse_jobs("3") == 3


def test_unknown_parameter_is_refused_before_running():
    # chapter 1 took context_tokens before the chapters' parameter names were made one: now context
    with pytest.raises(runner.RunError, match="unknown parameter.*context_tokens\\b.*takes:.*\\bcontext\\b"):
        runner.check_parameters(KV_WALL, {"context_tokens": 5})
    with pytest.raises(runner.RunError, match="profile: got 'fast'"):
        runner.check_parameters(KV_WALL, {"profile": "fast"})


@pytest.mark.notebooks
@pytest.mark.parametrize("name, value, message", [
    ("context", -5, "context: got -5"),
    ("kv_dtype", "int4", "kv_dtype: got 'int4'"),
    ("gpus", ["h200", "tpu"], "gpus: got"),
])
def test_bad_value_stops_the_chapter_in_its_first_cells(tmp_path, name, value, message):
    with pytest.raises(runner.RunError) as info:
        runner.execute(KV_WALL, tmp_path / "out.ipynb", {"profile": "smoke", "device": "cpu", name: value})
    text = str(info.value)
    assert message in text and "ParameterError" in text
    # Cell 1 is the parameters cell, 2 papermill's injected one; the check right after them must stop it.
    assert "failed in cell 3" in text, text


def test_status_page_shows_kernels_drift_and_the_cache(tmp_path):
    env = {"commit": "abc", "date": "today", "python": "3.11", "packages": {"torch": "2.13.0"}}
    mach = {"cpu_capability": "AVX512", "device": "cpu (x86_64)", "ATEN_CPU_CAPABILITY": "avx2"}
    values = {"a": {"value": 1.5, "unit": "B", "vary": EXACT}, "b": {"value": 2, "unit": "x", "vary": EXACT}}
    results = {"profile": "smoke", "environment": env, "machine": mach,
               "notebooks": {"ch": {"runtime_s": 1.0, "cached": True, "device": "cpu (x86_64)", "values": values}}}
    ref = _results({"a": {"value": 1.0, "unit": "B", "vary": EXACT}, "b": {"value": 2, "unit": "x", "vary": EXACT}})
    page = runner.write_status(results, drift.compare(ref, results, "results/smoke.json"), tmp_path).read_text()
    assert "torch `AVX512` (ATEN_CPU_CAPABILITY=avx2)" in page and "device: cpu (x86_64)" in page
    assert "1 of 2 compared values within tolerance" in page and "| 1 of 2 |" in page
    assert "earlier (cached)" in page
    assert "ch.a: 1.5 B now, reference 1.0 (+50%; allowed: exact)" in page


def test_relative_json_paths_are_made_absolute_from_where_the_command_ran(tmp_path):
    """A re-run executes in its own folder, so ``-p configs '["my/config.json"]'`` typed in a shell
    must reach the chapter as the file beside the shell, not one beside the re-run."""
    from twopaths.machinery.runner import absolute_paths
    got = absolute_paths({"configs": ["my/config.json", "Qwen--Qwen3-235B-A22B", "/abs/c.json"],
                          "gpu_specs": "gpus.json", "context": 5}, tmp_path)
    assert got["configs"] == [str(tmp_path / "my" / "config.json"), "Qwen--Qwen3-235B-A22B", "/abs/c.json"]
    assert got["gpu_specs"] == str(tmp_path / "gpus.json") and got["context"] == 5
    assert absolute_paths({"gpu_specs": {"my-gpu": {}}}, tmp_path) == {"gpu_specs": {"my-gpu": {}}}

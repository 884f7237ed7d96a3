"""Launch buttons (``machinery.launch``): none while ``repository.url`` is empty, as the
committed ``_config.yml`` has it; Binder and Colab links to the chapter in the repository once it
names one; anything else refused, naming the setting. The two states are built for real, with
Jupyter Book, on a one-chapter book."""

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from twopaths.machinery.launch import LaunchError, launch_config

ROOT = Path(__file__).resolve().parents[1]
CONFIG = yaml.safe_load((ROOT / "_config.yml").read_text())
REPO = "https://github.com/example-org/twopaths"


def with_url(url: str) -> dict:
    return {**CONFIG, "repository": {**CONFIG["repository"], "url": url}}


def test_the_committed_config_names_no_repository_and_gets_no_hub():
    assert CONFIG["repository"]["url"] == ""
    assert CONFIG["launch_buttons"]["binderhub_url"] and CONFIG["launch_buttons"]["colab_url"]
    buttons = launch_config(CONFIG)["launch_buttons"]
    assert not any(buttons.get(k) for k in ("binderhub_url", "colab_url", "jupyterhub_url", "thebe"))


def test_a_named_repository_keeps_every_host():
    assert launch_config(with_url(REPO)) == with_url(REPO)


@pytest.mark.parametrize("url", ["github.com/example-org/twopaths", "https://gitlab.com/a/b",
                                 "https://github.com/only-org", "http://github.com/a/b"])
def test_a_repository_that_is_not_on_github_is_refused(url):
    with pytest.raises(LaunchError, match=r"repository.url in _config.yml: got .*https://github.com/<org>/<repo>"):
        launch_config(with_url(url))


def build(tmp: Path, url: str) -> str:
    """A one-chapter book with the book's launch settings for ``url``; the chapter page's HTML."""
    (tmp / "notebooks").mkdir(parents=True)
    nb = {"cells": [{"cell_type": "markdown", "metadata": {}, "source": "# A chapter"},
                    {"cell_type": "code", "execution_count": 1, "metadata": {}, "outputs": [], "source": "1"}],
          "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}},
          "nbformat": 4, "nbformat_minor": 5}
    (tmp / "notebooks" / "09-x.ipynb").write_text(json.dumps(nb))
    (tmp / "intro.md").write_text("# Intro\n")
    config = launch_config(with_url(url))
    small = {"title": "t", "execute": {"execute_notebooks": "off"}, "only_build_toc_files": True,
             "repository": config["repository"], "launch_buttons": config["launch_buttons"]}
    (tmp / "_config.yml").write_text(yaml.safe_dump(small))
    (tmp / "_toc.yml").write_text("format: jb-book\nroot: intro\nchapters:\n  - file: notebooks/09-x\n")
    ran = subprocess.run([str(Path(sys.executable).parent / "jupyter-book"), "build", str(tmp), "-W", "-n"],
                         capture_output=True, text=True)
    assert ran.returncode == 0, ran.stdout[-2000:] + ran.stderr[-2000:]
    return (tmp / "_build" / "html" / "notebooks" / "09-x.html").read_text()


@pytest.mark.notebooks
def test_without_a_repository_no_page_links_to_a_launch_host(tmp_path):
    page = build(tmp_path, "")
    assert "mybinder.org" not in page and "colab.research.google.com" not in page


@pytest.mark.notebooks
def test_with_a_repository_each_chapter_launches_from_it(tmp_path):
    page = build(tmp_path, REPO)
    assert "https://mybinder.org/v2/gh/example-org/twopaths/main?urlpath=lab/tree/notebooks/09-x.ipynb" in page
    assert "https://colab.research.google.com/github/example-org/twopaths/blob/main/notebooks/09-x.ipynb" in page

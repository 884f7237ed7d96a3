"""Launch buttons (Binder, Colab, a JupyterHub) on every chapter, set in ``_config.yml``.

``launch_config(config)`` is the configuration the site and a re-run's page are built from: the
hosts ``launch_buttons`` names only once ``repository.url`` names the GitHub repository the chapters
are in. While it is empty, no button or link points anywhere: sphinx-book-theme cannot build a
link without a repository, and fails the build if asked to.
"""

from __future__ import annotations

import re

# The launch buttons' hosts in _config.yml; the theme draws a button for each one set.
HUBS = ("binderhub_url", "colab_url", "jupyterhub_url")
REPOSITORY = re.compile(r"^https://github\.com/[\w.-]+/[\w.-]+/?$")


class LaunchError(ValueError):
    """A ``repository.url`` no launch button can point at, named."""


def launch_config(config: dict) -> dict:
    """``config`` with its launch hosts kept only where ``repository.url`` names a GitHub repository."""
    url = (config.get("repository") or {}).get("url") or ""
    if not url:
        buttons = {k: v for k, v in (config.get("launch_buttons") or {}).items() if k not in HUBS}
        return {**config, "launch_buttons": buttons}
    if not REPOSITORY.match(url):
        raise LaunchError(f"repository.url in _config.yml: got {url!r}; allowed: empty (no launch buttons) or a "
                          "GitHub repository, https://github.com/<org>/<repo> (Colab opens notebooks from GitHub only)")
    return config

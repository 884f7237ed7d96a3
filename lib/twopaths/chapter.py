"""What every chapter does first: check its profile and device, seed, and glue its results.

A chapter's ``parameters`` cell sets ``profile`` and ``device``; its next cell calls ``setup``.
``glue`` stores a number for the prose (myst-nb's ``{glue:text}`` role) and, in the same output's
metadata, its unit and whether it is deterministic, which the runner collects into results JSON.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

import numpy as np
import torch

from .errors import ParameterError, check_choice

PROFILES = ("default", "smoke", "gpu")
DEVICES = ("auto", "cpu", "cuda")
GLUE_META = "twopaths"   # the metadata key the runner reads


@dataclass(frozen=True)
class Setup:
    profile: str
    device: torch.device
    seed: int


def resolve_device(device: str) -> torch.device:
    """``"auto"`` picks CUDA when present; asking for CUDA on a machine without it is an error."""
    check_choice("device", device, DEVICES)
    if device == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if device == "cuda" and not torch.cuda.is_available():
        raise ParameterError("device", device, "'cuda' only where torch sees a GPU; here use 'cpu' or 'auto'")
    return torch.device(device)


def setup(profile: str, device: str, seed: int = 0) -> Setup:
    """Validate the two parameters every chapter has and seed every generator."""
    check_choice("profile", profile, PROFILES)
    dev = resolve_device(device)
    # One CPU thread: the toy layers are small, and on a shared machine OpenMP threads mostly wait
    # for each other; it also keeps float reductions in one order, so glued numbers repeat exactly.
    torch.set_num_threads(1)
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    return Setup(profile, dev, seed)


def _plain(value):
    """Python scalars, so the glued text is ``61440`` and never ``np.int64(61440)``."""
    if isinstance(value, (np.generic, torch.Tensor)):
        return value.item()
    return value


def glue(name: str, value, unit: str, *, deterministic: bool = True) -> None:
    """Glue ``value`` (in ``unit``) under ``name`` for the prose and the results file.

    Mark timings and other machine-dependent figures ``deterministic=False``: the drift check
    against ``results/`` skips them.
    """
    from IPython.core.formatters import format_display_data
    from IPython.display import display
    from myst_nb.ext.glue import GLUE_PREFIX

    value = _plain(value)
    bundle, metadata = format_display_data(value)
    # The same shape myst_nb.glue(name, value, display=False) writes, with our unit beside it.
    metadata["scrapbook"] = {"name": name, "mime_prefix": GLUE_PREFIX}
    metadata[GLUE_META] = {"unit": unit, "deterministic": deterministic}
    display({GLUE_PREFIX + k: v for k, v in bundle.items()}, raw=True, metadata=metadata)

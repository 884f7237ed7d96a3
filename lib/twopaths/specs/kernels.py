"""Measured communication kernels (``kernels.yaml``): DeepEP's low-latency dispatch and combine, by
EP size, with the setting they were measured in."""

from __future__ import annotations

from functools import cache
from pathlib import Path

import yaml

HERE = Path(__file__).parent


@cache
def deepep_low_latency() -> dict:
    """DeepEP's low-latency kernels: ``rows`` maps an EP size to (dispatch us, dispatch GB/s,
    combine us, combine GB/s); ``tokens``, ``hidden``, ``top_k`` and ``nic_bandwidth`` are the
    setting, ``source`` where the figures come from."""
    d = yaml.safe_load((HERE / "kernels.yaml").read_text())["deepep_low_latency"]
    return {**d, "nic_bandwidth": float(d["nic_bandwidth"]), "hidden_sizes": tuple(int(h) for h in d["hidden_sizes"]),
            "rows": {int(k): tuple(float(x) for x in v) for k, v in d["rows"].items()}}

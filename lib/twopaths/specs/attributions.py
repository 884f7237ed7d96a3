"""Who proposed the methods the article attributes (``attributions.yaml``), from the papers themselves."""

from __future__ import annotations

from functools import cache
from pathlib import Path

import yaml

from ..errors import check_choice

HERE = Path(__file__).parent


@cache
def _data() -> dict:
    return yaml.safe_load((HERE / "attributions.yaml").read_text())


def attribution(method: str) -> dict:
    """The paper that proposed ``method``: title, authors, organisation, year and source."""
    return dict(_data()[check_choice("method", method, sorted(_data()))])

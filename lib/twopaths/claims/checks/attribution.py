"""Checks for who proposed what (``attribution.yaml``): a claim stated as 1 (true) against the paper
that proposed the method (``specs/attributions.yaml``), 1 where it bears the claim out."""

from __future__ import annotations

from ...specs.attributions import attribution
from ..audit import check

HC = attribution("hyper-connections")
BY_KIMI = float("Moonshot" in HC["organisation"] or "Kimi" in HC["organisation"])
check("hc-proposed-by-kimi", public=lambda: BY_KIMI, fact=True, reason="misattribution",
      basis=f"the paper that proposed it ({HC['source']})", cite=f"{HC['title']}, {HC['source']}",
      explain=f"{HC['title']} was proposed by {HC['authors'].split(',')[0]} et al. at "
              f"{HC['organisation']} ({HC['year']}); mHC, DeepSeek's, constrains it")(lambda: BY_KIMI)

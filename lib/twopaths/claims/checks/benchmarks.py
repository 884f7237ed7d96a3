"""Checks for the figures the article quotes from others (``benchmarks.yaml``).

Scores, ranks and prices cannot be recomputed; only the ratios the article draws between them can,
from the quoted figures themselves (no public config bears on them).
"""

from __future__ import annotations

from ..audit import check
from .architecture import K3, PRO, stated, total


def gain(benchmark: str):
    """Flash 0731's relative gain over Flash Preview on ``benchmark``, from the two quoted scores."""
    return lambda: stated(f"flash-0731-{benchmark}") / stated(f"flash-preview-{benchmark}") - 1


check("v4-output-price-fraction",
      explain="100/6 = 16.7: DSV4's output price is nearer 1/17 of K3's than 1/16 (in USD, 15.00/0.87 = 17.2)")(
    lambda: stated("k3-output-price") / stated("v4-output-price"))
for bench in ("terminal-bench", "deepswe", "toolathlon", "cybergym"):
    check(f"flash-{bench}-gain")(gain(bench))

# DSV4's base "is larger" than K3's: its own introduction prints 1.6T against 2.8T.
check("v4-larger-base", public=lambda: float(total(PRO) > total(K3)), reason="inconsistent assumption",
      fails="arithmetic", explain="the article's own introduction gives DSV4 1.6T parameters and K3 2.8T: "
                                  "DSV4's base is the smaller, and only its activations (49B against 104B) "
                                  "are; read as total per activated parameter, 33 against 27, it would hold")(
    lambda: float(stated("v4-total-params") > stated("k3-total-params")))

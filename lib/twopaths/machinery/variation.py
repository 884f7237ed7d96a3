"""How a glued number may vary between runs and machines, and the check that honours it.

Every value a chapter glues says which of five kinds it is:

- ``EXACT``: integers, strings, and float64 arithmetic over the specs (the calculators). It must
  not move; floats may differ only in the last bits that a reordered float64 sum can change.
- ``rounding(rtol, atol)``: a float32 tensor result. Other CPU kernels (AVX-512, AVX2, the
  portable ``default`` path) round differently, so it may move within the stated tolerance.
- ``Spread``: an experiment outcome (a loss, an accuracy, an acceptance rate) as the mean over
  several seeds; it may move by the tolerance its measured spread gives.
- ``MACHINE``: a timing or other machine figure; never compared.
- ``bound(limit)``: a rounding error itself (a max |difference| between two forms). It is glued
  as the bound it meets, not as a number, because its digits are noise.

The variation travels with the value into ``results/<profile>.json``; ``agrees`` is the drift check.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

from ..errors import ParameterError

KINDS = ("exact", "rounding", "spread", "machine", "bound")
EXACT_RTOL = 1e-12   # float64 sums in another order differ near 1e-16 relative; this leaves room


@dataclass(frozen=True)
class Variation:
    """The kind of a glued value and the tolerance the drift check gives it."""

    kind: str
    rtol: float = 0.0
    atol: float = 0.0
    limit: float | None = None   # the bound a ``bound`` value meets
    # a ``spread`` value's own measurement, so a re-run can be judged against both runs' spreads
    sd: float | None = None      # the sample sd over seeds
    seeds: int | None = None     # how many seeds
    floor: float = 0.0           # the outcome's resolution

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ParameterError("kind", self.kind, "one of " + ", ".join(map(repr, KINDS)))
        for name in ("rtol", "atol", "floor") + (("sd",) if self.sd is not None else ()):
            v = getattr(self, name)
            if not (isinstance(v, (int, float)) and math.isfinite(v) and v >= 0):
                raise ParameterError(name, v, "a finite number >= 0")
        if (self.sd is None) != (self.seeds is None):
            raise ParameterError("seeds", self.seeds, "given with sd, and only with it (a spread's own measurement)")
        if self.seeds is not None and not (isinstance(self.seeds, int) and not isinstance(self.seeds, bool)
                                           and self.seeds >= 2):
            raise ParameterError("seeds", self.seeds, "a whole number of seeds >= 2")

    def as_dict(self) -> dict:
        return {k: v for k, v in asdict(self).items()
                if v not in (None, 0.0) or k == "kind" or (k == "sd" and self.seeds)}

    def against(self, rerun: Variation) -> Variation:
        """The tolerance for comparing this (the reference's) value with a re-run that measured its
        own spread: both runs' seeds estimate one sigma, so a two-sample t-test. With n and m seeds
        and sds s1 and s2, the pooled sd is sqrt(((n - 1) s1^2 + (m - 1) s2^2) / (n + m - 2)), the
        gap of the means over it times sqrt(1/n + 1/m) follows Student's t with n + m - 2 degrees
        of freedom, and the larger resolution of the two is the least tolerance. Against anything
        else (another kind, a run without its spread), this tolerance as it is."""
        if self.kind != "spread" or rerun.kind != "spread" or self.sd is None or rerun.sd is None:
            return self
        n, m = self.seeds, rerun.seeds
        scale = max(self.sd, rerun.sd)   # sds factored out, so no square overflows
        pooled = scale * math.sqrt(((n - 1) * (self.sd / scale) ** 2 + (m - 1) * (rerun.sd / scale) ** 2)
                                   / (n + m - 2)) if scale else 0.0
        k = t_quantile(RERUN_CONFIDENCE, n + m - 2)
        return Variation("spread", atol=max(k * pooled * math.sqrt(1 / n + 1 / m), self.floor, rerun.floor))

    @classmethod
    def from_dict(cls, d: dict) -> Variation:
        return cls(**d)

    def describe(self) -> str:
        """A few words for the status page and drift messages."""
        if self.kind == "rounding":
            return f"float rounding (rtol {self.rtol:.0e}" + (f", atol {self.atol:.0e})" if self.atol else ")")
        if self.kind == "spread":
            return f"seed spread (±{self.atol:.3g})"
        if self.kind == "bound":
            return f"bound (below {self.limit:g})"
        return self.kind

    def agrees(self, reference, current) -> bool:
        """Whether ``current`` is the same result as ``reference`` up to this variation."""
        if self.kind == "machine":
            return True
        if isinstance(reference, list) and isinstance(current, list):   # a figure's series
            return len(reference) == len(current) and all(map(self.agrees, reference, current))
        both_numbers = all(isinstance(x, (int, float)) and not isinstance(x, bool)
                           for x in (reference, current))
        if not both_numbers:   # text, flags, None: equal and of one type (True is not 1)
            return type(reference) is type(current) and reference == current
        if self.kind == "exact":
            if isinstance(reference, int) and isinstance(current, int):
                return reference == current
            return math.isclose(current, reference, rel_tol=EXACT_RTOL, abs_tol=0.0)
        return abs(current - reference) <= self.atol + self.rtol * abs(reference)


EXACT = Variation("exact")
MACHINE = Variation("machine")


def rounding(rtol: float, atol: float = 0.0) -> Variation:
    """A float32 result that other CPU kernels round differently: ``|a - b| <= atol + rtol |b|``."""
    return Variation("rounding", rtol=rtol, atol=atol)


# Float32 results a few operations deep (a matmul, a softmax, a norm): a few ulps, with room.
FLOAT32 = rounding(1e-5)
# Float32 results at the end of long chains (a deep stack, many iterations, a short training run
# whose steps compound the rounding): the digits the book prints, not the last ones.
FLOAT32_DEEP = rounding(1e-3)
# An estimate read off a histogram: a sample that other rounding moves across a bin edge changes a
# count, so the estimate moves by about one bin's weight.
HISTOGRAM = rounding(2e-2)


def singular_value(largest: float, depth_eps: float = 1e-5) -> Variation:
    """A singular value of a float32 matrix is accurate to about eps times the largest one (Weyl's
    inequality), not to eps of itself; products of many matrices compound eps, hence 1e-5."""
    return rounding(0.0, atol=depth_eps * abs(float(largest)))


def bound(limit: float) -> Variation:
    if not (isinstance(limit, (int, float)) and math.isfinite(limit) and limit > 0):
        raise ParameterError("limit", limit, "a finite number > 0")
    return Variation("bound", limit=float(limit))


def bound_text(limit: float) -> str:
    """``1e-05`` -> ``1e-5``: how a bound reads in the prose."""
    mantissa, exponent = f"{limit:.0e}".split("e")
    return f"{mantissa}e{int(exponent)}"


# The share of honest re-runs elsewhere whose mean a spread's tolerance must pass. The book glues
# about 50 outcomes over seeds (each with its sd): at 0.999 a re-run on another machine reports
# a false drift about once in twenty.
RERUN_CONFIDENCE = 0.999

# How sure a page must be that two outcomes over seeds differ before its prose says they do
# (``Spread.differs_from``): the usual two-sided 95%.
DIFFERENCE_CONFIDENCE = 0.95


def t_central(t: float, df: int) -> float:
    """P(|T| <= t) for Student's t with ``df`` (a whole number >= 1) degrees of freedom, by the
    finite series in theta = atan(t / sqrt(df)) (Abramowitz and Stegun, 26.7.3 and 26.7.4)."""
    if not (isinstance(t, (int, float)) and t >= 0):
        raise ParameterError("t", t, "a number >= 0")
    theta = math.atan(t / math.sqrt(df))
    c2, term, total = math.cos(theta) ** 2, 1.0, 1.0
    if df % 2:   # odd: 2/pi (theta + sin cos (1 + 2/3 cos^2 + 2*4/(3*5) cos^4 + ...)), df - 3 terms
        if df == 1:
            return 2 * theta / math.pi
        for j in range(1, (df - 3) // 2 + 1):
            term *= c2 * (2 * j) / (2 * j + 1)
            total += term
        return 2 / math.pi * (theta + math.sin(theta) * math.cos(theta) * total)
    for j in range(1, (df - 2) // 2 + 1):   # even: sin (1 + 1/2 cos^2 + 1*3/(2*4) cos^4 + ...)
        term *= c2 * (2 * j - 1) / (2 * j)
        total += term
    return math.sin(theta) * total


def t_quantile(confidence: float, df: int) -> float:
    """The t with P(|T| <= t) = ``confidence`` at ``df`` degrees of freedom (bisection)."""
    if not (isinstance(confidence, float) and 0 < confidence < 1):
        raise ParameterError("confidence", confidence, "a float strictly between 0 and 1")
    if not (isinstance(df, int) and not isinstance(df, bool) and df >= 1):
        raise ParameterError("df", df, "a whole number of degrees of freedom >= 1")
    lo, hi = 0.0, 1.0
    while t_central(hi, df) < confidence:
        hi *= 2
    for _ in range(200):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if t_central(mid, df) < confidence else (lo, mid)
        if hi - lo <= 1e-12 * hi:
            break
    return (lo + hi) / 2


@dataclass(frozen=True)
class Spread:
    """An outcome measured once per seed: its mean, its spread, and how far a re-run may move it."""

    values: tuple[float, ...]
    floor: float = 0.0   # the outcome's own resolution (one test example of an accuracy), if any

    def __post_init__(self):
        if len(self.values) < 2:
            raise ParameterError("values", self.values, "outcomes from at least 2 seeds (a spread needs two)")
        if not all(math.isfinite(v) for v in self.values):
            raise ParameterError("values", self.values, "finite outcomes")

    @property
    def n(self) -> int:
        return len(self.values)

    @property
    def mean(self) -> float:
        return math.fsum(self.values) / self.n

    @property
    def sd(self) -> float:
        """The sample standard deviation over seeds."""
        m = self.mean
        return math.sqrt(math.fsum((v - m) ** 2 for v in self.values) / (self.n - 1))

    @property
    def sem(self) -> float:
        """The standard error of the mean."""
        return self.sd / math.sqrt(self.n)

    def variation(self) -> Variation:
        """How far a re-run's mean may move. Other CPU kernels perturb each seed's training like a
        fresh draw (chapter 8's V4 stack at seed 0 recalls 0.534, 0.537 and 0.529 on the AVX-512,
        AVX2 and portable paths), so the two means differ by N(0, 2 sigma^2 / n). This run's sd
        estimates sigma from n seeds only, so the gap over sd * sqrt(2 / n) follows Student's t
        with n - 1 degrees of freedom: the tolerance is its RERUN_CONFIDENCE quantile times
        sd * sqrt(2 / n), or the outcome's resolution. (Three, the normal rule of thumb, is
        failed by 9.5% of honest re-runs at three seeds.) A re-run that measured its own spread is
        judged against both runs' spreads (``against``)."""
        k = t_quantile(RERUN_CONFIDENCE, self.n - 1)
        return Variation("spread", atol=max(k * self.sd * math.sqrt(2 / self.n), self.floor),
                         sd=self.sd, seeds=self.n, floor=self.floor)

    def differs_from(self, other: Spread) -> bool:
        """Whether two outcomes differ by more than their spread. Three things must hold: Welch's
        t-test rejects equal means at DIFFERENCE_CONFIDENCE (two-sided, the seed counts may differ
        and so may the spreads; its degrees of freedom rounded down, which only widens the test),
        the gap exceeds the larger seed sd (the effect is larger than a seed's scatter, however
        many seeds), and it exceeds the outcome's resolution. Against a constant (``above``,
        ``below``, ``beyond_zero``) the test is one-sample at n - 1 degrees of freedom."""
        gap = abs(self.mean - other.mean)
        if gap <= max(self.sd, other.sd) or gap <= max(self.floor, other.floor):
            return False
        a, b = self.sd ** 2 / self.n, other.sd ** 2 / other.n
        if a + b == 0:   # both outcomes repeat exactly: any gap past the resolution is real
            return True
        df = (a + b) ** 2 / (a ** 2 / (self.n - 1) + b ** 2 / (other.n - 1))
        return gap / math.sqrt(a + b) > t_quantile(DIFFERENCE_CONFIDENCE, max(1, math.floor(df + 1e-9)))

    def every_seed_above(self, other: Spread | float) -> bool:
        """Whether each seed's outcome exceeds every seed of ``other`` (or a number): a description
        of these seeds, weaker evidence than ``differs_from``, which a page may state beside a tie.
        By chance alone three seeds against three fall in this order once in twenty (1 / C(6, 3)),
        and n seeds all fall above a fixed number at their median once in 2^n (eight at three)."""
        best = max(other.values) if isinstance(other, Spread) else float(other)
        return min(self.values) > best

    def scaled(self, factor: float) -> Spread:
        """The same outcome in other units (a share as a percentage)."""
        return Spread(tuple(factor * v for v in self.values), abs(factor) * self.floor)

    def above(self, threshold: float) -> bool:
        """Whether the outcome exceeds ``threshold`` by more than its spread (``differs_from``)."""
        return self.mean > threshold and self.differs_from(Spread((float(threshold),) * self.n))

    def below(self, threshold: float) -> bool:
        return self.mean < threshold and self.differs_from(Spread((float(threshold),) * self.n))

    def beyond_zero(self) -> bool:
        """Whether a change (say, paired differences over seeds) is larger than its spread."""
        return self.differs_from(Spread((0.0,) * self.n))

    def versus(self, other: Spread, higher: str, lower: str, tie: str) -> str:
        """The words for how this outcome compares with ``other``: ``tie`` unless the two differ by
        more than their spread (``differs_from``)."""
        if not self.differs_from(other):
            return tie
        return higher if self.mean > other.mean else lower

    def text(self, fmt: str = ".3f") -> str:
        """``0.512 ± 0.0042`` (mean ± standard deviation over seeds), for tables: the spread to two
        significant digits, so a small one never reads as ``± 0.000``."""
        return f"{self.mean:{fmt}} ± {self.sd:.2g}"


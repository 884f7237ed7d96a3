"""The drift check: a run's glued values against the committed ``results/<profile>.json``.

Each reference value carries its variation (``twopaths.machinery.variation``); a value has drifted only
when it leaves that tolerance. The report counts, per chapter, what matches and lists what moved
and by how much, for the terminal and for the status page.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .variation import Variation


class ReferenceError(ValueError):
    """A reference results file the check cannot use; the message says how to mend it."""


@dataclass(frozen=True)
class Moved:
    name: str
    reference: object
    current: object
    unit: str
    variation: str   # how the reference says it may vary

    def change(self) -> str:
        numbers = all(isinstance(x, (int, float)) and not isinstance(x, bool)
                      for x in (self.reference, self.current))
        if numbers and self.reference:
            return f"{100 * (self.current - self.reference) / abs(self.reference):+.3g}%"
        return "changed"

    def line(self, chapter: str) -> str:
        return (f"{chapter}.{self.name}: {self.current!r} {self.unit} now, reference {self.reference!r} "
                f"({self.change()}; allowed: {self.variation})")


@dataclass(frozen=True)
class ChapterDrift:
    chapter: str
    compared: int = 0
    matched: int = 0
    moved: tuple[Moved, ...] = ()
    problems: tuple[str, ...] = ()   # missing, new or unrun values: structure, not tolerance

    @property
    def ok(self) -> bool:
        return not self.moved and not self.problems


@dataclass(frozen=True)
class DriftReport:
    reference_path: str
    chapters: tuple[ChapterDrift, ...] = field(default_factory=tuple)

    @property
    def ok(self) -> bool:
        return all(c.ok for c in self.chapters)

    def lines(self) -> list[str]:
        out = []
        for c in self.chapters:
            out += [m.line(c.chapter) for m in c.moved] + list(c.problems)
        return out

    def matched_text(self) -> str:
        compared = sum(c.compared for c in self.chapters)
        return f"{sum(c.matched for c in self.chapters)} of {compared} compared values within tolerance"

    def summary(self) -> str:
        compared = sum(c.compared for c in self.chapters)
        matched = sum(c.matched for c in self.chapters)
        return f"{matched} of {compared} compared values within tolerance of {self.reference_path}"


def _variation(name: str, entry: dict, path: str) -> Variation:
    if "vary" not in entry:
        raise ReferenceError(
            f"{path}: value {name!r} has no tolerance ('vary'); the file predates tolerances. "
            f"Re-create it from a run: make refresh-results PROFILE=<profile>")
    try:
        return Variation.from_dict(entry["vary"])
    except (TypeError, ValueError) as e:
        raise ReferenceError(f"{path}: value {name!r} has an unreadable tolerance {entry['vary']!r}: {e}") from None


def compare(reference: dict, current: dict, path: str = "results") -> DriftReport:
    """Every reference value against the run's, within the reference's own tolerance."""
    chapters = []
    for nb, ref in reference.get("notebooks", {}).items():
        cur = current["notebooks"].get(nb)
        if cur is None:
            chapters.append(ChapterDrift(nb, problems=(f"{nb}: not run",)))
            continue
        compared = matched = 0
        moved, problems = [], []
        for name, r in ref["values"].items():
            vary = _variation(f"{nb}.{name}", r, path)
            c = cur["values"].get(name)
            if vary.kind == "machine":
                if c is not None and c.get("vary", {}).get("kind") != "machine":
                    problems.append(f"{nb}.{name}: now compared ({c['vary']['kind']}), a timing in the reference")
                continue
            compared += 1
            if c is None:
                problems.append(f"{nb}.{name}: missing (reference {r['value']!r} {r['unit']})")
            elif c["unit"] != r["unit"] or c.get("vary", {}).get("kind") != vary.kind:
                problems.append(f"{nb}.{name}: now {c['unit']!r}, {c.get('vary', {}).get('kind')}; "
                                f"reference {r['unit']!r}, {vary.kind}")
            elif (tol := vary.against(_variation(f"{nb}.{name}", c, "this run"))).agrees(r["value"], c["value"]):
                matched += 1
            else:
                moved.append(Moved(name, r["value"], c["value"], r["unit"], tol.describe()))
        for name in sorted(set(cur["values"]) - set(ref["values"])):
            if cur["values"][name].get("vary", {}).get("kind") != "machine":
                problems.append(f"{nb}.{name}: new value {cur['values'][name]['value']!r}, not in the reference")
        chapters.append(ChapterDrift(nb, compared, matched, tuple(moved), tuple(problems)))
    for nb in sorted(set(current["notebooks"]) - set(reference.get("notebooks", {}))):
        chapters.append(ChapterDrift(nb, problems=(f"{nb}: ran, but has no reference values",)))
    return DriftReport(path, tuple(chapters))

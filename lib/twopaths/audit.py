"""The claim-by-claim audit of the article, from the command line.

    python -m twopaths.audit                      # every claim: its text, figures and verdict
    python -m twopaths.audit --format json        # a JSON list: id, section, claim, stated, recomputed,
                                                  # public_config, unit, verdict, note, then the three
                                                  # judgments, overall, source, alternatives, category
    python -m twopaths.audit --topic kv_cache     # one topic (repeatable)
    python -m twopaths.audit --verdict wrong      # one overall verdict (repeatable)
    python -m twopaths.audit --failed inputs      # claims whose inputs judgment fails (or slips)
    python -m twopaths.audit --coverage           # how many of the article's numeric sentences a
                                                  # claim covers, and the ones none does

Verdicts: holds, article-inputs (holds only under the article's inputs), depends, slip, wrong,
consistent (consistent, not verified: its arithmetic rests on figures no source checks),
not-checkable. The precision policy and the judgments are described in ``twopaths.claims`` and
``twopaths.claims.audit``.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import textwrap
from collections import Counter

from .calc.units import quantity
from .claims import topics
from .claims.audit import CATEGORIES, JUDGMENTS, as_dicts, audit
from .errors import ParameterError, check_list

VERDICTS = dict(zip(("wrong", "article-inputs", "depends", "slip", "holds", "consistent", "not-checkable"),
                    CATEGORIES))


def _num(x, unit: str) -> str:
    if unit == "statement" and x is not None:     # a claim without a figure: 1 true, 0 false
        return "true" if x == 1 else "false"
    return "-" if x is None else quantity(x, unit)


def block(r, width: int) -> str:
    """One claim as lines that fit ``width`` columns: its verdict, its text, its figures and the
    reason of each judgment that does not hold."""
    wrap = textwrap.TextWrapper(width=width, initial_indent="  ", subsequent_indent="    ")
    head = f"{r.id}  [{r.section}]  {r.overall}"
    if len(head) > width:        # the verdict on a line of its own
        head = f"{r.id}  [{r.section}]\n  {r.overall}"
    lines = [head, *wrap.wrap(r.claim)]
    if r.arithmetic is None:
        return "\n".join(lines + wrap.wrap(f"not checkable: {r.note}"))
    said = _num(float(r.stated), r.unit) if r.unit == "statement" else f"{r.stated} {r.unit}"
    lines += wrap.wrap(f"stated {said}; article's inputs {_num(r.recomputed, r.unit)}; "
                       f"released configs {_num(r.public_config, r.unit)}")
    for name in JUDGMENTS:
        j = getattr(r, name)
        if j.status != "holds":
            lines += wrap.wrap(f"{name} {j.status}: {j.reason}")
    return "\n".join(lines)


def table(rows, width: int | None = None) -> str:
    width = width or min(shutil.get_terminal_size((100, 24)).columns, 120)
    counts = Counter(r.category for r in rows)
    tail = f"{len(rows)} claims: " + ", ".join(f"{counts[c]} {c}" for c in CATEGORIES)
    return "\n\n".join([block(r, width) for r in rows] + ["\n".join(textwrap.wrap(tail, width))])


def coverage_report(fmt: str) -> int:
    """Print the coverage report (imported late: it reads the article's text, which the audit does
    not need)."""
    from dataclasses import asdict

    from .claims.coverage import as_text, report

    try:
        cov = report()
    except (OSError, ValueError) as e:     # the article folder is missing, or exempt.yaml is broken
        print(f"error: {e}", file=sys.stderr)
        return 2
    print(json.dumps(asdict(cov), indent=1, ensure_ascii=False) if fmt == "json"
          else as_text(cov, partial=True))
    return 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m twopaths.audit", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--format", choices=("table", "json"), default="table")
    ap.add_argument("--topic", action="append", help="a claims topic: " + ", ".join(topics()))
    ap.add_argument("--verdict", action="append", choices=list(VERDICTS), help="keep one overall verdict")
    ap.add_argument("--failed", choices=JUDGMENTS, help="keep claims whose judgment fails or slips")
    ap.add_argument("--coverage", action="store_true",
                    help="which numeric sentences of the article the claims cover (claims.coverage)")
    args = ap.parse_args(argv)
    if args.coverage:
        return coverage_report(args.format)
    try:
        rows = audit(check_list("topic", args.topic, topics()) if args.topic else None)
    except ParameterError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    if args.verdict:
        rows = [r for r in rows if r.category in {VERDICTS[v] for v in args.verdict}]
    if args.failed:
        rows = [r for r in rows if args.failed in r.failed]
    print(json.dumps(as_dicts(rows), indent=1, ensure_ascii=False) if args.format == "json" else table(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The claim-by-claim audit of the article, from the command line.

    python -m twopaths.audit                      # a table of every claim
    python -m twopaths.audit --format json        # a JSON list: id, section, claim, stated, recomputed,
                                                  # public_config, unit, verdict, note
    python -m twopaths.audit --topic kv_cache     # one topic (repeatable)
"""

from __future__ import annotations

import argparse
import json
import sys

from .claims import topics
from .claims.audit import as_dicts, audit
from .errors import ParameterError, check_list


def _num(x) -> str:
    return "" if x is None else f"{x:,.4g}"


def table(rows) -> str:
    head = ["id", "stated", "recomputed", "public config", "unit", "verdict", "note"]
    body = [[r.id, r.stated, _num(r.recomputed), _num(r.public_config), r.unit, r.verdict, r.note] for r in rows]
    widths = [max(len(str(x[i])) for x in [head] + body) for i in range(len(head) - 1)]
    lines = ["  ".join(str(c).ljust(w) for c, w in zip(row, widths)) + "  " + row[-1] for row in [head] + body]
    counts = {v: sum(r.verdict == v for r in rows) for v in ("matches", "differs", "not checkable")}
    lines.append(f"\n{len(rows)} claims: " + ", ".join(f"{n} {v}" for v, n in counts.items()))
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m twopaths.audit", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--format", choices=("table", "json"), default="table")
    ap.add_argument("--topic", action="append", help="a claims topic: " + ", ".join(topics()))
    args = ap.parse_args(argv)
    try:
        rows = audit(check_list("topic", args.topic, topics()) if args.topic else None)
    except ParameterError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    print(json.dumps(as_dicts(rows), indent=1, ensure_ascii=False) if args.format == "json" else table(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())

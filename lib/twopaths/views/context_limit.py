"""How a page says that a context is past a model's declared limit (``specs.max_position``), the same
way on every page, in the chapter tables and in the ``plan`` command.

A figure at such a context is still computed (chapter 13 and a reader's own contexts look for where
plans stop), so nothing is hidden; it is flagged:

- ``sentence(pairs)``: one sentence naming each ``(model, context)`` past its limit, "" if none: the
  note under a table (``plans_note`` for plans, ``noted`` to add it to a ``report.Table``) and the
  line a page shows under its assumptions (``banner``);
- ``flag(model, context)``: the words the ``plan`` command adds to a flagged line;
- ``longest(model, tokens)``: a longest-context figure with its cap, the cache-limited length and
  the model's limit where that is shorter (``lengths_sentence``: the note of a table of them).
"""

from __future__ import annotations

from dataclasses import replace

from IPython.display import Markdown

from ..calc import fleet
from ..machinery.report import Table
from ..specs import max_position, model as model_spec

FIELD = "max_position_embeddings"


def _name(model: str) -> str:
    return model_spec(model).name


def flag(model: str, context: int) -> str:
    """``"past Kimi K3's max_position_embeddings (1,048,576 tokens)"``, or "" within the limit."""
    if not max_position.beyond(model, context):
        return ""
    return f"past {_name(model)}'s {FIELD} ({max_position.limit(model):,} tokens)"


def sentence(pairs) -> str:
    """One sentence for every ``(model, context)`` past its model's limit (each named once, in the
    order given), or "" when none is."""
    past = list(dict.fromkeys((m, c) for m, c in pairs if max_position.beyond(m, c)))
    if not past:
        return ""
    each = "; ".join(f"{_name(m)} at {c:,} tokens (its {FIELD}: {max_position.limit(m):,})" for m, c in past)
    after = ("Computed all the same, but not a context the model was built for." if len(past) == 1 else
             "Each is computed all the same, but none is a context its model was built for.")
    return f"Past the context its config declares: {each}. {after}"


def plans_note(plans) -> str:
    """``sentence`` for the plans of a table (anything else in the list, a reason, is skipped)."""
    return sentence((p.model, p.work.context) for p in plans if isinstance(p, fleet.Plan))


def lengths_sentence(pairs) -> str:
    """For a table of longest contexts: each model whose ``(model, tokens)`` lengths pass its limit,
    with the limit and how many cells pass it, or "" when none does."""
    past = [m for m, t in pairs if max_position.beyond(m, t)]
    if not past:
        return ""
    each = "; ".join(f"{_name(m)}'s {FIELD} caps it at {max_position.limit(m):,} ({past.count(m)} of these)"
                     for m in dict.fromkeys(past))
    return (f"A length past a model's declared context is what its cache allows, not a context it serves: "
            f"{each}.")


def noted(t: Table, pairs, lengths: bool = False) -> Table:
    """``t`` with ``sentence(pairs)`` added to its note (``lengths_sentence`` for a table of
    longest contexts)."""
    extra = (lengths_sentence if lengths else sentence)(pairs)
    return replace(t, note=" ".join(s for s in (t.note, extra) if s)) if extra else t


def banner(models, context: int) -> Markdown | None:
    """What a page shows under its assumptions when its ``context`` is past a model's limit; None
    otherwise (so the cell shows nothing, not an empty object's repr)."""
    text = sentence((m, context) for m in models)
    return Markdown(f"**Context past a model's limit.** {text}") if text else None


def longest(model: str, tokens: int) -> str:
    """``"23,616,796 tokens fit; Kimi K3's max_position_embeddings caps it at 1,048,576"``: a
    cache-limited longest context and, where it is shorter, the limit that caps it."""
    if not max_position.beyond(model, tokens):
        return f"{tokens:,} tokens"
    return f"{tokens:,} tokens fit; {_name(model)}'s {FIELD} caps it at {max_position.limit(model):,}"

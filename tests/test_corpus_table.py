"""Chapter 16's table of AIConfigurator's corpus (``views.corpus``) reads what the corpus test reads:
one count, two places."""

import need

need.module("aiconfigurator_core", "pip install -r requirements.txt (its corpus is the table)")

from test_peer_corpus import NAMES, READ, UNREADABLE  # noqa: E402

from twopaths.views import corpus  # noqa: E402
from twopaths.views.corpus import Reading  # noqa: E402


def test_the_table_reads_what_the_corpus_test_reads():
    rs = corpus.readings()
    assert [r.name for r in rs] == NAMES
    assert sorted(r.name for r in rs if r.family) == sorted(READ)
    refused = {r.name: r.reason for r in rs if r.family is None}
    assert refused.keys() == UNREADABLE.keys()
    assert all(UNREADABLE[n] in why for n, why in refused.items())       # the same reason


def test_rows_group_by_family_most_first_and_the_refused_last_by_reason():
    rs = [Reading("a--One", "llama", "gqa", None), Reading("b--Two", "qwen3", "gqa", None),
          Reading("c--Three", "deepseek_v3", "mla", None),
          Reading("d--Four", "step3p7", None, "model_type: got 'step3p7'"),
          Reading("e--Five", "zzz", None, "model_type: got 'zzz'"),
          Reading("f--Six", "step3p7", None, "model_type: got 'step3p7'")]
    assert corpus.by_family(rs) == [
        ["gqa", "llama, qwen3", 2, "a--One", ""],
        ["mla", "deepseek_v3", 1, "c--Three", ""],
        ["not read", "step3p7", 2, "d--Four", "model_type: got 'step3p7'"],
        ["not read", "zzz", 1, "e--Five", "model_type: got 'zzz'"]]

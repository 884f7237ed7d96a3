"""The claims data files: each loads whole, ids are unique across topics, references resolve and
form no cycle, every unit, value, version and section is well formed."""

import re
from decimal import Decimal

import pytest
import yaml

from twopaths import claims

TOPICS = claims.topics()
SECTION = re.compile(r"^(Introduction|Data sources|(I|II|III|IV)\. \S.*|Trends note: \S.*)$")
KEBAB = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")


def raw(topic):
    return yaml.safe_load((claims.HERE / f"{topic}.yaml").read_text())


def test_topics_are_the_yaml_files():
    assert TOPICS == sorted(p.stem for p in claims.HERE.glob("*.yaml"))
    assert "kv_cache" in TOPICS and len(TOPICS) > 1


@pytest.mark.parametrize("topic", TOPICS)
def test_every_entry_of_a_file_loads(topic):
    entries = raw(topic)
    loaded = claims.claims(topic)
    assert entries, f"{topic}.yaml holds no claim"
    # a dict by id would silently drop an entry whose id repeats within the file
    assert [e["id"] for e in entries] == list(loaded)
    assert len(loaded) == len(entries)


def test_ids_are_unique_across_topics_and_kebab_case():
    ids = [cid for topic in TOPICS for cid in claims.claims(topic)]
    assert len(ids) == len(set(ids)), sorted({i for i in ids if ids.count(i) > 1})
    assert not [i for i in ids if not KEBAB.match(i)]
    assert len(claims.all_claims()) == sum(len(claims.claims(t)) for t in TOPICS)


def test_all_claims_refuses_an_id_used_in_two_topics(monkeypatch):
    one = claims.Claim(id="same", section="s", paraphrase="p", stated="1", unit="x")
    monkeypatch.setattr(claims, "topics", lambda: ["a", "b"])
    monkeypatch.setattr(claims, "claims", lambda topic: {"same": one})
    with pytest.raises(ValueError, match="'same' is used twice"):
        claims.all_claims()


def test_references_resolve():
    every = claims.all_claims()
    dangling = [(c.id, ref) for c in every.values()
                for ref in c.derived_from + ((c.differs_from,) if c.differs_from else ()) if ref not in every]
    assert not dangling


def test_differing_versions_point_at_each_other():
    every = claims.all_claims()
    pairs = [c for c in every.values() if c.differs_from]
    for c in pairs:
        other = every[c.differs_from]
        assert other.differs_from == c.id
        assert not set(c.versions) & set(other.versions), (c.id, other.id)


def test_derivations_have_no_cycle():
    every = claims.all_claims()
    done, active = set(), set()

    def visit(cid, path):
        if cid in active:
            raise AssertionError("cycle: " + " -> ".join(path + [cid]))
        if cid in done:
            return
        active.add(cid)
        for ref in every[cid].derived_from:
            visit(ref, path + [cid])
        active.discard(cid)
        done.add(cid)

    for cid in every:
        visit(cid, [])


@pytest.mark.parametrize("topic", TOPICS)
def test_fields_are_well_formed(topic):
    for c in claims.claims(topic).values():
        assert c.unit in claims.CLAIM_UNITS
        assert re.fullmatch(r"-?\d+(\.\d+)?", c.stated), (c.id, c.stated)   # as printed, no separators
        assert Decimal(c.stated).is_finite()
        assert SECTION.match(c.section), (c.id, c.section)
        assert c.paraphrase.strip() and "$" not in c.paraphrase   # a raw $ reads as TeX on the site
        assert c.versions and set(c.versions) <= set(claims.VERSIONS)
        assert c.checkable is True or (isinstance(c.checkable, str) and c.checkable.strip())
        assert all(isinstance(i, str) and i for i in c.inputs)


def test_the_audit_chapter_audits_every_topic_by_default():
    # papermill parameters are literals, so the chapter lists the topics; a new topic file must join it
    import ast
    import json
    from pathlib import Path
    nb = json.loads((Path(__file__).parents[1] / "notebooks" / "14-audit.ipynb").read_text())
    cell = next(c for c in nb["cells"] if "parameters" in c["metadata"].get("tags", []))
    tree = ast.parse("".join(cell["source"]))
    topics = next(ast.literal_eval(n.value) for n in tree.body
                  if isinstance(n, ast.Assign) and n.targets[0].id == "topics")
    assert sorted(topics) == TOPICS

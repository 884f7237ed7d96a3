"""The hand-written mutant suite (tools/hand_mutants.py) stays runnable: every mutant still finds
its site exactly once, compiles, names tests that exist, and every module of the layers and the
calculators has at least three. Running the mutants is ``make mutants``, not this test."""

import importlib.util
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
spec = importlib.util.spec_from_file_location("hand_mutants", ROOT / "tools" / "hand_mutants.py")
hand = importlib.util.module_from_spec(spec)
sys.modules["hand_mutants"] = hand
spec.loader.exec_module(hand)

MUTANTS = hand.load()
PER_MODULE = 3


def code_modules(package: str) -> list[str]:
    return sorted(f"{package}/{f.name}" for f in (hand.LIB / package).glob("*.py")
                  if f.name != "__init__.py" or "\ndef " in f.read_text())


@pytest.mark.parametrize("module", code_modules("layers") + code_modules("calc"))
def test_every_layer_and_calculator_has_three(module):
    kinds = [m.kind for m in MUTANTS if m.module == module]
    assert len(kinds) >= PER_MODULE, f"{module}: {len(kinds)} hand-written mutants"


@pytest.mark.parametrize("mutant", MUTANTS, ids=lambda m: m.name)
def test_site_is_found_once_and_the_mutant_compiles(mutant):
    source = (hand.LIB / mutant.module).read_text()
    assert mutant.site_count(source) == 1, f"{mutant.name}: its site moved (write the mutant again)"
    mutated = mutant.apply(source)
    assert mutated != source
    compile(mutated, mutant.module, "exec")
    for t in mutant.tests:
        assert (ROOT / t.split("::")[0]).is_file(), f"{mutant.name}: no test file {t}"


def test_the_classes_of_error_are_all_covered():
    assert {m.kind for m in MUTANTS} == set(hand.KINDS)


def write(tmp_path, entries, module="layers/kda.py"):
    path = tmp_path / module.replace(".py", ".yaml")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(entries))
    return tmp_path


ENTRY = {"name": "x", "kind": "off by one", "why": "w", "old": "a", "new": "b", "tests": ["tests/test_kda.py"]}


@pytest.mark.parametrize("change, message", [
    ({"kind": "typo"}, "kind 'typo'"),
    ({"new": "a"}, "old and new are the same"),
    ({"tests": None, "extra": 1}, "fields"),
])
def test_a_malformed_mutant_is_refused_by_name(tmp_path, change, message):
    entry = {k: v for k, v in {**ENTRY, **change}.items() if v is not None}
    with pytest.raises(ValueError, match=message):
        hand.load(write(tmp_path, [entry]))


def test_a_name_used_twice_and_a_module_that_is_not_there_are_refused(tmp_path):
    with pytest.raises(ValueError, match="used twice"):
        hand.load(write(tmp_path, [ENTRY, ENTRY]))
    with pytest.raises(ValueError, match="no module"):
        hand.load(write(tmp_path / "b", [ENTRY], module="layers/nothing.py"))


def test_a_moved_site_is_reported_not_killed(tmp_path):
    gone = hand.Mutant("layers/kda.py", "gone", "off by one", "w", "no such text in kda", "x",
                       ("tests/test_kda.py",))
    assert hand.run_one(gone, tmp_path) == "moved"
    rows = hand.table({gone: "moved"})
    assert rows[1].split()[1:6] == ["1", "0", "0", "1", "0"] and rows[1].endswith("-")

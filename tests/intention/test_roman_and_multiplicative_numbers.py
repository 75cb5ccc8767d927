"""Roman numerals ("chapter ii"), multiplicatives ("twice") and a capitalised unit word after a number ("500
Calories") are read so that look-alikes are refused at thresholds 1.0, the default and 0.0, lexically and with
embeddings that score every pair 1.0, while their paraphrases are still served (pairs:
tests/data/intention_number_reading_pairs.tsv); memories indexed under the ``m3`` rules are re-indexed on read."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.intention_embeddings import SameVector, older_normal_form

from promptcache.intention import IntentionMemory, _meaning
from promptcache.intention._numbers import roman, roman_numeral
from promptcache.intention._record import signature_version

_PAIRS = Path(__file__).resolve().parents[1] / "data" / "intention_number_reading_pairs.tsv"
ROWS = [line.rstrip("\n").split("\t") for line in _PAIRS.read_text("utf-8").splitlines() if not line.startswith("#")]
REFUSE = [(a, b) for label, a, b in ROWS if label == "refuse"]
SERVE = [(a, b) for label, a, b in ROWS if label == "serve"]


def test_the_pair_file_holds_19_refusals_and_13_paraphrases() -> None:
    assert (len(REFUSE), len(SERVE)) == (19, 13)


@pytest.mark.parametrize(
    ("token", "value"),
    [("ii", 2), ("III", 3), ("iv", 4), ("Ii", 2), ("xiv", 14), ("XXXIX", 39), ("lviii", 58), ("mmxxiv", 2024)]
    + [("MCMXCIV", 1994), ("i", None), ("v", None), ("x", None), ("mix", None), ("mi", None), ("cd", None)]
    + [("cm", None), ("mm", None), ("ml", None), ("cc", None), ("XL", None), ("iiii", None), ("vx", None)]
    + [("ic", None), ("dim", None), ("iiv", None), ("ii2", None)],
)
def test_roman_reads_only_well_formed_unambiguous_numerals(token: str, value: int | None) -> None:
    assert roman(token) == value


def test_every_numeral_the_rule_admits_round_trips() -> None:
    admitted = [n for n in range(1, 4000) if roman(roman_numeral(n)) == n]
    assert len(admitted) == 3999 - sum(1 for n in range(1, 4000) if roman(roman_numeral(n)) is None)
    assert [n for n in range(1, 40) if roman(roman_numeral(n).lower()) is None] == [1, 5, 10]
    with pytest.raises(ValueError):
        roman_numeral(4000)


@pytest.mark.parametrize("embeddings", [None, SameVector()], ids=["lexical", "same-vector"])
@pytest.mark.parametrize("threshold", [1.0, None, 0.0], ids=["1.0", "default", "0.0"])
@pytest.mark.parametrize(("stored", "asked"), REFUSE)
def test_a_changed_number_or_unit_case_is_never_served(stored, asked, threshold, embeddings) -> None:
    options = {} if threshold is None else {"threshold": threshold}
    memory = IntentionMemory(embeddings=embeddings, **options)
    memory.store("u", stored, "R")
    assert memory.retrieve("u", asked) is None


@pytest.mark.parametrize("embeddings", [None, SameVector()], ids=["lexical", "same-vector"])
@pytest.mark.parametrize(("stored", "asked"), SERVE)
def test_paraphrases_are_still_served(stored, asked, embeddings) -> None:
    memory = IntentionMemory(embeddings=embeddings)
    memory.store("u", stored, "R")
    assert memory.retrieve("u", asked).result == "R"


@pytest.fixture
def m3_rules(monkeypatch):
    """Signatures as the ``m3`` rules made them: no Roman numeral read (``use(False)``: the current rules)."""
    real = _meaning.roman

    def use(old: bool) -> None:
        monkeypatch.setattr(_meaning, "roman", (lambda token: None) if old else real)
        _meaning._analyze.cache_clear()
        switch(old)

    rules = older_normal_form(monkeypatch, "m3")
    switch = next(rules)
    use(True)
    yield use
    use(False)


def test_memories_stored_under_the_m3_rules_are_re_indexed_on_read(m3_rules) -> None:
    memory = IntentionMemory()
    memory.store("u1", "read chapter ii", "two")
    assert signature_version(_meaning.signature("read chapter ii")).startswith("m3-")
    assert memory.retrieve("u1", "read chapter 2") is None  # m3: "ii" is a word, not 2
    m3_rules(False)
    assert memory.retrieve("u1", "read chapter 2").result == "two"
    assert memory.retrieve("u1", "read chapter iii") is None
    assert signature_version(_meaning.signature("read chapter ii")).startswith("m4-")

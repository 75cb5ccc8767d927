"""A unit symbol right after a number keeps its case (SI prefixes and units differ by case: "5 M" is mega, "5 m"
metres or milli), in the exact key and in the ``marks`` veto, at thresholds 1.0, the default and 0.0; other words
still fold their case."""

from __future__ import annotations

import pytest
from support.intention_embeddings import SameVector

from promptcache.intention import IntentionMemory
from promptcache.intention._vetoes import exact_key, veto

CHANGED = [
    ("run 5 M", "run 5 m"),
    ("a 5 Mm cable", "a 5 mm cable"),
    ("a 5 Mg load", "a 5 mg load"),
    ("heat to 5 K", "heat to 5 k"),
    ("mass of 5 T", "mass of 5 t"),
    ("wait 5 S", "wait 5 s"),
]


@pytest.mark.parametrize("embeddings", [None, SameVector()], ids=["lexical", "same-vector"])
@pytest.mark.parametrize("threshold", [1.0, None, 0.0], ids=["1.0", "default", "0.0"])
@pytest.mark.parametrize(("stored", "asked"), CHANGED)
def test_a_unit_symbol_of_another_case_is_never_served(stored, asked, threshold, embeddings) -> None:
    assert exact_key(stored) != exact_key(asked)
    assert veto(asked, stored) == "marks"
    options = {} if threshold is None else {"threshold": threshold}
    memory = IntentionMemory(embeddings=embeddings, **options)
    memory.store("u", stored, "R")
    assert memory.retrieve("u", asked) is None


def test_other_words_still_fold_their_case() -> None:
    assert exact_key("Book 5 rooms") == exact_key("book 5 rooms") == "book 5 rooms"
    assert exact_key("pay 5 euro") == "pay 5 euro"
    # A capitalised word after a number keeps its capital ("500 Calories"), unless the text is in title case.
    assert exact_key("pay 5 Euro") == "pay 5 Euro"
    assert exact_key("Pay 5 Euro To Anna") == "pay 5 euro to anna"
    memory = IntentionMemory()
    memory.store("u", "run 5 M", "R")
    assert memory.retrieve("u", "Run 5 M").kind == "exact"

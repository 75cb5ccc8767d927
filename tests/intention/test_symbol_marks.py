"""The ``marks`` veto reads every symbol that carries meaning, not a fixed list: math and currency signs, any dash
(as "-"), and a unit mark right after a digit; the same marks written the same way still match. The lexical setup
and a fake embedding that scores every pair 1.0, at thresholds 1.0, the default and 0.0."""

from __future__ import annotations

import pytest
from support.intention_embeddings import SameVector

from promptcache.intention import IntentionMemory
from promptcache.intention._vetoes import veto

CHANGED = [
    ("calculate 6×3", "calculate 6÷3"),
    ("what is 10 – 5", "what is 10 × 5"),
    ("what is 10 – 5", "what is 10 5"),
    ("what is 5≥3", "what is 5≤3"),
    ("tolerance ±5", "tolerance 5"),
    ("cut a 6' board", 'cut a 6" board'),
    ("cut a 6′ board", "cut a 6″ board"),
    ("send 5₿", "send 5₽"),
    ("pay 50₩", "pay 50₺"),
    ("pay 50¢", "pay 50"),
    ("rate is 5‰", "rate is 5"),
    ("order pizza ×2", "order pizza 2"),
]

SAME = [
    ("what is 10 – 5", "what is 10 - 5", "similar"),  # an en dash and a hyphen: one mark
    ("send an e-mail to bob", "send an email to bob", "similar"),  # a hyphen inside a word is no mark
    ("pay 5.", "pay 5", "exact"),  # sentence punctuation after a digit is no mark
    ("calculate 6×3", "please calculate 6×3", "similar"),
]


@pytest.mark.parametrize(("stored", "asked"), CHANGED)
def test_a_changed_symbol_is_the_marks_veto(stored: str, asked: str) -> None:
    assert veto(asked, stored) == "marks"
    assert veto(stored, asked) == "marks"


@pytest.mark.parametrize("embeddings", [None, SameVector()], ids=["lexical", "same-vector"])
@pytest.mark.parametrize("threshold", [1.0, None, 0.0], ids=["1.0", "default", "0.0"])
@pytest.mark.parametrize(("stored", "asked"), CHANGED)
def test_a_changed_symbol_is_never_served(stored: str, asked: str, threshold: float | None, embeddings) -> None:
    options = {} if threshold is None else {"threshold": threshold}
    memory = IntentionMemory(embeddings=embeddings, **options)
    memory.store("u", stored, "R")
    assert memory.retrieve("u", asked) is None


@pytest.mark.parametrize(("stored", "asked", "kind"), SAME)
def test_the_same_marks_still_match(stored: str, asked: str, kind: str) -> None:
    memory = IntentionMemory()
    memory.store("u", stored, "R")
    match = memory.retrieve("u", asked)
    assert match is not None and match.kind == kind

"""Scale words past a million and ordinals past twelfth are numbers too (the vocabulary's English cardinals and
ordinals, short scale): a change between them is the ``numbers`` veto, with embeddings that score every pair 1.0,
at thresholds 1.0, the default and 0.0; the same word, or its digits, still matches."""

from __future__ import annotations

import pytest
from support.intention_embeddings import SameVector

from promptcache.intention import IntentionMemory
from promptcache.intention._vetoes import veto

CHANGED = [
    ("how much is a billion dollars in euros", "how much is a trillion dollars in euros"),
    ("world population in a billion years", "world population in a trillion years"),
    ("what is the millionth prime", "what is the billionth prime"),
    ("what is the hundredth digit of pi", "what is the thousandth digit of pi"),
    ("show the thirteenth result", "show the fourteenth result"),
    ("show the twentieth result", "show the thirtieth result"),
]


@pytest.mark.parametrize("threshold", [1.0, None, 0.0], ids=["1.0", "default", "0.0"])
@pytest.mark.parametrize(("stored", "asked"), CHANGED)
def test_a_changed_scale_or_ordinal_word_is_never_served(stored: str, asked: str, threshold: float | None) -> None:
    assert veto(asked, stored) == "numbers"
    options = {} if threshold is None else {"threshold": threshold}
    memory = IntentionMemory(embeddings=SameVector(), **options)
    memory.store("u", stored, "R")
    assert memory.retrieve("u", asked) is None


def test_the_same_scale_word_and_its_ordinal_digits_still_match() -> None:
    memory = IntentionMemory(embeddings=SameVector())
    memory.store("u", "how much is a billion dollars in euros", "R")
    memory.store("v", "show the thirteenth result", "S")
    assert memory.retrieve("u", "please how much is a billion dollars in euros").result == "R"
    assert memory.retrieve("v", "show the 13th result").result == "S"

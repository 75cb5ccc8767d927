"""Words with a second sense that changes the action or the state are not merged by the normal form: "close" also
means near (not "shut"), "little" also means young or somewhat (not "small"), "store" also means keep (not
"shop")."""

from __future__ import annotations

import pytest

from promptcache.intention import IntentionMemory
from promptcache.intention._meaning import compare


@pytest.mark.parametrize(
    ("stored", "asked"),
    [
        ("is the pharmacy close", "is the pharmacy shut"),
        ("a gift for my little brother", "a gift for my small brother"),
        ("store groceries", "shop groceries"),
        ("store my groceries", "shop for my groceries"),
    ],
)
def test_another_sense_is_another_intention(stored, asked):
    assert compare(stored, asked) is not None
    memory = IntentionMemory(threshold=0.0)
    memory.store("u", stored, "r")
    assert memory.retrieve("u", asked) is None


def test_the_one_sense_merges_still_hold():
    assert compare("close the door", "shut the door") is not None  # not merged any more: "close" is ambiguous
    assert compare("I'd like to reserve a table", "book a table") is None
    assert compare("fix the broken link", "repair the broken link") is None

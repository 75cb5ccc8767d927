"""The normal form merges only other spellings of one word, never two words of similar meaning: a merge is served
without any model, so none may change what a tool would do. Each pair below was one normal form before (a synonym
class, a dropped verb or noun, a number word, a free adverb) and asks for something else; recall across words of
similar meaning is the embeddings' job (``IntentionMemory(embeddings=...)``), checked by the calibrated stages."""

from __future__ import annotations

import pytest

from promptcache.intention import IntentionMemory
from promptcache.intention._meaning import compare, signature

ANOTHER_ACTION = [
    ("is the pharmacy close", "is the pharmacy shut"),  # close: also near
    ("a gift for my little brother", "a gift for my small brother"),  # little: also young
    ("store groceries", "shop groceries"),  # store: also keep
    ("activate my new card", "turn on my new card"),  # a first activation, not unfreezing
    ("change 20 dollars to euros", "modify 20 dollars to euros"),  # change: also exchange
    ("directions to 5 Main Dr", "directions to 5 Main doctor"),  # Dr: also Drive
    ("email hr about my leave", "email hour about my leave"),  # hr: human resources
    ("what is the apr on my card", "what is the april on my card"),  # APR: a rate
    ("call jan", "call january"),  # Jan: a name
    ("checkout my cart", "check out my cart"),  # pay for it, or look at it
    ("register my car", "sign up my car"),
    ("buy a smartphone", "buy a telephone"),
    ("turn right now", "turn now"),  # right now: also a direction, then now
    ("book a single room", "book one room"),  # single: a kind of room
    ("buy a pair of socks", "buy two socks"),
    ("book an early flight", "book a flight early"),  # early: also an adjective
    ("send my card details", "send my card"),  # details: not a filler
    ("ask for a refund", "show the refund"),  # a request, not a read
    ("tell Bob I am late", "show Bob I am late"),  # tell: send a message
    ("give me a refund", "show me a refund"),
    ("I need to see a doctor", "find a doctor"),  # see: a visit
]


@pytest.mark.parametrize(("stored", "asked"), ANOTHER_ACTION)
def test_another_sense_is_another_intention(stored: str, asked: str) -> None:
    assert compare(stored, asked) is not None
    assert signature(stored) != signature(asked)
    memory = IntentionMemory(threshold=0.0)
    memory.store("u", stored, "r")
    assert memory.retrieve("u", asked) is None


@pytest.mark.parametrize(
    ("stored", "asked"),
    [
        ("what is on tv tonight", "what is on television tonight"),
        ("send an e-mail to Bob", "send an email to Bob"),
        ("log in to my account", "login to my account"),
        ("convert 3 kilometres to miles", "convert 3 km to miles"),
        ("my appointment on Thursday", "my appt on thu"),
        ("can you tell me the weather in Oslo", "the weather in Oslo"),
    ],
)
def test_other_spellings_of_one_word_still_merge(stored: str, asked: str) -> None:
    assert compare(stored, asked) is None


@pytest.mark.parametrize(
    ("stored", "asked"),
    [
        ("close the door", "shut the door"),
        ("I'd like to reserve a table", "book a table"),
        ("fix the broken link", "repair the broken link"),
        ("could you switch off the heating", "turn off the heating"),
    ],
)
def test_words_of_similar_meaning_are_left_to_the_embeddings(stored: str, asked: str) -> None:
    assert compare(stored, asked) is not None

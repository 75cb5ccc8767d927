"""The word check treats a verb and the particle after it as one unit: "switch off" may stand for "turn off" and
"turn off" for "disable", by the embedding similarity of the units, while a change of particle alone ("turn on" /
"turn off", "log in" / "log out", "sign up" / "sign out") is never excused by the similarity of its own verb."""

from __future__ import annotations

import pytest
from langchain_core.embeddings import Embeddings

from promptcache.intention import IntentionMemory, local_embeddings
from promptcache.intention._differences import WordCheck, phrasal_units, word_units


class _Units(Embeddings):
    """Every text its own unit vector, except the texts of one ``same`` group, which share one."""

    def __init__(self, same: set[str]) -> None:
        self.same = same
        self.seen: dict[str, int] = {}

    def _vec(self, text: str) -> list[float]:
        i = 0 if text in self.same else self.seen.setdefault(text, len(self.seen) + 1)
        return [1.0 if j == i else 0.0 for j in range(64)]

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [self._vec(t) for t in texts]

    def embed_query(self, text: str) -> list[float]:
        return self._vec(text)


def test_phrasal_units_are_a_content_word_and_the_particle_after_it() -> None:
    assert phrasal_units("could you call off my 3 pm meeting") == {"call off": ("call", "off")}
    assert phrasal_units("Back up my photos") == {"back up": ("back", "up")}
    assert phrasal_units("turn the lights off") == {"lights off": ("light", "off")}
    assert phrasal_units("set a timer for 10 minutes") == {}
    assert phrasal_units("it is on") == {}  # a filler ("is") is no verb of a unit
    assert word_units("switch off the lights") == ["switch", "off", "lights", "switch off"]


def test_a_phrasal_unit_partners_another_phrasal_unit() -> None:
    check = WordCheck(_Units({"switch off", "turn off"}))
    assert check.missing("switch off the lights", "turn off the lights") == []
    assert check.passes("switch off the lights", "turn off the lights") is True


def test_a_single_word_partners_a_phrasal_unit() -> None:
    check = WordCheck(_Units({"call off", "cancel"}))
    assert check.missing("call off the meeting", "cancel the meeting") == []
    assert check.missing("cancel the meeting", "call off the meeting") == []


def test_units_with_the_same_verb_never_partner() -> None:
    check = WordCheck(_Units({"sign up", "sign out", "sign"}))
    assert check.missing("sign out of the newsletter", "sign up for the newsletter") == ["out"]
    check = WordCheck(_Units({"log in", "log out", "log"}))
    assert check.missing("log out of my account", "log in to my account") == ["out"]


def test_without_phrasal_partners_the_words_are_missing() -> None:
    check = WordCheck(_Units(set()))
    assert check.missing("call off the meeting", "cancel the meeting") == ["call", "off", "cancel"]


@pytest.fixture(scope="module")
def model() -> Embeddings:
    return local_embeddings()


@pytest.mark.parametrize(
    ("stored", "asked", "similarity"),
    [
        ("turn off the living room lights", "switch off the living room lights", 0.951),
        ("disable notifications", "turn off notifications", 0.922),
        ("backup my photos", "back up my photos", 0.891),
    ],
)
def test_a_phrasal_verb_paraphrase_is_served(model: Embeddings, stored: str, asked: str, similarity: float) -> None:
    memory = IntentionMemory(embeddings=model)
    memory.store("u", stored, "r")
    match = memory.retrieve("u", asked)
    assert match is not None
    assert (match.result, match.verified_by, round(match.similarity, 3)) == ("r", "embeddings", similarity)


@pytest.mark.parametrize(
    ("stored", "asked", "missing"),
    [
        ("turn on the living room lights", "turn off the living room lights", ["off"]),
        ("turn off the living room lights", "turn on the living room lights", ["off"]),
        ("log in to my account", "log out of my account", ["out"]),
        ("log out of my account", "log in to my account", ["out"]),
    ],
)
def test_another_particle_is_refused(model: Embeddings, stored: str, asked: str, missing: list[str]) -> None:
    assert WordCheck(model).missing(asked, stored) == missing  # refused by the word check itself, veto or not
    memory = IntentionMemory(embeddings=model)
    memory.store("u", stored, "r")
    assert memory.retrieve("u", asked) is None
    assert memory.retrieve("u", stored) is not None

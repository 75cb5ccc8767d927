"""Restated facts and project state replace the older memory without an explicit subject; unsure -> keep both."""

from __future__ import annotations

import logging

import pytest
from langgraph.store.memory import InMemoryStore

from promptcache.memory import TypedMemoryStore
from promptcache.memory._subjects import ChatModelSubjectExtractor, derive_subject, make_subject_extractor
from promptcache.testing import ScriptedChatModel


@pytest.mark.parametrize(
    ("content", "kind", "subject"),
    [
        ("My favourite colour is blue.", "user_fact", "user: favourite colour"),
        ("My favorite color is green", "user_fact", "user: favourite colour"),  # spellings normalised
        ("The user's name is Dana Okafor.", "user_fact", "user: name"),
        ("Dana's timezone is Europe/Berlin.", "user_fact", "dana: time zone"),
        ("I work at Acme.", "user_fact", "user: employer"),
        ("I now work for Globex.", "user_fact", "user: employer"),
        ("I moved to Lisbon", "user_fact", "user: home"),
        ("I am 34 years old.", "user_fact", "user: age"),
        ("Our main database is PostgreSQL 16.", "user_fact", "team: main database"),
        ("The release date is 12 May.", "project_state", "release date"),
        ("The release date of version 4 is 2 June.", "project_state", "release date of version 4"),
        ("The status of the payments migration is in testing.", "project_state", "status of the payments migration"),
        # unsure: keep both (no subject)
        ("My favourite colour is blue and my favourite food is pizza.", "user_fact", None),
        ("My favourite colour is probably blue.", "user_fact", None),
        ("My favourite colour is not blue.", "user_fact", None),
        ("I live in Lisbon. I moved there in May.", "user_fact", None),
        ("The build is failing.", "project_state", None),  # "build" is not an attribute
        ("My car is in the garage.", "user_fact", None),  # a thing, not an attribute slot
        ("Is the release date 12 May?", "project_state", None),
        ("Dana leads the shipping-API team.", "user_fact", None),
        ("My favourite colour is blue.", "feedback", None),  # only user facts and project state
        ("My favourite colour is blue.", "reference", None),
    ],
)
def test_derive_subject(content, kind, subject):
    assert derive_subject(content, kind) == subject


def test_derive_subject_bad_input():
    with pytest.raises(TypeError, match="content must be a string, got int: 5"):
        derive_subject(5)
    with pytest.raises(ValueError, match="'opinion'"):
        derive_subject("My name is X.", "opinion")


def _contents(memory: TypedMemoryStore, kind: str) -> list[str]:
    return [m.content for m in memory.list("u1", kind)]


def test_a_restated_fact_replaces_the_older_one():
    memory = TypedMemoryStore(InMemoryStore(), clock=iter(range(100, 200)).__next__)
    first = memory.put("u1", "user_fact", "My favourite colour is blue.")
    second = memory.put("u1", "user_fact", "My favourite colour is green.")
    assert first.id == second.id and second.subject == "user: favourite colour"
    assert _contents(memory, "user_fact") == ["My favourite colour is green."]
    memory.put("u1", "user_fact", "I work at Acme.")
    memory.put("u1", "user_fact", "I work at Globex.")
    assert _contents(memory, "user_fact") == ["My favourite colour is green.", "I work at Globex."]


def test_restated_project_state_replaces_and_other_scopes_are_untouched():
    memory = TypedMemoryStore(InMemoryStore(), clock=iter(range(100, 200)).__next__)
    memory.put("u1", "project_state", "The release date is 12 May.")
    memory.put("u2", "project_state", "The release date is 1 July.")
    memory.put("u1", "project_state", "The release date is 19 May.")
    assert _contents(memory, "project_state") == ["The release date is 19 May."]
    assert [m.content for m in memory.list("u2", "project_state")] == ["The release date is 1 July."]


def test_unsure_keeps_both_and_an_explicit_subject_wins():
    memory = TypedMemoryStore(InMemoryStore(), clock=iter(range(100, 200)).__next__)
    memory.put("u1", "user_fact", "My favourite colour is blue and my favourite food is pizza.")
    memory.put("u1", "user_fact", "My favourite colour is green.")
    assert len(memory.list("u1", "user_fact")) == 2
    explicit = memory.put("u1", "user_fact", "My favourite colour is red.", subject="colour")
    assert explicit.subject == "colour" and len(memory.list("u1", "user_fact")) == 3
    rule = memory.put("u1", "feedback", "My favourite colour is blue.")
    assert rule.subject is None and rule.id.startswith("c-")


def test_derivation_can_be_turned_off_or_replaced():
    off = TypedMemoryStore(InMemoryStore(), subject_extractor=False)
    off.put("u1", "user_fact", "My favourite colour is blue.")
    off.put("u1", "user_fact", "My favourite colour is green.")
    assert len(off.list("u1", "user_fact")) == 2
    custom = TypedMemoryStore(InMemoryStore(), subject_extractor=lambda content, kind: content.split()[0].lower())
    custom.put("u1", "user_fact", "Colour: blue")
    custom.put("u1", "user_fact", "Colour: green")
    assert [m.content for m in custom.list("u1", "user_fact")] == ["Colour: green"]
    with pytest.raises(TypeError, match="subject_extractor must be .* got 5"):
        TypedMemoryStore(InMemoryStore(), subject_extractor=5)


def test_a_derived_subject_also_replaces_older_memories_kept_by_content():
    raw = InMemoryStore()
    TypedMemoryStore(raw, subject_extractor=False).put("u1", "user_fact", "My favourite colour is blue.")
    memory = TypedMemoryStore(raw)  # now with derived subjects, on the same data
    memory.put("u1", "user_fact", "My favourite colour is blue and my favourite food is pizza.")  # unsure: kept
    memory.put("u1", "user_fact", "My favorite color is green.")
    assert _contents(memory, "user_fact") == [
        "My favourite colour is blue and my favourite food is pizza.",
        "My favorite color is green.",
    ]


def test_a_failing_extractor_never_loses_the_write(caplog):
    def broken(content, kind):
        raise RuntimeError("extractor down")

    memory = TypedMemoryStore(InMemoryStore(), subject_extractor=broken)
    with caplog.at_level(logging.WARNING, logger="promptcache.memory"):
        record = memory.put("u1", "user_fact", "My favourite colour is blue.")
    assert record.subject is None and record.id.startswith("c-")
    assert "the subject extractor failed; keeping the memory keyed by its content" in caplog.text


def test_chat_model_extractor():
    model = ScriptedChatModel(replies=["User: favourite colour.", "'user: favourite colour'", "none"])
    memory = TypedMemoryStore(InMemoryStore(), subject_extractor=model)
    assert isinstance(memory.subject_extractor, ChatModelSubjectExtractor)
    memory.put("u1", "user_fact", "Blue is the colour I like most.")
    memory.put("u1", "user_fact", "These days I like green best.")
    other = memory.put("u1", "user_fact", "I had pasta for lunch.")
    assert _contents(memory, "user_fact") == ["These days I like green best.", "I had pasta for lunch."]
    assert other.subject is None and model.seen[0][1].content == "Blue is the colour I like most."
    failing = ChatModelSubjectExtractor(ScriptedChatModel(error=RuntimeError("down")))
    assert failing("My favourite colour is blue.", "user_fact") == "user: favourite colour"  # the rules
    assert make_subject_extractor(None) is derive_subject and make_subject_extractor(False) is None


async def test_async_put_awaits_the_chat_model_extractor():
    model = ScriptedChatModel(replies=["user: favourite colour", "user: favourite colour"])
    memory = TypedMemoryStore(InMemoryStore(), clock=iter(range(100, 200)).__next__, subject_extractor=model)
    await memory.aput("u1", "user_fact", "Blue is the colour I like most.")
    await memory.aput("u1", "user_fact", "These days I like green best.")
    assert [m.content for m in await memory.alist("u1", "user_fact")] == ["These days I like green best."]
    assert model.calls == 2
    broken = TypedMemoryStore(InMemoryStore(), subject_extractor=ScriptedChatModel(error=RuntimeError("down")))
    record = await broken.aput("u1", "user_fact", "My favourite colour is blue.")
    assert record.subject == "user: favourite colour"  # the rules, as fallback


async def test_async_put_derives_the_same():
    memory = TypedMemoryStore(InMemoryStore(), clock=iter(range(100, 200)).__next__)
    await memory.aput("u1", "user_fact", "My favourite colour is blue.")
    await memory.aput("u1", "user_fact", "My favourite colour is green.")
    assert [m.content for m in await memory.alist("u1", "user_fact")] == ["My favourite colour is green."]

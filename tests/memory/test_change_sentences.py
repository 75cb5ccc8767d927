"""A subject-less memory that reports a change replaces the old fact; dedupe ignores trailing punctuation."""

from __future__ import annotations

import pytest
from langgraph.store.memory import InMemoryStore

from promptcache.memory import TypedMemoryStore
from promptcache.memory._changes import Change, change_of


def _contents(memory: TypedMemoryStore, kind: str = "project_state") -> list[str]:
    return [m.content for m in memory.list("u1", kind)]


@pytest.mark.parametrize(
    ("old", "new", "kept"),
    [
        (
            "We run PostgreSQL 14",
            "We moved from Postgres 14 to 16",
            ["Redis 7 caches sessions", "We moved from Postgres 14 to 16"],
        ),
        ("The queue is RabbitMQ", "Kafka replaced RabbitMQ", ["Redis 7 caches sessions", "Kafka replaced RabbitMQ"]),
        (
            "The queue is RabbitMQ",
            "RabbitMQ was replaced by Kafka.",
            ["Redis 7 caches sessions", "RabbitMQ was replaced by Kafka."],
        ),
        ("CI runs on Node 18", "We're now on Node 20", ["Redis 7 caches sessions", "We're now on Node 20"]),
        (
            "We deploy with Jenkins",
            "We migrated from Jenkins to GitHub Actions",
            ["Redis 7 caches sessions", "We migrated from Jenkins to GitHub Actions"],
        ),
    ],
)
def test_a_change_sentence_replaces_the_old_fact(old, new, kept):
    memory = TypedMemoryStore(InMemoryStore())
    memory.put("u1", "project_state", old)
    memory.put("u1", "project_state", "Redis 7 caches sessions")
    memory.put("u1", "project_state", new)
    assert sorted(_contents(memory)) == sorted(kept)


def test_user_facts_too_and_other_scopes_untouched():
    memory = TypedMemoryStore(InMemoryStore())
    memory.put("u1", "user_fact", "Dana uses Vim")
    memory.put("u2", "user_fact", "Sam uses Vim")
    memory.put("u1", "user_fact", "Dana switched from Vim to Helix")
    assert _contents(memory, "user_fact") == ["Dana switched from Vim to Helix"]
    assert [m.content for m in memory.list("u2", "user_fact")] == ["Sam uses Vim"]


def test_not_change_sentences():
    assert change_of("We run PostgreSQL 14") is None
    assert change_of("The release moved to Friday") == Change("friday", "", "Friday")
    assert change_of("We moved from Postgres 14 to 16") == Change("postgres", "Postgres 14", "16")
    # a change that names nothing (numbers only) replaces nothing
    assert change_of("It went from 3 to 4") is None


def test_without_a_subject_extractor_change_sentences_replace_nothing():
    memory = TypedMemoryStore(InMemoryStore(), subject_extractor=False)
    memory.put("u1", "project_state", "We run PostgreSQL 14")
    memory.put("u1", "project_state", "We moved from Postgres 14 to 16")
    assert len(_contents(memory)) == 2


def test_dedupe_ignores_trailing_punctuation():
    memory = TypedMemoryStore(InMemoryStore())
    memory.put("u1", "feedback", "Never mock the database in tests.")
    memory.put("u1", "feedback", "Never mock the database in tests")
    memory.put("u1", "feedback", "never mock the database in tests!")
    assert _contents(memory, "feedback") == ["never mock the database in tests!"]
    memory.put("u1", "feedback", "Is this a question?")
    memory.put("u1", "feedback", "Is this a question")
    assert len(_contents(memory, "feedback")) == 3  # "?" is kept: a question is not the statement

"""Without embeddings: memories stored under one vocabulary version are found after the word lists change.

Each record keeps its raw intention and its meaning signature, which carries the vocabulary version. A lookup that
finds the user's index at another version re-derives the old records' signatures from their raw intentions and
stores them under the new ones, once (migrate on read)."""

from __future__ import annotations

import asyncio
from dataclasses import replace

import pytest

from promptcache.integrations._redis_intention import RedisIntentionBackend
from promptcache.intention import InMemoryIntentionBackend, IntentionMemory, _meaning
from promptcache.intention._meaning import signature
from promptcache.intention._record import signature_version
from promptcache.intention._vocabulary import default_vocabulary

STORED = [
    ("turn off the bedroom lights", "lights off"),
    ("how many open tickets do I have", 7),
    ("what is the weather in Paris", "rain"),
]
NOW = 1_800_000_000.0


@pytest.fixture
def old_vocabulary(monkeypatch):
    """Switch the package to a vocabulary of another version (as an edit of the word lists does), and back."""
    current = default_vocabulary()

    def use(version: str | None) -> None:
        vocab = current if version is None else replace(current, version=version)
        monkeypatch.setattr(_meaning, "default_vocabulary", lambda: vocab)
        _meaning._analyze.cache_clear()
        _meaning._signature.cache_clear()

    use("0ldv0cab0001")
    yield use
    use(None)


def _store_all(memory: IntentionMemory) -> None:
    for text, result in STORED:
        assert memory.store("u1", text, result, tool="t") is True


def test_redis_memories_of_an_old_vocabulary_are_found_after_the_change(
    redis_url, redis_prefix, redis_client, old_vocabulary
):
    old = IntentionMemory(RedisIntentionBackend(url=redis_url, prefix=redis_prefix), clock=lambda: NOW)
    _store_all(old)
    old_version = signature_version(signature("turn off the bedroom lights"))
    assert old_version == "m4-0ldv0cab0001"
    old_vocabulary(None)  # the word lists changed: every signature differs
    current = signature_version(signature("turn off the bedroom lights"))
    assert current != old_version
    backend = RedisIntentionBackend(url=redis_url, prefix=redis_prefix)
    new = IntentionMemory(backend, clock=lambda: NOW)
    match = new.retrieve("u1", "turn off the bedroom lights")
    assert (match.kind, match.result) == ("exact", "lights off")
    similar = new.retrieve("u1", "please, how many open tickets do I have?")
    assert (similar.kind, similar.result) == ("similar", 7)
    assert new.retrieve("u1", "what's the weather in Paris").result == "rain"
    # Migrated in place: every record under the new version, the user's index marked with it.
    assert {r.signature_version for r in backend.records("u1", NOW)} == {current}
    assert redis_client.get(backend.vocabulary_key("u1")) == current.encode()
    assert 0 < redis_client.pttl(backend.vocabulary_key("u1")) <= 3_600_000
    backend.close()


def test_redis_a_store_by_an_old_version_is_migrated_by_the_next_lookup(redis_url, redis_prefix, old_vocabulary):
    old_vocabulary(None)
    new = IntentionMemory(RedisIntentionBackend(url=redis_url, prefix=redis_prefix), clock=lambda: NOW)
    assert new.store("u1", "turn off the bedroom lights", "lights off") is True
    old_vocabulary("0ldv0cab0002")  # a worker still running the old word lists writes one more memory
    old = IntentionMemory(RedisIntentionBackend(url=redis_url, prefix=redis_prefix), clock=lambda: NOW)
    assert old.store("u1", "how many open tickets do I have", 7) is True
    old_vocabulary(None)
    assert new.retrieve("u1", "how many open tickets do I have").result == 7
    assert new.retrieve("u1", "turn off the bedroom lights").result == "lights off"


def test_redis_async_lookup_migrates_too(redis_url, redis_prefix, old_vocabulary):
    old = IntentionMemory(RedisIntentionBackend(url=redis_url, prefix=redis_prefix), clock=lambda: NOW)
    _store_all(old)
    old_vocabulary(None)
    new = IntentionMemory(RedisIntentionBackend(url=redis_url, prefix=redis_prefix), clock=lambda: NOW)

    async def run() -> list:
        return [await new.aretrieve("u1", text) for text, _ in STORED]

    assert [m.result for m in asyncio.run(run())] == ["lights off", 7, "rain"]


def test_in_memory_memories_of_an_old_vocabulary_are_found_after_the_change(old_vocabulary):
    backend = InMemoryIntentionBackend()
    memory = IntentionMemory(backend, clock=lambda: NOW)
    _store_all(memory)
    old_vocabulary(None)
    assert [memory.retrieve("u1", text).result for text, _ in STORED] == ["lights off", 7, "rain"]
    current = signature_version(signature("x"))
    assert {r.signature_version for r in backend.records("u1", NOW)} == {current}
    assert backend.matching_indexed("u1", signature("x"), NOW)[2] == current


def test_a_new_user_costs_no_migration(redis_url, redis_prefix):
    backend = RedisIntentionBackend(url=redis_url, prefix=redis_prefix)
    # No memories: the match script reports the query's own version, so nothing is migrated (no records read).
    assert backend.matching_indexed("nobody", signature("turn on the lights"), NOW) == (
        [],
        {},
        signature_version(signature("turn on the lights")),
    )
    backend.close()

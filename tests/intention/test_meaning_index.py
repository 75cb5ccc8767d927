"""Backends find a lookup's candidates by meaning signature (IntentionBackend.matching): only the memories with
the query's signature, live ones only, consistent through replace, eviction, expiry and forget."""

from __future__ import annotations

import pytest

from promptcache.intention import IntentionMemory
from promptcache.intention._meaning import signature
from promptcache.intention._memory_backend import InMemoryIntentionBackend


class Clock:
    def __init__(self) -> None:
        self.now = 1_700_000_000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture(params=["memory", "redis"])
def make_backend(request):
    made = []

    def make(cap: int = 1000):
        if request.param == "memory":
            return InMemoryIntentionBackend(max_memories_per_user=cap)
        from promptcache.integrations._redis_intention import RedisIntentionBackend

        b = RedisIntentionBackend(
            url=request.getfixturevalue("redis_url"),
            prefix=request.getfixturevalue("redis_prefix"),
            max_memories_per_user=cap,
            socket_timeout_s=5.0,  # a loaded machine must not open the circuit break mid-test
        )
        made.append(b)
        return b

    yield make
    for b in made:
        b.close()


def ids(records) -> list[str]:
    return sorted(r.intention for r in records)


def test_matching_returns_only_the_signature_group(make_backend):
    clock = Clock()
    backend = make_backend()
    memory = IntentionMemory(backend, ttl_s=600, clock=clock)
    for text in ["weather in Oslo today", "Weather in Oslo today?", "today weather in Oslo", "weather in Rome today"]:
        memory.store("u1", text, text)
    got = backend.matching("u1", signature("what's the weather in Oslo today"), clock())
    # the second text has the first's normalised form (same memory id): it replaced it
    assert ids(got) == ["Weather in Oslo today?", "today weather in Oslo"]
    assert all(r.signature == signature("weather in Oslo today") for r in got)
    assert backend.matching("u2", signature("weather in Oslo today"), clock()) == []
    assert backend.matching("u1", signature("weather in Bergen today"), clock()) == []


def test_replace_evict_expire_and_forget_keep_the_index_consistent(make_backend):
    clock = Clock()
    backend = make_backend(cap=3)
    memory = IntentionMemory(backend, ttl_s=600, clock=clock)
    sig = signature("flights from Paris to London")
    memory.store("u1", "flights from Paris to London", "old", tool="search", args={"n": 1})
    clock.now += 1
    memory.store("u1", "flights from Paris to London", "new", tool="search", args={"n": 1})  # replaces
    assert [r.result_hash for r in backend.matching("u1", sig, clock())] == [
        memory.retrieve("u1", "flights from Paris to London").result_hash
    ]
    assert memory.retrieve("u1", "please, flights from Paris to London").result == "new"
    for i in range(3):  # three more memories: the cap (3) evicts the oldest, the one above
        clock.now += 1
        memory.store("u1", f"hotel number {i}", i)
    assert backend.matching("u1", sig, clock()) == []
    assert memory.retrieve("u1", "flights from Paris to London") is None
    assert [r.intention for r in backend.matching("u1", signature("hotel number 2"), clock())] == ["hotel number 2"]
    clock.now += 601
    assert backend.matching("u1", signature("hotel number 2"), clock()) == []
    memory.store("u1", "hotel number 7", 7)
    assert memory.forget("u1") == 1
    assert backend.matching("u1", signature("hotel number 7"), clock()) == []


async def test_async_matching_agrees(make_backend):
    clock = Clock()
    backend = make_backend()
    memory = IntentionMemory(backend, ttl_s=600, clock=clock)
    await memory.astore("u1", "turn off the bedroom lights", "done")
    got = await backend.amatching("u1", signature("could you turn off the bedroom lights"), clock())
    assert [r.intention for r in got] == ["turn off the bedroom lights"]
    assert (await memory.aretrieve("u1", "could you turn off the bedroom lights")).result == "done"


def test_redis_signature_set_of_another_type_is_a_miss_then_rewritten(redis_url, redis_prefix, redis_client):
    from promptcache.integrations._redis_intention import RedisIntentionBackend

    backend = RedisIntentionBackend(url=redis_url, prefix=redis_prefix, socket_timeout_s=5.0)
    memory = IntentionMemory(backend, ttl_s=600)
    memory.store("u1", "weather in Oslo today", "rain")
    key = backend.signature_key("u1", signature("weather in Oslo today"))
    redis_client.delete(key)
    redis_client.set(key, "not a set")
    assert memory.retrieve("u1", "weather in Oslo today") is None  # a miss, not an error
    assert redis_client.exists(key) == 0  # the damaged set was dropped
    redis_client.set(key, "not a set")
    assert memory.store("u1", "weather in Oslo today", "sun") is True  # the store replaces it
    assert redis_client.type(key) == b"set"
    assert memory.retrieve("u1", "what's the weather in Oslo today?").result == "sun"
    backend.close()


def test_redis_ids_of_gone_memories_leave_the_signature_set(redis_url, redis_prefix, redis_client):
    from promptcache.integrations._redis_intention import RedisIntentionBackend

    backend = RedisIntentionBackend(url=redis_url, prefix=redis_prefix, max_memories_per_user=1, socket_timeout_s=5.0)
    clock = Clock()
    memory = IntentionMemory(backend, ttl_s=600, clock=clock)
    memory.store("u1", "weather in Oslo today", "rain")
    key = backend.signature_key("u1", signature("weather in Oslo today"))
    clock.now += 1
    memory.store("u1", "hotels in Rome", "h")  # evicts the first memory (cap 1)
    assert redis_client.scard(key) == 1  # the evicted id is still listed ...
    assert memory.retrieve("u1", "weather in Oslo today") is None
    assert redis_client.scard(key) == 0  # ... until a lookup finds it gone
    backend.close()

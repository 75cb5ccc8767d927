"""A damaged intention result key (another type of key where the stored result should be) is repaired on the read
that finds it: deleted, counted in ``stats().errors``, and written again by the next store of that result."""

from __future__ import annotations

import pytest

from promptcache.integrations._redis_intention import RedisIntentionBackend
from promptcache.intention import IntentionMemory


def _damage_result(memory: IntentionMemory, backend: RedisIntentionBackend, redis_client, user: str) -> str:
    (record,) = backend.records(user, memory.clock())
    rkey = backend.result_key(user, record.result_hash)
    ttl_ms = redis_client.pttl(rkey)
    redis_client.delete(rkey)
    redis_client.hset(rkey, "junk", "1")
    redis_client.pexpire(rkey, ttl_ms)
    return rkey


@pytest.mark.parametrize("first", [True, False], ids=["retrieve", "retrieve_all"])
def test_lookup_deletes_a_damaged_result_key_and_counts_an_error(redis_url, redis_prefix, redis_client, first):
    backend = RedisIntentionBackend(url=redis_url, prefix=redis_prefix, socket_timeout_s=5.0)
    memory = IntentionMemory(backend, ttl_s=300)
    assert memory.store("dora", "weather in Oslo", {"t": 1}) is True
    rkey = _damage_result(memory, backend, redis_client, "dora")
    memory.stats(reset=True)
    found = memory.retrieve("dora", "weather in Oslo") if first else memory.retrieve_all("dora", "weather in Oslo")
    assert found in (None, [])
    assert redis_client.exists(rkey) == 0  # repaired: the damaged key is gone
    assert memory.stats().errors == 1
    assert memory.store("dora", "weather in Oslo", {"t": 1}) is True  # the next store writes it again
    assert redis_client.type(rkey) == b"string"
    assert memory.retrieve("dora", "weather in Oslo").result == {"t": 1}


async def test_async_lookup_deletes_a_damaged_result_key(redis_url, redis_prefix, redis_client):
    backend = RedisIntentionBackend(url=redis_url, prefix=redis_prefix, socket_timeout_s=5.0)
    memory = IntentionMemory(backend, ttl_s=300)
    assert await memory.astore("dora", "weather in Oslo", {"t": 1}) is True
    rkey = _damage_result(memory, backend, redis_client, "dora")
    memory.stats(reset=True)
    assert await memory.aretrieve("dora", "weather in Oslo") is None
    assert redis_client.exists(rkey) == 0
    assert memory.stats().errors == 1
    assert await memory.astore("dora", "weather in Oslo", {"t": 1}) is True
    assert (await memory.aretrieve("dora", "weather in Oslo")).result == {"t": 1}


def test_single_and_many_result_reads_repair_a_damaged_key(redis_url, redis_prefix, redis_client):
    """The reads a chat-model verifier uses (``result`` / ``results``) see the damage too."""
    backend = RedisIntentionBackend(url=redis_url, prefix=redis_prefix, socket_timeout_s=5.0)
    memory = IntentionMemory(backend, ttl_s=300)
    memory.store("dora", "weather in Oslo", {"t": 1})
    (record,) = backend.records("dora", memory.clock())
    rkey = _damage_result(memory, backend, redis_client, "dora")
    assert backend.result("dora", record.result_hash) == b""  # unreadable: the corrupt-entry marker
    redis_client.delete(rkey)
    redis_client.hset(rkey, "junk", "1")
    assert backend.results("dora", [record.result_hash]) == [b""]

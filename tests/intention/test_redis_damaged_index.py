"""A damaged intention index key (another type of key where the sorted set should be) is repaired: replaced on
the next store or read, logged once, and no longer locks its user out."""

from __future__ import annotations

import logging

from promptcache.integrations._redis_intention import RedisIntentionBackend
from promptcache.intention import IntentionMemory

_LOGGER = "promptcache.integrations._redis_intention"


def _repair_logs(caplog) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == _LOGGER and "damaged intention index" in r.getMessage()]


def test_store_replaces_a_damaged_index(redis_url, redis_prefix, redis_client, caplog):
    backend = RedisIntentionBackend(url=redis_url, prefix=redis_prefix, socket_timeout_s=5.0)
    memory = IntentionMemory(backend, ttl_s=300)
    idx = backend.index_key("carol")
    redis_client.set(idx, "oops", px=900_000)
    caplog.set_level(logging.WARNING, logger=_LOGGER)
    assert memory.store("carol", "weather in Oslo", {"t": 1}) is True
    assert redis_client.type(idx) == b"zset"
    assert redis_client.zcard(idx) == 1
    assert 0 < redis_client.pttl(idx) <= 300_000  # the damaged key's 900 s are gone, not extended
    assert memory.retrieve("carol", "weather in Oslo").result == {"t": 1}
    assert memory.store("carol", "weather in Lima", {"t": 2}) is True
    assert _repair_logs(caplog) == [f"promptcache: replaced a damaged intention index ({idx}: string)"]
    assert backend._open_until == 0.0  # a per-key repair, no circuit break


def test_read_replaces_a_damaged_index(redis_url, redis_prefix, redis_client, caplog):
    backend = RedisIntentionBackend(url=redis_url, prefix=redis_prefix, socket_timeout_s=5.0)
    memory = IntentionMemory(backend, ttl_s=300)
    memory.store("carol", "weather in Oslo", {"t": 1})
    idx = backend.index_key("carol")
    redis_client.delete(idx)
    redis_client.rpush(idx, "junk")
    caplog.set_level(logging.WARNING, logger=_LOGGER)
    fresh = IntentionMemory(RedisIntentionBackend(url=redis_url, prefix=redis_prefix, socket_timeout_s=5.0), ttl_s=300)
    assert fresh.retrieve("carol", "weather in Oslo") is None  # the index was lost: a miss, not an error
    assert redis_client.exists(idx) == 0
    assert fresh.store("carol", "weather in Oslo", {"t": 3}) is True
    assert fresh.retrieve("carol", "weather in Oslo").result == {"t": 3}
    assert len(_repair_logs(caplog)) == 1


async def test_async_store_and_read_replace_a_damaged_index(redis_url, redis_prefix, redis_client):
    backend = RedisIntentionBackend(url=redis_url, prefix=redis_prefix, socket_timeout_s=5.0)
    memory = IntentionMemory(backend, ttl_s=300)
    idx = backend.index_key("carol")
    redis_client.set(idx, "oops")
    assert await memory.aretrieve("carol", "weather in Oslo") is None
    assert redis_client.exists(idx) == 0
    redis_client.set(idx, "oops")
    assert await memory.astore("carol", "weather in Oslo", {"t": 1}) is True
    assert (await memory.aretrieve("carol", "weather in Oslo")).result == {"t": 1}
    assert redis_client.type(idx) == b"zset"


def test_a_zset_written_by_another_process_is_never_deleted(redis_url, redis_prefix, redis_client):
    backend = RedisIntentionBackend(url=redis_url, prefix=redis_prefix, socket_timeout_s=5.0)
    memory = IntentionMemory(backend, ttl_s=300)
    memory.store("carol", "weather in Oslo", {"t": 1})
    assert backend._replace_damaged_index(redis_client, "carol") is False  # a sorted set is not damaged
    assert redis_client.zcard(backend.index_key("carol")) == 1

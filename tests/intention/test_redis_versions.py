"""The Redis intention backend's version counter: it never repeats, so another process's record cache never looks
fresh after a ``forget()`` or a loss of the user's keys; and every key it writes carries a TTL."""

from __future__ import annotations

import redis

from promptcache.integrations._redis_intention import RedisIntentionBackend
from promptcache.intention import IntentionMemory


def _memory(redis_url: str, prefix: str, **kwargs) -> IntentionMemory:
    return IntentionMemory(RedisIntentionBackend(url=redis_url, prefix=prefix, socket_timeout_s=5.0), **kwargs)


def test_forget_elsewhere_is_seen_by_a_process_that_cached_the_records(redis_url, redis_prefix):
    a = _memory(redis_url, redis_prefix)
    b = _memory(redis_url, redis_prefix)
    a.store("u1", "Weather in Paris", "rain")
    assert a.retrieve("u1", "weather in paris").result == "rain"  # A now caches u1's records
    assert b.forget("u1") == 1
    b.store("u1", "Weather in Rome", "sun")
    assert a.retrieve("u1", "weather in paris") is None  # the forgotten memory is not served
    assert a.retrieve("u1", "weather in rome").result == "sun"  # the memory stored since is seen


async def test_forget_elsewhere_is_seen_async(redis_url, redis_prefix):
    a = _memory(redis_url, redis_prefix)
    b = _memory(redis_url, redis_prefix)
    await a.astore("u1", "Weather in Paris", "rain")
    assert (await a.aretrieve("u1", "weather in paris")).result == "rain"
    assert await b.aforget("u1") == 1
    await b.astore("u1", "Weather in Rome", "sun")
    assert await a.aretrieve("u1", "weather in paris") is None
    assert (await a.aretrieve("u1", "weather in rome")).result == "sun"


def test_lost_keys_do_not_make_a_stale_cache_look_fresh(redis_url, redis_prefix, redis_client):
    a = _memory(redis_url, redis_prefix)
    b = _memory(redis_url, redis_prefix)
    a.store("u1", "Weather in Paris", "rain")
    assert a.retrieve("u1", "weather in paris").result == "rain"
    version = redis_client.get(a.backend.version_key("u1"))
    for key in list(redis_client.scan_iter(match=redis_prefix + "*")):  # Redis lost the user's data
        redis_client.delete(key)
    b.store("u1", "Weather in Rome", "sun")
    assert redis_client.get(a.backend.version_key("u1")) != version
    assert a.retrieve("u1", "weather in paris") is None
    assert a.retrieve("u1", "weather in rome").result == "sun"


def _keys_without_ttl(client: redis.Redis, prefix: str) -> list[bytes]:
    return sorted(k for k in client.scan_iter(match=prefix + "*") if client.pttl(k) < 0)


def test_dropping_gone_memories_leaves_no_counter_without_ttl(redis_url, redis_prefix, redis_client):
    backend = RedisIntentionBackend(url=redis_url, prefix=redis_prefix, socket_timeout_s=5.0)
    memory = IntentionMemory(backend, ttl_s=300)
    memory.store("u1", "Weather in Paris", "rain")
    memory.store("u1", "Weather in Rome", "sun")
    rome = memory.retrieve("u1", "weather in rome").memory_id
    # a concurrent forget() removed the counter and one record between two commands of another process
    redis_client.delete(backend.version_key("u1"), backend.memory_key("u1", rome))
    fresh = _memory(redis_url, redis_prefix)
    assert fresh.retrieve("u1", "weather in rome") is None  # the index row of the gone record is dropped
    assert redis_client.exists(backend.version_key("u1")) == 1
    assert _keys_without_ttl(redis_client, redis_prefix) == []
    assert 0 < redis_client.pttl(backend.version_key("u1")) <= 300_000


class ForgetBeforeEviction(redis.Redis):
    """A real client; a concurrent ``forget()`` deletes the user's version counter just before an eviction."""

    def zpopmin(self, name, count=None):
        popped = super().zpopmin(name, count)
        self.delete(str(name).removesuffix("idx") + "ver")
        return popped


def test_eviction_racing_a_forget_leaves_no_counter_without_ttl(redis_url, redis_prefix, redis_client):
    client = ForgetBeforeEviction.from_url(redis_url)
    backend = RedisIntentionBackend(client, prefix=redis_prefix, max_memories_per_user=1)
    memory = IntentionMemory(backend, ttl_s=300)
    memory.store("u1", "Weather in Paris", "rain")
    memory.store("u1", "Weather in Rome", "sun")  # evicts Paris
    assert redis_client.zcard(backend.index_key("u1")) == 1
    assert redis_client.exists(backend.version_key("u1")) == 1
    assert _keys_without_ttl(redis_client, redis_prefix) == []
    client.close()

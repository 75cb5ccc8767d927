"""Each component owns a namespace under the Redis key prefix: ``RedisCache`` entries under ``cache:``, Bedrock
placements under ``placements:``, intention memories under ``intent:``; a ``clear()`` touches its own namespace
only, and an empty prefix (whose ``clear()`` would empty the whole database) is refused."""

from __future__ import annotations

import pytest

from promptcache.backends import InMemoryServerCache, ServerCache
from promptcache.cache_points import CachePointPlacement
from promptcache.integrations._redis_intention import RedisIntentionBackend
from promptcache.integrations.bedrock import PlacementStore
from promptcache.integrations.redis import RedisCache
from promptcache.intention import IntentionMemory

PLACED = [CachePointPlacement(index=2, type="message", tokens_covered=1500)]


def _all_keys(client, prefix: str) -> list[str]:
    return sorted(k.decode() for k in client.scan_iter(match=prefix + "*"))


def test_each_component_writes_under_its_own_namespace(redis_url, redis_prefix, redis_client):
    cache = RedisCache(url=redis_url, prefix=redis_prefix, socket_timeout_s=5.0)
    cache.set("response:agent:abc", b"reply", 60)
    PlacementStore(RedisCache(url=redis_url, prefix=redis_prefix, socket_timeout_s=5.0)).save(
        "thread:t1", "model-a", PLACED
    )
    memory = IntentionMemory(RedisIntentionBackend(url=redis_url, prefix=redis_prefix, socket_timeout_s=5.0), ttl_s=60)
    memory.store("u1", "weather in Paris", "rain")
    keys = _all_keys(redis_client, redis_prefix)
    assert [k for k in keys if k.startswith(redis_prefix + "cache:")] == [redis_prefix + "cache:response:agent:abc"]
    assert [k for k in keys if k.startswith(redis_prefix + "placements:")] == [
        redis_prefix + "placements:" + PlacementStore.key("thread:t1", "model-a")
    ]
    # idx, mem, res, ver, vocab and the meaning index's sig set
    assert len([k for k in keys if k.startswith(redis_prefix + "intent:")]) == 6
    assert len(keys) == 8
    cache.close()


def test_clear_of_one_component_spares_the_others(redis_url, redis_prefix):
    cache = RedisCache(url=redis_url, prefix=redis_prefix, socket_timeout_s=5.0)
    placements = PlacementStore(RedisCache(url=redis_url, prefix=redis_prefix, socket_timeout_s=5.0))
    memory = IntentionMemory(RedisIntentionBackend(url=redis_url, prefix=redis_prefix, socket_timeout_s=5.0), ttl_s=60)
    cache.set("response:agent:abc", b"reply", 60)
    placements.save("thread:t1", "model-a", PLACED)
    memory.store("u1", "weather in Paris", "rain")

    assert cache.clear() == 1
    assert cache.get("response:agent:abc") is None
    assert placements.load("thread:t1", "model-a") == PLACED
    assert memory.retrieve("u1", "weather in paris").result == "rain"

    cache.set("response:agent:abc", b"reply", 60)
    assert placements.cache.clear() == 1
    assert placements.load("thread:t1", "model-a") == []
    assert cache.get("response:agent:abc") == b"reply"
    assert memory.retrieve("u1", "weather in paris").result == "rain"


def test_one_redis_cache_for_responses_and_placements_keeps_them_apart(redis_url, redis_prefix):
    cache = RedisCache(url=redis_url, prefix=redis_prefix, socket_timeout_s=5.0)
    placements = PlacementStore(cache)  # the same object the response cache uses
    placements.save("thread:t1", "model-a", PLACED)
    cache.set("response:agent:abc", b"reply", 60)
    assert cache.clear() == 1
    assert placements.load("thread:t1", "model-a") == PLACED
    assert cache.get(PlacementStore.key("thread:t1", "model-a")) is None  # not in the cache's namespace


def test_namespaced_view_of_an_in_memory_cache():
    cache = InMemoryServerCache()
    view = cache.namespaced("placements:")
    assert isinstance(view, ServerCache)
    view.set("k", b"v", 60)
    cache.set("k", b"other", 60)
    assert (view.get("k"), cache.get("placements:k")) == (b"v", b"v")
    assert view.clear() == 1
    assert (view.get("k"), cache.get("k")) == (None, b"other")


@pytest.mark.parametrize("prefix", ["", None])
def test_empty_prefix_is_refused(prefix):
    error = ValueError if prefix == "" else TypeError
    with pytest.raises(error, match="prefix"):
        RedisCache(url="redis://127.0.0.1:6379/0", prefix=prefix)
    with pytest.raises(error, match="prefix"):
        RedisIntentionBackend(url="redis://127.0.0.1:6379/0", prefix=prefix)


@pytest.mark.parametrize("namespace", ["", "cache", "a:b:", "x*:", "{t}:", 5])
def test_bad_namespace_is_refused(namespace):
    with pytest.raises((TypeError, ValueError), match="namespace"):
        RedisCache(url="redis://127.0.0.1:6379/0", prefix="p:", namespace=namespace)
    with pytest.raises((TypeError, ValueError), match="namespace"):
        InMemoryServerCache().namespaced(namespace)

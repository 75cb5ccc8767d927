"""RedisCache on a real 3-master Redis Cluster: client kinds, keys spread over every master, cross-slot reads."""

from __future__ import annotations

import pytest
from support.redis_cluster import async_cluster_client, cluster_client

from promptcache.integrations.redis import RedisCache, is_cluster

# Keys chosen so that they land on different slots (checked below against the live cluster, not assumed).
KEYS = [f"k{i}" for i in range(30)]


def masters_holding(cluster, prefix: str) -> dict[int, int]:
    """Per master port, how many keys under ``prefix`` it holds (asked of each node directly)."""
    counts = {}
    for port in cluster.ports:
        with cluster.node_client(port) as node:
            counts[port] = len(list(node.scan_iter(match=prefix + "*", count=1000)))
    return counts


@pytest.fixture
def explicit_clients(redis_cluster, redis_prefix):
    """RedisCache given a sync RedisCluster and an async RedisCluster client (what an application passes)."""
    sync, aio = cluster_client(redis_cluster), async_cluster_client(redis_cluster)
    cache = RedisCache(sync, async_client=aio, prefix=redis_prefix)
    yield cache
    cache.clear()
    sync.close()


def test_keys_spread_over_all_masters_and_cross_slot_reads_work(redis_cluster, redis_cluster_cache, redis_prefix):
    cache = redis_cluster_cache
    assert is_cluster(cache.client)
    for key in KEYS:
        cache.set(key, key.encode(), ttl_s=60)
    counts = masters_holding(redis_cluster, redis_prefix)
    assert sorted(counts) == sorted(redis_cluster.ports)
    assert sum(counts.values()) == len(KEYS)
    assert all(n > 0 for n in counts.values()), counts  # 30 keys over 3 masters: each holds some
    # One MGET across slots would be refused (CROSSSLOT); the adapter reads slot by slot.
    assert cache.get_many([*KEYS, "absent"]) == [k.encode() for k in KEYS] + [None]
    assert cache.failures == 0


def test_clear_scans_every_master(redis_cluster, redis_cluster_cache, redis_prefix):
    cache = redis_cluster_cache
    for key in KEYS:
        cache.set("a:" + key, b"1")
        cache.set("b:" + key, b"2")
    assert cache.clear("a:") == len(KEYS)
    counts = masters_holding(redis_cluster, redis_prefix)
    assert sum(counts.values()) == len(KEYS)
    assert cache.get_many(["a:" + k for k in KEYS]) == [None] * len(KEYS)
    assert cache.clear() == len(KEYS)
    assert sum(masters_holding(redis_cluster, redis_prefix).values()) == 0
    assert cache.failures == 0


async def test_async_url_client_is_a_cluster_client(redis_cluster_cache):
    cache = redis_cluster_cache
    assert is_cluster(cache.async_client)
    for key in KEYS[:10]:
        await cache.aset(key, key.encode(), ttl_s=60)
    assert await cache.aget_many(KEYS[:10]) == [k.encode() for k in KEYS[:10]]
    assert cache.get("k3") == b"k3"  # written by the async client, read by the sync one
    assert await cache.aclear() == 10
    assert await cache.aget("k3") is None
    assert cache.failures == 0
    await cache.aclose()


def test_explicit_sync_cluster_client(explicit_clients):
    cache = explicit_clients
    cache.set("x", b"1", ttl_s=30)
    cache.set("y", b"2")
    assert cache.get_many(["x", "y", "z"]) == [b"1", b"2", None]
    assert 29.0 < cache.ttl("x") <= 30.0
    assert cache.ttl("y") is None
    cache.delete("x")
    assert cache.get("x") is None
    assert cache.failures == 0


async def test_explicit_async_cluster_client(explicit_clients):
    cache = explicit_clients
    for key in KEYS[:12]:
        await cache.aset(key, b"v")
    assert await cache.aget_many(KEYS[:12]) == [b"v"] * 12
    assert await cache.aclear() == 12
    assert cache.failures == 0
    await cache.aclose()


async def test_a_lone_async_cluster_client_is_taken_as_async(redis_cluster, redis_prefix):
    aio = async_cluster_client(redis_cluster)
    cache = RedisCache(aio, prefix=redis_prefix)
    assert cache.client is None and cache.async_client is aio
    with pytest.raises(RuntimeError, match="only an async client"):
        cache.get("k")
    await cache.aset("k", b"v")
    assert await cache.aget("k") == b"v"
    assert await cache.aclear() == 1
    await aio.aclose()


def test_cluster_flag_must_be_a_bool(redis_cluster):
    with pytest.raises(TypeError, match="cluster must be a bool, got str: 'yes'"):
        RedisCache(url=redis_cluster.url, cluster="yes")


def test_components_keep_their_namespaces_on_the_cluster(redis_cluster_cache, redis_cluster_intention, redis_prefix):
    from promptcache.cache_points import CachePointPlacement
    from promptcache.integrations.bedrock import PlacementStore
    from promptcache.intention import IntentionMemory

    cache, placed = redis_cluster_cache, [CachePointPlacement(index=2, fingerprint="f")]
    placements = PlacementStore(cache)  # a namespaced view on the same cluster clients
    memory = IntentionMemory(redis_cluster_intention, ttl_s=60)
    for key in KEYS:
        cache.set(key, b"v", ttl_s=60)
    placements.save("thread:t1", "model-a", placed)
    assert memory.store("u1", "weather in Paris", "rain") is True
    keys = sorted(k.decode() for k in cache.client.scan_iter(match=redis_prefix + "*", count=1000))
    assert [k for k in keys if k.startswith(redis_prefix + "cache:")] == sorted(
        redis_prefix + "cache:" + k for k in KEYS
    )
    assert [k for k in keys if k.startswith(redis_prefix + "placements:")] == [
        redis_prefix + "placements:" + PlacementStore.key("thread:t1", "model-a")
    ]
    assert len([k for k in keys if k.startswith(redis_prefix + "intent:")]) == 6  # idx, ver, vocab, mem, res, sig
    assert len(keys) == len(KEYS) + 7

    assert cache.clear() == len(KEYS)  # every master scanned, the cache's own namespace only
    assert placements.load("thread:t1", "model-a") == placed
    assert memory.retrieve("u1", "weather in paris").result == "rain"
    assert placements.cache.clear() == 1
    assert placements.load("thread:t1", "model-a") == []
    assert memory.retrieve("u1", "weather in paris").result == "rain"

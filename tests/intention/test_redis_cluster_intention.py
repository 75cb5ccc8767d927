"""RedisIntentionBackend on a real 3-master Redis Cluster: one slot per user, explicit sync/async cluster clients,
eviction, repair, corrupt records and forget across masters (no CROSSSLOT anywhere)."""

from __future__ import annotations

import pytest
from support.redis_cluster import async_cluster_client, cluster_client

from promptcache.integrations._redis_intention import RedisIntentionBackend
from promptcache.integrations.redis import is_cluster
from promptcache.intention import IntentionMemory

USERS = [f"user-{i}" for i in range(12)]


def slots(cluster, keys: list[str]) -> set[int]:
    with cluster.node_client(cluster.ports[0]) as node:
        return {node.cluster("KEYSLOT", k) for k in keys}


def all_keys(backend: RedisIntentionBackend, prefix: str) -> list[str]:
    return sorted(k.decode() for k in backend.client.scan_iter(match=prefix + "*", count=1000))


def test_each_users_keys_share_one_slot_and_users_spread_over_masters(
    redis_cluster, redis_cluster_intention, redis_prefix
):
    backend = redis_cluster_intention
    memory = IntentionMemory(backend, ttl_s=120)
    for user in USERS:
        assert memory.store(user, "How many open tickets do I have?", 7, tool="count") is True
        assert memory.store(user, "What is the weather in Paris?", "rain", tool="weather") is True
    ports = set()
    for user in USERS:
        keys = [k for k in all_keys(backend, redis_prefix) if k.startswith(backend._base(user))]
        assert len(keys) == 9  # idx, ver, vocab, 2 records, 2 results, 2 meaning-signature sets
        assert len(slots(redis_cluster, keys)) == 1  # every pipeline and MGET of this user: one slot
        ports.add(redis_cluster.port_of_key(backend.index_key(user)))
        assert memory.retrieve(user, "how many open tickets do I have").result == 7
        assert [m.result for m in memory.retrieve_all(user, "weather in Paris?")] == ["rain"]
    assert ports == set(redis_cluster.ports)  # 12 users over 3 masters: each master holds some


def test_explicit_sync_cluster_client_eviction_and_forget(redis_cluster, redis_prefix):
    client = cluster_client(redis_cluster)
    backend = RedisIntentionBackend(client, prefix=redis_prefix, max_memories_per_user=3)
    clock = [1_700_000_000.0]
    memory = IntentionMemory(backend, clock=lambda: clock[0])
    for i in range(5):
        clock[0] += 1
        assert memory.store("u1", f"intention number {i}", i) is True
    assert client.zcard(backend.index_key("u1")) == 3
    assert memory.retrieve("u1", "intention number 1") is None
    assert memory.retrieve("u1", "intention number 4").result == 4
    memory.store("u2", "another user", 1)
    assert backend.forget("u1") == 3
    assert [k for k in all_keys(backend, redis_prefix) if "{u1}" in k] == []
    assert memory.retrieve("u2", "another user").result == 1
    assert backend.forget("u2") == 1
    assert all_keys(backend, redis_prefix) == []
    client.close()


def test_corrupt_record_and_damaged_version_counter(redis_cluster, redis_cluster_intention):
    backend = redis_cluster_intention
    memory = IntentionMemory(backend)
    memory.store("u1", "Weather in Paris", "rain")
    memory.store("u1", "Weather in Rome", "sun")
    rome = memory.retrieve("u1", "Weather in Rome").memory_id
    backend.client.set(backend.memory_key("u1", rome), b"not json")
    backend.client.set(backend.version_key("u1"), b"garbage")
    fresh = IntentionMemory(RedisIntentionBackend(url=redis_cluster.url, cluster=True, prefix=backend.prefix))
    assert fresh.retrieve("u1", "Weather in Rome") is None
    assert backend.client.zcard(backend.index_key("u1")) == 1
    assert fresh.retrieve("u1", "Weather in Paris").result == "rain"
    assert fresh.store("u1", "Weather in Oslo", "snow") is True  # repairs the counter in the same slot
    assert backend.client.get(backend.version_key("u1")).isdigit()


async def test_explicit_async_cluster_client(redis_cluster, redis_prefix):
    aio = async_cluster_client(redis_cluster)
    backend = RedisIntentionBackend(aio, prefix=redis_prefix)
    assert backend.client is None and is_cluster(backend.async_client)
    memory = IntentionMemory(backend)
    for user in USERS[:6]:
        assert await memory.astore(user, "Weather in Paris", {"t": 1}, tool="w") is True
        assert (await memory.aretrieve(user, "weather in Paris?")).result == {"t": 1}
        assert [m.result for m in await memory.aretrieve_all(user, "weather in Paris")] == [{"t": 1}]
    assert memory.store("x", "Weather in Rome", 1) is False  # no sync client: a skipped write, logged
    for user in USERS[:6]:
        assert await backend.aforget(user) == 1
    assert [k async for k in aio.scan_iter(match=redis_prefix + "*")] == []
    await aio.aclose()


async def test_async_url_cluster_client_per_loop(redis_cluster, redis_cluster_intention):
    backend = redis_cluster_intention
    assert is_cluster(backend.async_client)
    memory = IntentionMemory(backend)
    assert await memory.astore("u9", "How many tickets?", 3) is True
    assert memory.retrieve("u9", "how many tickets").result == 3  # the sync cluster client reads it
    assert await backend.aforget("u9") == 1
    await backend.aclose()


def test_cluster_flag_is_checked():
    with pytest.raises(TypeError, match="cluster must be a bool, got int: 1"):
        RedisIntentionBackend(url="redis://127.0.0.1:7000/0", cluster=1)


def test_version_counter_starts_random_with_a_ttl_on_the_cluster(redis_cluster_intention):
    backend = redis_cluster_intention
    memory = IntentionMemory(backend, ttl_s=300)
    assert memory.store("u1", "Weather in Paris", "rain") is True  # the bump script runs in the user's slot
    version = int(backend.client.get(backend.version_key("u1")))
    assert 2**61 < version < 2**62  # a random start + 1, never 1
    assert 0 < backend.client.pttl(backend.version_key("u1")) <= 300_000
    assert memory.store("u1", "Weather in Rome", "sun") is True
    assert int(backend.client.get(backend.version_key("u1"))) == version + 1


async def test_damaged_index_is_replaced_on_the_cluster(redis_cluster, redis_cluster_intention):
    backend = redis_cluster_intention
    memory = IntentionMemory(backend, ttl_s=300)
    idx = backend.index_key("carol")
    backend.client.set(idx, "oops", px=900_000)
    assert memory.store("carol", "weather in Oslo", {"t": 1}) is True  # the repair script, then the store
    assert backend.client.type(idx) == b"zset" and backend.client.zcard(idx) == 1
    backend.client.delete(idx)
    backend.client.rpush(idx, "junk")
    fresh = IntentionMemory(RedisIntentionBackend(url=redis_cluster.url, cluster=True, prefix=backend.prefix))
    assert await fresh.aretrieve("carol", "weather in Oslo") is None  # the async repair: a miss, not an error
    assert backend.client.exists(idx) == 0
    assert await fresh.astore("carol", "weather in Oslo", {"t": 2}) is True
    assert (await fresh.aretrieve("carol", "weather in Oslo")).result == {"t": 2}
    assert backend._open_until == 0.0 and fresh.backend._open_until == 0.0  # per-key repairs, no circuit break

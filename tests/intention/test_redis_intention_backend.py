"""Redis-specific behaviour of the intention backend: key layout, round trips, corrupt entries, async client."""

from __future__ import annotations

import time

import pytest
import redis

from promptcache.integrations._redis_intention import RedisIntentionBackend
from promptcache.intention import IntentionMemory
from promptcache.intention._meaning import signature


class CountingRedis(redis.Redis):
    """A real client that counts round trips (single commands and pipeline executions)."""

    round_trips = 0

    def execute_command(self, *args, **options):
        CountingRedis.round_trips += 1
        return super().execute_command(*args, **options)

    def pipeline(self, transaction=True, shard_hint=None):
        pipe = super().pipeline(transaction, shard_hint)
        original = pipe.execute

        def execute(raise_on_error=True):
            CountingRedis.round_trips += 1
            return original(raise_on_error)

        pipe.execute = execute
        return pipe


@pytest.fixture
def counting(redis_url, redis_prefix):
    client = CountingRedis.from_url(redis_url)
    backend = RedisIntentionBackend(client, prefix=redis_prefix)
    yield backend
    client.close()


def test_layout_one_hash_tag_per_user_and_ttls(redis_url, redis_prefix, redis_client):
    backend = RedisIntentionBackend(url=redis_url, prefix=redis_prefix)
    now = float(int(time.time()))  # one fixed instant: the index scores are exact
    memory = IntentionMemory(backend, ttl_s=120, clock=lambda: now)
    memory.store("user-42", "How many open tickets do I have?", 7, tool="count", args={"state": "open"})
    keys = sorted(k.decode() for k in redis_client.scan_iter(match=redis_prefix + "*"))
    match = memory.retrieve("user-42", "How many open tickets do I have?")
    base = f"{redis_prefix}intent:{{user-42}}:"
    sig = base + "sig:" + signature("How many open tickets do I have?")  # the meaning index: its candidates
    assert keys == sorted(
        [
            base + "idx",
            base + "mem:" + match.memory_id,
            base + "res:" + match.result_hash,
            base + "ver",
            base + "vocab",
            sig,
        ]
    )
    assert redis_client.smembers(sig) == {match.memory_id.encode()}
    for key in keys:  # every key carries a TTL, at most the configured 120 s (-1 would be none, -2 gone)
        assert 0 < redis_client.pttl(key) <= 120_000
    assert redis_client.type(base + "idx") == b"zset"
    assert redis_client.zscore(base + "idx", match.memory_id) == now + 120
    backend.close()


def test_lookup_over_1000_memories_is_a_fixed_number_of_round_trips(counting):
    memory = IntentionMemory(counting, ttl_s=600)
    for i in range(1000):
        memory.store("u1", f"show the status of order number {i}", {"order": i})
    fresh = RedisIntentionBackend(counting.client, prefix=counting.prefix)  # empty local record cache
    cold = IntentionMemory(fresh, ttl_s=600)
    CountingRedis.round_trips = 0
    assert cold.retrieve("u1", "show the status of order number 417").result == {"order": 417}
    # Candidates come from the meaning index, never all 1000 records: one script call (prune, the signature set,
    # its members' index scores, records and results).
    assert CountingRedis.round_trips == 1
    CountingRedis.round_trips = 0
    assert cold.retrieve("u1", "show me the status of order number 418").result == {"order": 418}
    assert CountingRedis.round_trips == 1  # a similar match: the same one
    memory.store("u1", "show the status of order number 1000", {"order": 1000})
    CountingRedis.round_trips = 0
    assert cold.retrieve("u1", "show the status of order number 1000").result == {"order": 1000}
    assert CountingRedis.round_trips == 1
    CountingRedis.round_trips = 0
    assert cold.retrieve("u1", "status of the shipment for customer 12345") is None
    assert CountingRedis.round_trips == 1  # the script finds an empty signature set: nothing more to read


def test_replaced_memory_elsewhere_is_not_served_from_the_local_cache(redis_url, redis_prefix):
    clock = [1_700_000_000.0]
    writer = IntentionMemory(RedisIntentionBackend(url=redis_url, prefix=redis_prefix), clock=lambda: clock[0])
    reader = IntentionMemory(RedisIntentionBackend(url=redis_url, prefix=redis_prefix), clock=lambda: clock[0])
    writer.store("u1", "Weather in Paris", "rain", tool="w", args={"c": "Paris"})
    assert reader.retrieve("u1", "weather in paris").result == "rain"
    clock[0] += 10
    writer.store("u1", "Weather in Paris", "sun", tool="w", args={"c": "Paris"})
    assert reader.retrieve("u1", "weather in paris").result == "sun"


def test_corrupt_record_is_a_miss_and_leaves_the_index(redis_url, redis_prefix, redis_client):
    backend = RedisIntentionBackend(url=redis_url, prefix=redis_prefix)
    memory = IntentionMemory(backend)
    memory.store("u1", "Weather in Paris", "rain")
    memory.store("u1", "Weather in Rome", "sun")
    rome = memory.retrieve("u1", "Weather in Rome").memory_id
    redis_client.set(backend.memory_key("u1", rome), b"not json")
    fresh = IntentionMemory(RedisIntentionBackend(url=redis_url, prefix=redis_prefix))
    assert fresh.retrieve("u1", "Weather in Rome") is None
    assert redis_client.zcard(backend.index_key("u1")) == 1
    assert fresh.retrieve("u1", "Weather in Paris").result == "rain"


def test_bound_per_user_drops_the_soonest_to_expire(redis_url, redis_prefix, redis_client):
    clock = [1_700_000_000.0]
    backend = RedisIntentionBackend(url=redis_url, prefix=redis_prefix, max_memories_per_user=3)
    memory = IntentionMemory(backend, clock=lambda: clock[0])
    for i in range(5):
        clock[0] += 1
        memory.store("u1", f"intention number {i}", i)
    assert redis_client.zcard(backend.index_key("u1")) == 3
    assert sum(1 for _ in redis_client.scan_iter(match=redis_prefix + "*:mem:*")) == 3
    assert memory.retrieve("u1", "intention number 1") is None
    assert memory.retrieve("u1", "intention number 4").result == 4


async def test_async_client_only(redis_url, redis_prefix):
    import redis.asyncio as aioredis

    client = aioredis.Redis.from_url(redis_url)
    backend = RedisIntentionBackend(client, prefix=redis_prefix)
    memory = IntentionMemory(backend)
    assert await memory.astore("u1", "Weather in Paris", {"t": 1}) is True
    assert (await memory.aretrieve("u1", "weather in Paris?")).result == {"t": 1}
    assert memory.store("u1", "Weather in Rome", 1) is False  # no sync client: a skipped write, logged
    assert await backend.aforget("u1") == 1
    await client.aclose()


def test_constructor_errors():
    with pytest.raises(TypeError, match="client or a url"):
        RedisIntentionBackend()
    with pytest.raises(ValueError, match="max_memories_per_user must be an int >= 1, got 0"):
        RedisIntentionBackend(url="redis://127.0.0.1:6379/0", max_memories_per_user=0)


def test_hash_tag_is_injective_and_keeps_plain_ids_readable():
    from promptcache._keys import hash_tag, stable_hash

    assert hash_tag("user-42") == "{user-42}"
    assert hash_tag(42) == "{42}"
    hashed = {v: hash_tag(v) for v in ("{alice}", "", "a}b", "#x")}
    assert hashed == {v: "{#" + stable_hash(v, 32) + "}" for v in hashed}
    # a plain id equal to a hashed tag's inside (with or without the mark) is hashed or kept, never equal
    for value, tag in hashed.items():
        inner = tag[1:-1]
        assert hash_tag(inner) != tag and hash_tag(inner[1:]) != tag
        assert hash_tag(stable_hash(value, 16)) == "{" + stable_hash(value, 16) + "}" != tag


def test_wrongtype_key_fails_that_call_without_a_circuit_break(redis_url, redis_prefix, redis_client):
    backend = RedisIntentionBackend(url=redis_url, prefix=redis_prefix)
    memory = IntentionMemory(backend)
    redis_client.set(backend.index_key("carol"), "oops")  # a damaged index is replaced (test_redis_damaged_index)
    assert memory.store("carol", "weather in Oslo", {"t": 1}) is True
    redis_client.rpush(backend.result_key("carol", "f" * 64), "oops")  # a result key of another type
    assert backend.result("carol", "f" * 64) == b""  # a corrupt entry: the memory discards it (a damaged key)
    assert memory.store("dave", "weather in Lima", {"t": 2}) is True
    assert memory.retrieve("dave", "weather in Lima").result == {"t": 2}
    assert backend._open_until == 0.0
    backend.close()

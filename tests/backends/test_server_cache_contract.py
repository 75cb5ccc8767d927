"""The ServerCache contract, run against InMemoryServerCache and RedisCache (real Redis)."""

from __future__ import annotations

import asyncio
import logging
import math
import time

import pytest

from promptcache.backends import InMemoryServerCache, ServerCache
from promptcache.backends._base import MAX_TTL_S
from promptcache.integrations.redis import RedisCache


def test_get_set_delete(server_cache: ServerCache) -> None:
    assert server_cache.get("a") is None
    server_cache.set("a", b"1")
    server_cache.set("b", b"22", ttl_s=60)
    assert server_cache.get("a") == b"1"
    assert server_cache.get_many(["a", "missing", "b"]) == [b"1", None, b"22"]
    server_cache.delete("a")
    server_cache.delete("never-there")
    assert server_cache.get("a") is None
    assert server_cache.get("b") == b"22"


def test_clear_by_prefix(server_cache: ServerCache) -> None:
    for k in ["x:1", "x:2", "x*:3", "y:1"]:
        server_cache.set(k, k.encode())
    assert server_cache.clear("x*") == 1  # glob characters in a prefix are literal
    assert server_cache.clear("x:") == 2
    assert server_cache.get("y:1") == b"y:1"
    assert server_cache.clear() == 1
    assert server_cache.get("y:1") is None


def test_sub_second_ttl_expires(server_cache: ServerCache) -> None:
    server_cache.set("short", b"v", ttl_s=0.15)
    server_cache.set("long", b"v", ttl_s=30)
    assert server_cache.get("short") == b"v"
    time.sleep(0.3)
    assert server_cache.get("short") is None
    assert server_cache.get("long") == b"v"


def test_ttl_reaches_backend_in_seconds(server_cache: ServerCache) -> None:
    server_cache.set("t", b"v", ttl_s=999)
    left = server_cache.ttl("t")
    assert left is not None and 998 < left <= 999
    server_cache.set("forever", b"v")
    assert server_cache.ttl("forever") is None


def test_values_are_copies(server_cache: ServerCache) -> None:
    buf = bytearray(b"abc")
    server_cache.set("k", buf)
    buf[0] = ord("z")
    got = server_cache.get("k")
    assert got == b"abc" and isinstance(got, bytes)


@pytest.mark.parametrize("bad", [0, -1, -0.5, math.nan, math.inf])
def test_bad_ttl_value(server_cache: ServerCache, bad: float) -> None:
    with pytest.raises(ValueError, match=repr(bad).replace("(", r"\(")):
        server_cache.set("k", b"v", ttl_s=bad)
    assert server_cache.get("k") is None


@pytest.mark.parametrize("bad", ["10", True, [1]])
def test_bad_ttl_type(server_cache: ServerCache, bad: object) -> None:
    with pytest.raises(TypeError, match="ttl_s"):
        server_cache.set("k", b"v", ttl_s=bad)
    assert server_cache.get("k") is None


def test_bad_key_and_value(server_cache: ServerCache) -> None:
    with pytest.raises(TypeError, match="str"):
        server_cache.set("k", "text", ttl_s=1)
    with pytest.raises(TypeError, match="cache key"):
        server_cache.set(42, b"v")
    with pytest.raises(ValueError, match="non-empty"):
        server_cache.set("", b"v")
    assert server_cache.get("k") is None


async def test_async_twins(server_cache: ServerCache) -> None:
    await server_cache.aset("a", b"1", ttl_s=0.2)
    await server_cache.aset("p:b", b"2")
    assert await server_cache.aget("a") == b"1"
    assert await server_cache.aget_many(["a", "p:b", "zz"]) == [b"1", b"2", None]
    await asyncio.sleep(0.35)
    assert await server_cache.aget("a") is None
    assert await server_cache.aclear("p:") == 1
    await server_cache.aset("c", b"3")
    await server_cache.adelete("c")
    assert await server_cache.aget("c") is None


def test_in_memory_lru_eviction() -> None:
    cache = InMemoryServerCache(max_entries=3)
    for k in "abc":
        cache.set(k, k.encode())
    assert cache.get("a") == b"a"  # a is now the most recently used
    cache.set("d", b"d")
    assert [cache.get(k) for k in "abcd"] == [b"a", None, b"c", b"d"]
    assert len(cache) == 3


@pytest.mark.parametrize("bad, exc", [(0, ValueError), (-3, ValueError), (2.5, TypeError), ("10", TypeError)])
def test_in_memory_bad_bound(bad: object, exc: type) -> None:
    with pytest.raises(exc, match=repr(bad)):
        InMemoryServerCache(max_entries=bad)


def test_redis_key_has_prefix_and_px(redis_cache: RedisCache, redis_client, redis_prefix: str) -> None:
    redis_cache.set("k", b"v", ttl_s=1.5)
    assert redis_client.get(redis_cache.full_key("k")) == b"v"
    assert 1400 <= redis_client.pttl(redis_cache.full_key("k")) <= 1500


def test_redis_accepts_client_objects(redis_url: str, redis_prefix: str) -> None:
    import redis
    import redis.asyncio as aioredis

    sync_only = RedisCache(redis.Redis.from_url(redis_url), prefix=redis_prefix)
    sync_only.set("k", b"v")
    assert asyncio.run(sync_only.aget("k")) == b"v"  # async calls run the sync client in a thread

    async def use_async_only() -> bytes | None:
        cache = RedisCache(aioredis.Redis.from_url(redis_url), prefix=redis_prefix)
        value = await cache.aget("k")
        await cache.aclose()
        return value

    assert asyncio.run(use_async_only()) == b"v"
    with pytest.raises(TypeError, match="client or a url"):
        RedisCache()


@pytest.mark.parametrize("which", ["sync", "async"])
def test_a_client_that_decodes_responses_is_refused(redis_url: str, redis_prefix: str, which: str) -> None:
    """A client made with decode_responses=True returns str where the backends read bytes: every intention lookup
    missed and cache entries could not be read. Refused at construction, naming the argument."""
    import redis
    import redis.asyncio as aioredis

    from promptcache.integrations._redis_intention import RedisIntentionBackend

    factory = redis.Redis if which == "sync" else aioredis.Redis
    for backend in (RedisCache, RedisIntentionBackend):
        client = factory.from_url(redis_url, decode_responses=True)
        with pytest.raises(ValueError, match=r"^client was made with decode_responses=True"):
            backend(client, prefix=redis_prefix)
        with pytest.raises(ValueError, match=r"^async_client was made with decode_responses=True"):
            backend(
                redis.Redis.from_url(redis_url),
                async_client=aioredis.Redis.from_url(redis_url, decode_responses=True),
                prefix=redis_prefix,
            )


def _dead_cache(breaker_s: float = 30.0) -> RedisCache:
    # Port 1 on loopback: nothing listens there, the connection is refused at once.
    return RedisCache(url="redis://127.0.0.1:1/0", prefix="pctest:dead:", breaker_s=breaker_s)


def test_redis_down_is_a_miss_with_one_warning(caplog: pytest.LogCaptureFixture) -> None:
    cache = _dead_cache(breaker_s=0.0)  # no break: every call really tries and fails
    with caplog.at_level(logging.WARNING, logger="promptcache"):
        assert cache.get("k") is None
        cache.set("k", b"v", ttl_s=5)
        cache.delete("k")
        assert cache.clear() == 0
        assert cache.get_many(["a", "b"]) == [None, None]
        assert cache.ttl("k") is None
    assert cache.failures == 6
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1 and "Redis GET failed" in warnings[0].getMessage()


async def test_redis_down_async(caplog: pytest.LogCaptureFixture) -> None:
    cache = _dead_cache(breaker_s=0.0)
    with caplog.at_level(logging.WARNING, logger="promptcache"):
        assert await cache.aget("k") is None
        await cache.aset("k", b"v")
        assert await cache.aget_many(["k"]) == [None]
        assert await cache.aclear() == 0
    assert cache.failures == 4
    assert len([r for r in caplog.records if r.levelno == logging.WARNING]) == 1


def test_circuit_break_skips_the_network() -> None:
    cache = _dead_cache(breaker_s=30.0)
    assert cache.get("k") is None  # the failure that opens the break
    assert cache.get("k") is None
    cache.set("k", b"v")
    assert cache.failures == 1  # the calls during the break never reached the network (speed: bench/backends.py)


@pytest.mark.parametrize("ttl", [1e17, MAX_TTL_S * 1.5])
def test_ttl_past_the_cap_is_refused_by_every_backend(server_cache: ServerCache, ttl: float) -> None:
    with pytest.raises(ValueError, match="at most 315360000 seconds"):
        server_cache.set("k", b"v", ttl_s=ttl)
    server_cache.set("k", b"v", ttl_s=MAX_TTL_S)  # the cap itself is accepted
    assert server_cache.get("k") == b"v"


async def test_redis_wrongtype_key_is_a_miss_without_a_break_async(
    redis_cache: RedisCache, redis_client, redis_prefix: str
) -> None:
    await redis_cache.aset("healthy", b"ok", 30)
    redis_client.rpush(redis_cache.full_key("listkey"), "x")  # a key of another type in the cache's namespace
    assert await redis_cache.aget("listkey") is None
    assert await redis_cache.aget("healthy") == b"ok"  # the break did not open
    assert redis_cache.failures == 1

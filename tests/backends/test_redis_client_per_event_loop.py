"""RedisCache built from a url gives each event loop its own asyncio client; a given client is used as given."""

from __future__ import annotations

import asyncio
import gc


def test_redis_url_backend_gives_each_event_loop_its_own_client(redis_url, redis_prefix):
    from promptcache.integrations.redis import RedisCache

    cache = RedisCache(url=redis_url, prefix=redis_prefix)
    cache.set("k", b"v")
    assert cache.async_client is None  # no running loop here

    async def read_twice() -> tuple[object, bytes | None, bytes | None]:
        first = cache.async_client
        assert cache.async_client is first  # one client per loop, reused
        value = await cache.aget("k")
        await cache.aclose()  # closes this loop's client; the next call makes a new one
        again = await cache.aget("k")
        assert cache.async_client is not first
        await cache.aclose()
        return first, value, again

    one = asyncio.run(read_twice())
    two = asyncio.run(read_twice())
    assert one[1:] == two[1:] == (b"v", b"v") and one[0] is not two[0]
    assert asyncio.run(cache.aget("k")) == b"v"
    cache.close()  # drops the clients of closed loops
    gc.collect()
    assert len(cache._async_by_loop) == 0 and cache.failures == 0


def test_redis_given_async_client_is_used_as_given(redis_url, redis_prefix):
    import redis
    import redis.asyncio as aioredis

    from promptcache.integrations.redis import RedisCache

    async def run() -> bytes | None:
        given = aioredis.Redis.from_url(redis_url)
        cache = RedisCache(redis.Redis.from_url(redis_url), async_client=given, prefix=redis_prefix)
        assert cache.async_client is given
        await cache.aset("k", b"v")
        value = await cache.aget("k")
        await cache.aclose()
        cache.close()
        return value

    assert asyncio.run(run()) == b"v"

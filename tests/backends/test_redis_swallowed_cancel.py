"""A task cancelled while a Redis adapter awaits redis-py stays cancelled, even when the client swallows the
cancellation (redis-py 8.1 does, at times; on a RedisCluster client's first call, often)."""

from __future__ import annotations

import asyncio
import sys

import pytest
import redis.asyncio as aioredis

from promptcache.integrations._redis_intention import RedisIntentionBackend
from promptcache.integrations.redis import RedisCache

pytestmark = pytest.mark.skipif(sys.version_info < (3, 11), reason="Task.cancelling() is Python >= 3.11")


class SwallowingRedis(aioredis.Redis):
    """A real asyncio client whose commands swallow a cancellation that lands in them, as redis-py sometimes does."""

    async def execute_command(self, *args, **options):
        try:
            await asyncio.sleep(0.5)  # the cancellation lands here
        except asyncio.CancelledError:
            pass
        return await super().execute_command(*args, **options)


async def cancelled_midway(coro) -> str:
    task = asyncio.create_task(coro)
    await asyncio.sleep(0.05)
    task.cancel()
    try:
        await task
    except asyncio.CancelledError:
        return "cancelled"
    return "ran on"


async def test_redis_cache_async_calls_stay_cancelled(redis_url, redis_prefix):
    client = SwallowingRedis.from_url(redis_url)
    cache = RedisCache(async_client=client, prefix=redis_prefix)
    assert await cancelled_midway(cache.aget("k")) == "cancelled"
    assert await cancelled_midway(cache.aset("k", b"v")) == "cancelled"  # the SET was sent, the caller is cancelled
    assert await cancelled_midway(cache.aget_many(["k", "j"])) == "cancelled"
    assert await cache.aget("k") == b"v"  # uncancelled calls are unaffected (and half a second slower here)
    assert cache.failures == 0
    await client.aclose()


async def test_intention_backend_async_calls_stay_cancelled(redis_url, redis_prefix):
    client = SwallowingRedis.from_url(redis_url)
    backend = RedisIntentionBackend(async_client=client, prefix=redis_prefix)
    assert await cancelled_midway(backend.aresult("u1", "0" * 64)) == "cancelled"
    assert await cancelled_midway(backend.arecords("u1", 1_700_000_000.0)) == "cancelled"
    assert await cancelled_midway(backend.aforget("u1")) == "cancelled"
    await client.aclose()

"""Async Redis clients across event loops (asyncio.run twice, threads)."""

from __future__ import annotations

import asyncio

from support.processors_agents import _cache_mark

from promptcache import (
    IntentionMemory,
    ResponseCache,
    make_retrieve_memory_tool,
    with_processors,
)
from promptcache.testing import ScriptedChatModel


def test_async_redis_response_cache_hits_in_a_later_event_loop(redis_url, redis_prefix):
    """``RedisCache(url=...)`` keeps one ``redis.asyncio`` client bound to the first event loop. Every
    ``asyncio.run`` after the first (a CLI, a sync web handler, a Celery task, a notebook cell, pytest's
    per-test loops) fails its reads and writes with ``RuntimeError: Event loop is closed``: logged as a backend
    failure, and the cache never hits again although Redis is up."""
    from promptcache.integrations.redis import RedisCache

    cache = RedisCache(url=redis_url, prefix=redis_prefix)
    model = ScriptedChatModel(replies=["a", "b", "c"])
    wrapped = with_processors(model, [ResponseCache(cache)])
    marks = [_cache_mark(asyncio.run(wrapped.ainvoke("hi"))) for _ in range(3)]
    cache.close()
    assert marks == ["miss", "hit", "hit"] and model.calls == 1


def test_async_redis_intention_memory_finds_in_a_later_event_loop(redis_url, redis_prefix):
    """Same for the Redis intention backend: a result stored in one ``asyncio.run`` is "Error retrieving memory"
    (``RuntimeError: Event loop is closed``, logged) for ``retrieve_memory`` in the next."""
    from promptcache.integrations.redis import RedisIntentionBackend

    intentions = IntentionMemory(RedisIntentionBackend(url=redis_url, prefix=redis_prefix))
    retrieve = make_retrieve_memory_tool(intentions)
    config = {"configurable": {"user_id": "u1"}}
    asyncio.run(intentions.astore("u1", "weather in paris", {"temp_c": 21}, tool="get_weather", args={"city": "Paris"}))
    answer = asyncio.run(retrieve.ainvoke({"intention": "weather in paris"}, config=config))
    assert "temp_c" in answer, answer

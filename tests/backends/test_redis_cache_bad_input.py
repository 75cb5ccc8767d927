"""RedisCache with bad arguments, odd clients and failing servers: clear errors before anything is written, fail-open."""

from __future__ import annotations

import asyncio
import logging

import pytest
from support.hardening import DEAD_REDIS, NAN, promptcache_warnings


def test_redis_cache_closed_port_is_a_fast_logged_miss(caplog):
    from promptcache.integrations.redis import RedisCache

    cache = RedisCache(url=DEAD_REDIS)
    with caplog.at_level(logging.WARNING):
        assert cache.get("k") is None
        cache.set("k", b"v", 5)
        cache.delete("k")
        assert cache.clear() == 0
        assert cache.get_many(["a", "b"]) == [None, None]
        assert cache.ttl("k") is None
        assert asyncio.run(cache.aget("k")) is None
        asyncio.run(cache.aset("k", b"v", 5))
    assert len(promptcache_warnings(caplog)) == 1
    assert "Connection" in promptcache_warnings(caplog)[0].getMessage()


def test_redis_cache_still_validates_input_when_redis_is_down():
    from promptcache.integrations.redis import RedisCache

    cache = RedisCache(url=DEAD_REDIS)
    with pytest.raises(ValueError, match="nan"):
        cache.set("k", b"v", NAN)
    with pytest.raises(TypeError, match="bytes"):
        cache.set("k", "text")
    with pytest.raises(ValueError, match="non-empty"):
        cache.get("")


def test_redis_cache_clear_treats_glob_characters_literally(redis_cache):
    for key in ["a*b", "axb", "a?c", "a[1]", "a\\z"]:
        redis_cache.set(key, b"1", 30)
    assert redis_cache.clear("a*") == 1
    assert redis_cache.clear("a[") == 1
    assert [redis_cache.get(k) for k in ["a*b", "axb", "a?c", "a[1]", "a\\z"]] == [None, b"1", b"1", None, b"1"]


def test_redis_cache_unicode_newline_and_long_keys_round_trip(redis_cache):
    keys = ["🙂" * 500, "a:b.c{d}*e\nf", "x" * 20_000]
    for i, key in enumerate(keys):
        redis_cache.set(key, str(i).encode(), 30)
    assert redis_cache.get_many(keys) == [b"0", b"1", b"2"]


def test_redis_cache_rejects_a_ttl_redis_cannot_store_and_keeps_working(redis_cache):
    with pytest.raises(ValueError, match=r"1e\+17"):
        redis_cache.set("huge", b"x", 1e17)
    redis_cache.set("next", b"y", 10)
    assert redis_cache.get("next") == b"y"


def test_redis_cache_wrongtype_key_is_a_miss_for_that_key_only(redis_cache, redis_client, redis_prefix):
    redis_cache.set("healthy", b"ok", 30)
    redis_client.rpush(redis_cache.full_key("listkey"), "x")  # garbage of another type under the plugin's prefix
    assert redis_cache.get("listkey") is None
    assert redis_cache.get("healthy") == b"ok"


def test_redis_cache_rejects_bad_socket_timeout_at_construction(redis_url):
    from promptcache.integrations.redis import RedisCache

    with pytest.raises((TypeError, ValueError), match="abc"):
        RedisCache(url=redis_url, socket_timeout_s="abc")


def test_redis_cache_rejects_nan_breaker(redis_url):
    from promptcache.integrations.redis import RedisCache

    with pytest.raises(ValueError, match="nan"):
        RedisCache(url=redis_url, breaker_s=NAN)


def test_redis_cache_rejects_non_string_url():
    from promptcache.integrations.redis import RedisCache

    with pytest.raises(TypeError, match="url"):
        RedisCache(url=123)

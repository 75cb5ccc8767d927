"""``RedisIntentionBackend``'s constructor checks every argument, naming the bad value, before connecting."""

from __future__ import annotations

import pytest
import redis

from promptcache.integrations._redis_intention import RedisIntentionBackend

URL = "redis://127.0.0.1:6379/0"  # never connected to: every case fails before a connection is made


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"record_cache_users": -1}, ValueError, "record_cache_users must be an int >= 0, got -1"),
        ({"record_cache_users": True}, TypeError, "record_cache_users must be an int >= 0, got bool: True"),
        ({"record_cache_users": 2.5}, TypeError, "record_cache_users must be an int >= 0, got float: 2.5"),
        ({"record_cache_users": "10"}, TypeError, "record_cache_users must be an int >= 0, got str: '10'"),
        ({"max_memories_per_user": True}, ValueError, "max_memories_per_user must be an int >= 1, got True"),
        ({"prefix": ""}, ValueError, "prefix must be a non-empty string"),
        ({"prefix": "app:\ud800:"}, ValueError, "prefix must be valid Unicode text"),
        ({"prefix": b"app:"}, TypeError, "prefix must be a str, got b'app:'"),
        ({"client": redis.Redis()}, TypeError, "give either url or client/async_client, not both"),
    ],
)
def test_bad_argument_is_named(kwargs, error, message):
    with pytest.raises(error, match=message.replace("(", r"\(").replace(")", r"\)")):
        RedisIntentionBackend(url=URL, **kwargs)


@pytest.mark.parametrize(("given", "name"), [("redis://x", "str"), (redis.Redis(), "Redis")])
def test_async_client_of_the_wrong_kind_is_refused(given, name):
    expected = rf"async_client must be a redis.asyncio client \(redis.asyncio.Redis or RedisCluster\), got {name}$"
    with pytest.raises(TypeError, match=expected):
        RedisIntentionBackend(redis.Redis(), async_client=given)


def test_good_arguments_are_kept(redis_url, redis_prefix):
    backend = RedisIntentionBackend(url=redis_url, prefix=redis_prefix, record_cache_users=0, max_memories_per_user=3)
    assert (backend.prefix, backend.max_memories_per_user) == (redis_prefix, 3)
    backend.close()

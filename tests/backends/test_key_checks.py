"""Both ``ServerCache`` backends (in-memory and Redis) refuse the same bad keys with the same error, on every
method, before anything is read or written."""

from __future__ import annotations

import pytest

BAD_KEYS = [
    ("", ValueError, "cache key must be a non-empty string, got ''"),
    ("a\ud800b", ValueError, "cache key must be valid Unicode text (it holds a lone surrogate), got 'a\\ud800b'"),
    (b"k", TypeError, "cache key must be a str, got bytes: b'k'"),
    (5, TypeError, "cache key must be a str, got int: 5"),
]


def _calls(cache, key):
    return {
        "get": lambda: cache.get(key),
        "set": lambda: cache.set(key, b"v", 60),
        "delete": lambda: cache.delete(key),
        "ttl": lambda: cache.ttl(key),
        "get_many": lambda: cache.get_many(["ok", key]),
    }


def _acalls(cache, key):
    return {
        "aget": lambda: cache.aget(key),
        "aset": lambda: cache.aset(key, b"v", 60),
        "adelete": lambda: cache.adelete(key),
        "aget_many": lambda: cache.aget_many(["ok", key]),
    }


@pytest.mark.parametrize(("key", "error", "message"), BAD_KEYS)
def test_bad_key_is_refused_alike(server_cache, key, error, message):
    server_cache.set("ok", b"v", 60)
    for name, call in _calls(server_cache, key).items():
        with pytest.raises(error) as info:
            call()
        assert str(info.value) == message, name
    assert server_cache.get("ok") == b"v"


@pytest.mark.parametrize(("key", "error", "message"), BAD_KEYS)
async def test_bad_key_is_refused_alike_async(server_cache, key, error, message):
    for name, call in _acalls(server_cache, key).items():
        with pytest.raises(error) as info:
            await call()
        assert str(info.value) == message, name


@pytest.mark.parametrize(
    ("prefix", "error", "message"),
    [
        ("a\ud800", ValueError, "clear prefix must be valid Unicode text (it holds a lone surrogate), got 'a\\ud800'"),
        (5, TypeError, "clear prefix must be a str, got int: 5"),
    ],
)
def test_bad_clear_prefix_is_refused_alike(server_cache, prefix, error, message):
    server_cache.set("ok", b"v", 60)
    with pytest.raises(error) as info:
        server_cache.clear(prefix)
    assert str(info.value) == message
    assert server_cache.get("ok") == b"v"


def test_good_non_ascii_key_works_alike(server_cache):
    server_cache.set("clé-東京", b"v", 60)
    assert server_cache.get("clé-東京") == b"v"
    assert server_cache.get_many(["clé-東京", "nope"]) == [b"v", None]
    assert server_cache.clear("clé") == 1

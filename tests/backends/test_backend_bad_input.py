"""ServerCache backends (in-memory and Redis) attacked with bad input and failing servers: clear errors, fail-open."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest
from support.hardening import INF, NAN

from promptcache.backends import InMemoryServerCache


@pytest.mark.parametrize(
    "ttl, exc",
    [(NAN, ValueError), (INF, ValueError), (-1, ValueError), (0, ValueError), (True, TypeError), ("300", TypeError)],
)
def test_memory_cache_rejects_bad_ttl_before_writing(ttl, exc):
    cache = InMemoryServerCache()
    with pytest.raises(exc, match=repr(ttl).replace("(", r"\(").replace(")", r"\)")):
        cache.set("k", b"v", ttl)
    assert cache.get("k") is None and len(cache) == 0


@pytest.mark.parametrize(
    "bad, exc", [(0, ValueError), (-1, ValueError), (1.5, TypeError), (True, TypeError), (None, TypeError)]
)
def test_memory_cache_rejects_bad_max_entries(bad, exc):
    with pytest.raises(exc, match="max_entries"):
        InMemoryServerCache(max_entries=bad)


@pytest.mark.parametrize("value", ["text", 42, None])
def test_memory_cache_rejects_non_bytes_values(value):
    cache = InMemoryServerCache()
    with pytest.raises(TypeError, match="bytes"):
        cache.set("k", value)
    assert len(cache) == 0


def test_memory_cache_unicode_and_huge_keys_round_trip():
    cache = InMemoryServerCache()
    keys = ["🙂" * 1000, "a:b.c{d}*e\nf", "x" * 100_000, "[glob]?*"]
    for i, key in enumerate(keys):
        cache.set(key, str(i).encode(), 10)
    assert [cache.get(k) for k in keys] == [b"0", b"1", b"2", b"3"]
    assert cache.clear("[glob]") == 1 and cache.get("[glob]?*") is None


def test_memory_cache_8_threads_x_200_ops_stay_consistent():
    cache = InMemoryServerCache(max_entries=50)
    errors: list[BaseException] = []

    def worker(t: int) -> None:
        try:
            for i in range(200):
                key = f"k{(t * 7 + i) % 80}"
                cache.set(key, key.encode(), 0.0005 if i % 5 == 0 else None)
                assert cache.get(key) in (None, key.encode())
                assert cache.get_many([key, "k1"])[0] in (None, key.encode())
                cache.ttl(key)
                if i % 50 == 0:
                    cache.clear("k1")
                cache.delete(f"k{i % 80}")
        except BaseException as exc:  # noqa: BLE001 - collected and asserted below
            errors.append(exc)

    with ThreadPoolExecutor(8) as pool:
        list(pool.map(worker, range(8)))
    assert errors == []
    assert len(cache) <= 50


def test_memory_cache_get_rejects_non_string_key_like_redis():
    with pytest.raises(TypeError, match="123"):
        InMemoryServerCache().get(123)


@pytest.mark.parametrize(("ttl_s", "shown"), [(10**12, "1000000000000"), (10**400, "an integer of 1329 bits")])
def test_an_integer_ttl_too_large_for_a_float_is_a_value_error(ttl_s: int, shown: str) -> None:
    from promptcache import InMemoryServerCache, ResponseCache

    with pytest.raises(ValueError) as info:
        ResponseCache(InMemoryServerCache(), ttl_s=ttl_s)
    assert str(info.value) == f"ttl_s must be at most 315360000 seconds (10 years), got {shown}"

"""InMemoryServerCache keeps least-recently-used order on reads and writes, drops expired entries when read, and
keeps its bound under concurrent readers and writers."""

from __future__ import annotations

import threading

import pytest

from promptcache.backends import InMemoryServerCache, _memory


def test_a_read_makes_an_entry_recent() -> None:
    cache = InMemoryServerCache(max_entries=2)
    cache.set("a", b"1", 60.0)
    cache.set("b", b"2", 60.0)
    assert cache.get("a") == b"1"  # "b" is now the least recently used
    cache.set("c", b"3", 60.0)
    assert [cache.get(k) for k in ("a", "b", "c")] == [b"1", None, b"3"]


def test_overwriting_makes_an_entry_recent_and_keeps_one_copy() -> None:
    cache = InMemoryServerCache(max_entries=2)
    cache.set("a", b"1")
    cache.set("b", b"2")
    cache.set("a", b"1b")
    cache.set("c", b"3")
    assert [cache.get(k) for k in ("a", "b", "c")] == [b"1b", None, b"3"]
    assert len(cache) == 2


def test_an_expired_entry_reads_as_missing_and_is_dropped(monkeypatch: pytest.MonkeyPatch) -> None:
    clock = [1000.0]
    monkeypatch.setattr(_memory, "_monotonic", lambda: clock[0])
    cache = InMemoryServerCache(max_entries=4)
    cache.set("short", b"s", 5.0)
    cache.set("forever", b"f")
    clock[0] = 1004.5
    assert cache.get("short") == b"s"
    assert cache.ttl("short") == pytest.approx(0.5)
    clock[0] = 1005.0
    assert cache.get("short") is None
    assert "short" not in cache._data
    assert cache.get("forever") == b"f"
    assert cache.ttl("forever") is None


def test_get_many_reads_in_order() -> None:
    cache = InMemoryServerCache()
    cache.set("a", b"1")
    assert cache.get_many(["a", "missing", "a"]) == [b"1", None, b"1"]


def test_concurrent_readers_and_writers_keep_the_bound() -> None:
    cache = InMemoryServerCache(max_entries=50)
    errors: list[BaseException] = []

    def work(seed: int) -> None:
        try:
            for i in range(3000):
                key = f"k{(i * 7 + seed) % 120}"
                if i % 3:
                    value = cache.get(key)
                    assert value is None or value == key.encode()
                elif i % 11 == 0:
                    cache.delete(key)
                else:
                    cache.set(key, key.encode(), 60.0)
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(seed,)) for seed in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert len(cache) <= 50
    assert len(cache._data) == len(cache)

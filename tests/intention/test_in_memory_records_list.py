"""The in-memory backend hands a lookup the same list of a user's records while nothing changed (no copy per
lookup), and a new, correct one after a store, a replacement or an expiry; `records` still returns a copy."""

from __future__ import annotations

from promptcache.intention._memory_backend import InMemoryIntentionBackend
from promptcache.intention._record import MemoryRecord


def _record(mid: str, created: float, expires: float) -> MemoryRecord:
    return MemoryRecord(mid, "read the file", "read the file", "Read", {"p": mid}, "h" + mid, created, expires, "x")


def test_the_list_is_shared_while_the_version_is_unchanged() -> None:
    backend = InMemoryIntentionBackend()
    backend.put("u", _record("a", 0.0, 10.0), b"one", 0.0)
    first, version = backend.records_versioned("u", 1.0)
    again, same = backend.records_versioned("u", 2.0)
    assert again is first and same == version
    assert [r.id for r in first] == ["a"]


def test_a_store_a_replacement_and_an_expiry_each_give_a_new_list() -> None:
    backend = InMemoryIntentionBackend()
    backend.put("u", _record("a", 0.0, 10.0), b"one", 0.0)
    first, v1 = backend.records_versioned("u", 1.0)
    backend.put("u", _record("b", 1.0, 20.0), b"two", 1.0)
    second, v2 = backend.records_versioned("u", 2.0)
    assert v2 != v1 and [r.id for r in first] == ["a"] and [r.id for r in second] == ["a", "b"]
    backend.put("u", _record("a", 3.0, 30.0), b"one", 3.0)
    third, v3 = backend.records_versioned("u", 4.0)
    assert v3 != v2 and [(r.id, r.created_at) for r in third] == [("b", 1.0), ("a", 3.0)]
    fourth, v4 = backend.records_versioned("u", 25.0)
    assert v4 != v3 and [r.id for r in fourth] == ["a"]


def test_records_is_still_a_copy() -> None:
    backend = InMemoryIntentionBackend()
    backend.put("u", _record("a", 0.0, 10.0), b"one", 0.0)
    listed = backend.records("u", 1.0)
    listed.clear()
    assert [r.id for r in backend.records_versioned("u", 1.0)[0]] == ["a"]
    assert [r.id for r in backend.records("u", 1.0)] == ["a"]

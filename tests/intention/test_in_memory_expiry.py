"""The in-memory intention backend drops exactly the expired memories and results, also after a memory was stored
again with a later expiry or a result was shared by a memory that expires later."""

from __future__ import annotations

from promptcache.intention._memory_backend import InMemoryIntentionBackend
from promptcache.intention._record import MemoryRecord


def _record(mid: str, result_hash: str, created: float, expires: float) -> MemoryRecord:
    return MemoryRecord(mid, "read the file", "read the file", "Read", {"p": mid}, result_hash, created, expires, "x")


def test_a_memory_stored_again_with_a_later_expiry_outlives_its_first_expiry() -> None:
    backend = InMemoryIntentionBackend()
    backend.put("u", _record("a", "h1", 0.0, 10.0), b"one", 0.0)
    backend.put("u", _record("b", "h2", 1.0, 11.0), b"two", 1.0)
    backend.put("u", _record("a", "h1", 5.0, 30.0), b"one", 5.0)  # the same memory again: expires at 30 now
    assert sorted(r.id for r in backend.records("u", 10.5)) == ["a", "b"]
    assert [r.id for r in backend.records("u", 11.0)] == ["a"]
    assert backend.result("u", "h1") == b"one"
    assert backend.result("u", "h2") is None
    assert backend.records("u", 30.0) == []
    assert backend.result("u", "h1") is None


def test_a_result_shared_by_a_later_memory_lives_until_that_memory_expires() -> None:
    backend = InMemoryIntentionBackend()
    backend.put("u", _record("a", "h", 0.0, 10.0), b"same", 0.0)
    backend.put("u", _record("b", "h", 2.0, 20.0), b"same", 2.0)
    assert [r.id for r in backend.records("u", 15.0)] == ["b"]
    assert backend.result("u", "h") == b"same"
    assert backend.records("u", 20.0) == []
    assert backend.result("u", "h") is None

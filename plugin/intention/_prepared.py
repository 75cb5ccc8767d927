"""The similarity's prepared form of a user's candidates (`Similarity.prepare`), cached per set of memories."""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence

from cachetools import LRUCache

from promptcache.intention._record import MemoryRecord
from promptcache.intention._similarity import Similarity

__all__ = ["PreparedCache"]


class PreparedCache:
    """The similarity's prepared form of a user's candidates, reused until the memories change (a replaced memory
    keeps its id but gets a new creation time); thread-safe, the 64 most recent sets."""

    def __init__(self) -> None:
        self._cache: LRUCache[tuple[tuple[str, float], ...], object] = LRUCache(maxsize=64)
        self._lock = threading.Lock()

    def get(
        self, similarity: Similarity, records: list[MemoryRecord], candidates: Callable[[], Sequence[object]]
    ) -> object:
        """``similarity.prepare(candidates())`` for ``records`` (cached)."""
        key = tuple((r.id, r.created_at) for r in records)
        with self._lock:
            hit = self._cache.get(key)
        if hit is None:
            hit = similarity.prepare(candidates())
            with self._lock:
                self._cache[key] = hit
        return hit

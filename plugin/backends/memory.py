"""``InMemoryServerCache``: the embedded default backend (bounded LRU with per-entry TTL, thread-safe)."""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Sequence

from cachetools import TLRUCache

from promptcache.backends.base import ServerCache, validate_key, validate_ttl, validate_value

__all__ = ["InMemoryServerCache"]


def _expires(_key: str, item: tuple[bytes, float], _now: float) -> float:
    return item[1]  # the absolute monotonic expiry computed by ``set`` (inf: never)


class InMemoryServerCache(ServerCache):
    """A process-local cache: at most ``max_entries`` entries, least recently used evicted first.

    Built on ``cachetools.TLRUCache`` (per-item time-to-use) with ``time.monotonic`` as the clock and a lock, so
    it is safe across threads. Values are ``bytes`` (immutable), so what a caller reads can never change the entry.

    Args:
        max_entries: the bound (an ``int`` >= 1; default 1000).

    Raises:
        TypeError / ValueError: ``max_entries`` not a positive ``int``.
    """

    def __init__(self, max_entries: int = 1000) -> None:
        if isinstance(max_entries, bool) or not isinstance(max_entries, int):
            raise TypeError(f"max_entries must be an int, got {type(max_entries).__name__}: {max_entries!r}")
        if max_entries < 1:
            raise ValueError(f"max_entries must be >= 1, got {max_entries!r}")
        self.max_entries = max_entries
        self._data: TLRUCache[str, tuple[bytes, float]] = TLRUCache(
            maxsize=max_entries, ttu=_expires, timer=time.monotonic
        )
        self._lock = threading.Lock()

    def __len__(self) -> int:
        with self._lock:
            self._data.expire()
            return len(self._data)

    def get(self, key: str) -> bytes | None:
        with self._lock:
            item = self._data.get(key)
        return None if item is None else item[0]

    def get_many(self, keys: Sequence[str]) -> list[bytes | None]:
        with self._lock:
            items = [self._data.get(k) for k in keys]
        return [None if item is None else item[0] for item in items]

    def set(self, key: str, value: bytes, ttl_s: float | None = None) -> None:
        key, value, ttl_s = validate_key(key), validate_value(value), validate_ttl(ttl_s)
        expires = math.inf if ttl_s is None else time.monotonic() + ttl_s
        with self._lock:
            self._data[key] = (value, expires)

    def delete(self, key: str) -> None:
        with self._lock:
            self._data.pop(key, None)

    def clear(self, prefix: str = "") -> int:
        with self._lock:
            self._data.expire()
            doomed = [k for k in self._data if k.startswith(prefix)]
            for k in doomed:
                del self._data[k]
        return len(doomed)

    def ttl(self, key: str) -> float | None:
        with self._lock:
            item = self._data.get(key)
        if item is None or item[1] == math.inf:
            return None
        return max(0.0, item[1] - time.monotonic())

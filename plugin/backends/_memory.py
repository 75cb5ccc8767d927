"""``InMemoryServerCache``: the embedded default backend (bounded LRU with per-entry TTL, thread-safe)."""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Sequence

from cachetools import LRUCache

from promptcache._option_checks import check_key_list
from promptcache.backends._base import (
    MAX_TTL_S,
    ServerCache,
    validate_clear_prefix,
    validate_key,
    validate_ttl,
    validate_value,
)

__all__ = ["InMemoryServerCache"]

_monotonic = time.monotonic


class InMemoryServerCache(ServerCache):
    """A process-local cache: at most ``max_entries`` entries, least recently used evicted first.

    Built on ``cachetools.LRUCache`` holding ``(value, expires_at)`` pairs (``time.monotonic`` seconds; ``inf``
    for no expiry) and a lock, so it is safe across threads. An expired entry reads as missing and is dropped when
    seen; ``len()``/``clear()`` purge all expired entries first. Values are ``bytes`` (immutable), so what a caller
    reads can never change the entry. (The expiry is checked by hand rather than with ``TLRUCache``: its
    per-access expiry sweep made ``get`` about 5x slower than a dict lookup plus a copy; see bench/README.md.)

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
        self._data: LRUCache[str, tuple[bytes, float]] = LRUCache(maxsize=max_entries)
        self._lock = threading.Lock()

    def _purge(self) -> None:
        now = _monotonic()
        for k in [k for k, (_, exp) in self._data.items() if exp <= now]:
            del self._data[k]

    def __len__(self) -> int:
        with self._lock:
            self._purge()
            return len(self._data)

    def _get(self, key: str, now: float) -> bytes | None:
        item = self._data.get(key)  # LRUCache.get marks the entry as recently used
        if item is None:
            return None
        if item[1] <= now:
            del self._data[key]
            return None
        return item[0]

    def get(self, key: str) -> bytes | None:
        if type(key) is not str or not key or not key.isascii():  # the usual key (ASCII) skips the call
            validate_key(key)
        now = _monotonic()
        with self._lock:
            return self._get(key, now)

    def get_many(self, keys: Sequence[str]) -> list[bytes | None]:
        for k in check_key_list(keys):
            if type(k) is not str or not k or not k.isascii():
                validate_key(k)
        now = _monotonic()
        with self._lock:
            return [self._get(k, now) for k in keys]

    def set(self, key: str, value: bytes, ttl_s: float | None = None) -> None:
        # The usual call (a non-empty str, bytes, a finite float > 0) skips the three validator calls; anything
        # else goes through them, with their errors and conversions.
        if not (
            type(key) is str
            and key
            and key.isascii()
            and type(value) is bytes
            and type(ttl_s) is float
            and 0 < ttl_s <= MAX_TTL_S
        ):
            key, value, ttl_s = validate_key(key), validate_value(value), validate_ttl(ttl_s)
        expires = math.inf if ttl_s is None else _monotonic() + ttl_s
        with self._lock:
            self._data[key] = (value, expires)

    def delete(self, key: str) -> None:
        validate_key(key)
        with self._lock:
            self._data.pop(key, None)

    def clear(self, prefix: str = "") -> int:
        validate_clear_prefix(prefix)
        with self._lock:
            self._purge()
            doomed = [k for k in self._data if k.startswith(prefix)]
            for k in doomed:
                del self._data[k]
        return len(doomed)

    def ttl(self, key: str) -> float | None:
        validate_key(key)
        now = _monotonic()
        with self._lock:
            item = self._data.get(key)
        if item is None or item[1] <= now or item[1] == math.inf:
            return None
        return item[1] - now

"""``InMemoryServerCache``: the embedded default backend (bounded LRU with per-entry TTL, thread-safe)."""

from __future__ import annotations

import math
import threading
import time
from collections import OrderedDict
from collections.abc import Sequence

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
_INF = math.inf


class InMemoryServerCache(ServerCache):
    """A process-local cache: at most ``max_entries`` entries, least recently used evicted first.

    Entries are ``(value, expires_at)`` pairs (``time.monotonic`` seconds; ``inf`` for no expiry) in an
    ``OrderedDict`` kept in least-recently-used order. A read is two C-level calls that are atomic under the GIL
    (``get``, then ``move_to_end``) and takes no lock; writes, deletes and sweeps take one, so the bound holds
    across threads. The clock is read only for an entry that has an expiry. An expired entry reads as missing and
    is dropped when seen; ``len()``/``clear()`` purge all expired entries first. Values are ``bytes``
    (immutable), so what a caller reads can never change the entry. (Not ``cachetools.LRUCache``: its ``__getitem__`` is
    Python code and needs a lock per read; bench/README.md, "Backends", compares the two.)

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
        self._data: OrderedDict[str, tuple[bytes, float]] = OrderedDict()
        self._lock = threading.Lock()

    def _items(self) -> list[tuple[str, tuple[bytes, float]]]:
        """A copy of the entries, taken under the lock by the caller. ``list()`` copies in one C call, but an
        allocation in it can run the garbage collector, and with it a finaliser and a thread switch: a lock-free
        read's ``move_to_end`` then makes the copy raise "mutated during iteration". A read only reorders
        entries, so the copy is simply taken again."""
        while True:
            try:
                return list(self._data.items())
            except RuntimeError:
                continue

    def _purge(self) -> None:
        now = _monotonic()
        for k, (_, exp) in self._items():
            if exp <= now:
                self._data.pop(k, None)

    def __len__(self) -> int:
        with self._lock:
            self._purge()
            return len(self._data)

    def _expired(self, key: str, item: tuple[bytes, float]) -> None:
        """Drop ``key`` if it still holds the expired ``item`` (a write may have replaced it meanwhile)."""
        with self._lock:
            if self._data.get(key) is item:
                del self._data[key]

    def get(self, key: str) -> bytes | None:
        if type(key) is not str or not key or not key.isascii():  # the usual key (ASCII) skips the call
            validate_key(key)
        data = self._data
        item = data.get(key)
        if item is None:
            return None
        expires = item[1]
        if expires != _INF and expires <= _monotonic():
            self._expired(key, item)
            return None
        try:
            data.move_to_end(key)  # recently used; atomic under the GIL, like the get above
        except KeyError:  # deleted or evicted by another thread in between: the value read is still the answer
            pass
        return item[0]

    def get_many(self, keys: Sequence[str]) -> list[bytes | None]:
        for k in check_key_list(keys):
            if type(k) is not str or not k or not k.isascii():
                validate_key(k)
        return [self.get(k) for k in keys]

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
        expires = _INF if ttl_s is None else _monotonic() + ttl_s
        data = self._data
        with self._lock:
            data[key] = (value, expires)
            data.move_to_end(key)
            while len(data) > self.max_entries:
                data.popitem(last=False)

    def delete(self, key: str) -> None:
        validate_key(key)
        with self._lock:
            self._data.pop(key, None)

    def clear(self, prefix: str = "") -> int:
        validate_clear_prefix(prefix)
        with self._lock:
            self._purge()
            doomed = [k for k, _ in self._items() if k.startswith(prefix)]
            for k in doomed:
                self._data.pop(k, None)
        return len(doomed)

    def ttl(self, key: str) -> float | None:
        validate_key(key)
        now = _monotonic()
        item = self._data.get(key)
        if item is None or item[1] <= now or item[1] == _INF:
            return None
        return item[1] - now

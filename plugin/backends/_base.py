"""``ServerCache``: the byte-level key/value contract every promptcache cache uses (sync and async)."""

from __future__ import annotations

import asyncio
import math
import re
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from typing import Any, TypeVar, overload

from promptcache._config import is_unicode
from promptcache._option_checks import check_key_list

__all__ = [
    "MAX_TTL_S",
    "NamespacedServerCache",
    "ServerCache",
    "validate_clear_prefix",
    "validate_key",
    "validate_namespace",
    "validate_ttl",
    "validate_value",
]

MAX_TTL_S = 10 * 365 * 24 * 3600.0
"""Longest TTL accepted: 10 years in seconds. Longer values are almost always a unit mistake, and Redis rejects
``PX`` values past 2**63 ms (its ``SET`` reply "invalid expire time"), so they fail here, loudly, instead."""


_T = TypeVar("_T")


@overload
def validate_ttl(ttl_s: None, *, what: str = ...) -> None: ...
@overload
def validate_ttl(ttl_s: float, *, what: str = ...) -> float: ...
@overload
def validate_ttl(ttl_s: object, *, what: str = ...) -> float | None: ...
def validate_ttl(ttl_s: object, *, what: str = "ttl_s") -> float | None:
    """Check a TTL in seconds: ``None`` (no expiry) or a finite number > 0, at most `MAX_TTL_S`.

    Returns it as a float.

    Raises:
        TypeError: not a number (``bool`` counts as not a number); the message names the value.
        ValueError: zero, negative, NaN, infinite or above ``MAX_TTL_S``; the message names the value.
    """
    if ttl_s is None:
        return None
    if isinstance(ttl_s, bool) or not isinstance(ttl_s, (int, float)):
        raise TypeError(f"{what} must be a number of seconds or None, got {type(ttl_s).__name__}: {ttl_s!r}")
    if isinstance(ttl_s, int) and ttl_s > MAX_TTL_S:  # before float(): an int past 1e308 does not convert
        shown = repr(ttl_s) if ttl_s < 2**64 else f"an integer of {ttl_s.bit_length()} bits"
        raise ValueError(f"{what} must be at most {MAX_TTL_S:.0f} seconds (10 years), got {shown}")
    value = float(ttl_s)
    if math.isnan(value) or math.isinf(value) or value <= 0:
        raise ValueError(f"{what} must be a finite number of seconds > 0 (or None for no expiry), got {ttl_s!r}")
    if value > MAX_TTL_S:
        raise ValueError(f"{what} must be at most {MAX_TTL_S:.0f} seconds (10 years), got {ttl_s!r}")
    return value


def validate_key(key: object) -> str:
    """Check a cache key: a non-empty ``str`` of valid Unicode text (no lone surrogate such as ``"\ud800"``: a
    Redis key is UTF-8, so no backend may accept what another cannot store). Every backend calls it on every key
    of every method, so all refuse the same keys with the same error.

    Raises:
        TypeError: not a string. ValueError: empty, or a lone surrogate.
    """
    if not isinstance(key, str):
        raise TypeError(f"cache key must be a str, got {type(key).__name__}: {key!r}")
    if not key:
        raise ValueError("cache key must be a non-empty string, got ''")
    if not is_unicode(key):
        raise ValueError(f"cache key must be valid Unicode text (it holds a lone surrogate), got {key!r}")
    return key


def validate_clear_prefix(prefix: object) -> str:
    """Check the ``prefix`` of ``clear``: a ``str`` (``""``: everything) of valid Unicode text.

    Raises:
        TypeError: not a string. ValueError: a lone surrogate.
    """
    if not isinstance(prefix, str):
        raise TypeError(f"clear prefix must be a str, got {type(prefix).__name__}: {prefix!r}")
    if not is_unicode(prefix):
        raise ValueError(f"clear prefix must be valid Unicode text (it holds a lone surrogate), got {prefix!r}")
    return prefix


def validate_value(value: object) -> bytes:
    """Check a cache value: ``bytes`` (``bytearray``/``memoryview`` are copied to ``bytes``).

    Raises:
        TypeError: anything else (e.g. ``str``: encode it first).
    """
    if isinstance(value, bytes):
        return value
    if isinstance(value, (bytearray, memoryview)):
        return bytes(value)
    raise TypeError(f"cache value must be bytes, got {type(value).__name__}")


class ServerCache(ABC):
    """A key/value cache of bytes with per-entry TTL, shared by every promptcache plugin.

    Keys are strings, values ``bytes`` (callers serialise; a cached value can never be mutated by a caller).
    TTLs are seconds (``float``); ``None`` means no expiry. Implementations are thread-safe. Backends that talk to
    a server fail open: an unreachable server reads as a miss and a write is skipped, never an exception.

    The async twins default to the sync methods (fine for in-process backends); network backends override them.
    """

    @abstractmethod
    def get(self, key: str) -> bytes | None:
        """The value stored under ``key``, or ``None`` (missing, expired or backend unavailable)."""

    @abstractmethod
    def set(self, key: str, value: bytes, ttl_s: float | None = None) -> None:
        """Store ``value`` under ``key`` for ``ttl_s`` seconds (``None``: no expiry).

        Raises:
            TypeError / ValueError: bad key, value or TTL (checked before anything is written).
        """

    @abstractmethod
    def delete(self, key: str) -> None:
        """Remove ``key`` (no error if missing)."""

    @abstractmethod
    def clear(self, prefix: str = "") -> int:
        """Remove every key starting with ``prefix`` (all keys of this cache for ``""``); returns how many."""

    def get_many(self, keys: Sequence[str]) -> list[bytes | None]:
        """Values for ``keys`` in order (``None`` where missing). Network backends do this in one round trip.

        Raises:
            TypeError: ``keys`` is a ``str`` (not a list of keys) or not a sequence; a bad key as in `get`.
        """
        return [self.get(k) for k in check_key_list(keys)]

    def ttl(self, key: str) -> float | None:
        """Seconds left before ``key`` expires; ``None`` if it has no expiry or does not exist."""
        return None

    async def aget(self, key: str) -> bytes | None:
        """Async `get`."""
        return self.get(key)

    async def aset(self, key: str, value: bytes, ttl_s: float | None = None) -> None:
        """Async `set`."""
        self.set(key, value, ttl_s)

    async def adelete(self, key: str) -> None:
        """Async `delete`."""
        self.delete(key)

    async def aclear(self, prefix: str = "") -> int:
        """Async `clear`."""
        return self.clear(prefix)

    async def aget_many(self, keys: Sequence[str]) -> list[bytes | None]:
        """Async `get_many`."""
        return self.get_many(keys)

    def namespaced(self, namespace: str) -> ServerCache:
        """A cache on the same storage whose keys live under ``namespace`` (``"placements:"``: one segment ending
        with ``:``); its ``clear()`` removes that namespace's keys only. This default is a key-prefixing view
        (`NamespacedServerCache`); ``RedisCache`` returns a ``RedisCache``
        on the same connections whose Redis keys are ``prefix + namespace + key``.

        Raises:
            TypeError / ValueError: a bad namespace
                (`validate_namespace`).
        """
        return NamespacedServerCache(self, namespace)

    async def _to_thread(self, fn: Callable[..., _T], *args: Any) -> _T:  # pragma: no cover - helper for subclasses
        return await asyncio.to_thread(fn, *args)


# Namespaces: every component that shares a backend keeps its keys under a namespace of its own (``cache:`` for
# ``RedisCache`` entries, ``placements:`` for Bedrock placements, ``intent:`` for the intention backend), so one
# component's ``clear()`` never removes another's entries.
_NAMESPACE = re.compile(r"[A-Za-z0-9_.-]+:")


def validate_namespace(namespace: object) -> str:
    """Check a namespace name: one segment of letters, digits, ``_``, ``.`` or ``-`` ending with ``:``
    (``"placements:"``). No glob specials (``SCAN MATCH``), no hash-tag braces, no inner ``:`` (one namespace
    could otherwise reach into another's keys).

    Raises:
        TypeError: not a ``str``. ValueError: any other form; the message names the value.
    """
    if not isinstance(namespace, str):
        raise TypeError(f"namespace must be a str such as 'placements:', got {type(namespace).__name__}: {namespace!r}")
    if not _NAMESPACE.fullmatch(namespace):
        raise ValueError(
            f"namespace must be one segment of letters, digits, '_', '.', '-' ending with ':' "
            f"(e.g. 'placements:'), got {namespace!r}"
        )
    return namespace


class NamespacedServerCache(ServerCache):
    """A view of ``inner`` whose keys are ``namespace + key`` there; its ``clear()`` removes only those.

    The view shares ``inner``'s storage (and bound, for a bounded in-process cache); ``inner.clear()`` itself still
    removes every entry it holds, the view's included. Backends that can keep namespaces apart in storage
    (``RedisCache``) return their own kind of view from `ServerCache.namespaced` instead.

    Args:
        inner: the backend.
        namespace: see `validate_namespace`.
    """

    def __init__(self, inner: ServerCache, namespace: str) -> None:
        if not isinstance(inner, ServerCache):
            raise TypeError(f"inner must be a ServerCache, got {type(inner).__name__}")
        self.inner = inner
        self.namespace = validate_namespace(namespace)

    def _k(self, key: str) -> str:
        return self.namespace + validate_key(key)

    def get(self, key: str) -> bytes | None:
        return self.inner.get(self._k(key))

    def get_many(self, keys: Sequence[str]) -> list[bytes | None]:
        return self.inner.get_many([self._k(k) for k in check_key_list(keys)])

    def set(self, key: str, value: bytes, ttl_s: float | None = None) -> None:
        self.inner.set(self._k(key), value, ttl_s)

    def delete(self, key: str) -> None:
        self.inner.delete(self._k(key))

    def clear(self, prefix: str = "") -> int:
        return self.inner.clear(self.namespace + validate_clear_prefix(prefix))

    def ttl(self, key: str) -> float | None:
        return self.inner.ttl(self._k(key))

    async def aget(self, key: str) -> bytes | None:
        return await self.inner.aget(self._k(key))

    async def aget_many(self, keys: Sequence[str]) -> list[bytes | None]:
        return await self.inner.aget_many([self._k(k) for k in check_key_list(keys)])

    async def aset(self, key: str, value: bytes, ttl_s: float | None = None) -> None:
        await self.inner.aset(self._k(key), value, ttl_s)

    async def adelete(self, key: str) -> None:
        await self.inner.adelete(self._k(key))

    async def aclear(self, prefix: str = "") -> int:
        return await self.inner.aclear(self.namespace + validate_clear_prefix(prefix))

"""Namespaces in a ``ServerCache``: the check of a namespace name, and the view that keeps keys under one.

Every component of promptcache that shares a backend keeps its keys under a namespace of its own (``cache:`` for
``RedisCache`` entries, ``placements:`` for Bedrock cache-point placements; the intention backend writes
``intent:``), so one component's ``clear()`` never removes another's entries.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from promptcache._option_checks import check_key_list
from promptcache.backends._base import ServerCache, validate_clear_prefix, validate_key

__all__ = ["NamespacedServerCache", "validate_namespace"]

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
    (``RedisCache``) return their own kind of view from :meth:`ServerCache.namespaced` instead.

    Args:
        inner: the backend.
        namespace: see :func:`validate_namespace`.
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

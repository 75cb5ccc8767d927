"""How workers and threads share one store: the per-scope version item and the ``InMemoryStore`` lock.

Shared invalidation: each scope has one version item in the store (`ScopeVersions.write_token`), given a new
random value by every write or delete of a feedback, user-fact or reference memory; the load policy keeps the
version it loaded a thread's memories at and compares it (one ``get``) before reusing them, so a delete or
replacement by any worker on the same store is seen on every worker's next turn. Project state is re-read every
turn and has no version.
"""

from __future__ import annotations

import threading
import uuid
import weakref
from collections.abc import Mapping, Sequence
from contextlib import nullcontext

from langgraph.store.base import BaseStore, Item
from langgraph.store.memory import InMemoryStore

from promptcache.memory._kinds import MemoryKind
from promptcache.memory._namespaces import build_namespace

__all__ = ["VERSION_KEY", "VERSION_LABEL", "ScopeVersions", "store_lock"]

VERSION_LABEL = "_version"
"""The last namespace label of the per-scope version item (``(*prefix, scope, VERSION_LABEL)``, key
`VERSION_KEY`, value ``{"v": <32 hex digits>}``); no memory kind has this name, so no kind's scan sees it."""
VERSION_KEY = "thread_kinds"
"""The key of the version item: it versions the kinds a thread loads once (feedback, user facts, references)."""

_LOCKS: weakref.WeakKeyDictionary[BaseStore, threading.Lock] = weakref.WeakKeyDictionary()
_LOCKS_LOCK = threading.Lock()


def store_lock(store: BaseStore) -> threading.Lock | nullcontext[None]:
    """One lock per ``InMemoryStore`` object: it is a plain dict that a search iterating it while another thread
    writes breaks (``RuntimeError: dictionary changed size during iteration``). Other stores handle concurrency."""
    if not isinstance(store, InMemoryStore):
        return nullcontext()
    with _LOCKS_LOCK:
        lock = _LOCKS.get(store)
        if lock is None:
            lock = _LOCKS[store] = threading.Lock()
        return lock


class ScopeVersions:
    """The version item of each scope, for `TypedMemoryStore` (which sets ``store``, ``prefix`` and ``_lock``)."""

    store: BaseStore
    prefix: Sequence[str]
    _lock: threading.Lock | nullcontext[None]

    def _version_ns(self, scope: str | None) -> tuple[str, ...]:
        return (*build_namespace(self.prefix, scope, MemoryKind.FEEDBACK)[:-1], VERSION_LABEL)

    @staticmethod
    def _token(item: Item | None) -> str:
        value = item.value.get("v") if item is not None and isinstance(item.value, Mapping) else None
        return value if isinstance(value, str) else "none"

    def write_token(self, scope: str | None) -> str:
        """The version of ``scope``'s feedback, user-fact and reference memories, kept in the store itself (one
        small item per scope, ``(*prefix, scope, VERSION_LABEL)``): every write, replacement and delete of such a
        memory through any ``TypedMemoryStore`` on the same store (another worker, another process) gives it a new
        random value, so a worker holding a thread's memories sees the change on its next turn. Project state is
        re-read every turn anyway. One primary-key ``get``.

        Raises:
            ValueError / TypeError: a bad scope.
        """
        ns = self._version_ns(scope)
        with self._lock:
            return self._token(self.store.get(ns, VERSION_KEY, refresh_ttl=False))

    async def awrite_token(self, scope: str | None) -> str:
        """Async twin of `write_token`."""
        return self._token(await self.store.aget(self._version_ns(scope), VERSION_KEY, refresh_ttl=False))

    def _bump_args(self, ns: tuple[str, ...]) -> tuple[tuple[str, ...], str, dict[str, str]] | None:
        # A new random value, not a counter: two workers writing at once never give the same version.
        if ns[-1] == MemoryKind.PROJECT_STATE.value:
            return None
        return (*ns[:-1], VERSION_LABEL), VERSION_KEY, {"v": uuid.uuid4().hex}

    def _touch(self, ns: tuple[str, ...]) -> None:
        """Give the scope of ``ns`` a new version (after its write or delete: a reader that read the old version
        with the new data reloads once more, never the other way round)."""
        args = self._bump_args(ns)
        if args is not None:
            with self._lock:
                self.store.put(*args, index=False)

    async def _atouch(self, ns: tuple[str, ...]) -> None:
        args = self._bump_args(ns)
        if args is not None:
            await self.store.aput(*args, index=False)

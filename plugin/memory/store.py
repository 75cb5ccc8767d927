"""``TypedMemoryStore``: typed memories on any LangGraph ``BaseStore`` (sync and async).

Layout: one namespace per scope and kind, ``(*prefix, scope, kind)`` (:func:`build_namespace`), because metadata
filters are not portable across store implementations while namespace prefixes are. Values are
:meth:`TypedMemory.to_value` dicts.

Expiry: ``expires_at`` (epoch seconds) is in every value and checked on every read, on every store. Where the
store supports TTL (``BaseStore.supports_ttl``, e.g. ``PostgresStore``) the item also gets the store's TTL
(``ttl`` in *minutes*, LangGraph's unit) so the store's sweeper deletes it, and project state is read with
``refresh_ttl=False`` -- otherwise every read would push the store's expiry further out. ``InMemoryStore`` has no
TTL; the ``expires_at`` check alone keeps expired memories out, and :meth:`TypedMemoryStore.forget_expired` deletes
them.

Store errors propagate (this is a data store, not a cache: silently dropping a "never do X" rule is worse than an
error). A stored value that is not a typed memory is skipped and logged (throttled).
"""

from __future__ import annotations

import re
import threading
import time
import uuid
import weakref
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from langgraph.store.base import BaseStore, Item
from langgraph.store.memory import InMemoryStore

from promptcache._log import ThrottledWarning, get_logger
from promptcache.memory.kinds import DEFAULT_PROJECT_STATE_TTL_S, MemoryKind, parse_kind
from promptcache.memory.namespaces import DEFAULT_PREFIX, build_namespace, validate_prefix
from promptcache.memory.records import (
    TypedMemory,
    check_metadata,
    content_hash,
    memory_key,
    normalise_text,
    validate_content,
    validate_subject,
    validate_ttl_s,
)

__all__ = ["TypedMemoryStore"]

_log = get_logger("promptcache.memory")
_bad_value = ThrottledWarning(_log)
_WORD = re.compile(r"\w+", re.UNICODE)
_PAGE = 100
_SHARED: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_SHARED_LOCK = threading.Lock()


def _words(text: str) -> set[str]:
    return set(_WORD.findall(normalise_text(text)))


def _lexical_rank(memories: list[TypedMemory], query: str) -> list[TypedMemory]:
    """Memories sharing at least one word with ``query``, most shared words first (ties: older first, then id)."""
    q = _words(query)
    scored = [(len(q & _words(m.content + " " + (m.subject or ""))), m) for m in memories]
    scored = [(s, m) for s, m in scored if s > 0]
    scored.sort(key=lambda sm: (-sm[0], sm[1].created_at, sm[1].id))
    return [m for _, m in scored]


def _order(memories: Iterable[TypedMemory]) -> list[TypedMemory]:
    """The stable order used everywhere (prompt caching downstream needs it): oldest first, then by id."""
    return sorted(memories, key=lambda m: (m.created_at, m.id))


class TypedMemoryStore:
    """Typed memories (user facts, feedback, project state, references) on a LangGraph ``BaseStore``.

    Args:
        store: any ``BaseStore`` (default: a new ``InMemoryStore``); ``PostgresStore`` / ``AsyncPostgresStore``
            in production. Async methods need a store with working ``a*`` methods (all LangGraph stores have them).
        prefix: namespace labels before ``(scope, kind)``; default ``("promptcache", "memory")``.
        project_state_ttl_s: default freshness window of project state in seconds (default 3600 = 60 min).
        clock: returns "now" in epoch seconds (default ``time.time``; inject one for simulations).

    Raises:
        TypeError / ValueError: bad ``prefix`` or ``project_state_ttl_s``.
    """

    def __init__(
        self,
        store: BaseStore | None = None,
        *,
        prefix: Sequence[str] = DEFAULT_PREFIX,
        project_state_ttl_s: float = DEFAULT_PROJECT_STATE_TTL_S,
        clock: Callable[[], float] = time.time,
    ) -> None:
        if store is not None and not isinstance(store, BaseStore):
            raise TypeError(f"store must be a langgraph BaseStore, got {type(store).__name__}")
        self.store: BaseStore = store if store is not None else InMemoryStore()
        self.prefix = validate_prefix(prefix)
        ttl = validate_ttl_s(project_state_ttl_s, what="project_state_ttl_s")
        if ttl is None:
            raise ValueError("project_state_ttl_s must be a number of seconds > 0 (project state must expire)")
        self.project_state_ttl_s = ttl
        self.clock = clock
        self._instance = uuid.uuid4().hex[:12]
        self._writes: Counter[str] = Counter()
        self._writes_lock = threading.Lock()

    @classmethod
    def for_store(cls, store: BaseStore) -> TypedMemoryStore:
        """The shared default-configured ``TypedMemoryStore`` of ``store`` (one per store object, kept while the
        store lives), so the node, the middleware and the ``remember`` tool built on the same ``BaseStore`` share
        one :meth:`write_token`.

        Raises:
            TypeError: ``store`` is not a ``BaseStore``.
        """
        if not isinstance(store, BaseStore):
            raise TypeError(f"store must be a langgraph BaseStore, got {type(store).__name__}")
        with _SHARED_LOCK:
            shared = _SHARED.get(store)
            if shared is None:
                shared = _SHARED[store] = cls(store)
            return shared

    @classmethod
    def coerce(cls, memory: Any) -> TypedMemoryStore | None:
        """``memory`` as a ``TypedMemoryStore``: one is kept, a ``BaseStore`` gets its shared one
        (:meth:`for_store`), ``None`` stays ``None`` (the graph's own store is used per call).

        Raises:
            TypeError: anything else (the message names the type).
        """
        if isinstance(memory, BaseStore):
            return cls.for_store(memory)
        if memory is not None and not isinstance(memory, TypedMemoryStore):
            raise TypeError(f"memory must be a TypedMemoryStore, a BaseStore or None, got {type(memory).__name__}")
        return memory

    def write_token(self, scope: str | None) -> str:
        """A token that changes whenever this object writes or deletes a feedback, user-fact or reference memory of
        ``scope`` (project state is re-read every turn anyway). It is unique to this object, so a token from
        another process or object never matches: the load policy then reloads, which is always safe.

        Raises:
            ValueError / TypeError: a bad scope.
        """
        label = build_namespace(self.prefix, scope, MemoryKind.FEEDBACK)[-2]
        return f"{self._instance}:{self._writes[label]}"

    def _touch(self, ns: tuple[str, ...]) -> None:
        if ns[-1] != MemoryKind.PROJECT_STATE.value:
            with self._writes_lock:
                self._writes[ns[-2]] += 1

    # -- pure helpers ----------------------------------------------------------------------------------------------
    def namespace(self, scope: str | None, kind: MemoryKind | str) -> tuple[str, ...]:
        """The namespace of ``(scope, kind)``: ``(*prefix, scope, kind)``; see :func:`build_namespace`."""
        return build_namespace(self.prefix, scope, kind)

    def _refresh(self, kind: MemoryKind) -> bool | None:
        # Project state: never let a read extend the store's TTL. Other kinds: the store's own setting.
        return False if kind is MemoryKind.PROJECT_STATE else None

    def _build(
        self, scope: Any, kind: Any, content: Any, subject: Any, ttl_s: Any, metadata: Any
    ) -> tuple[tuple[str, ...], TypedMemory]:
        """Validate every argument and build the record (nothing is written here)."""
        kind = parse_kind(kind)
        ns = self.namespace(scope, kind)
        content = validate_content(content)
        subject = validate_subject(subject)
        ttl = validate_ttl_s(ttl_s)
        meta = check_metadata(metadata)
        if ttl is None and kind is MemoryKind.PROJECT_STATE:
            ttl = self.project_state_ttl_s
        now = float(self.clock())
        record = TypedMemory(
            id=memory_key(content, subject), kind=kind, content=content, subject=subject, created_at=now,
            expires_at=None if ttl is None else now + ttl, metadata=meta,
        )
        return ns, record

    def _plan_write(self, record: TypedMemory, existing: list[Item]) -> tuple[TypedMemory, list[str]]:
        """Apply the duplicate rule to ``existing`` items of the namespace.

        Returns the record to write (an unsubjected duplicate of a subjected memory keeps that memory's key and
        subject) and the keys to delete (other items holding the same normalised content).
        """
        digest = content_hash(record.content)
        same = [it for it in existing if isinstance(it.value, Mapping) and it.value.get("content_hash") == digest]
        if record.subject is None:
            for it in same:
                if it.key != record.id and it.value.get("subject"):
                    record = TypedMemory(
                        id=it.key, kind=record.kind, content=record.content, subject=it.value["subject"],
                        created_at=record.created_at, expires_at=record.expires_at, metadata=record.metadata,
                    )
                    break
        return record, [it.key for it in same if it.key != record.id]

    def _put_kwargs(self, record: TypedMemory) -> dict[str, Any]:
        if record.expires_at is not None and getattr(self.store, "supports_ttl", False):
            return {"ttl": max(record.expires_at - record.created_at, 0.001) / 60.0}  # LangGraph TTL is minutes
        return {}

    @staticmethod
    def _records(items: Iterable[Item | None]) -> list[tuple[Item, TypedMemory]]:
        """``(item, memory)`` for every item holding a typed memory; the others are skipped and logged (throttled)."""
        out = []
        for it in items:
            if it is None:
                continue
            try:
                out.append((it, TypedMemory.from_value(it.value, it.key)))
            except (KeyError, TypeError, ValueError) as exc:
                _bad_value.warn("skipping a stored value that is not a typed memory at %s/%s", it.namespace, it.key,
                                exc=exc)
        return out

    def _parse(self, items: Iterable[Item | None], now: float) -> list[TypedMemory]:
        return [memory for _, memory in self._records(items) if not memory.is_expired(now)]

    def _search_args(self, scope: Any, kind: Any, query: Any, limit: Any) -> tuple[MemoryKind, tuple[str, ...]]:
        kind = parse_kind(kind)
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
            raise ValueError(f"limit must be an int >= 1, got {limit!r}")
        if query is not None and not isinstance(query, str):
            raise TypeError(f"query must be a string or None, got {type(query).__name__}: {query!r}")
        return kind, self.namespace(scope, kind)

    # -- sync ------------------------------------------------------------------------------------------------------
    def _scan(self, ns: tuple[str, ...], kind: MemoryKind) -> list[Item]:
        items: list[Item] = []
        while True:
            page = self.store.search(ns, limit=_PAGE, offset=len(items), refresh_ttl=self._refresh(kind))
            items.extend(it for it in page if it.namespace == ns)
            if len(page) < _PAGE:
                return items

    def put(
        self,
        scope: str | None,
        kind: MemoryKind | str,
        content: str,
        *,
        subject: str | None = None,
        ttl_s: float | None = None,
        metadata: Mapping[str, Any] | None = None,
    ) -> TypedMemory:
        """Write a memory for ``scope`` and return it as stored.

        Args:
            scope: the user/tenant (``None``: unscoped/shared memories).
            kind: a :class:`MemoryKind` or its string.
            content: the memory text (for a reference: the pointer, e.g. URL or document id).
            subject: optional; replaces the earlier memory of this scope and kind with the same subject.
            ttl_s: lifetime in seconds; default: ``project_state_ttl_s`` for project state, no expiry otherwise.
            metadata: JSON-serialisable extras (``description`` is a reference's pointer text).

        Raises:
            ValueError: unknown kind, empty content/subject, ``ttl_s <= 0`` or over ``MAX_TTL_S`` (100 years), a
                NUL character in content/subject/scope/metadata, NaN/inf in metadata, empty scope or one containing
                ``"."``.
            TypeError: wrong argument types. Nothing is written when an argument is bad.
        """
        ns, record = self._build(scope, kind, content, subject, ttl_s, metadata)
        record, stale = self._plan_write(record, self._scan(ns, record.kind))
        self.store.put(ns, record.id, record.to_value(), **self._put_kwargs(record))
        self._touch(ns)
        for key in stale:
            self.store.delete(ns, key)
        return record

    def get(self, scope: str | None, kind: MemoryKind | str, memory_id: str) -> TypedMemory | None:
        """The live memory ``memory_id`` of ``(scope, kind)``, or ``None`` (missing or expired)."""
        kind = parse_kind(kind)
        item = self.store.get(self.namespace(scope, kind), str(memory_id), refresh_ttl=self._refresh(kind))
        found = self._parse([item], self.clock())
        return found[0] if found else None

    def list(self, scope: str | None, kind: MemoryKind | str) -> list[TypedMemory]:
        """Every live memory of ``(scope, kind)``, oldest first (ties by id): a stable order."""
        kind = parse_kind(kind)
        return _order(self._parse(self._scan(self.namespace(scope, kind), kind), self.clock()))

    def search(
        self, scope: str | None, kind: MemoryKind | str, query: str | None = None, *, limit: int = 10
    ) -> list[TypedMemory]:
        """Live memories of ``(scope, kind)`` matching ``query`` (step one of two-step retrieval: filter by kind).

        Without ``query``: the first ``limit`` of :meth:`list`. With a query: the store's semantic search when it
        has an embedding index (``index_config``), else memories sharing words with the query, best first.

        Raises:
            ValueError: ``limit < 1``, or a bad kind/scope.  TypeError: ``query`` is neither a string nor None.
        """
        kind, ns = self._search_args(scope, kind, query, limit)
        if query is None:
            return self.list(scope, kind)[:limit]
        if getattr(self.store, "index_config", None):
            items = self.store.search(ns, query=query, limit=limit * 2 + 5, refresh_ttl=self._refresh(kind))
            return self._parse((it for it in items if it.namespace == ns), self.clock())[:limit]
        return _lexical_rank(self._parse(self._scan(ns, kind), self.clock()), query)[:limit]

    def delete(self, scope: str | None, kind: MemoryKind | str, memory_id: str) -> None:
        """Delete one memory (no error when it does not exist)."""
        ns = self.namespace(scope, kind)
        self.store.delete(ns, str(memory_id))
        self._touch(ns)

    def forget_expired(self, scope: str | None, kinds: Iterable[MemoryKind | str] | None = None) -> int:
        """Delete the expired memories of ``scope`` (all kinds by default); returns how many were deleted.

        A stored value that is not a typed memory (see :meth:`list`) is skipped and logged, not deleted.
        """
        now, deleted = self.clock(), 0
        for kind in [parse_kind(k) for k in (kinds if kinds is not None else MemoryKind)]:
            ns = self.namespace(scope, kind)
            for it, memory in self._records(self._scan(ns, kind)):
                if memory.is_expired(now):
                    self.store.delete(ns, it.key)
                    self._touch(ns)
                    deleted += 1
        return deleted

    # -- async -----------------------------------------------------------------------------------------------------
    async def _ascan(self, ns: tuple[str, ...], kind: MemoryKind) -> list[Item]:
        items: list[Item] = []
        while True:
            page = await self.store.asearch(ns, limit=_PAGE, offset=len(items), refresh_ttl=self._refresh(kind))
            items.extend(it for it in page if it.namespace == ns)
            if len(page) < _PAGE:
                return items

    async def aput(
        self,
        scope: str | None,
        kind: MemoryKind | str,
        content: str,
        *,
        subject: str | None = None,
        ttl_s: float | None = None,
        metadata: Mapping[str, Any] | None = None,
    ) -> TypedMemory:
        """Async twin of :meth:`put`."""
        ns, record = self._build(scope, kind, content, subject, ttl_s, metadata)
        record, stale = self._plan_write(record, await self._ascan(ns, record.kind))
        await self.store.aput(ns, record.id, record.to_value(), **self._put_kwargs(record))
        self._touch(ns)
        for key in stale:
            await self.store.adelete(ns, key)
        return record

    async def aget(self, scope: str | None, kind: MemoryKind | str, memory_id: str) -> TypedMemory | None:
        """Async twin of :meth:`get`."""
        kind = parse_kind(kind)
        item = await self.store.aget(self.namespace(scope, kind), str(memory_id), refresh_ttl=self._refresh(kind))
        found = self._parse([item], self.clock())
        return found[0] if found else None

    async def alist(self, scope: str | None, kind: MemoryKind | str) -> list[TypedMemory]:
        """Async twin of :meth:`list`."""
        kind = parse_kind(kind)
        return _order(self._parse(await self._ascan(self.namespace(scope, kind), kind), self.clock()))

    async def asearch(
        self, scope: str | None, kind: MemoryKind | str, query: str | None = None, *, limit: int = 10
    ) -> list[TypedMemory]:
        """Async twin of :meth:`search`."""
        kind, ns = self._search_args(scope, kind, query, limit)
        if query is None:
            return (await self.alist(scope, kind))[:limit]
        if getattr(self.store, "index_config", None):
            items = await self.store.asearch(ns, query=query, limit=limit * 2 + 5, refresh_ttl=self._refresh(kind))
            return self._parse((it for it in items if it.namespace == ns), self.clock())[:limit]
        return _lexical_rank(self._parse(await self._ascan(ns, kind), self.clock()), query)[:limit]

    async def adelete(self, scope: str | None, kind: MemoryKind | str, memory_id: str) -> None:
        """Async twin of :meth:`delete`."""
        ns = self.namespace(scope, kind)
        await self.store.adelete(ns, str(memory_id))
        self._touch(ns)

    async def aforget_expired(self, scope: str | None, kinds: Iterable[MemoryKind | str] | None = None) -> int:
        """Async twin of :meth:`forget_expired`."""
        now, deleted = self.clock(), 0
        for kind in [parse_kind(k) for k in (kinds if kinds is not None else MemoryKind)]:
            ns = self.namespace(scope, kind)
            for it, memory in self._records(await self._ascan(ns, kind)):
                if memory.is_expired(now):
                    await self.store.adelete(ns, it.key)
                    self._touch(ns)
                    deleted += 1
        return deleted

    def __repr__(self) -> str:
        return f"TypedMemoryStore({type(self.store).__name__}, prefix={self.prefix!r})"


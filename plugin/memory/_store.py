"""``TypedMemoryStore``: typed memories on any LangGraph ``BaseStore`` (sync and async).

Layout: one namespace per scope and kind, ``(*prefix, scope, kind)`` (`build_namespace`), because metadata
filters are not portable across store implementations while namespace prefixes are. Values are
`TypedMemory.to_value` dicts.

Expiry: ``expires_at`` (epoch seconds) is in every value and checked on every read, on every store. Where the
store supports TTL (``BaseStore.supports_ttl``, e.g. ``PostgresStore``) the item also gets the store's TTL
(``ttl`` in *minutes*, LangGraph's unit) so the store's sweeper deletes it, and project state is read with
``refresh_ttl=False`` -- otherwise every read would push the store's expiry further out. ``InMemoryStore`` has no
TTL; the ``expires_at`` check alone keeps expired memories out, and `TypedMemoryStore.forget_expired` deletes
them.

Shared invalidation: a per-scope version item changed by every write of a per-thread kind
(`promptcache.memory._store_sharing`; `TypedMemoryStore.write_token`).

Store errors propagate (this is a data store, not a cache: silently dropping a "never do X" rule is worse than an
error). A stored value that is not a typed memory is skipped and logged (throttled).
"""

from __future__ import annotations

import builtins  # annotations after the method `list` name the builtin through it
import threading
import time
import weakref
from collections.abc import Callable, Iterable, Sequence
from typing import TypedDict

from langgraph.store.base import BaseStore, Item
from langgraph.store.memory import InMemoryStore

from promptcache._log import ThrottledWarning, get_logger
from promptcache._option_checks import check_callable
from promptcache._types import JSONMapping
from promptcache.memory._kinds import DEFAULT_PROJECT_STATE_TTL_S, MemoryKind, parse_kind, parse_kinds
from promptcache.memory._namespaces import DEFAULT_PREFIX, build_namespace, validate_prefix
from promptcache.memory._ranking import lexical_rank, stable_order
from promptcache.memory._records import (
    TypedMemory,
    check_metadata,
    memory_key,
    validate_content,
    validate_memory_id,
    validate_subject,
    validate_ttl_s,
)
from promptcache.memory._store_sharing import ScopeVersions, store_lock
from promptcache.memory._subjects import awith_derived_subject, make_subject_extractor, superseded, with_derived_subject

__all__ = ["TypedMemoryStore"]

_log = get_logger("promptcache.memory")
_bad_value = ThrottledWarning(_log)
_PAGE = 100

_SHARED: weakref.WeakKeyDictionary[BaseStore, TypedMemoryStore] = weakref.WeakKeyDictionary()
_SHARED_LOCK = threading.Lock()


class _PutOptions(TypedDict, total=False):
    """Keyword options of ``BaseStore.put`` a write passes: ``ttl`` in minutes, when the store supports TTLs."""

    ttl: float


class TypedMemoryStore(ScopeVersions):
    """Typed memories (user facts, feedback, project state, references) on a LangGraph ``BaseStore``.

    Args:
        store: any ``BaseStore`` (default: a new ``InMemoryStore``); ``PostgresStore`` / ``AsyncPostgresStore``
            in production. Async methods need a store with working ``a*`` methods (all LangGraph stores have them).
        prefix: namespace labels before ``(scope, kind)``; default ``("promptcache", "memory")``.
        project_state_ttl_s: default freshness window of project state in seconds (default 3600 = 60 min).
        clock: returns "now" in epoch seconds (default ``time.time``; inject one for simulations).
        subject_extractor: how a user fact or project state written without a subject gets one, so that a
            restatement of the same attribute replaces it ("My favourite colour is ..."): ``True`` (default) the
            conservative rules of `derive_subject`, ``False`` none (keyed by
            content), a chat model (`ChatModelSubjectExtractor`) or a callable
            ``(content, kind) -> str | None``.

    Raises:
        TypeError / ValueError: bad ``prefix``, ``project_state_ttl_s``, ``clock`` (not callable) or
            ``subject_extractor``.
    """

    def __init__(
        self,
        store: BaseStore | None = None,
        *,
        prefix: Sequence[str] = DEFAULT_PREFIX,
        project_state_ttl_s: float = DEFAULT_PROJECT_STATE_TTL_S,
        clock: Callable[[], float] = time.time,
        subject_extractor: object = True,
    ) -> None:
        if store is not None and not isinstance(store, BaseStore):
            raise TypeError(f"store must be a langgraph BaseStore, got {type(store).__name__}")
        self.store: BaseStore = store if store is not None else InMemoryStore()
        self.prefix = validate_prefix(prefix)
        ttl = validate_ttl_s(project_state_ttl_s, what="project_state_ttl_s")
        if ttl is None:
            raise ValueError("project_state_ttl_s must be a number of seconds > 0 (project state must expire)")
        self.project_state_ttl_s = ttl
        self.clock = check_callable(clock, "clock")
        self.subject_extractor = make_subject_extractor(subject_extractor)
        self._lock = store_lock(self.store)  # sync calls on an InMemoryStore only

    @classmethod
    def for_store(cls, store: BaseStore) -> TypedMemoryStore:
        """The shared default-configured ``TypedMemoryStore`` of ``store`` (one per store object, kept while the
        store lives), so the node, the middleware and the ``remember`` tool built on the same ``BaseStore`` share
        one `write_token`.

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
    def coerce(cls, memory: object) -> TypedMemoryStore | None:
        """``memory`` as a ``TypedMemoryStore``: one is kept, a ``BaseStore`` gets its shared one
        (`for_store`), ``None`` stays ``None`` (the graph's own store is used per call).

        Raises:
            TypeError: anything else (the message names the type).
        """
        if isinstance(memory, BaseStore):
            return cls.for_store(memory)
        if memory is not None and not isinstance(memory, TypedMemoryStore):
            raise TypeError(f"memory must be a TypedMemoryStore, a BaseStore or None, got {type(memory).__name__}")
        return memory

    # -- pure helpers ----------------------------------------------------------------------------------------------
    def namespace(self, scope: str | None, kind: MemoryKind | str) -> tuple[str, ...]:
        """The namespace of ``(scope, kind)``: ``(*prefix, scope, kind)``; see `build_namespace`."""
        return build_namespace(self.prefix, scope, kind)

    def _refresh(self, kind: MemoryKind) -> bool | None:
        # Project state: never let a read extend the store's TTL. Other kinds: the store's own setting.
        return False if kind is MemoryKind.PROJECT_STATE else None

    def _build(
        self, scope: str | None, kind: object, content: object, subject: object, ttl_s: object, metadata: object
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
            id=memory_key(content, subject),
            kind=kind,
            content=content,
            subject=subject,
            created_at=now,
            expires_at=None if ttl is None else now + ttl,
            metadata=meta,
        )
        return ns, record

    def _put_kwargs(self, record: TypedMemory) -> _PutOptions:
        if record.expires_at is not None and getattr(self.store, "supports_ttl", False):
            return {"ttl": max(record.expires_at - record.created_at, 0.001) / 60.0}  # LangGraph TTL is minutes
        return {}

    @staticmethod
    def _records(items: Iterable[Item | None], kind: MemoryKind) -> list[tuple[Item, TypedMemory]]:
        """``(item, memory)`` for every item holding a typed memory of ``kind`` (the namespace's); the others are
        skipped and logged (throttled): see `TypedMemory.from_value` for what makes a value corrupt."""
        out = []
        for it in items:
            if it is None:
                continue
            try:
                out.append((it, TypedMemory.from_value(it.value, it.key, kind)))
            except (KeyError, TypeError, ValueError) as exc:
                _bad_value.warn(
                    "skipping a stored value that is not a typed memory at %s/%s", it.namespace, it.key, exc=exc
                )
        return out

    def _parse(self, items: Iterable[Item | None], kind: MemoryKind, now: float) -> list[TypedMemory]:
        return [memory for _, memory in self._records(items, kind) if not memory.is_expired(now)]

    def _search_args(
        self, scope: str | None, kind: object, query: object, limit: object
    ) -> tuple[MemoryKind, tuple[str, ...]]:
        kind = parse_kind(kind)
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
            raise ValueError(f"limit must be an int >= 1, got {limit!r}")
        if query is not None and not isinstance(query, str):
            raise TypeError(f"query must be a string or None, got {type(query).__name__}: {query!r}")
        return kind, self.namespace(scope, kind)

    # -- sync ------------------------------------------------------------------------------------------------------
    def _scan(self, ns: tuple[str, ...], kind: MemoryKind) -> list[Item]:
        """Every item of ``ns`` itself (a prefix search also returns child namespaces: skipped, but counted in the
        paging offset)."""
        items: list[Item] = []
        offset = 0
        while True:
            with self._lock:
                page = self.store.search(ns, limit=_PAGE, offset=offset, refresh_ttl=self._refresh(kind))
            offset += len(page)
            items.extend(it for it in page if tuple(it.namespace) == ns)
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
        metadata: JSONMapping | None = None,
    ) -> TypedMemory:
        """Write a memory for ``scope`` and return it as stored.

        Args:
            scope: the user/tenant (``None``: unscoped/shared memories).
            kind: a `MemoryKind` or its string.
            content: the memory text (for a reference: the pointer, e.g. URL or document id).
            subject: optional; replaces the earlier memory of this scope and kind with the same subject. Without
                one, a user fact or project state gets the subject ``subject_extractor`` derives, if any.
            ttl_s: lifetime in seconds; default: ``project_state_ttl_s`` for project state, no expiry otherwise.
            metadata: JSON-serialisable extras (``description`` is a reference's pointer text).

        Raises:
            ValueError: unknown kind, empty content/subject, ``ttl_s <= 0`` or over ``MAX_TTL_S`` (100 years), a
                NUL character in content/subject/scope/metadata, NaN/inf in metadata, empty scope or one containing
                ``"."``.
            TypeError: wrong argument types. Nothing is written when an argument is bad.
        """
        ns, record = self._build(scope, kind, content, subject, ttl_s, metadata)
        record = with_derived_subject(record, self.subject_extractor)
        record, stale = superseded(record, self._scan(ns, record.kind), self.subject_extractor)
        with self._lock:
            self.store.put(ns, record.id, record.to_value(), **self._put_kwargs(record))
            for key in stale:
                self.store.delete(ns, key)
        self._touch(ns)
        return record

    def get(self, scope: str | None, kind: MemoryKind | str, memory_id: str) -> TypedMemory | None:
        """The live memory ``memory_id`` of ``(scope, kind)``, or ``None`` (missing or expired).

        Raises:
            ValueError / TypeError: a bad kind, scope or id (NUL, lone surrogate, not a string).
        """
        kind = parse_kind(kind)
        ns, memory_id = self.namespace(scope, kind), validate_memory_id(memory_id)
        with self._lock:
            item = self.store.get(ns, memory_id, refresh_ttl=self._refresh(kind))
        found = self._parse([item], kind, self.clock())
        return found[0] if found else None

    def list(self, scope: str | None, kind: MemoryKind | str) -> list[TypedMemory]:
        """Every live memory of ``(scope, kind)``, oldest first (ties by id): a stable order."""
        kind = parse_kind(kind)
        return stable_order(self._parse(self._scan(self.namespace(scope, kind), kind), kind, self.clock()))

    def search(
        self, scope: str | None, kind: MemoryKind | str, query: str | None = None, *, limit: int = 10
    ) -> builtins.list[TypedMemory]:
        """Live memories of ``(scope, kind)`` matching ``query`` (step one of two-step retrieval: filter by kind).

        Without ``query``: the first ``limit`` of `list`. With a query: the store's semantic search when it
        has an embedding index (``index_config``), else memories sharing words with the query, best first.

        Raises:
            ValueError: ``limit < 1``, or a bad kind/scope.  TypeError: ``query`` is neither a string nor None.
        """
        kind, ns = self._search_args(scope, kind, query, limit)
        if query is None:
            return self.list(scope, kind)[:limit]
        if getattr(self.store, "index_config", None):
            with self._lock:
                items = self.store.search(ns, query=query, limit=limit * 2 + 5, refresh_ttl=self._refresh(kind))
            return self._parse((it for it in items if tuple(it.namespace) == ns), kind, self.clock())[:limit]
        return lexical_rank(self._parse(self._scan(ns, kind), kind, self.clock()), query)[:limit]

    def delete(self, scope: str | None, kind: MemoryKind | str, memory_id: str) -> None:
        """Delete one memory (no error when it does not exist). Raises like `get` for a bad kind, scope or id."""
        ns, memory_id = self.namespace(scope, kind), validate_memory_id(memory_id)
        with self._lock:
            self.store.delete(ns, memory_id)
        self._touch(ns)

    def forget_expired(self, scope: str | None, kinds: Iterable[MemoryKind | str] | None = None) -> int:
        """Delete the expired memories of ``scope`` (all kinds by default); returns how many were deleted.

        Args:
            scope: the user/tenant (``None``: unscoped).
            kinds: one kind (a `MemoryKind` or its string) or several; default all four.

        A stored value that is not a typed memory (see `list`) is skipped and logged, not deleted.
        """
        now, deleted = self.clock(), 0
        for kind in parse_kinds(kinds):
            ns = self.namespace(scope, kind)
            for it, memory in self._records(self._scan(ns, kind), kind):
                if memory.is_expired(now):
                    with self._lock:
                        self.store.delete(ns, it.key)
                    self._touch(ns)
                    deleted += 1
        return deleted

    # -- async -----------------------------------------------------------------------------------------------------
    async def _ascan(self, ns: tuple[str, ...], kind: MemoryKind) -> builtins.list[Item]:
        items: builtins.list[Item] = []
        offset = 0
        while True:
            page = await self.store.asearch(ns, limit=_PAGE, offset=offset, refresh_ttl=self._refresh(kind))
            offset += len(page)
            items.extend(it for it in page if tuple(it.namespace) == ns)
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
        metadata: JSONMapping | None = None,
    ) -> TypedMemory:
        """Async twin of `put`."""
        ns, record = self._build(scope, kind, content, subject, ttl_s, metadata)
        record = await awith_derived_subject(record, self.subject_extractor)
        record, stale = superseded(record, await self._ascan(ns, record.kind), self.subject_extractor)
        await self.store.aput(ns, record.id, record.to_value(), **self._put_kwargs(record))
        for key in stale:
            await self.store.adelete(ns, key)
        await self._atouch(ns)
        return record

    async def aget(self, scope: str | None, kind: MemoryKind | str, memory_id: str) -> TypedMemory | None:
        """Async twin of `get`."""
        kind = parse_kind(kind)
        ns, memory_id = self.namespace(scope, kind), validate_memory_id(memory_id)
        item = await self.store.aget(ns, memory_id, refresh_ttl=self._refresh(kind))
        found = self._parse([item], kind, self.clock())
        return found[0] if found else None

    async def alist(self, scope: str | None, kind: MemoryKind | str) -> builtins.list[TypedMemory]:
        """Async twin of `list`."""
        kind = parse_kind(kind)
        return stable_order(self._parse(await self._ascan(self.namespace(scope, kind), kind), kind, self.clock()))

    async def asearch(
        self, scope: str | None, kind: MemoryKind | str, query: str | None = None, *, limit: int = 10
    ) -> builtins.list[TypedMemory]:
        """Async twin of `search`."""
        kind, ns = self._search_args(scope, kind, query, limit)
        if query is None:
            return (await self.alist(scope, kind))[:limit]
        if getattr(self.store, "index_config", None):
            items = await self.store.asearch(ns, query=query, limit=limit * 2 + 5, refresh_ttl=self._refresh(kind))
            return self._parse((it for it in items if tuple(it.namespace) == ns), kind, self.clock())[:limit]
        return lexical_rank(self._parse(await self._ascan(ns, kind), kind, self.clock()), query)[:limit]

    async def adelete(self, scope: str | None, kind: MemoryKind | str, memory_id: str) -> None:
        """Async twin of `delete`."""
        ns, memory_id = self.namespace(scope, kind), validate_memory_id(memory_id)
        await self.store.adelete(ns, memory_id)
        await self._atouch(ns)

    async def aforget_expired(self, scope: str | None, kinds: Iterable[MemoryKind | str] | None = None) -> int:
        """Async twin of `forget_expired`."""
        now, deleted = self.clock(), 0
        for kind in parse_kinds(kinds):
            ns = self.namespace(scope, kind)
            for it, memory in self._records(await self._ascan(ns, kind), kind):
                if memory.is_expired(now):
                    await self.store.adelete(ns, it.key)
                    await self._atouch(ns)
                    deleted += 1
        return deleted

    def __repr__(self) -> str:
        return f"TypedMemoryStore({type(self.store).__name__}, prefix={self.prefix!r})"

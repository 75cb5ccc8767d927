"""Where intention memories live: the record format, the backend contract, and the in-memory default.

Per user, a backend keeps an index of memory ids with their expiry, one record per memory (intention, tool, args,
hash of the result, features for the similarity) and the results themselves, stored once per content hash. Expired
memories are pruned from the index whenever the user's memories are read. The Redis backend is
``promptcache.integrations._redis_intention.RedisIntentionBackend``.
"""

from __future__ import annotations

import asyncio
import math
import threading
from abc import ABC, abstractmethod
from dataclasses import asdict, dataclass, replace
from typing import Any

import orjson

from promptcache._errors import PromptCacheError

__all__ = [
    "DEFAULT_MAX_MEMORIES_PER_USER",
    "InMemoryIntentionBackend",
    "IntentionBackend",
    "IntentionBackendError",
    "MemoryRecord",
    "copy_json",
]

DEFAULT_MAX_MEMORIES_PER_USER = 1000
"""Memories kept per user before the ones closest to expiry are dropped (the issue's sizing: 1,000 per user)."""


_IMMUTABLE = (str, int, float, bool, type(None))


def copy_json(value: Any) -> Any:
    """A deep copy of a JSON value (``dict``/``list`` nesting; a tuple becomes a list); immutable leaves as is."""
    if type(value) in _IMMUTABLE:
        return value
    return orjson.loads(orjson.dumps(value))


class IntentionBackendError(PromptCacheError, RuntimeError):
    """The backend could not be reached or returned something unreadable (wraps the cause)."""


@dataclass(frozen=True)
class MemoryRecord:
    """One stored memory (without its result, which is stored once per content hash).

    Attributes:
        id: stable id of (normalised intention, tool, args): storing the same triple again replaces it.
        intention: the intention as given; ``normalized``: its exact-match form.
        tool / args: the tool call that produced the result (``None`` when not given).
        result_hash: SHA-256 (hex) of the serialised result; the key of the stored result.
        created_at / expires_at: epoch seconds.
        similarity: name of the :class:`~promptcache.intention._similarity.Similarity` that made ``features``.
        features: the stored features (``None`` for the lexical default, which works from ``intention``).
        signature: the intention's meaning digest (:func:`promptcache.intention._meaning.signature`), the key
            backends index memories by for the similar match (``""`` in records written before it existed: those
            are found by an exact match only).
    """

    id: str
    intention: str
    normalized: str
    tool: str | None
    args: Any
    result_hash: str
    created_at: float
    expires_at: float
    similarity: str
    features: Any = None
    signature: str = ""

    def dumps(self) -> bytes:
        """The record as JSON bytes."""
        return orjson.dumps(asdict(self))

    @classmethod
    def loads(cls, data: bytes | str) -> MemoryRecord:
        """Parse :meth:`dumps` output, checking every field's type (a record read from a shared store may have been
        damaged: a lookup must be able to trust what it compares).

        Raises:
            ValueError: not a record (not JSON, missing or unknown fields, or a field of the wrong type: ``id``,
                ``intention``, ``normalized``, ``result_hash``, ``similarity`` strings; ``tool`` a string or
                ``null``; ``created_at``/``expires_at`` finite numbers).
        """
        try:
            record = cls(**orjson.loads(data))
        except (orjson.JSONDecodeError, TypeError) as exc:
            raise ValueError(f"not an intention memory record: {exc}") from exc
        for name in _STR_FIELDS:
            if not isinstance(getattr(record, name), str):
                raise ValueError(f"not an intention memory record: {name} is {getattr(record, name)!r}, not a str")
        if record.tool is not None and not isinstance(record.tool, str):
            raise ValueError(f"not an intention memory record: tool is {record.tool!r}, not a str or null")
        for name in ("created_at", "expires_at"):
            value = getattr(record, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
                raise ValueError(f"not an intention memory record: {name} is {value!r}, not a number")
        return record


_STR_FIELDS = ("id", "intention", "normalized", "result_hash", "similarity", "signature")


class IntentionBackend(ABC):
    """Storage contract of :class:`~promptcache.intention.IntentionMemory` (sync + async).

    Times are epoch seconds passed in by the caller (``now``), so one clock decides expiry. Failures raise
    :class:`IntentionBackendError`; the caller decides what a failure means (a miss, a skipped write).
    """

    @abstractmethod
    def put(self, user: str, record: MemoryRecord, result: bytes, now: float) -> None:
        """Store ``record`` (replacing one with the same id) and ``result`` under ``record.result_hash``.

        The result is written once per hash; its expiry is extended to the latest memory that refers to it.
        """

    @abstractmethod
    def records(self, user: str, now: float) -> list[MemoryRecord]:
        """The user's live memories (expired ones pruned from the index first), in one round trip for the records."""

    def matching(self, user: str, signature: str, now: float) -> list[MemoryRecord]:
        """The user's live memories whose ``signature`` is ``signature`` (the candidates of an exact or similar
        match). Default: :meth:`records` filtered (every memory read); the bundled backends keep an index so a
        lookup reads only these."""
        return [r for r in self.records(user, now) if r.signature == signature]

    async def amatching(self, user: str, signature: str, now: float) -> list[MemoryRecord]:
        """Async :meth:`matching` (default: :meth:`arecords` filtered)."""
        return [r for r in await self.arecords(user, now) if r.signature == signature]

    def matching_results(
        self, user: str, signature: str, now: float
    ) -> tuple[list[MemoryRecord], dict[str, bytes | None]]:
        """:meth:`matching` plus the results it could read on the way, by result hash (default: none, ``{}``; a
        hash missing from the dict is fetched with :meth:`results`; a ``None`` value is an expired result). The
        Redis backend reads them in the same round trip."""
        return self.matching(user, signature, now), {}

    async def amatching_results(
        self, user: str, signature: str, now: float
    ) -> tuple[list[MemoryRecord], dict[str, bytes | None]]:
        """Async :meth:`matching_results`."""
        return await self.amatching(user, signature, now), {}

    @abstractmethod
    def result(self, user: str, result_hash: str) -> bytes | None:
        """The stored result for ``result_hash`` (``None`` when it expired)."""

    def results(self, user: str, result_hashes: list[str]) -> list[bytes | None]:
        """The stored results for ``result_hashes``, in order (``None`` where one expired); one round trip on a
        remote backend (default: :meth:`result` for each)."""
        return [self.result(user, h) for h in result_hashes]

    def discard_results(self, user: str, result_hashes: list[str]) -> None:
        """Drop stored results that could not be read (corrupt), so storing them again writes them afresh
        (default: nothing; a backend whose results cannot be corrupted needs nothing)."""

    @abstractmethod
    def forget(self, user: str) -> int:
        """Remove every memory and result of ``user``; returns how many memories were removed."""

    async def aput(self, user: str, record: MemoryRecord, result: bytes, now: float) -> None:
        """Async :meth:`put` (default: the sync one in a thread)."""
        await asyncio.to_thread(self.put, user, record, result, now)

    async def arecords(self, user: str, now: float) -> list[MemoryRecord]:
        """Async :meth:`records`."""
        return await asyncio.to_thread(self.records, user, now)

    async def aresult(self, user: str, result_hash: str) -> bytes | None:
        """Async :meth:`result`."""
        return await asyncio.to_thread(self.result, user, result_hash)

    async def aresults(self, user: str, result_hashes: list[str]) -> list[bytes | None]:
        """Async :meth:`results`."""
        return await asyncio.to_thread(self.results, user, result_hashes)

    async def adiscard_results(self, user: str, result_hashes: list[str]) -> None:
        """Async :meth:`discard_results`."""
        await asyncio.to_thread(self.discard_results, user, result_hashes)

    async def aforget(self, user: str) -> int:
        """Async :meth:`forget`."""
        return await asyncio.to_thread(self.forget, user)


class _UserData:
    __slots__ = ("by_signature", "next_expiry", "records", "results")

    def __init__(self) -> None:
        self.records: dict[str, MemoryRecord] = {}
        self.results: dict[str, tuple[bytes, float]] = {}
        self.by_signature: dict[str, set[str]] = {}
        self.next_expiry = math.inf  # no memory or result expires before this (epoch seconds): no prune needed

    def add(self, record: MemoryRecord) -> None:
        self.records[record.id] = record
        self.by_signature.setdefault(record.signature, set()).add(record.id)
        self.next_expiry = min(self.next_expiry, record.expires_at)

    def remove(self, memory_id: str) -> None:
        record = self.records.pop(memory_id)
        ids = self.by_signature.get(record.signature)
        if ids is not None:
            ids.discard(memory_id)
            if not ids:
                del self.by_signature[record.signature]


class InMemoryIntentionBackend(IntentionBackend):
    """The process-local default: a dict per user, thread-safe, at most ``max_memories_per_user`` each.

    When a user is over the bound, the memories closest to expiry are dropped first. :meth:`put` keeps its own copy
    of the record's ``args`` (the caller may edit its dict afterwards); :meth:`records` returns the stored records
    themselves, to be read, not edited (:class:`~promptcache.intention.IntentionMemory` hands out copies).

    Args:
        max_memories_per_user: an ``int`` >= 1 (default :data:`DEFAULT_MAX_MEMORIES_PER_USER`).

    Raises:
        ValueError: ``max_memories_per_user`` not an int >= 1.
    """

    def __init__(self, max_memories_per_user: int = DEFAULT_MAX_MEMORIES_PER_USER) -> None:
        if (
            isinstance(max_memories_per_user, bool)
            or not isinstance(max_memories_per_user, int)
            or (max_memories_per_user < 1)
        ):
            raise ValueError(f"max_memories_per_user must be an int >= 1, got {max_memories_per_user!r}")
        self.max_memories_per_user = max_memories_per_user
        self._users: dict[str, _UserData] = {}
        self._lock = threading.Lock()

    def _prune(self, data: _UserData, now: float) -> None:
        if now < data.next_expiry:
            return  # nothing has expired yet: no scan
        for mid in [m for m, r in data.records.items() if r.expires_at <= now]:
            data.remove(mid)
        for h in [h for h, (_, exp) in data.results.items() if exp <= now]:
            del data.results[h]
        data.next_expiry = min(
            min((r.expires_at for r in data.records.values()), default=math.inf),
            min((exp for _, exp in data.results.values()), default=math.inf),
        )

    def put(self, user: str, record: MemoryRecord, result: bytes, now: float) -> None:
        if type(record.args) not in _IMMUTABLE:  # keep a copy: the caller may edit its ``args`` after storing
            record = replace(record, args=copy_json(record.args))
        with self._lock:
            data = self._users.setdefault(user, _UserData())
            self._prune(data, now)
            if record.id in data.records:
                data.remove(record.id)
            data.add(record)
            old = data.results.get(record.result_hash)
            expires = max(record.expires_at, old[1]) if old else record.expires_at
            data.results[record.result_hash] = (old[0] if old else bytes(result), expires)
            while len(data.records) > self.max_memories_per_user:
                victim = min(data.records.values(), key=lambda r: (r.expires_at, r.created_at))
                data.remove(victim.id)

    def records(self, user: str, now: float) -> list[MemoryRecord]:
        with self._lock:
            data = self._users.get(user)
            if data is None:
                return []
            self._prune(data, now)
            if not data.records:
                del self._users[user]
                return []
            return list(data.records.values())

    def matching(self, user: str, signature: str, now: float) -> list[MemoryRecord]:
        """Live memories with ``signature``, from the per-user index (expired memories pruned first, as
        :meth:`records` does)."""
        with self._lock:
            data = self._users.get(user)
            if data is None:
                return []
            self._prune(data, now)
            if not data.records:
                del self._users[user]
                return []
            return [data.records[m] for m in data.by_signature.get(signature, ())]

    async def amatching(self, user: str, signature: str, now: float) -> list[MemoryRecord]:
        return self.matching(user, signature, now)

    def result(self, user: str, result_hash: str) -> bytes | None:
        with self._lock:
            data = self._users.get(user)
            item = data.results.get(result_hash) if data else None
            return item[0] if item else None

    def forget(self, user: str) -> int:
        with self._lock:
            data = self._users.pop(user, None)
            return len(data.records) if data else 0

    def index_size(self, user: str) -> int:
        """How many memory ids the user's index holds (expired ones included until the next read)."""
        with self._lock:
            data = self._users.get(user)
            return len(data.records) if data else 0

    async def aput(self, user: str, record: MemoryRecord, result: bytes, now: float) -> None:
        self.put(user, record, result, now)

    async def arecords(self, user: str, now: float) -> list[MemoryRecord]:
        return self.records(user, now)

    async def aresult(self, user: str, result_hash: str) -> bytes | None:
        return self.result(user, result_hash)

    async def aresults(self, user: str, result_hashes: list[str]) -> list[bytes | None]:
        return self.results(user, result_hashes)

    async def aforget(self, user: str) -> int:
        return self.forget(user)

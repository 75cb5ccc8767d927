"""Where intention memories live: the record format and the backend contract (the in-memory default is in
`promptcache.intention._memory_backend`).

Per user, a backend keeps an index of memory ids with their expiry, one record per memory (intention, tool, args,
hash of the result, features for the similarity) and the results themselves, stored once per content hash. Expired
memories are pruned from the index whenever the user's memories are read. The Redis backend is
``promptcache.integrations._redis_intention.RedisIntentionBackend``.
"""

from __future__ import annotations

import asyncio
from abc import ABC, abstractmethod
from typing import Any

from promptcache._errors import PromptCacheError
from promptcache.intention._record import MemoryRecord, copy_json, signature_version

__all__ = [
    "DEFAULT_MAX_MEMORIES_PER_USER",
    "IntentionBackend",
    "IntentionBackendError",
    "MemoryRecord",
    "copy_json",
]

DEFAULT_MAX_MEMORIES_PER_USER = 1000
"""Memories kept per user before the ones closest to expiry are dropped (1,000 per user by default)."""


class IntentionBackendError(PromptCacheError, RuntimeError):
    """The backend could not be reached or returned something unreadable (wraps the cause)."""


class IntentionBackend(ABC):
    """Storage contract of `IntentionMemory` (sync + async).

    Times are epoch seconds passed in by the caller (``now``), so one clock decides expiry. Failures raise
    `IntentionBackendError`; the caller decides what a failure means (a miss, a skipped write).
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
        match). Default: `records` filtered (every memory read); the bundled backends keep an index so a
        lookup reads only these."""
        return [r for r in self.records(user, now) if r.signature == signature]

    async def amatching(self, user: str, signature: str, now: float) -> list[MemoryRecord]:
        """Async `matching` (default: `arecords` filtered)."""
        return [r for r in await self.arecords(user, now) if r.signature == signature]

    def matching_results(
        self, user: str, signature: str, now: float
    ) -> tuple[list[MemoryRecord], dict[str, bytes | None]]:
        """`matching` plus the results it could read on the way, by result hash (default: none, ``{}``; a
        hash missing from the dict is fetched with `results`; a ``None`` value is an expired result). The
        Redis backend reads them in the same round trip."""
        return self.matching(user, signature, now), {}

    async def amatching_results(
        self, user: str, signature: str, now: float
    ) -> tuple[list[MemoryRecord], dict[str, bytes | None]]:
        """Async `matching_results`."""
        return await self.amatching(user, signature, now), {}

    def records_versioned(self, user: str, now: float) -> tuple[list[MemoryRecord], Any]:
        """`records` and a version token of them: a value that changes whenever the user's memories change other
        than by expiry (a store, an eviction, a repair), in the same round trip. ``None``: not known (the default;
        a memory with embeddings then hashes every record to notice a change). The bundled backends keep one, and
        while the version is unchanged they return the same list (no copy per lookup): callers read it, never edit it."""
        return self.records(user, now), None

    async def arecords_versioned(self, user: str, now: float) -> tuple[list[MemoryRecord], Any]:
        """Async `records_versioned`."""
        return await self.arecords(user, now), None

    def records_versioned_results(
        self, user: str, now: float, result_hashes: list[str]
    ) -> tuple[list[MemoryRecord], Any, dict[str, bytes | None]]:
        """`records_versioned` plus the results of ``result_hashes`` it could read in the same round trip, by hash
        (default: none, ``{}``; a lookup fetches a missing one with `results`). A lookup with embeddings names the
        results its choice on the index it holds would serve, so a hit while nobody wrote is one round trip on
        the Redis backend."""
        records, version = self.records_versioned(user, now)
        return records, version, {}

    async def arecords_versioned_results(
        self, user: str, now: float, result_hashes: list[str]
    ) -> tuple[list[MemoryRecord], Any, dict[str, bytes | None]]:
        """Async `records_versioned_results`."""
        records, version = await self.arecords_versioned(user, now)
        return records, version, {}

    def matching_indexed(
        self, user: str, signature: str, now: float
    ) -> tuple[list[MemoryRecord], dict[str, bytes | None], str | None]:
        """`matching_results` plus the signature version the user's whole meaning index is at
        (`signature_version`; ``None``: unknown, or memories of several versions). A lookup that finds another
        version than its own re-derives the old memories' signatures (`reindex`). Default: the query's version
        (nothing to migrate)."""
        return (*self.matching_results(user, signature, now), signature_version(signature))

    async def amatching_indexed(
        self, user: str, signature: str, now: float
    ) -> tuple[list[MemoryRecord], dict[str, bytes | None], str | None]:
        """Async `matching_indexed`."""
        return (*(await self.amatching_results(user, signature, now)), signature_version(signature))

    def exact_matching(
        self, user: str, signature: str, key: str, tool: str | None, args_json: bytes | None, now: float, key_of: Any
    ) -> list[MemoryRecord] | None:
        """The user's live memories with ``signature`` whose exact key ``key_of(record.intention)`` is ``key`` (and,
        when ``tool`` and ``args_json`` are given, of that tool with those canonical JSON arguments), most recent
        first, read from an index by exact key (not the signature's whole group). ``None``: not known this way
        (the default; also when the user's meaning index is at another version than ``signature``'s): the lookup
        reads `matching_indexed`."""
        return None

    async def aexact_matching(
        self, user: str, signature: str, key: str, tool: str | None, args_json: bytes | None, now: float, key_of: Any
    ) -> list[MemoryRecord] | None:
        """Async `exact_matching`."""
        return None

    def reindex(self, user: str, records: list[MemoryRecord], version: str, now: float) -> None:
        """Store ``records`` again under their (re-derived) ``signature`` — same ids, results and expiry — and mark
        the user's meaning index as wholly at ``version`` (default: nothing; see `matching_indexed`)."""

    async def areindex(self, user: str, records: list[MemoryRecord], version: str, now: float) -> None:
        """Async `reindex` (default: the sync one in a thread)."""
        await asyncio.to_thread(self.reindex, user, records, version, now)

    @abstractmethod
    def result(self, user: str, result_hash: str) -> bytes | None:
        """The stored result for ``result_hash`` (``None`` when it expired)."""

    def results(self, user: str, result_hashes: list[str]) -> list[bytes | None]:
        """The stored results for ``result_hashes``, in order (``None`` where one expired); one round trip on a
        remote backend (default: `result` for each)."""
        return [self.result(user, h) for h in result_hashes]

    def discard_results(self, user: str, result_hashes: list[str]) -> None:
        """Drop stored results that could not be read (corrupt), so storing them again writes them afresh
        (default: nothing; a backend whose results cannot be corrupted needs nothing)."""

    @abstractmethod
    def forget(self, user: str) -> int:
        """Remove every memory and result of ``user``; returns how many memories were removed."""

    async def aput(self, user: str, record: MemoryRecord, result: bytes, now: float) -> None:
        """Async `put` (default: the sync one in a thread)."""
        await asyncio.to_thread(self.put, user, record, result, now)

    async def arecords(self, user: str, now: float) -> list[MemoryRecord]:
        """Async `records`."""
        return await asyncio.to_thread(self.records, user, now)

    async def aresult(self, user: str, result_hash: str) -> bytes | None:
        """Async `result`."""
        return await asyncio.to_thread(self.result, user, result_hash)

    async def aresults(self, user: str, result_hashes: list[str]) -> list[bytes | None]:
        """Async `results`."""
        return await asyncio.to_thread(self.results, user, result_hashes)

    async def adiscard_results(self, user: str, result_hashes: list[str]) -> None:
        """Async `discard_results`."""
        await asyncio.to_thread(self.discard_results, user, result_hashes)

    async def aforget(self, user: str) -> int:
        """Async `forget`."""
        return await asyncio.to_thread(self.forget, user)

"""The in-memory intention backend: the default `IntentionBackend`, one process's memories in dicts.

Per user it keeps the records by id, an index by meaning signature and by exact key (tool + arguments, exact
intention) so an exact repeat is found without reading the group, a heap of expiry times, and the results once
per content hash. Reads and writes hold the backend's one lock.
"""

from __future__ import annotations

import bisect
import heapq
import itertools
import math
import threading
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from promptcache.intention._backends import DEFAULT_MAX_MEMORIES_PER_USER, IntentionBackend
from promptcache.intention._record import _IMMUTABLE, MemoryRecord, copy_json, signature_version

__all__ = ["InMemoryIntentionBackend"]


_VERSIONS = itertools.count(1)
"""Version tokens of the in-memory backend: one process-wide counter, so a token never repeats for any user."""


def _newest_first(record: MemoryRecord) -> tuple[float, str]:
    return -record.created_at, record.id


class _UserData:
    __slots__ = (
        "by_exact",
        "by_signature",
        "expiries",
        "indexed",
        "key_of",
        "listed",
        "listed_at",
        "next_expiry",
        "records",
        "results",
        "version",
    )

    def __init__(self) -> None:
        self.records: dict[str, MemoryRecord] = {}
        self.results: dict[str, tuple[bytes, float]] = {}
        self.by_signature: dict[str, set[str]] = {}
        self.next_expiry = math.inf  # no memory or result expires before this (epoch seconds): no prune needed
        self.version = next(_VERSIONS)
        self.indexed: str | None = None  # the signature version of every record (None: several, or none yet)
        # (expires_at, 0, memory id) per record added and (expires_at, 1, result hash) per result stored, a heap:
        # a prune pops what has expired instead of scanning every memory; an entry whose memory or result was
        # replaced or dropped since is skipped when popped
        self.expiries: list[tuple[float, int, str]] = []
        # (signature, exact key) and (signature, exact key, tool, canonical args) -> records, newest first; kept
        # from the first exact lookup on (``key_of``: the exact key of a raw intention it was built with)
        self.by_exact: dict[tuple[Any, ...], list[MemoryRecord]] = {}
        self.key_of: Callable[[str], str] | None = None
        # the records as a list at version ``listed_at``: what `records_versioned` returns while nothing changed
        # (a lookup with embeddings reads it on every call; copying 10,000 records each time cost about 1 ms)
        self.listed: list[MemoryRecord] = []
        self.listed_at = 0

    def as_list(self) -> list[MemoryRecord]:
        """The live records as one list per version (shared: read, not edited)."""
        if self.listed_at != self.version:
            self.listed, self.listed_at = list(self.records.values()), self.version
        return self.listed

    def _exact_keys(self, record: MemoryRecord) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
        assert self.key_of is not None
        key = (record.signature, self.key_of(record.intention))
        return key, (*key, record.tool, record.args_json)

    def exact(self, key: tuple[Any, ...], key_of: Callable[[str], str]) -> list[MemoryRecord]:
        if self.key_of is not key_of:  # first exact lookup (or another key function): index every record
            self.key_of, self.by_exact = key_of, {}
            for record in self.records.values():
                for k in self._exact_keys(record):
                    bisect.insort(self.by_exact.setdefault(k, []), record, key=_newest_first)
        return list(self.by_exact.get(key, ()))

    def add(self, record: MemoryRecord) -> None:
        if not self.records:
            self.indexed = record.signature_version
        elif record.signature_version != self.indexed:
            self.indexed = None
        self.records[record.id] = record
        self.by_signature.setdefault(record.signature, set()).add(record.id)
        self.next_expiry = min(self.next_expiry, record.expires_at)
        heapq.heappush(self.expiries, (record.expires_at, 0, record.id))
        self.version = next(_VERSIONS)
        if self.key_of is not None:
            for k in self._exact_keys(record):
                bisect.insort(self.by_exact.setdefault(k, []), record, key=_newest_first)

    def set_result(self, result_hash: str, result: bytes, expires_at: float) -> None:
        self.results[result_hash] = (result, expires_at)
        heapq.heappush(self.expiries, (expires_at, 1, result_hash))

    def remove(self, memory_id: str) -> None:
        self.version = next(_VERSIONS)
        record = self.records.pop(memory_id)
        ids = self.by_signature.get(record.signature)
        if ids is not None:
            ids.discard(memory_id)
            if not ids:
                del self.by_signature[record.signature]
        if self.key_of is not None:
            for k in self._exact_keys(record):
                group = self.by_exact[k]
                del group[bisect.bisect_left(group, _newest_first(record), key=_newest_first)]
                if not group:
                    del self.by_exact[k]


class InMemoryIntentionBackend(IntentionBackend):
    """The process-local default: a dict per user, thread-safe, at most ``max_memories_per_user`` each.

    When a user is over the bound, the memories closest to expiry are dropped first. `put` keeps its own copy
    of the record's ``args`` (the caller may edit its dict afterwards); `records` returns the stored records
    themselves, to be read, not edited (`IntentionMemory` hands out copies).

    Args:
        max_memories_per_user: an ``int`` >= 1 (default `DEFAULT_MAX_MEMORIES_PER_USER`).

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
        heap = data.expiries
        while heap and heap[0][0] <= now:
            _, kind, key = heapq.heappop(heap)
            if kind == 0:
                record = data.records.get(key)
                if record is not None and record.expires_at <= now:
                    data.remove(key)
            else:
                item = data.results.get(key)
                if item is not None and item[1] <= now:
                    del data.results[key]
        data.next_expiry = heap[0][0] if heap else math.inf  # at or before the next expiry

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
            data.set_result(record.result_hash, old[0] if old else bytes(result), expires)
            while len(data.records) > self.max_memories_per_user:
                victim = min(data.records.values(), key=lambda r: (r.expires_at, r.created_at))
                data.remove(victim.id)

    def records(self, user: str, now: float) -> list[MemoryRecord]:
        with self._lock:
            data = self._live(user, now)
            return [] if data is None else list(data.records.values())

    def records_versioned(self, user: str, now: float) -> tuple[list[MemoryRecord], Any]:
        """`records` and the user's version token (a process-wide counter value, new on every change). The list
        is the same object while the version is unchanged (no copy per lookup): read it, do not edit it."""
        with self._lock:
            data = self._live(user, now)
            return ([], None) if data is None else (data.as_list(), data.version)

    async def arecords_versioned(self, user: str, now: float) -> tuple[list[MemoryRecord], Any]:
        return self.records_versioned(user, now)

    def _live(self, user: str, now: float) -> _UserData | None:
        data = self._users.get(user)
        if data is None:
            return None
        self._prune(data, now)
        if not data.records:
            del self._users[user]
            return None
        return data

    def matching(self, user: str, signature: str, now: float) -> list[MemoryRecord]:
        """Live memories with ``signature``, from the per-user index (expired memories pruned first, as
        `records` does)."""
        return self.matching_indexed(user, signature, now)[0]

    async def amatching(self, user: str, signature: str, now: float) -> list[MemoryRecord]:
        return self.matching(user, signature, now)

    def matching_indexed(
        self, user: str, signature: str, now: float
    ) -> tuple[list[MemoryRecord], dict[str, bytes | None], str | None]:
        with self._lock:
            data = self._live(user, now)
            if data is None:
                return [], {}, signature_version(signature)
            return [data.records[m] for m in data.by_signature.get(signature, ())], {}, data.indexed

    async def amatching_indexed(
        self, user: str, signature: str, now: float
    ) -> tuple[list[MemoryRecord], dict[str, bytes | None], str | None]:
        return self.matching_indexed(user, signature, now)

    def exact_matching(
        self, user: str, signature: str, key: str, tool: str | None, args_json: bytes | None, now: float, key_of: Any
    ) -> list[MemoryRecord] | None:
        """From a per-user index by exact key, kept from the first exact lookup on (expired memories pruned first,
        as `records` does)."""
        with self._lock:
            data = self._live(user, now)
            if data is None:
                return []
            if data.indexed != signature_version(signature) or (tool is None) != (args_json is None):
                return None
            return data.exact((signature, key) if args_json is None else (signature, key, tool, args_json), key_of)

    async def aexact_matching(
        self, user: str, signature: str, key: str, tool: str | None, args_json: bytes | None, now: float, key_of: Any
    ) -> list[MemoryRecord] | None:
        return self.exact_matching(user, signature, key, tool, args_json, now, key_of)

    def reindex(self, user: str, records: list[MemoryRecord], version: str, now: float) -> None:
        with self._lock:
            data = self._users.get(user)
            if data is None:
                return
            for record in records:
                if record.id in data.records:
                    data.remove(record.id)
                    data.add(record)
            if all(r.signature_version == version for r in data.records.values()):
                data.indexed = version

    async def areindex(self, user: str, records: list[MemoryRecord], version: str, now: float) -> None:
        self.reindex(user, records, version, now)

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

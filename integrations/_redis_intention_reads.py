"""The reads of `RedisIntentionBackend`: all of a user's records (with the version counter), and results.

Reading *all* records (`RecordReads.records_versioned`, what a lookup with embeddings or a chat-model verifier
needs) starts with one pipeline (prune + ``GET ver``). When the version is the one this process last read, the
records it parsed then are reused (expired ones filtered out by their expiry): no other round trip. Otherwise one
``ZRANGEBYSCORE ... WITHSCORES`` and one ``MGET`` of the records not already parsed (a replaced memory has a new
score, so a stale copy is never used), whatever the number of memories. A result is one ``GET`` (several: one
pipeline).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, cast

from promptcache._log import ThrottledWarning
from promptcache.integrations._redis_connection import ERRORS as _ERRORS
from promptcache.integrations._redis_connection import AsyncClient, SyncClient, keeps_cancellation
from promptcache.integrations._redis_intention_records import RecordCache, Row
from promptcache.integrations._redis_intention_versions import (
    Pipe,
    RedisText,
    Replies,
    VersionRepairs,
    index_refused,
    read_version,
    rows_ttl_ms,
    settle,
    unreadable_as_corrupt,
    wrong_type,
)
from promptcache.intention._backends import IntentionBackendError, MemoryRecord

__all__ = ["RecordReads"]


def _head_replies(head: Replies, result_hashes: list[str]) -> tuple[RedisText | None, dict[str, bytes | None]]:
    """The version counter (``None``: missing or damaged) and the results by hash of a read's first pipeline
    (prune, ``GET ver``, then one ``GET`` per result). Raises the prune's error, or a result read's other than
    ``WRONGTYPE`` (read as ``b""``, a corrupt entry)."""
    if isinstance(head[0], Exception):
        raise head[0]
    return read_version(head[1]), dict(zip(result_hashes, unreadable_as_corrupt(head[2:])))


class RecordReads(VersionRepairs):
    """The reads of `RedisIntentionBackend` (a mixin: the backend provides the clients, the failure handling and
    the record cache)."""

    _records: RecordCache
    _warning: ThrottledWarning

    if TYPE_CHECKING:  # provided by RedisIntentionBackend and its RedisConnection base

        @property
        def async_client(self) -> AsyncClient | None: ...
        def _check(self) -> None: ...
        def _sync(self) -> SyncClient: ...
        def _fail(self, op: str, exc: BaseException) -> IntentionBackendError: ...

    # -- records -------------------------------------------------------------------------------------------------
    def _merge(
        self, user: str, version: RedisText | None, rows: list[Row], missing: list[int], raw: Sequence[RedisText | None]
    ) -> tuple[list[MemoryRecord], list[bytes]]:
        records, gone, corrupt = self._records.merge(user, version, rows, missing, raw)
        if corrupt:  # dropped from the index below: a miss for that memory only, the user's others still match
            self._warning.warn(
                "promptcache: dropped %d corrupt intention memory record(s) from a user's index (%s)",
                len(corrupt),
                corrupt[0][:200],
            )
        return records, gone

    def _head(self, pipe: Pipe, user: str, now: float) -> None:
        pipe.zremrangebyscore(self.index_key(user), "-inf", now)
        pipe.get(self.version_key(user))

    def _range_args(self, user: str, now: float) -> tuple[str, ...]:
        # Raw command: the reply as the server sends it (no per-pair conversion in Python).
        return ("ZRANGEBYSCORE", self.index_key(user), f"({now!r}", "+inf", "WITHSCORES")

    def _drop(self, pipe: Pipe, user: str, gone: Sequence[RedisText], ttl_ms: int) -> None:
        pipe.zrem(self.index_key(user), *gone)
        self._bump(pipe, user, ttl_ms)

    def records(self, user: str, now: float) -> list[MemoryRecord]:
        return self.records_versioned(user, now)[0]

    async def arecords(self, user: str, now: float) -> list[MemoryRecord]:
        return (await self.arecords_versioned(user, now))[0]

    def records_versioned(self, user: str, now: float) -> tuple[list[MemoryRecord], RedisText | None]:
        """`records` and the user's version counter as read with them (``None`` when it is missing or damaged,
        or the index changed on the way); one round trip while the counter is the one last read here."""
        records, version, _ = self.records_versioned_results(user, now, [])
        return records, version

    def records_versioned_results(
        self, user: str, now: float, result_hashes: list[str]
    ) -> tuple[list[MemoryRecord], RedisText | None, dict[str, bytes | None]]:
        """`records_versioned`, and the results of ``result_hashes`` read in the same first round trip (the
        ``GET``s queued after the version's), by hash (``b""`` where a key holds another type)."""
        self._check()
        try:
            client = self._sync()
            pipe = client.pipeline(transaction=False)
            self._head(pipe, user, now)
            self._results_commands(pipe, user, result_hashes)
            head = pipe.execute(raise_on_error=False)
            if index_refused(head, (0,)):
                self._replace_damaged_index(client, user)
                return [], None, {}
            version, results = _head_replies(head, result_hashes)
            reused = self._records.reuse(user, version, now)
            if reused is not None:
                return reused, version, results
            # redis-py leaves the sync ``execute_command`` untyped: the raw reply is a list (see `RecordCache.split`).
            reply = cast("Callable[..., Sequence[object]]", client.execute_command)(*self._range_args(user, now))
            if not reply:
                return [], version, results
            rows, missing = self._records.split(user, reply)
            base = self._base(user) + "mem:"
            raw = client.mget([base + rows[i][0].decode() for i in missing]) if missing else []
            records, gone = self._merge(user, version, rows, missing, raw)
            if gone:
                ttl_ms = rows_ttl_ms([score for _, score, _ in rows], now)
                pipe = client.pipeline(transaction=False)
                self._drop(pipe, user, gone, ttl_ms)
                if settle(pipe.execute(raise_on_error=False), -1)[1]:
                    pipe = client.pipeline(transaction=False)
                    self._repair(pipe, user, ttl_ms)
                    pipe.execute()
            return records, None if gone else version, results
        except _ERRORS as exc:
            raise self._fail("read", exc) from exc

    @keeps_cancellation
    async def arecords_versioned(self, user: str, now: float) -> tuple[list[MemoryRecord], RedisText | None]:
        """Async `records_versioned`."""
        records, version, _ = await self.arecords_versioned_results(user, now, [])
        return records, version

    @keeps_cancellation
    async def arecords_versioned_results(
        self, user: str, now: float, result_hashes: list[str]
    ) -> tuple[list[MemoryRecord], RedisText | None, dict[str, bytes | None]]:
        """Async `records_versioned_results`."""
        client = self.async_client
        if client is None:
            return await asyncio.to_thread(self.records_versioned_results, user, now, result_hashes)
        self._check()
        try:
            pipe = client.pipeline(transaction=False)
            self._head(pipe, user, now)
            self._results_commands(pipe, user, result_hashes)
            head = await pipe.execute(raise_on_error=False)
            if index_refused(head, (0,)):
                await self._areplace_damaged_index(client, user)
                return [], None, {}
            version, results = _head_replies(head, result_hashes)
            reused = self._records.reuse(user, version, now)
            if reused is not None:
                return reused, version, results
            reply = await client.execute_command(*self._range_args(user, now))
            if not reply:
                return [], version, results
            rows, missing = self._records.split(user, reply)
            base = self._base(user) + "mem:"
            raw = await client.mget([base + rows[i][0].decode() for i in missing]) if missing else []
            records, gone = self._merge(user, version, rows, missing, raw)
            if gone:
                ttl_ms = rows_ttl_ms([score for _, score, _ in rows], now)
                pipe = client.pipeline(transaction=False)
                self._drop(pipe, user, gone, ttl_ms)
                if settle(await pipe.execute(raise_on_error=False), -1)[1]:
                    pipe = client.pipeline(transaction=False)
                    self._repair(pipe, user, ttl_ms)
                    await pipe.execute()
            return records, None if gone else version, results
        except _ERRORS as exc:
            raise self._fail("read", exc) from exc

    def _results_commands(self, pipe: Pipe, user: str, result_hashes: list[str]) -> None:
        for h in result_hashes:
            pipe.get(self.result_key(user, h))

    def result(self, user: str, result_hash: str) -> bytes | None:
        """The result stored for ``result_hash`` (``None`` when gone; ``b""``, a corrupt entry, when its key holds
        another type: the memory then discards it)."""
        self._check()
        try:
            return cast("bytes | None", self._sync().get(self.result_key(user, result_hash)))  # not decoded: bytes
        except _ERRORS as exc:
            if wrong_type(exc):
                return b""
            raise self._fail("read", exc) from exc

    @keeps_cancellation
    async def aresult(self, user: str, result_hash: str) -> bytes | None:
        client = self.async_client
        if client is None:
            return await asyncio.to_thread(self.result, user, result_hash)
        self._check()
        try:
            return cast("bytes | None", await client.get(self.result_key(user, result_hash)))  # not decoded: bytes
        except _ERRORS as exc:
            if wrong_type(exc):
                return b""
            raise self._fail("read", exc) from exc

    def results(self, user: str, result_hashes: list[str]) -> list[bytes | None]:
        """The results for ``result_hashes`` in one round trip (a pipeline of ``GET``, not ``MGET``: ``MGET`` reads
        a key of another type as missing, so a damaged result key would never be noticed); ``b""`` (a corrupt
        entry, which the memory discards and counts as an error) where a key holds another type."""
        self._check()
        try:
            pipe = self._sync().pipeline(transaction=False)
            self._results_commands(pipe, user, result_hashes)
            return unreadable_as_corrupt(pipe.execute(raise_on_error=False))
        except _ERRORS as exc:
            raise self._fail("read", exc) from exc

    @keeps_cancellation
    async def aresults(self, user: str, result_hashes: list[str]) -> list[bytes | None]:
        client = self.async_client
        if client is None:
            return await asyncio.to_thread(self.results, user, result_hashes)
        self._check()
        try:
            pipe = client.pipeline(transaction=False)
            self._results_commands(pipe, user, result_hashes)
            return unreadable_as_corrupt(await pipe.execute(raise_on_error=False))
        except _ERRORS as exc:
            raise self._fail("read", exc) from exc

    def discard_results(self, user: str, result_hashes: list[str]) -> None:
        """Delete the (corrupt) results for ``result_hashes``, so the next store writes them again (``SET NX``)."""
        self._check()
        try:
            self._sync().delete(*[self.result_key(user, h) for h in result_hashes])
        except _ERRORS as exc:
            raise self._fail("delete", exc) from exc

    @keeps_cancellation
    async def adiscard_results(self, user: str, result_hashes: list[str]) -> None:
        client = self.async_client
        if client is None:
            return await asyncio.to_thread(self.discard_results, user, result_hashes)
        self._check()
        try:
            await client.delete(*[self.result_key(user, h) for h in result_hashes])
        except _ERRORS as exc:
            raise self._fail("delete", exc) from exc

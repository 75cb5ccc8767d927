"""``RedisIntentionBackend``: intention memories on Redis (redis-py, sync and ``redis.asyncio``).

Layout, per user (docs/architecture.md, "Intention cache"); every key of a user carries the same hash tag
(`promptcache._keys.hash_tag` of the user id), so a user's pipelines and ``MGET`` stay in one Cluster slot:

- ``{prefix}intent:{user}:idx`` — sorted set of memory ids, scored by expiry (epoch seconds). Expired ids are
  pruned (``ZREMRANGEBYSCORE``) on every read; the set itself expires with its last memory.
- ``{prefix}intent:{user}:mem:{id}`` — the memory record (JSON), with its own TTL.
- ``{prefix}intent:{user}:res:{sha256}`` — the result, stored once per content hash (``SET NX``), its expiry
  pushed out (``PEXPIRE GT``, Redis >= 7.0) to the latest memory that refers to it.
- ``{prefix}intent:{user}:sig:{signature}`` — a set of the ids of the memories whose intention has that meaning
  signature (`promptcache.integrations._redis_intention_index`): a lookup reads its candidates from it, never
  the whole index.
- ``{prefix}intent:{user}:ver`` — a counter bumped by every store, eviction and repair of the index. It starts at
  a random 62-bit value, so it never repeats after a ``forget()`` or a loss of the user's keys
  (`promptcache.integrations._redis_intention_versions`), and like every key here it has a TTL.

A lookup (`RedisIntentionBackend.matching`) is two round trips whatever the number of memories: prune +
``SMEMBERS`` of the query's signature set, then ``ZMSCORE`` + ``MGET`` of those ids. Reading *all* records
(`RedisIntentionBackend.records`, what a chat-model verifier needs) starts with one pipeline (prune +
``GET ver``). When the version is the one this process last read, the records it parsed then are reused (expired ones filtered out by their expiry): no other round trip. Otherwise one
``ZRANGEBYSCORE ... WITHSCORES`` and one ``MGET`` of the records not already parsed (a replaced memory has a new
score, so a stale copy is never used), whatever the number of memories. The chosen result is one ``GET`` more (all
results of an intention: one ``MGET``). Install ``hiredis`` (a dependency of promptcache) so redis-py parses the
1,000-element replies in C. Failures raise
`IntentionBackendError`; a connection failure or timeout also opens a short
circuit break (``breaker_s``), so a dead Redis does not add a timeout to every call. An error the server answered
with (``redis.ResponseError``, e.g. ``WRONGTYPE`` on one user's key) fails that call only: no circuit break, so one
user's damaged key does not blind the others.

Damaged entries cost no more than themselves: see `promptcache.integrations._redis_intention_versions`.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from typing import cast

from promptcache._log import ThrottledWarning, get_logger
from promptcache.integrations._redis_connection import ERRORS as _ERRORS
from promptcache.integrations._redis_connection import RedisConnection, SyncClient, keeps_cancellation, server_refused
from promptcache.integrations._redis_intention_index import SignatureIndex, index_commands
from promptcache.integrations._redis_intention_reads import RecordReads
from promptcache.integrations._redis_intention_records import RecordCache
from promptcache.integrations._redis_intention_versions import (
    Pipe,
    RedisText,
    as_str,
    index_refused,
    settle,
)
from promptcache.intention._backends import (
    DEFAULT_MAX_MEMORIES_PER_USER,
    IntentionBackend,
    IntentionBackendError,
    MemoryRecord,
)

__all__ = ["RedisIntentionBackend"]

_PUT_INCR = 7
"""Position of the version bump in the store pipeline (`RedisIntentionBackend._put_commands`)."""
_PUT_INDEX = (3, 4, -1)
"""Positions of the commands on the index in the store pipeline that a key of another type refuses (``ZCARD`` is
always the last command)."""
_log = get_logger("promptcache.integrations._redis_intention")


class RedisIntentionBackend(SignatureIndex, RecordReads, RedisConnection, IntentionBackend):
    """Intention memories on Redis (see the module docstring for the key layout).

    Args:
        client: a ``redis.Redis`` or ``redis.cluster.RedisCluster`` (sync) or a ``redis.asyncio.Redis`` client.
        url: instead of ``client``, a Redis URL; a sync client and one async client per event loop (each
            ``asyncio.run`` works) are made with ``socket_timeout_s``.
        async_client: an async client to use with ``client`` (otherwise async calls run the sync client in a
            thread).
        prefix: the application's key prefix (default ``"promptcache:"``; ``""`` is refused); the memories live in
            its ``intent:`` namespace, apart from ``RedisCache`` entries (``cache:``) and placements
            (``placements:``).
        max_memories_per_user: bound per user; beyond it, the memories closest to expiry are dropped
            (default 1000).
        socket_timeout_s: connect/read timeout of clients made from ``url`` (seconds, default 0.25).
        breaker_s: after a failure, calls fail at once for this many seconds (default 2.0).
        record_cache_users: users whose parsed records are kept in this process (default 1,000; 0: no cache).
        cluster: with ``url``, make Redis Cluster clients (a user's keys share one hash tag, so each pipeline and
            ``MGET`` goes to one slot); default False.

    Raises:
        TypeError: no client and no url, or ``url`` with a client; ``url``/``prefix`` not strings; a client that is
            not redis-py's (``async_client``: not a ``redis.asyncio`` one); ``record_cache_users`` not an ``int``.
        ValueError: ``max_memories_per_user`` not an int >= 1; ``record_cache_users`` < 0; an empty ``prefix``;
            bad ``socket_timeout_s``/``breaker_s``.
    """

    def __init__(
        self,
        client: object = None,
        *,
        url: str | None = None,
        async_client: object = None,
        prefix: str = "promptcache:",
        max_memories_per_user: int = DEFAULT_MAX_MEMORIES_PER_USER,
        socket_timeout_s: float = 0.25,
        breaker_s: float = 2.0,
        record_cache_users: int = 1000,
        cluster: bool = False,
    ) -> None:
        if (
            isinstance(max_memories_per_user, bool)
            or not isinstance(max_memories_per_user, int)
            or (max_memories_per_user < 1)
        ):
            raise ValueError(f"max_memories_per_user must be an int >= 1, got {max_memories_per_user!r}")
        if isinstance(record_cache_users, bool) or not isinstance(record_cache_users, int):
            raise TypeError(
                f"record_cache_users must be an int >= 0, got {type(record_cache_users).__name__}: "
                f"{record_cache_users!r}"
            )
        if record_cache_users < 0:
            raise ValueError(f"record_cache_users must be an int >= 0, got {record_cache_users!r}")
        self._connect(
            client,
            url=url,
            async_client=async_client,
            prefix=prefix,
            socket_timeout_s=socket_timeout_s,
            breaker_s=breaker_s,
            cluster=cluster,
        )
        self.max_memories_per_user = max_memories_per_user
        self._warning = ThrottledWarning(_log)
        self._index_warning = ThrottledWarning(_log)
        self._records = RecordCache(record_cache_users)

    # -- failure handling --------------------------------------------------------------------------------------
    def _check(self) -> None:
        if time.monotonic() < self._open_until:
            raise IntentionBackendError("Redis unavailable (circuit open after a recent failure)")

    def _fail(self, op: str, exc: BaseException) -> IntentionBackendError:
        if server_refused(exc):
            # The server answered: a per-key error (e.g. WRONGTYPE on one user's key), not an outage. This call
            # fails (a miss for the caller); other users' calls go on, so no circuit break.
            return IntentionBackendError(f"Redis {op} refused by the server: {type(exc).__name__}: {exc}")
        self._open_break()
        return IntentionBackendError(f"Redis {op} failed: {type(exc).__name__}: {exc}")

    def _sync(self) -> SyncClient:
        if self.client is None:
            raise IntentionBackendError("this RedisIntentionBackend has only an async client; use the a* methods")
        return self.client

    # -- writes ------------------------------------------------------------------------------------------------
    def _put_commands(self, pipe: Pipe, user: str, record: MemoryRecord, result: bytes, now: float) -> int:
        """Queue a store (its INCR of the version counter at `_PUT_INCR`); returns the TTL (ms)."""
        # Key TTLs are relative (PX / PEXPIRE), so Redis's clock decides when keys vanish; index scores use the
        # caller's clock (``now``), which decides what a read returns.
        ttl_ms = max(1, math.ceil((record.expires_at - now) * 1000))
        idx, rkey = self.index_key(user), self.result_key(user, record.result_hash)
        pipe.set(rkey, result, nx=True, px=ttl_ms)
        pipe.pexpire(rkey, ttl_ms, gt=True)
        pipe.set(self.memory_key(user, record.id), record.dumps(), px=ttl_ms)
        pipe.zremrangebyscore(idx, "-inf", now)
        pipe.zadd(idx, {record.id: record.expires_at})
        pipe.pexpire(idx, ttl_ms, nx=True)
        pipe.pexpire(idx, ttl_ms, gt=True)
        self._bump(pipe, user, ttl_ms)
        index_commands(pipe, self.signature_key(user, record.signature), record.id, ttl_ms)
        self._vocabulary_commands(pipe, user, record, ttl_ms)
        pipe.zcard(idx)
        return ttl_ms

    def _overflow(self, user: str, count: object) -> int:
        n = cast(int, count)  # the store pipeline's closing ZCARD: an int
        return n - self.max_memories_per_user if n > self.max_memories_per_user else 0

    def _evict(self, pipe: Pipe, user: str, victims: Sequence[RedisText], ttl_ms: int) -> None:
        pipe.delete(*[self.memory_key(user, as_str(m)) for m in victims])
        self._bump(pipe, user, ttl_ms)

    def put(self, user: str, record: MemoryRecord, result: bytes, now: float) -> None:
        self._check()
        try:
            client = self._sync()
            pipe = client.pipeline(transaction=False)
            ttl_ms = self._put_commands(pipe, user, record, result, now)
            replies = pipe.execute(raise_on_error=False)
            if index_refused(replies, _PUT_INDEX) and self._replace_damaged_index(client, user):
                pipe = client.pipeline(transaction=False)
                self._put_commands(pipe, user, record, result, now)
                replies = pipe.execute(raise_on_error=False)
            if self._signature_refused(replies):
                replies = self._replace_signature_set(client, user, record, ttl_ms, replies)
            count, bad_version = settle(replies, _PUT_INCR)
            extra = self._overflow(user, count)
            if not extra and not bad_version:
                self._records.stored(user, replies[_PUT_INCR], record)
            if extra:
                popped = cast("list[tuple[bytes, float]]", client.zpopmin(self.index_key(user), extra))
                victims = [m for m, _ in popped]
                pipe = client.pipeline(transaction=False)
                self._evict(pipe, user, victims, ttl_ms)
                bad_version |= settle(pipe.execute(raise_on_error=False), -1)[1]
            if bad_version:
                pipe = client.pipeline(transaction=False)
                self._repair(pipe, user, ttl_ms)
                pipe.execute()
        except _ERRORS as exc:
            raise self._fail("store", exc) from exc

    @keeps_cancellation
    async def aput(self, user: str, record: MemoryRecord, result: bytes, now: float) -> None:
        client = self.async_client
        if client is None:
            return await super().aput(user, record, result, now)
        self._check()
        try:
            pipe = client.pipeline(transaction=False)
            ttl_ms = self._put_commands(pipe, user, record, result, now)
            replies = await pipe.execute(raise_on_error=False)
            if index_refused(replies, _PUT_INDEX) and await self._areplace_damaged_index(client, user):
                pipe = client.pipeline(transaction=False)
                self._put_commands(pipe, user, record, result, now)
                replies = await pipe.execute(raise_on_error=False)
            if self._signature_refused(replies):
                replies = await self._areplace_signature_set(client, user, record, ttl_ms, replies)
            count, bad_version = settle(replies, _PUT_INCR)
            extra = self._overflow(user, count)
            if not extra and not bad_version:
                self._records.stored(user, replies[_PUT_INCR], record)
            if extra:
                popped = cast("list[tuple[bytes, float]]", await client.zpopmin(self.index_key(user), extra))
                victims = [m for m, _ in popped]
                pipe = client.pipeline(transaction=False)
                self._evict(pipe, user, victims, ttl_ms)
                bad_version |= settle(await pipe.execute(raise_on_error=False), -1)[1]
            if bad_version:
                pipe = client.pipeline(transaction=False)
                self._repair(pipe, user, ttl_ms)
                await pipe.execute()
        except _ERRORS as exc:
            raise self._fail("store", exc) from exc

    # -- forget ------------------------------------------------------------------------------------------------
    def _pattern(self, user: str) -> str:
        from promptcache.integrations._redis_connection import glob_escape

        return glob_escape(self._base(user)) + "*"

    def forget(self, user: str) -> int:
        self._records.forget(user)
        try:
            client = self._sync()
            count = client.zcard(self.index_key(user))
            keys = list(client.scan_iter(match=self._pattern(user), count=500))
            for i in range(0, len(keys), 500):
                client.unlink(*keys[i : i + 500])
            return int(count)
        except _ERRORS as exc:
            raise self._fail("forget", exc) from exc

    @keeps_cancellation
    async def aforget(self, user: str) -> int:
        client = self.async_client
        if client is None:
            return await super().aforget(user)
        self._records.forget(user)
        try:
            count = await client.zcard(self.index_key(user))
            keys = [k async for k in client.scan_iter(match=self._pattern(user), count=500)]
            for i in range(0, len(keys), 500):
                await client.unlink(*keys[i : i + 500])
            return int(count)
        except _ERRORS as exc:
            raise self._fail("forget", exc) from exc

"""``RedisIntentionBackend``: intention memories on Redis (redis-py, sync and ``redis.asyncio``).

Layout, per user (DESIGN.md, "Intention cache"); every key of a user carries the same hash tag
(:func:`promptcache.keys.hash_tag` of the user id), so a user's pipelines and ``MGET`` stay in one Cluster slot:

- ``{prefix}intent:{user}:idx`` — sorted set of memory ids, scored by expiry (epoch seconds). Expired ids are
  pruned (``ZREMRANGEBYSCORE``) on every read; the set itself expires with its last memory.
- ``{prefix}intent:{user}:mem:{id}`` — the memory record (JSON), with its own TTL.
- ``{prefix}intent:{user}:res:{sha256}`` — the result, stored once per content hash (``SET NX``), its expiry
  pushed out (``PEXPIRE GT``, Redis >= 7.0) to the latest memory that refers to it.

A read is two round trips whatever the number of memories: one pipeline (prune + ``ZRANGEBYSCORE``) and one
``MGET`` of the live records; the chosen result is one ``GET`` more. Failures raise
:class:`~promptcache.intention.backends.IntentionBackendError` after the first one opens a short circuit break
(``breaker_s``), so a dead Redis does not add a timeout to every call.
"""

from __future__ import annotations

import asyncio
import math
import threading
import time
from typing import Any

import redis
import redis.asyncio as aioredis

from promptcache.intention.backends import (
    DEFAULT_MAX_MEMORIES_PER_USER,
    IntentionBackend,
    IntentionBackendError,
    MemoryRecord,
)
from promptcache.keys import hash_tag

__all__ = ["RedisIntentionBackend"]

_ERRORS = (redis.RedisError, OSError, asyncio.TimeoutError)


class RedisIntentionBackend(IntentionBackend):
    """Intention memories on Redis (see the module docstring for the key layout).

    Args:
        client: a ``redis.Redis`` or ``redis.cluster.RedisCluster`` (sync) or a ``redis.asyncio.Redis`` client.
        url: instead of ``client``, a Redis URL; a sync and an async client are made with ``socket_timeout_s``.
        async_client: an async client to use with ``client`` (otherwise async calls run the sync client in a
            thread).
        prefix: prepended to every key (default ``"promptcache:"``).
        max_memories_per_user: bound per user; beyond it, the memories closest to expiry are dropped
            (default 1000).
        socket_timeout_s: connect/read timeout of clients made from ``url`` (seconds, default 0.25).
        breaker_s: after a failure, calls fail at once for this many seconds (default 2.0).

    Raises:
        TypeError: no client and no url, or ``prefix`` not a string.
        ValueError: ``max_memories_per_user`` not an int >= 1.
    """

    def __init__(
        self,
        client: Any = None,
        *,
        url: str | None = None,
        async_client: Any = None,
        prefix: str = "promptcache:",
        max_memories_per_user: int = DEFAULT_MAX_MEMORIES_PER_USER,
        socket_timeout_s: float = 0.25,
        breaker_s: float = 2.0,
    ) -> None:
        if not isinstance(prefix, str):
            raise TypeError(f"prefix must be a str, got {prefix!r}")
        if client is None and url is None and async_client is None:
            raise TypeError("RedisIntentionBackend needs a client or a url")
        if isinstance(max_memories_per_user, bool) or not isinstance(max_memories_per_user, int) or (
            max_memories_per_user < 1
        ):
            raise ValueError(f"max_memories_per_user must be an int >= 1, got {max_memories_per_user!r}")
        if url is not None:
            opts = {"socket_timeout": socket_timeout_s, "socket_connect_timeout": socket_timeout_s}
            client = redis.Redis.from_url(url, **opts)
            async_client = aioredis.Redis.from_url(url, **opts)
        if isinstance(client, aioredis.Redis):
            client, async_client = None, client
        self.client = client
        self.async_client = async_client
        self.prefix = prefix
        self.max_memories_per_user = max_memories_per_user
        self.breaker_s = float(breaker_s)
        self._open_until = 0.0
        self._lock = threading.Lock()

    # -- keys ------------------------------------------------------------------------------------------------
    def _base(self, user: str) -> str:
        return f"{self.prefix}intent:{hash_tag(user)}:"

    def index_key(self, user: str) -> str:
        """The user's sorted set of memory ids (scored by expiry, epoch seconds)."""
        return self._base(user) + "idx"

    def memory_key(self, user: str, memory_id: str) -> str:
        """The key of one memory record."""
        return f"{self._base(user)}mem:{memory_id}"

    def result_key(self, user: str, result_hash: str) -> str:
        """The key of a stored result (by content hash)."""
        return f"{self._base(user)}res:{result_hash}"

    # -- failure handling --------------------------------------------------------------------------------------
    def _check(self) -> None:
        if time.monotonic() < self._open_until:
            raise IntentionBackendError("Redis unavailable (circuit open after a recent failure)")

    def _fail(self, op: str, exc: BaseException) -> IntentionBackendError:
        with self._lock:
            self._open_until = time.monotonic() + self.breaker_s
        return IntentionBackendError(f"Redis {op} failed: {type(exc).__name__}: {exc}")

    def _sync(self) -> Any:
        if self.client is None:
            raise IntentionBackendError("this RedisIntentionBackend has only an async client; use the a* methods")
        return self.client

    # -- writes ------------------------------------------------------------------------------------------------
    def _put_commands(self, pipe: Any, user: str, record: MemoryRecord, result: bytes, now: float) -> None:
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
        pipe.zcard(idx)

    def _overflow(self, user: str, count: int) -> int:
        return count - self.max_memories_per_user if count > self.max_memories_per_user else 0

    def put(self, user: str, record: MemoryRecord, result: bytes, now: float) -> None:
        self._check()
        try:
            pipe = self._sync().pipeline(transaction=False)
            self._put_commands(pipe, user, record, result, now)
            extra = self._overflow(user, pipe.execute()[-1])
            if extra:
                victims = [m for m, _ in self._sync().zpopmin(self.index_key(user), extra)]
                self._sync().delete(*[self.memory_key(user, _s(m)) for m in victims])
        except _ERRORS as exc:
            raise self._fail("store", exc) from exc

    async def aput(self, user: str, record: MemoryRecord, result: bytes, now: float) -> None:
        if self.async_client is None:
            return await super().aput(user, record, result, now)
        self._check()
        try:
            pipe = self.async_client.pipeline(transaction=False)
            self._put_commands(pipe, user, record, result, now)
            extra = self._overflow(user, (await pipe.execute())[-1])
            if extra:
                victims = [m for m, _ in await self.async_client.zpopmin(self.index_key(user), extra)]
                await self.async_client.delete(*[self.memory_key(user, _s(m)) for m in victims])
        except _ERRORS as exc:
            raise self._fail("store", exc) from exc

    # -- reads -------------------------------------------------------------------------------------------------
    def _parse(self, user: str, ids: list[Any], raw: list[Any]) -> tuple[list[MemoryRecord], list[str]]:
        records, gone = [], []
        for mid, data in zip(ids, raw):
            if data is None:
                gone.append(_s(mid))
                continue
            try:
                records.append(MemoryRecord.loads(data))
            except ValueError:
                gone.append(_s(mid))  # corrupt entry: drop it from the index, it is a miss
        return records, gone

    def records(self, user: str, now: float) -> list[MemoryRecord]:
        self._check()
        idx = self.index_key(user)
        try:
            client = self._sync()
            pipe = client.pipeline(transaction=False)
            pipe.zremrangebyscore(idx, "-inf", now)
            pipe.zrangebyscore(idx, f"({now!r}", "+inf")
            ids = pipe.execute()[1]
            if not ids:
                return []
            records, gone = self._parse(user, ids, client.mget([self.memory_key(user, _s(m)) for m in ids]))
            if gone:
                client.zrem(idx, *gone)
            return records
        except _ERRORS as exc:
            raise self._fail("read", exc) from exc

    async def arecords(self, user: str, now: float) -> list[MemoryRecord]:
        if self.async_client is None:
            return await super().arecords(user, now)
        self._check()
        idx = self.index_key(user)
        try:
            client = self.async_client
            pipe = client.pipeline(transaction=False)
            pipe.zremrangebyscore(idx, "-inf", now)
            pipe.zrangebyscore(idx, f"({now!r}", "+inf")
            ids = (await pipe.execute())[1]
            if not ids:
                return []
            raw = await client.mget([self.memory_key(user, _s(m)) for m in ids])
            records, gone = self._parse(user, ids, raw)
            if gone:
                await client.zrem(idx, *gone)
            return records
        except _ERRORS as exc:
            raise self._fail("read", exc) from exc

    def result(self, user: str, result_hash: str) -> bytes | None:
        self._check()
        try:
            return self._sync().get(self.result_key(user, result_hash))
        except _ERRORS as exc:
            raise self._fail("read", exc) from exc

    async def aresult(self, user: str, result_hash: str) -> bytes | None:
        if self.async_client is None:
            return await super().aresult(user, result_hash)
        self._check()
        try:
            return await self.async_client.get(self.result_key(user, result_hash))
        except _ERRORS as exc:
            raise self._fail("read", exc) from exc

    # -- forget ------------------------------------------------------------------------------------------------
    def _pattern(self, user: str) -> str:
        from promptcache.integrations.redis import glob_escape

        return glob_escape(self._base(user)) + "*"

    def forget(self, user: str) -> int:
        try:
            client = self._sync()
            count = client.zcard(self.index_key(user))
            keys = list(client.scan_iter(match=self._pattern(user), count=500))
            for i in range(0, len(keys), 500):
                client.unlink(*keys[i : i + 500])
            return int(count)
        except _ERRORS as exc:
            raise self._fail("forget", exc) from exc

    async def aforget(self, user: str) -> int:
        if self.async_client is None:
            return await super().aforget(user)
        try:
            client = self.async_client
            count = await client.zcard(self.index_key(user))
            keys = [k async for k in client.scan_iter(match=self._pattern(user), count=500)]
            for i in range(0, len(keys), 500):
                await client.unlink(*keys[i : i + 500])
            return int(count)
        except _ERRORS as exc:
            raise self._fail("forget", exc) from exc

    def close(self) -> None:
        """Close the sync client's connections."""
        if self.client is not None:
            self.client.close()

    async def aclose(self) -> None:
        """Close the async client's connections."""
        if self.async_client is not None:
            await self.async_client.aclose()


def _s(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)

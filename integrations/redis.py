"""Redis adapters: ``RedisCache`` (a ``ServerCache`` on redis-py, sync and ``redis.asyncio``).

Fail-open by design: any Redis error (server down, timeout, refused connection) turns a read into a miss and a
write into a no-op, logs one warning a minute, and opens a short circuit break (``breaker_s``) during which calls
return at once instead of waiting for another timeout. An error the server itself answers with (``WRONGTYPE`` for a
key of another type, say) is a miss for that call only: the server is up, so no break.

Redis Cluster: pass ``redis.cluster.RedisCluster`` / ``redis.asyncio.cluster.RedisCluster`` clients, or ``url`` with
``cluster=True``. Keys that are read together carry the same hash tag (``{...}``) so pipelines stay within one
slot; ``get_many`` on a cluster reads each slot's keys separately (redis-py's ``mget_nonatomic``), and ``clear``
scans every master. A dead master is an outage like any other (``CLUSTERDOWN``, a refused connection, a slot no
node serves): a miss, one warning a minute, a circuit break.
"""

from __future__ import annotations

import asyncio
import copy
import math
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, cast

from promptcache._log import ThrottledWarning, get_logger
from promptcache._metrics import PluginMetrics, PluginStats
from promptcache._option_checks import check_key_list
from promptcache.backends._base import (
    ServerCache,
    validate_clear_prefix,
    validate_key,
    validate_namespace,
    validate_ttl,
    validate_value,
)
from promptcache.integrations._redis_connection import (
    ERRORS,
    RedisConnection,
    cancel_count,
    glob_escape,
    is_cluster,
    reraise_swallowed_cancel,
    server_refused,
)

__all__ = [  # noqa: F822 (RedisIntentionBackend: lazy, below)
    "DEFAULT_NAMESPACE",
    "DEFAULT_REDIS_URL",
    "RedisCache",
    "RedisConnection",
    "RedisIntentionBackend",
]

DEFAULT_REDIS_URL = "redis://127.0.0.1:6379/0"
if TYPE_CHECKING:
    from promptcache.integrations._redis_intention import RedisIntentionBackend

_log = get_logger("promptcache.integrations.redis")
_ERRORS = ERRORS
DEFAULT_NAMESPACE = "cache:"
"""The namespace of ``RedisCache`` entries under the prefix (placements use ``placements:``, intention memories
``intent:``), so ``RedisCache.clear()`` never removes another component's keys."""


def _ms(ttl_s: float) -> int:
    return max(1, math.ceil(ttl_s * 1000))


class RedisCache(RedisConnection, ServerCache):
    """A ``ServerCache`` on Redis.

    Args:
        client: a ``redis.Redis`` / ``redis.cluster.RedisCluster`` (sync) or ``redis.asyncio.Redis`` /
            ``redis.asyncio.cluster.RedisCluster`` client.
        url: instead of ``client``, a Redis URL (``redis://host:port/db``); a sync client and, per event loop, an
            async client are made with short timeouts (``socket_timeout_s``), so async calls work in every
            ``asyncio.run`` (see `RedisConnection`).
        async_client: an async client to use with ``client`` (otherwise async calls run the sync client in a
            thread; a lone async client makes sync calls raise ``RuntimeError``).
        prefix: the application's key prefix (default ``"promptcache:"``; ``""`` is refused).
        namespace: this cache's namespace under the prefix (default ``"cache:"``): a key ``k`` is stored as
            ``prefix + namespace + k``, and ``clear`` only ever touches ``prefix + namespace``. Other components
            keep their own (Bedrock placements ``placements:``, via `namespaced`; intention memories
            ``intent:``).
        socket_timeout_s: connect and read timeout for clients made from ``url`` (seconds, default 0.25).
        breaker_s: after a failure, calls return a miss at once for this many seconds (default 2.0).
        cluster: with ``url``, make Redis Cluster clients (``RedisCluster.from_url``: the URL names one node, the
            others are discovered; no retries, so a dead master is a miss in milliseconds); default False.

    A client you pass in keeps its own timeouts and retry policy: redis-py's defaults retry a refused connection
    with backoff, so the first failing call can take seconds before the break opens. Give such clients short
    ``socket_timeout``/``socket_connect_timeout`` and ``retry=Retry(NoBackoff(), 0)`` (redis-py), or pass ``url``:
    clients made from it fail in milliseconds.

    Raises:
        TypeError: neither ``client`` nor ``url``, or a client of another type; see `RedisConnection._connect`
            for the other arguments. ValueError: an empty ``prefix``; a bad ``namespace``
            (`validate_namespace`).
    """

    def __init__(
        self,
        client: object = None,
        *,
        url: str | None = None,
        async_client: object = None,
        prefix: str = "promptcache:",
        namespace: str = DEFAULT_NAMESPACE,
        socket_timeout_s: float = 0.25,
        breaker_s: float = 2.0,
        cluster: bool = False,
    ) -> None:
        self.namespace = validate_namespace(namespace)
        self._connect(
            client,
            url=url,
            async_client=async_client,
            prefix=prefix,
            socket_timeout_s=socket_timeout_s,
            breaker_s=breaker_s,
            cluster=cluster,
        )
        self._keys_at = self.prefix + self.namespace
        self._warning = ThrottledWarning(_log)
        self.failures = 0
        self.metrics = PluginMetrics("redis_cache", prefix)

    def stats(self, reset: bool = False) -> PluginStats:
        """``errors``: Redis calls that failed and were answered as a miss or a skipped write (as ``failures``, which
        is never reset). Hits and misses are counted by the plugin using the cache (e.g. ``ResponseCache.stats()``).
        Also sent to OpenTelemetry as ``promptcache.redis_cache.errors`` (`promptcache._metrics`)."""
        return self.metrics.snapshot(reset)

    def namespaced(self, namespace: str) -> RedisCache:
        """A ``RedisCache`` on the same connections (and settings) whose keys are ``prefix + namespace + key``; its
        ``clear()`` removes that namespace's keys only, and this cache's ``clear()`` never reaches them.

        Raises:
            TypeError / ValueError: a bad namespace (`validate_namespace`).
        """
        view = copy.copy(self)  # shares the clients, the per-loop async clients and their lock
        view.namespace = validate_namespace(namespace)
        view._keys_at = view.prefix + view.namespace
        view._warning = ThrottledWarning(_log)
        view.failures = 0
        return view

    # -- circuit breaker -----------------------------------------------------------------------------------
    def _failed(self, op: str, exc: BaseException) -> None:
        self.failures += 1
        self.metrics.error()
        self._open_break()
        self._warning.warn("promptcache: Redis %s failed; treating as a miss for %.1fs", op, self.breaker_s, exc=exc)

    def _error(self, op: str, exc: BaseException) -> None:
        """A failed call: a reply the server gave (``ResponseError``, e.g. WRONGTYPE on one key) is a miss for this
        call only; anything else (refused, timed out) opens the circuit break."""
        if server_refused(exc):
            self._key_error(op, exc)
        else:
            self._failed(op, exc)

    def _key_error(self, op: str, exc: BaseException) -> None:
        self.failures += 1
        self.metrics.error()
        self._warning.warn("promptcache: Redis %s refused by the server; treating it as a miss", op, exc=exc)

    # ``Any``: a command runs on a sync or a ``redis.asyncio`` client (``_arun`` falls back to the sync one), whose
    # replies redis-py declares as ``Awaitable[Any] | Any`` for both; each caller states the reply's type.
    def _run(self, op: str, fn: Any, default: Any) -> Any:
        if not self._available():
            return default
        try:
            return fn(self._sync())
        except _ERRORS as exc:
            self._error(op, exc)
            return default

    async def _arun(self, op: str, fn: Any, default: Any) -> Any:
        if not self._available():
            return default
        client = self.async_client
        if client is None:
            return await asyncio.to_thread(self._run, op, fn, default)
        before = cancel_count()
        try:
            return await fn(client)
        except _ERRORS as exc:
            self._error(op, exc)
            return default
        finally:
            reraise_swallowed_cancel(before)

    def full_key(self, key: str) -> str:
        """The Redis key for ``key``: ``prefix + namespace + key``."""
        return self._keys_at + validate_key(key)

    @staticmethod
    def _set_args(ttl_s: float | None) -> dict[str, int]:
        return {} if ttl_s is None else {"px": _ms(ttl_s)}

    # -- sync ------------------------------------------------------------------------------------------------
    def get(self, key: str) -> bytes | None:
        # The hot path of every cache hit: one GET, no closure, no extra calls (same behaviour as ``_run``).
        k = self.full_key(key)
        if time.monotonic() < self._open_until:
            return None
        client = self._sync()
        try:
            return cast("bytes | None", client.get(k))  # bytes: the clients are made without decode_responses
        except _ERRORS as exc:
            self._error("GET", exc)
            return None

    def get_many(self, keys: Sequence[str]) -> list[bytes | None]:
        ks = [self.full_key(k) for k in check_key_list(keys)]
        if not ks:
            return []
        values: list[bytes | None] = self._run(
            "MGET", lambda c: c.mget_nonatomic(ks) if is_cluster(c) else c.mget(ks), [None] * len(ks)
        )
        return values

    def set(self, key: str, value: bytes, ttl_s: float | None = None) -> None:
        k, v, ttl_s = self.full_key(key), validate_value(value), validate_ttl(ttl_s)
        self._run("SET", lambda c: c.set(k, v, **self._set_args(ttl_s)), None)

    def delete(self, key: str) -> None:
        k = self.full_key(key)
        self._run("DEL", lambda c: c.delete(k), None)

    def clear(self, prefix: str = "") -> int:
        pattern = glob_escape(self._keys_at + validate_clear_prefix(prefix)) + "*"

        def clear(c: Any) -> int:
            removed = 0
            batch: list[Any] = []
            for k in c.scan_iter(match=pattern, count=500):
                batch.append(k)
                if len(batch) >= 500:
                    removed += c.unlink(*batch)
                    batch.clear()
            if batch:
                removed += c.unlink(*batch)
            return removed

        removed: int = self._run("SCAN/UNLINK", clear, 0)
        return removed

    def ttl(self, key: str) -> float | None:
        k = self.full_key(key)
        ms = self._run("PTTL", lambda c: c.pttl(k), -2)
        return None if ms is None or ms < 0 else ms / 1000.0

    # -- async -----------------------------------------------------------------------------------------------
    async def aget(self, key: str) -> bytes | None:
        k = self.full_key(key)
        client = self.async_client
        if client is None or time.monotonic() < self._open_until:
            found: bytes | None = await self._arun("GET", lambda c: c.get(k), None)
            return found
        before = cancel_count()
        try:
            return cast("bytes | None", await client.get(k))  # bytes: no decode_responses
        except _ERRORS as exc:
            self._error("GET", exc)
            return None
        finally:
            reraise_swallowed_cancel(before)

    async def aget_many(self, keys: Sequence[str]) -> list[bytes | None]:
        ks = [self.full_key(k) for k in check_key_list(keys)]
        if not ks:
            return []
        values: list[bytes | None] = await self._arun(
            "MGET", lambda c: c.mget_nonatomic(ks) if is_cluster(c) else c.mget(ks), [None] * len(ks)
        )
        return values

    async def aset(self, key: str, value: bytes, ttl_s: float | None = None) -> None:
        k, v, ttl_s = self.full_key(key), validate_value(value), validate_ttl(ttl_s)
        await self._arun("SET", lambda c: c.set(k, v, **self._set_args(ttl_s)), None)

    async def adelete(self, key: str) -> None:
        k = self.full_key(key)
        await self._arun("DEL", lambda c: c.delete(k), None)

    async def aclear(self, prefix: str = "") -> int:
        pattern = glob_escape(self._keys_at + validate_clear_prefix(prefix)) + "*"

        async def clear(c: Any) -> int:
            keys = [k async for k in c.scan_iter(match=pattern, count=500)]
            removed = 0
            for i in range(0, len(keys), 500):
                removed += await c.unlink(*keys[i : i + 500])
            return removed

        removed: int = await self._arun("SCAN/UNLINK", clear, 0)
        return removed


def __getattr__(name: str) -> type[RedisIntentionBackend]:
    # The Redis intention backend lives in its own module; re-exported here (docs/architecture.md, "Source layout").
    if name == "RedisIntentionBackend":
        from promptcache.integrations._redis_intention import RedisIntentionBackend

        return RedisIntentionBackend
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

"""Redis adapters: ``RedisCache`` (a ``ServerCache`` on redis-py, sync and ``redis.asyncio``).

Fail-open by design: any Redis error (server down, timeout, refused connection) turns a read into a miss and a
write into a no-op, logs one warning a minute, and opens a short circuit break (``breaker_s``) during which calls
return at once instead of waiting for another timeout. An error the server itself answers with (``WRONGTYPE`` for a
key of another type, say) is a miss for that call only: the server is up, so no break. ``redis.cluster.RedisCluster`` clients work too; keys that
are read together carry the same hash tag (``{...}``) so multi-key commands stay within one slot.
"""

from __future__ import annotations

import asyncio
import math
import threading
import time
import weakref
from collections.abc import Sequence
from typing import Any

import redis
import redis.asyncio as aioredis

from promptcache._log import ThrottledWarning, get_logger
from promptcache.backends.base import (
    ServerCache,
    validate_key,
    validate_ttl,
    validate_value,
)

__all__ = ["DEFAULT_REDIS_URL", "RedisCache", "RedisConnection", "RedisIntentionBackend", "glob_escape"]  # noqa: F822 (lazy, below)

DEFAULT_REDIS_URL = "redis://127.0.0.1:6379/0"
_log = get_logger("promptcache.integrations.redis")
_ERRORS = (redis.RedisError, OSError, asyncio.TimeoutError)


def glob_escape(text: str) -> str:
    """Escape Redis glob specials (``* ? [ ] \\``) so ``text`` matches itself in ``SCAN MATCH``."""
    return "".join("\\" + ch if ch in "*?[]\\" else ch for ch in text)


def _seconds(value: Any, what: str, *, allow_zero: bool) -> float:
    """A finite, non-negative number of seconds (> 0 unless ``allow_zero``); raises naming ``what`` and the value."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{what} must be a number of seconds, got {type(value).__name__}: {value!r}")
    if not math.isfinite(value) or value < 0 or (value == 0 and not allow_zero):
        raise ValueError(f"{what} must be a finite number of seconds {'>=' if allow_zero else '>'} 0, got {value!r}")
    return float(value)


def _ms(ttl_s: float) -> int:
    return max(1, math.ceil(ttl_s * 1000))


class RedisConnection:
    """The sync + ``redis.asyncio`` clients and the circuit break shared by promptcache's Redis adapters.

    Subclasses call :meth:`_connect` from ``__init__``; it sets ``client``, the async client(s), ``prefix``,
    ``breaker_s`` and the break state. Clients made from a URL get ``socket_timeout_s`` as their connect and read
    timeouts, so a dead server fails in milliseconds.

    A ``redis.asyncio`` client belongs to the event loop it first connects in. Built from a URL, the adapter keeps
    one async client per running event loop (made on first use in that loop, held in a weak mapping keyed by the
    loop, created under a lock), so every ``asyncio.run`` (a CLI, a Celery task, a notebook cell) gets a working
    client; clients of closed loops are dropped when the next loop's client is made and by ``close()``. An async
    client you pass in is used as given, in whatever loop you call from (your responsibility).
    """

    client: Any
    prefix: str
    breaker_s: float
    _open_until: float
    _async_given: Any = None
    _async_url: str | None = None
    _async_opts: dict[str, Any]
    _async_by_loop: weakref.WeakKeyDictionary[Any, Any]

    def _connect(
        self, client: Any, *, url: str | None, async_client: Any, prefix: str, socket_timeout_s: float, breaker_s: float
    ) -> None:
        """Validate the arguments (named in errors, before any connection is made) and set up the clients.

        Raises:
            TypeError: no client and no url; ``url``/``prefix`` not strings; a client that is not redis-py's;
                timeouts that are not numbers. ValueError: negative, zero (timeout) or non-finite seconds; a client
                made with ``decode_responses=True`` (it would return ``str`` where the backends read bytes).
        """
        owner = type(self).__name__
        if not isinstance(prefix, str):
            raise TypeError(f"prefix must be a str, got {prefix!r}")
        if url is not None and not isinstance(url, str):
            raise TypeError(f"url must be a str such as 'redis://127.0.0.1:6379/0', got {type(url).__name__}: {url!r}")
        socket_timeout_s = _seconds(socket_timeout_s, "socket_timeout_s", allow_zero=False)
        breaker_s = _seconds(breaker_s, "breaker_s", allow_zero=True)
        if client is None and url is None and async_client is None:
            raise TypeError(f"{owner} needs a client or a url")
        opts = {"socket_timeout": socket_timeout_s, "socket_connect_timeout": socket_timeout_s}
        if url is not None:  # the async clients are made per event loop, on first use (async_client)
            client, async_client = redis.Redis.from_url(url, **opts), None
        for name, given in (("client", client), ("async_client", async_client)):
            kwargs = getattr(given, "get_connection_kwargs", None)
            if callable(kwargs) and kwargs().get("decode_responses"):
                raise ValueError(
                    f"{name} was made with decode_responses=True; {owner} stores bytes (JSON that may "
                    "not be text) and needs a client that returns bytes: make one without it"
                )
        if isinstance(client, aioredis.Redis):
            client, async_client = None, client
        if client is not None and not hasattr(client, "execute_command"):
            raise TypeError(f"client must be a redis-py client, got {type(client).__name__}")
        self.client = client
        self._async_given = async_client
        self._async_url = url
        self._async_opts = opts
        self._async_by_loop = weakref.WeakKeyDictionary()
        self.prefix = prefix
        self.breaker_s = breaker_s
        self._open_until = 0.0
        self._lock = threading.Lock()

    def _available(self) -> bool:
        """False while the circuit break after a failure lasts."""
        return time.monotonic() >= self._open_until

    def _open_break(self) -> None:
        with self._lock:
            self._open_until = time.monotonic() + self.breaker_s

    def _sync(self) -> Any:
        if self.client is None:
            raise RuntimeError(f"this {type(self).__name__} has only an async client; use the a* methods")
        return self.client

    @property
    def async_client(self) -> Any:
        """The ``redis.asyncio`` client for the running event loop, or ``None`` when there is none to use (no async
        client was given; or, for an adapter built from a URL, no event loop is running here).

        Built from a URL: one client per event loop, made on the first call in that loop. The hot path is one
        lookup in a mapping keyed (weakly) by the running loop.
        """
        if self._async_url is None:
            return self._async_given
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return None
        try:
            client = self._async_by_loop.get(loop)
        except TypeError:  # a loop that cannot be weakly referenced: async calls run the sync client in a thread
            return None
        return client if client is not None else self._loop_client(loop)

    def _loop_client(self, loop: asyncio.AbstractEventLoop) -> Any:
        """Make (once, under the lock) the async client of ``loop``; forget the clients of closed loops."""
        with self._lock:
            client = self._async_by_loop.get(loop)
            if client is None:
                self._drop_closed_loops()
                client = aioredis.Redis.from_url(self._async_url, **self._async_opts)
                self._async_by_loop[loop] = client
            return client

    def _drop_closed_loops(self) -> None:
        # A client keeps its loop alive (its connections refer to it), so the weak key alone would not free it.
        # Its sockets are closed when it is collected; they cannot be closed cleanly once their loop is.
        for loop in [lp for lp in list(self._async_by_loop.keys()) if lp.is_closed()]:
            self._async_by_loop.pop(loop, None)

    def close(self) -> None:
        """Close the sync client's connections and forget async clients of closed event loops (an async client
        of a running loop: ``await obj.aclose()`` in that loop)."""
        if self.client is not None:
            self.client.close()
        with self._lock:
            self._drop_closed_loops()

    async def aclose(self) -> None:
        """Close the async client's connections: the one given, or (built from a URL) the running loop's client.
        A later async call in this loop makes a new one."""
        if self._async_url is None:
            if self._async_given is not None:
                await self._async_given.aclose()
            return
        with self._lock:
            client = self._async_by_loop.pop(asyncio.get_running_loop(), None)
        if client is not None:
            await client.aclose()


class RedisCache(RedisConnection, ServerCache):
    """A ``ServerCache`` on Redis.

    Args:
        client: a ``redis.Redis`` / ``redis.cluster.RedisCluster`` (sync) or ``redis.asyncio.Redis`` client.
        url: instead of ``client``, a Redis URL (``redis://host:port/db``); a sync client and, per event loop, an
            async client are made with short timeouts (``socket_timeout_s``), so async calls work in every
            ``asyncio.run`` (see :class:`RedisConnection`).
        async_client: an async client to use with ``client`` (otherwise async calls run the sync client in a
            thread; a lone async client makes sync calls raise ``RuntimeError``).
        prefix: prepended to every key (default ``"promptcache:"``); ``clear`` only ever touches this prefix.
        socket_timeout_s: connect and read timeout for clients made from ``url`` (seconds, default 0.25).
        breaker_s: after a failure, calls return a miss at once for this many seconds (default 2.0).

    A client you pass in keeps its own timeouts and retry policy: redis-py's defaults retry a refused connection
    with backoff, so the first failing call can take seconds before the break opens. Give such clients short
    ``socket_timeout``/``socket_connect_timeout`` and ``retry=Retry(NoBackoff(), 0)`` (redis-py), or pass ``url``:
    clients made from it fail in milliseconds.

    Raises:
        TypeError: neither ``client`` nor ``url``, or a client of another type.
    """

    def __init__(
        self,
        client: Any = None,
        *,
        url: str | None = None,
        async_client: Any = None,
        prefix: str = "promptcache:",
        socket_timeout_s: float = 0.25,
        breaker_s: float = 2.0,
    ) -> None:
        self._connect(
            client,
            url=url,
            async_client=async_client,
            prefix=prefix,
            socket_timeout_s=socket_timeout_s,
            breaker_s=breaker_s,
        )
        self._warning = ThrottledWarning(_log)
        self.failures = 0

    # -- circuit breaker -----------------------------------------------------------------------------------
    def _failed(self, op: str, exc: BaseException) -> None:
        self.failures += 1
        self._open_break()
        self._warning.warn("promptcache: Redis %s failed; treating as a miss for %.1fs", op, self.breaker_s, exc=exc)

    def _error(self, op: str, exc: BaseException) -> None:
        """A failed call: a reply the server gave (``ResponseError``, e.g. WRONGTYPE on one key) is a miss for this
        call only; anything else (refused, timed out) opens the circuit break."""
        if isinstance(exc, redis.ResponseError):
            self._key_error(op, exc)
        else:
            self._failed(op, exc)

    def _key_error(self, op: str, exc: BaseException) -> None:
        self.failures += 1
        self._warning.warn("promptcache: Redis %s refused by the server; treating it as a miss", op, exc=exc)

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
        try:
            return await fn(client)
        except _ERRORS as exc:
            self._error(op, exc)
            return default

    def full_key(self, key: str) -> str:
        """The Redis key for ``key`` (the prefix added)."""
        return self.prefix + validate_key(key)

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
            return client.get(k)
        except _ERRORS as exc:
            self._error("GET", exc)
            return None

    def get_many(self, keys: Sequence[str]) -> list[bytes | None]:
        ks = [self.full_key(k) for k in keys]
        if not ks:
            return []
        return self._run("MGET", lambda c: c.mget(ks), [None] * len(ks))

    def set(self, key: str, value: bytes, ttl_s: float | None = None) -> None:
        k, v, ttl_s = self.full_key(key), validate_value(value), validate_ttl(ttl_s)
        self._run("SET", lambda c: c.set(k, v, **self._set_args(ttl_s)), None)

    def delete(self, key: str) -> None:
        k = self.full_key(key)
        self._run("DEL", lambda c: c.delete(k), None)

    def clear(self, prefix: str = "") -> int:
        pattern = glob_escape(self.prefix + prefix) + "*"

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

        return self._run("SCAN/UNLINK", clear, 0)

    def ttl(self, key: str) -> float | None:
        k = self.full_key(key)
        ms = self._run("PTTL", lambda c: c.pttl(k), -2)
        return None if ms is None or ms < 0 else ms / 1000.0

    # -- async -----------------------------------------------------------------------------------------------
    async def aget(self, key: str) -> bytes | None:
        k = self.full_key(key)
        client = self.async_client
        if client is None or time.monotonic() < self._open_until:
            return await self._arun("GET", lambda c: c.get(k), None)
        try:
            return await client.get(k)
        except _ERRORS as exc:
            self._error("GET", exc)
            return None

    async def aget_many(self, keys: Sequence[str]) -> list[bytes | None]:
        ks = [self.full_key(k) for k in keys]
        if not ks:
            return []
        return await self._arun("MGET", lambda c: c.mget(ks), [None] * len(ks))

    async def aset(self, key: str, value: bytes, ttl_s: float | None = None) -> None:
        k, v, ttl_s = self.full_key(key), validate_value(value), validate_ttl(ttl_s)
        await self._arun("SET", lambda c: c.set(k, v, **self._set_args(ttl_s)), None)

    async def adelete(self, key: str) -> None:
        k = self.full_key(key)
        await self._arun("DEL", lambda c: c.delete(k), None)

    async def aclear(self, prefix: str = "") -> int:
        pattern = glob_escape(self.prefix + prefix) + "*"

        async def clear(c: Any) -> int:
            keys = [k async for k in c.scan_iter(match=pattern, count=500)]
            removed = 0
            for i in range(0, len(keys), 500):
                removed += await c.unlink(*keys[i : i + 500])
            return removed

        return await self._arun("SCAN/UNLINK", clear, 0)


def __getattr__(name: str) -> Any:
    # The Redis intention backend lives in its own module; re-exported here (docs/architecture.md, "Source layout").
    if name == "RedisIntentionBackend":
        from promptcache.integrations.redis_intention import RedisIntentionBackend

        return RedisIntentionBackend
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

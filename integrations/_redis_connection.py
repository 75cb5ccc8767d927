"""``RedisConnection``: the sync + ``redis.asyncio`` clients, Redis Cluster support and the circuit break shared by
promptcache's Redis adapters (``RedisCache``, ``RedisIntentionBackend``), and the errors they treat as a miss.

Cancellation: redis-py's asyncio clients can swallow a task's cancellation that lands inside a command (seen with
redis-py 8.1: the command returns and the task runs on, so a cancelled agent call would still call the model and
write the cache; far more often on a ``RedisCluster`` client's first call, while it discovers the cluster). The
adapters' async methods re-raise ``CancelledError`` when the task's cancellation count (``Task.cancelling()``,
Python >= 3.11) grew during the call (`cancel_count`, `reraise_swallowed_cancel`).
"""

from __future__ import annotations

import asyncio
import functools
import math
import threading
import time
import weakref
from collections.abc import Awaitable, Callable, Coroutine
from typing import ParamSpec, TypeAlias, TypeVar, Union, cast

from promptcache._errors import missing_extra

try:
    import redis
    import redis.asyncio as aioredis
    from redis.asyncio.retry import Retry as AsyncRetry
    from redis.backoff import NoBackoff
    from redis.retry import Retry
except ImportError as exc:  # the optional dependency of this module
    raise missing_extra("redis", exc) from exc

from promptcache._config import check_unicode

__all__ = [
    "ERRORS",
    "RedisConnection",
    "cancel_count",
    "glob_escape",
    "is_cluster",
    "keeps_cancellation",
    "reraise_swallowed_cancel",
    "server_refused",
]

SyncClient: TypeAlias = Union["redis.Redis", "redis.cluster.RedisCluster"]
"""A sync redis-py client: ``redis.Redis`` or ``redis.cluster.RedisCluster`` (made without ``decode_responses``)."""
AsyncClient: TypeAlias = Union["aioredis.Redis", "aioredis.RedisCluster"]
"""A ``redis.asyncio`` client: ``Redis`` or ``RedisCluster`` (made without ``decode_responses``)."""
_T = TypeVar("_T")
_P = ParamSpec("_P")

ERRORS = (redis.RedisError, redis.exceptions.RedisClusterException, OSError, asyncio.TimeoutError)
"""What a Redis call may raise that the adapters turn into a miss (``RedisClusterException`` is not a
``RedisError``: redis-py raises it for a slot no node serves, or keys of several slots in one command)."""
_CLUSTER_CLIENTS = (redis.cluster.RedisCluster, aioredis.RedisCluster)
_ASYNC_CLIENTS = (aioredis.Redis, aioredis.RedisCluster)


def is_cluster(client: object) -> bool:
    """True for redis-py's Redis Cluster clients (sync or asyncio)."""
    return isinstance(client, _CLUSTER_CLIENTS)


def server_refused(exc: BaseException) -> bool:
    """True when the server answered ``exc`` for this command alone (``WRONGTYPE`` on one key, say): the server is
    up, no circuit break. ``CLUSTERDOWN`` (a master is gone) is an outage, not a refusal."""
    return isinstance(exc, redis.ResponseError) and not isinstance(exc, redis.exceptions.ClusterDownError)


def glob_escape(text: str) -> str:
    """Escape Redis glob specials (``* ? [ ] \\``) so ``text`` matches itself in ``SCAN MATCH``."""
    return "".join("\\" + ch if ch in "*?[]\\" else ch for ch in text)


MAX_SECONDS = 86_400.0
"""The longest timeout or break the Redis backends take (one day): a bound, not a measurement. A cache call that
may wait longer is a hang, and far larger values overflow the platform's ``time_t`` inside the socket layer, so every
call would fail."""


def _seconds(value: object, what: str, *, allow_zero: bool) -> float:
    """A finite number of seconds from 0 to `MAX_SECONDS` (> 0 unless ``allow_zero``); raises naming ``what`` and
    the value."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{what} must be a number of seconds, got {type(value).__name__}: {value!r}")
    if not math.isfinite(value) or value < 0 or (value == 0 and not allow_zero) or value > MAX_SECONDS:
        low = ">=" if allow_zero else ">"
        raise ValueError(f"{what} must be a finite number of seconds {low} 0 and <= {MAX_SECONDS:,.0f}, got {value!r}")
    return float(value)


def cancel_count() -> int | None:
    """The running task's pending cancellation requests (``Task.cancelling()``), or ``None`` (no task, or Python
    3.10, which does not count them)."""
    task = asyncio.current_task()
    cancelling = getattr(task, "cancelling", None)
    return cancelling() if cancelling is not None else None


def reraise_swallowed_cancel(before: int | None) -> None:
    """Raise ``CancelledError`` when the running task was cancelled since `cancel_count` returned ``before``
    but the cancellation never reached the caller (redis-py swallowed it)."""
    if before is not None and (now := cancel_count()) is not None and now > before:
        raise asyncio.CancelledError("cancelled during a Redis call (the cancellation was swallowed by the client)")


def keeps_cancellation(fn: Callable[_P, Awaitable[_T]]) -> Callable[_P, Coroutine[object, object, _T]]:
    """Decorate an async method so a cancellation redis-py swallowed during it is raised at its end."""

    @functools.wraps(fn)
    async def wrapper(*args: _P.args, **kwargs: _P.kwargs) -> _T:
        before = cancel_count()
        try:
            return await fn(*args, **kwargs)
        finally:
            reraise_swallowed_cancel(before)

    return wrapper


class RedisConnection:
    """The sync + ``redis.asyncio`` clients and the circuit break shared by promptcache's Redis adapters.

    Subclasses call `_connect` from ``__init__``; it sets ``client``, the async client(s), ``prefix``,
    ``breaker_s`` and the break state. Clients made from a URL get ``socket_timeout_s`` as their connect and read
    timeouts, so a dead server fails in milliseconds.

    A ``redis.asyncio`` client belongs to the event loop it first connects in. Built from a URL, the adapter keeps
    one async client per running event loop (made on first use in that loop, held in a weak mapping keyed by the
    loop, created under a lock), so every ``asyncio.run`` (a CLI, a Celery task, a notebook cell) gets a working
    client; clients of closed loops are dropped when the next loop's client is made and by ``close()``. An async
    client you pass in is used as given, in whatever loop you call from (your responsibility).
    """

    client: SyncClient | None
    prefix: str
    breaker_s: float
    _open_until: float
    _async_given: AsyncClient | None = None
    _async_url: str | None = None
    _socket_timeout_s: float
    _async_by_loop: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, AsyncClient]
    _async_retry: bool = False

    def _connect(
        self,
        client: object,
        *,
        url: str | None,
        async_client: object,
        prefix: str,
        socket_timeout_s: float,
        breaker_s: float,
        cluster: bool = False,
    ) -> None:
        """Validate the arguments (named in errors, before any connection is made) and set up the clients.

        Raises:
            TypeError: no client and no url, or ``url`` together with a client; ``url``/``prefix`` not strings; a
                client that is not redis-py's (``async_client``: not a ``redis.asyncio`` client); timeouts that are
                not numbers; ``cluster`` not a bool. ValueError: an empty ``prefix`` (a ``clear()`` would then reach
                every key of the database, other applications' too) or one with a lone surrogate; negative, zero
                (timeout) or non-finite seconds; a client made with ``decode_responses=True`` (it would return
                ``str`` where the backends read bytes).
        """
        owner = type(self).__name__
        if not isinstance(prefix, str):
            raise TypeError(f"prefix must be a str, got {prefix!r}")
        if not prefix:
            raise ValueError(
                f"prefix must be a non-empty string such as 'promptcache:' (with '', {owner}'s keys would mix with "
                "every other key of the database), got ''"
            )
        check_unicode(prefix, "prefix")
        if url is not None and not isinstance(url, str):
            raise TypeError(f"url must be a str such as 'redis://127.0.0.1:6379/0', got {type(url).__name__}: {url!r}")
        if url is not None and (client is not None or async_client is not None):
            raise TypeError(f"{owner}: give either url or client/async_client, not both")
        if async_client is not None and not isinstance(async_client, _ASYNC_CLIENTS):
            raise TypeError(
                f"async_client must be a redis.asyncio client (redis.asyncio.Redis or RedisCluster), got "
                f"{type(async_client).__name__}"
            )
        socket_timeout_s = _seconds(socket_timeout_s, "socket_timeout_s", allow_zero=False)
        breaker_s = _seconds(breaker_s, "breaker_s", allow_zero=True)
        if client is None and url is None and async_client is None:
            raise TypeError(f"{owner} needs a client or a url")
        if not isinstance(cluster, bool):
            raise TypeError(f"cluster must be a bool, got {type(cluster).__name__}: {cluster!r}")
        self._async_retry = cluster
        if url is not None:  # the async clients are made per event loop, on first use (async_client)
            # A cluster client's default retry policy (10 attempts with backoff, redis-py 8) turned one call to a
            # dead master into seconds of waiting; a cache answers with a miss instead (redirects still follow).
            timeouts = {"socket_timeout": socket_timeout_s, "socket_connect_timeout": socket_timeout_s}
            client = (
                redis.cluster.RedisCluster.from_url(url, retry=Retry(NoBackoff(), 0), **timeouts)
                if cluster
                else redis.Redis.from_url(url, **timeouts)
            )
            async_client = None
        for name, given in (("client", client), ("async_client", async_client)):
            kwargs = getattr(given, "get_connection_kwargs", None)
            if callable(kwargs) and kwargs().get("decode_responses"):
                raise ValueError(
                    f"{name} was made with decode_responses=True; {owner} stores bytes (JSON that may "
                    "not be text) and needs a client that returns bytes: make one without it"
                )
        if isinstance(client, _ASYNC_CLIENTS):
            if async_client is not None:
                raise TypeError(f"{owner}: client is an async client; pass it as async_client, with a sync client")
            client, async_client = None, client
        if client is not None and not hasattr(client, "execute_command"):
            raise TypeError(f"client must be a redis-py client, got {type(client).__name__}")
        # Any object with ``execute_command`` is taken as a sync redis-py client (a subclass, a wrapper of one).
        self.client = cast("SyncClient | None", client)
        self._async_given = async_client
        self._async_url = url
        self._socket_timeout_s = socket_timeout_s
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

    def _sync(self) -> SyncClient:
        if self.client is None:
            raise RuntimeError(f"this {type(self).__name__} has only an async client; use the a* methods")
        return self.client

    @property
    def async_client(self) -> AsyncClient | None:
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
        return client if client is not None else self._loop_client(loop, self._async_url)

    def _loop_client(self, loop: asyncio.AbstractEventLoop, url: str) -> AsyncClient:
        """Make (once, under the lock) the async client of ``loop``; forget the clients of closed loops."""
        with self._lock:
            client = self._async_by_loop.get(loop)
            if client is None:
                self._drop_closed_loops()
                timeout = self._socket_timeout_s
                client = (
                    aioredis.RedisCluster.from_url(
                        url, socket_timeout=timeout, socket_connect_timeout=timeout, retry=AsyncRetry(NoBackoff(), 0)
                    )
                    if self._async_retry
                    else aioredis.Redis.from_url(url, socket_timeout=timeout, socket_connect_timeout=timeout)
                )
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

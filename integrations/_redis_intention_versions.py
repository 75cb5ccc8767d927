"""The version counter and the repairs of `RedisIntentionBackend`: Lua scripts and the reading of pipeline replies.

A process reuses the records it parsed while a user's version counter reads the same value it read them at, so the
counter must never show a value twice for different contents. It therefore starts at a random 62-bit value (from
``secrets``), not at 1: after a ``forget()``, or after Redis lost the user's keys, the counter restarts elsewhere
and no process's cached value can match it by chance (odds 2**-61 per restart). It is created, incremented and
given the caller's TTL by one script (`BUMP_SCRIPT`), atomically, so a ``forget()`` racing a store can never
leave a counter without a TTL or restarting at a small number.

Damaged entries cost no more than themselves (each logged, at most once a minute): a memory record that is not a
record (not JSON, or a field of the wrong type) is dropped from the index, a miss for that memory only; a version
counter that is not an integer (or not a string key) is read as "unknown" (no cached records reused) and replaced,
by the write that finds it, with a random value no process can have cached (the write itself succeeds). An index
key of another type than a sorted set (``WRONGTYPE``) is deleted with the user's counter by the store or read that
finds it (logged at most once a minute; a store then goes on and succeeds, a read is a miss), so it never locks the
user out nor has its TTL pushed out by the failing stores.
"""

from __future__ import annotations

import math
import secrets
from collections.abc import Sequence
from typing import TYPE_CHECKING, TypeAlias, Union, cast

import redis

from promptcache._keys import hash_tag
from promptcache._log import ThrottledWarning
from promptcache.integrations._redis_connection import AsyncClient, SyncClient

__all__ = [
    "BUMP_SCRIPT",
    "Pipe",
    "RedisText",
    "Replies",
    "REPLACE_INDEX_SCRIPT",
    "VersionRepairs",
    "unreadable_as_corrupt",
    "wrong_type",
    "as_str",
    "index_refused",
    "new_version",
    "read_version",
    "rows_ttl_ms",
    "settle",
]

if TYPE_CHECKING:
    import redis.asyncio.client
    import redis.asyncio.cluster
    import redis.client
    import redis.cluster

Pipe: TypeAlias = Union[
    "redis.client.Pipeline",
    "redis.cluster.ClusterPipeline",
    "redis.asyncio.client.Pipeline",
    "redis.asyncio.cluster.ClusterPipeline",
]
"""A pipeline (sync or async, standalone or Cluster) the backend queues commands on."""

RedisText: TypeAlias = Union[bytes, str]
"""A bulk-string reply: ``bytes``, or ``str`` from a client made with ``decode_responses=True``."""

Replies: TypeAlias = Sequence[object]
"""A pipeline's replies (``execute(raise_on_error=False)``: a reply, or the exception a command raised)."""

BUMP_SCRIPT = """
if redis.call('EXISTS', KEYS[1]) == 0 then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
end
redis.call('INCR', KEYS[1])
redis.call('PEXPIRE', KEYS[1], ARGV[2], 'NX')
redis.call('PEXPIRE', KEYS[1], ARGV[2], 'GT')
return redis.call('GET', KEYS[1])
"""
"""``KEYS[1]``: the version counter; ``ARGV[1]``: its start value when missing (`new_version`); ``ARGV[2]``:
the TTL (ms) it gets when it has none, or when it is longer than its current one (``PEXPIRE NX``/``GT``, Redis >=
7.0). Returns the new value as the counter's text (a Lua number would round a 62-bit value); a counter that is not an integer (or another type of key) makes the script fail (the
caller repairs it)."""

REPLACE_INDEX_SCRIPT = """
local t = redis.call('TYPE', KEYS[1]).ok
if t == 'zset' or t == 'none' then
  return false
end
redis.call('DEL', KEYS[1], KEYS[2])
return t
"""
"""``KEYS[1]``: a user's index; ``KEYS[2]``: the user's version counter. When the index is another type of key
than a sorted set, both are deleted (the next store makes them afresh: a new random version, so no process reuses
what it cached) and the type found is returned; a sorted set (written meanwhile by another process) or a missing
key is left alone (``nil``). One script, so the check and the delete cannot be split by another client."""


def new_version() -> str:
    """A random start for a version counter, in ``[2**61, 2**62)``: far from 1 and from any other start, with room
    below 2**63 for more increments than a counter can get in its lifetime."""
    return str((1 << 61) | secrets.randbits(61))


def as_str(value: object) -> str:
    """A Redis reply (``bytes`` or not) as text."""
    return value.decode() if isinstance(value, bytes) else str(value)


def settle(replies: Replies, ver_at: int) -> tuple[object, bool]:
    """A pipeline's last reply, and whether its command on the version counter (at ``ver_at``: the bump script,
    ``GET``) was refused (the counter is damaged: not an integer, or another type of key). Raises the first error
    of any other command."""
    for i, reply in enumerate(replies):
        if isinstance(reply, Exception) and i != ver_at % len(replies):
            raise reply
    return replies[-1], isinstance(replies[ver_at], Exception)


def index_refused(replies: Replies, positions: Sequence[int]) -> bool:
    """Whether a command on the user's index (at ``positions`` of ``replies``) was refused with ``WRONGTYPE``: the
    index key holds another type of key."""
    return any(
        isinstance(replies[i], redis.ResponseError) and str(replies[i]).startswith("WRONGTYPE") for i in positions
    )


def wrong_type(reply: object) -> bool:
    """Whether ``reply`` (an error Redis answered with, or a pipeline reply) is ``WRONGTYPE``: the key holds
    another type of key."""
    return isinstance(reply, redis.ResponseError) and str(reply).startswith("WRONGTYPE")


def unreadable_as_corrupt(replies: Replies) -> list[bytes | None]:
    """The replies of a pipeline of result ``GET``s, with ``b""`` (a corrupt entry: the memory discards it and
    counts an error) where a key holds another type (``WRONGTYPE``). Raises any other error."""
    out: list[bytes | None] = []
    for reply in replies:
        if wrong_type(reply):
            out.append(b"")
        elif isinstance(reply, Exception):
            raise reply
        else:
            out.append(cast("bytes | None", reply))  # a GET's reply
    return out


def read_version(reply: object) -> RedisText | None:
    """The version counter as read (``GET``), or ``None`` when it is missing or damaged (not an integer, another
    type of key): then no cached records are reused."""
    if reply is None or isinstance(reply, Exception):
        return None
    return cast(RedisText, reply) if as_str(reply).lstrip("-").isdigit() else None  # a GET's reply: text


def rows_ttl_ms(scores: Sequence[RedisText | float], now: float) -> int:
    """The TTL (ms, >= 1) that covers the latest expiry among index ``scores`` (epoch seconds, as Redis returned
    them) from ``now`` (epoch seconds): what a counter written while reading the index gets."""
    latest = max((float(s) for s in scores), default=now)
    return max(1, math.ceil((latest - now) * 1000))


class VersionRepairs:
    """The key layout, the version bump and the repairs of `RedisIntentionBackend` (a mixin: the backend sets ``prefix`` and the
    two warnings)."""

    prefix: str
    _warning: ThrottledWarning
    _index_warning: ThrottledWarning

    # -- key layout ------------------------------------------------------------------------------------------------
    def _base(self, user: str) -> str:
        return f"{self.prefix}intent:{hash_tag(user)}:"

    def index_key(self, user: str) -> str:
        """The user's sorted set of memory ids (scored by expiry, epoch seconds)."""
        return self._base(user) + "idx"

    def memory_key(self, user: str, memory_id: str) -> str:
        """The key of one memory record."""
        return f"{self._base(user)}mem:{memory_id}"

    def version_key(self, user: str) -> str:
        """A counter bumped on every change of the user's index other than expiry (store, eviction, repair)."""
        return self._base(user) + "ver"

    def result_key(self, user: str, result_hash: str) -> str:
        """The key of a stored result (by content hash)."""
        return f"{self._base(user)}res:{result_hash}"

    def _bump(self, pipe: Pipe, user: str, ttl_ms: int) -> None:
        """Queue the version bump: created at a random start when missing, incremented, given ``ttl_ms`` (ms) when
        it has no TTL or a shorter one (`BUMP_SCRIPT`)."""
        # ``execute_command``, not ``pipe.eval``: redis-py's cluster pipelines block ``eval()`` but route a queued
        # EVAL to its key's slot (the user's hash tag), like any other command.
        pipe.execute_command("EVAL", BUMP_SCRIPT, 1, self.version_key(user), new_version(), ttl_ms)

    def _repair(self, pipe: Pipe, user: str, ttl_ms: int | None) -> None:
        """Commands that replace a version counter INCR refused (a non-integer, or another type of key) with a
        random value no process can have cached, so every process reads the user's index afresh."""
        ver = self.version_key(user)
        pipe.set(ver, new_version(), keepttl=True)
        if ttl_ms is not None:
            pipe.pexpire(ver, ttl_ms, nx=True)
            pipe.pexpire(ver, ttl_ms, gt=True)
        self._warning.warn("promptcache: repaired a damaged intention version counter (%s)", ver)

    def _index_replaced(self, user: str, found: object) -> bool:
        """Log (at most once a minute) that the user's index, a key of type ``found``, was deleted; True when one
        was (``found`` not ``None``)."""
        if found is None:
            return False
        self._index_warning.warn(
            "promptcache: replaced a damaged intention index (%s: %s)", self.index_key(user), as_str(found)
        )
        return True

    def _replace_damaged_index(self, client: SyncClient, user: str) -> bool:
        """Delete the user's index and version counter when the index is not a sorted set (a damaged key; see
        `REPLACE_INDEX_SCRIPT`); True when it was."""
        found = client.eval(REPLACE_INDEX_SCRIPT, 2, self.index_key(user), self.version_key(user))
        return self._index_replaced(user, found)

    async def _areplace_damaged_index(self, client: AsyncClient, user: str) -> bool:
        """Async `_replace_damaged_index`."""
        found = await client.eval(REPLACE_INDEX_SCRIPT, 2, self.index_key(user), self.version_key(user))
        return self._index_replaced(user, found)

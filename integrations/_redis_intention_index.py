"""The meaning index of `RedisIntentionBackend`: candidate retrieval without reading every memory.

Per user and meaning signature (`promptcache.intention._meaning.signature`), a Redis set
``{prefix}intent:{user}:sig:<signature>`` holds the ids of the memories stored under that signature. Its keys carry
the user's hash tag, like every other key of the user, so one pipeline stays in one Cluster slot. A store adds the
id (``SADD``) and pushes the set's expiry out to the memory's (``PEXPIRE GT``). A lookup is one script call
(`MATCH_SCRIPT`: prune the index, read the set, each member's index score — an id evicted, expired or
forgotten has none — and record): one round trip whatever the number of the user's memories. The script builds
the record keys from the user's key prefix, which carries the user's hash tag, so in Redis Cluster every key it
touches is in the slot of its declared keys. Ids whose memory is gone are removed from the
set on the way (best effort); an index row whose record is gone or unreadable is dropped from the index as
`records` does (the version bumped). A set of
another type (a damaged key) is deleted: a miss for its memories, written again by the next store.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

import redis

from promptcache.integrations._redis_intention_versions import (
    VersionRepairs,
    as_str,
    index_refused,
    rows_ttl_ms,
    settle,
)
from promptcache.intention._backends import IntentionBackendError, MemoryRecord

__all__ = ["SIG_POSITIONS", "SignatureIndex", "index_commands", "live_records"]

MATCH_SCRIPT = """
local pruned = redis.pcall('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[1])
if type(pruned) == 'table' and pruned.err then return {1} end
local ids = redis.pcall('SMEMBERS', KEYS[2])
if type(ids) == 'table' and ids.err then return {2} end
local out = {0}
for _, id in ipairs(ids) do
  local score = redis.call('ZSCORE', KEYS[1], id)
  local record = false
  local result = false
  if score then
    record = redis.pcall('GET', ARGV[2] .. id)
    if type(record) == 'table' then record = '' end
    if record then
      local ok, decoded = pcall(cjson.decode, record)
      if ok and type(decoded) == 'table' and type(decoded.result_hash) == 'string' then
        result = redis.pcall('GET', ARGV[3] .. decoded.result_hash)
        if type(result) == 'table' then result = '' end
      end
    end
  end
  out[#out + 1] = id
  out[#out + 1] = score
  out[#out + 1] = record
  out[#out + 1] = result
end
return out
"""
"""The candidates of a lookup and their results in one round trip. KEYS: the user's index, the signature set; ARGV:
the prune bound (epoch seconds), the prefix of the user's record keys, the prefix of their result keys. Reply:
``[0, id, score, record, result, ...]`` (nil where gone; a record or result key of another type reads as ``""``, a
corrupt entry; a result is read when the record is JSON with a ``result_hash``), ``[1]`` when the index is not a sorted
set, ``[2]`` when the signature set is not a set."""

SIG_POSITIONS = (8, 9, 10)
"""Positions of `index_commands` in the store pipeline (after the version bump, before the closing ``ZCARD``)."""


def index_commands(pipe: Any, key: str, memory_id: str, ttl_ms: int) -> None:
    """Queue the index update of one store: ``memory_id`` into the signature set ``key``, whose expiry becomes at
    least ``ttl_ms`` milliseconds (3 commands)."""
    pipe.sadd(key, memory_id)
    pipe.pexpire(key, ttl_ms, nx=True)
    pipe.pexpire(key, ttl_ms, gt=True)


def live_records(
    ids: list[Any], scores: list[Any], raws: list[Any], now: float, signature: str
) -> tuple[list[MemoryRecord], list[Any], list[Any], list[str]]:
    """The live records among the members of a signature set.

    Args:
        ids: the set's members (memory ids, bytes or str); ``scores``: their index scores (``ZMSCORE``; ``None``
            where the id is not in the index); ``raws``: their records (``MGET``; ``None`` where gone).
        now: epoch seconds; a score at or below it is an expired memory.
        signature: the set's signature; a record now stored under another one (the same memory id replaced by an
            intention with the same exact form but, in rare tokenisations, another signature) is left out and its
            id removed from this set.

    Returns:
        ``(records, ids to remove from the set, ids to drop from the index — their record is gone or unreadable —,
        why each unreadable record was refused)``.
    """
    records: list[MemoryRecord] = []
    gone: list[Any] = []
    dropped: list[Any] = []
    corrupt: list[str] = []
    for mid, score, raw in zip(ids, scores, raws):
        if score is None:  # evicted, expired and pruned, or forgotten
            gone.append(mid)
            continue
        if float(score) <= now:
            continue
        if raw is None:
            gone.append(mid)
            dropped.append(mid)
            continue
        try:
            record = MemoryRecord.loads(raw)
        except ValueError as exc:
            corrupt.append(f"{as_str(mid)}: {exc}")
            gone.append(mid)
            dropped.append(mid)
            continue
        if record.signature != signature:
            gone.append(mid)
        elif record.expires_at > now:
            records.append(record)
    return records, gone, dropped, corrupt


class SignatureIndex(VersionRepairs):
    """Candidate retrieval by meaning signature for `RedisIntentionBackend` (a mixin: `VersionRepairs` gives the
    keys, ``_repair`` and the warnings; the backend provides the clients, the failure handling and ``_drop``)."""

    if TYPE_CHECKING:  # provided by RedisIntentionBackend and its RedisConnection base

        @property
        def async_client(self) -> Any: ...
        def _check(self) -> None: ...
        def _sync(self) -> Any: ...
        def _fail(self, op: str, exc: BaseException) -> IntentionBackendError: ...
        def _drop(self, pipe: Any, user: str, gone: list[bytes], ttl_ms: int) -> None: ...

    def signature_key(self, user: str, signature: str) -> str:
        """The set of ids of the user's memories with meaning signature ``signature``."""
        return f"{self._base(user)}sig:{signature}"

    def _signature_refused(self, replies: list[Any]) -> bool:
        """Whether the store pipeline's commands on the signature set were refused (a key of another type)."""
        return index_refused(replies, SIG_POSITIONS)

    def _sig_replaced(self, key: str, replies: list[Any], fixed: list[Any]) -> list[Any]:
        self._index_warning.warn("promptcache: replaced a damaged intention signature set (%s)", key)
        out = list(replies)
        for pos, reply in zip(SIG_POSITIONS, fixed[1:]):
            out[pos] = reply
        return out

    def _replace_signature_set(
        self, client: Any, user: str, record: MemoryRecord, ttl_ms: int, replies: list[Any]
    ) -> list[Any]:
        """A signature set of another type (a damaged key) is deleted and written again: the store goes on."""
        key = self.signature_key(user, record.signature)
        pipe = client.pipeline(transaction=False)
        pipe.delete(key)
        index_commands(pipe, key, record.id, ttl_ms)
        return self._sig_replaced(key, replies, pipe.execute())

    async def _areplace_signature_set(
        self, client: Any, user: str, record: MemoryRecord, ttl_ms: int, replies: list[Any]
    ) -> list[Any]:
        """Async `_replace_signature_set`."""
        key = self.signature_key(user, record.signature)
        pipe = client.pipeline(transaction=False)
        pipe.delete(key)
        index_commands(pipe, key, record.id, ttl_ms)
        return self._sig_replaced(key, replies, await pipe.execute())

    def _match_args(self, user: str, signature: str, now: float) -> tuple[Any, ...]:
        keys = (self.index_key(user), self.signature_key(user, signature))
        prefixes = (self.memory_key(user, ""), self.result_key(user, ""))
        return (MATCH_SCRIPT, 2, *keys, repr(now), *prefixes)

    def _split_live(self, reply: list[Any], now: float, signature: str) -> tuple[Any, ...]:
        ids, scores, raws, results = reply[1::4], reply[2::4], reply[3::4], reply[4::4]
        records, gone, dropped, corrupt = live_records(list(ids), list(scores), list(raws), now, signature)
        by_id = dict(zip(ids, results))
        fetched = {r.result_hash: by_id.get(r.id.encode(), by_id.get(r.id)) for r in records}
        if corrupt:
            self._warning.warn(
                "promptcache: dropped %d corrupt intention memory record(s) from a user's index (%s)",
                len(corrupt),
                corrupt[0][:200],
            )
        return records, fetched, gone, dropped, rows_ttl_ms([s for s in scores if s is not None], now)

    def _damaged(self, code: int, key: str) -> None:
        what = "index" if code == 1 else "signature set"
        self._index_warning.warn("promptcache: a damaged intention %s (%s): a miss", what, key)

    def _cleanup_commands(self, pipe: Any, user: str, key: str, gone: list[Any], dropped: list[Any], ttl: int) -> None:
        if gone:
            pipe.srem(key, *gone)
        if dropped:
            self._drop(pipe, user, dropped, ttl)

    def matching(self, user: str, signature: str, now: float) -> list[MemoryRecord]:
        """The live memories with ``signature`` (see `matching_results`)."""
        return self.matching_results(user, signature, now)[0]

    async def amatching(self, user: str, signature: str, now: float) -> list[MemoryRecord]:
        """Async `matching`."""
        return (await self.amatching_results(user, signature, now))[0]

    def matching_results(
        self, user: str, signature: str, now: float
    ) -> tuple[list[MemoryRecord], dict[str, bytes | None]]:
        """The live memories with ``signature`` and their results by hash (see the module docstring): one round
        trip whatever the number of the user's memories, a second only to clean up ids of gone memories or a
        damaged key."""
        self._check()
        try:
            client = self._sync()
            key = self.signature_key(user, signature)
            reply = client.eval(*self._match_args(user, signature, now))
            code = int(reply[0])
            if code == 1:
                self._replace_damaged_index(client, user)
                return [], {}
            if code == 2:
                self._damaged(code, key)
                client.delete(key)
                return [], {}
            records, fetched, gone, dropped, ttl = self._split_live(reply, now, signature)
            if gone or dropped:
                pipe = client.pipeline(transaction=False)
                self._cleanup_commands(pipe, user, key, gone, dropped, ttl)
                if settle(pipe.execute(raise_on_error=False), -1)[1] and dropped:
                    pipe = client.pipeline(transaction=False)
                    self._repair(pipe, user, ttl)
                    pipe.execute()
            return records, fetched
        except (redis.RedisError, OSError, asyncio.TimeoutError) as exc:
            raise self._fail("read", exc) from exc

    async def amatching_results(
        self, user: str, signature: str, now: float
    ) -> tuple[list[MemoryRecord], dict[str, bytes | None]]:
        """Async `matching_results`."""
        client = self.async_client
        if client is None:
            return await asyncio.to_thread(self.matching_results, user, signature, now)
        self._check()
        try:
            key = self.signature_key(user, signature)
            reply = await client.eval(*self._match_args(user, signature, now))
            code = int(reply[0])
            if code == 1:
                await self._areplace_damaged_index(client, user)
                return [], {}
            if code == 2:
                self._damaged(code, key)
                await client.delete(key)
                return [], {}
            records, fetched, gone, dropped, ttl = self._split_live(reply, now, signature)
            if gone or dropped:
                pipe = client.pipeline(transaction=False)
                self._cleanup_commands(pipe, user, key, gone, dropped, ttl)
                if settle(await pipe.execute(raise_on_error=False), -1)[1] and dropped:
                    pipe = client.pipeline(transaction=False)
                    self._repair(pipe, user, ttl)
                    await pipe.execute()
            return records, fetched
        except (redis.RedisError, OSError, asyncio.TimeoutError) as exc:
            raise self._fail("read", exc) from exc

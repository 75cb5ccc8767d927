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
import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, cast

import redis

from promptcache.integrations._redis_connection import AsyncClient, SyncClient
from promptcache.integrations._redis_intention_records import RecordCache
from promptcache.integrations._redis_intention_versions import (
    Pipe,
    RedisText,
    Replies,
    VersionRepairs,
    as_str,
    index_refused,
    rows_ttl_ms,
    settle,
)
from promptcache.intention._backends import IntentionBackendError, MemoryRecord
from promptcache.intention._record import signature_version

__all__ = ["SIG_POSITIONS", "SignatureIndex", "index_commands", "live_records"]

MATCH_SCRIPT = """
local pruned = redis.pcall('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[1])
if type(pruned) == 'table' and pruned.err then return {1} end
local ids = redis.pcall('SMEMBERS', KEYS[2])
if type(ids) == 'table' and ids.err then return {2} end
local indexed = redis.pcall('GET', KEYS[3])
if type(indexed) == 'table' then indexed = false end
if not indexed and redis.call('ZCARD', KEYS[1]) == 0 then indexed = ARGV[4] end
local out = {0, indexed}
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
"""The candidates of a lookup and their results in one round trip. KEYS: the user's index, the signature set, the
user's vocabulary key (`VOCABULARY_SCRIPT`); ARGV: the prune bound (epoch seconds), the prefix of the user's record
keys, the prefix of their result keys, the query's signature version. Reply: ``[0, indexed, id, score, record,
result, ...]`` (``indexed``: the signature version of all the user's memories, the query's when there are none,
nil when unknown or mixed) (nil where gone; a record or result key of another type reads as ``""``, a
corrupt entry; a result is read when the record is JSON with a ``result_hash``), ``[1]`` when the index is not a sorted
set, ``[2]`` when the signature set is not a set."""

VOCABULARY_SCRIPT = """
local cur = redis.pcall('GET', KEYS[1])
if type(cur) == 'table' then
  redis.call('DEL', KEYS[1])
  cur = nil
end
if cur ~= ARGV[1] then
  if not cur and redis.call('ZCARD', KEYS[2]) <= 1 then
    redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
  elseif cur ~= '' then
    redis.call('SET', KEYS[1], '', 'PX', ARGV[2])
  end
end
redis.call('PEXPIRE', KEYS[1], ARGV[2], 'GT')
return 1
"""
"""Run by every store after its ``ZADD``: keeps the user's vocabulary key, the signature version all the user's
memories were indexed under. KEYS: the vocabulary key, the user's index; ARGV: the stored record's signature
version, the TTL (ms). A first memory sets it; a memory of another version marks the user ``""`` (mixed: the next
lookup re-derives the old signatures, `RedisIntentionBackend.reindex`); a key of another type is replaced."""

MARK_SCRIPT = """
redis.call('SET', KEYS[1], ARGV[1])
local ttl = redis.call('PTTL', KEYS[2])
if ttl > 0 then redis.call('PEXPIRE', KEYS[1], ttl) else redis.call('DEL', KEYS[1]) end
return 1
"""
"""After a migration: the vocabulary key says ARGV[1], with the TTL of the user's index (KEYS[2])."""

SIG_POSITIONS = (8, 9, 10)
"""Positions of `index_commands` in the store pipeline (after the version bump, before the closing ``ZCARD``)."""


def index_commands(pipe: Pipe, key: str, memory_id: str, ttl_ms: int) -> None:
    """Queue the index update of one store: ``memory_id`` into the signature set ``key``, whose expiry becomes at
    least ``ttl_ms`` milliseconds (3 commands)."""
    pipe.sadd(key, memory_id)
    pipe.pexpire(key, ttl_ms, nx=True)
    pipe.pexpire(key, ttl_ms, gt=True)


def live_records(
    ids: Sequence[RedisText],
    scores: Sequence[RedisText | float | None],
    raws: Sequence[RedisText | None],
    now: float,
    signature: str,
) -> tuple[list[MemoryRecord], list[RedisText], list[RedisText], list[str]]:
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
    gone: list[RedisText] = []
    dropped: list[RedisText] = []
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


def _indexed(value: object) -> str | None:
    """The vocabulary key as the match script read it: a version, or ``None`` (missing, or ``""``: mixed)."""
    return as_str(value) if value else None


class SignatureIndex(VersionRepairs):
    """Candidate retrieval by meaning signature for `RedisIntentionBackend` (a mixin: `VersionRepairs` gives the
    keys, ``_repair`` and the warnings; the backend provides the clients, the failure handling and ``_drop``)."""

    if TYPE_CHECKING:  # provided by RedisIntentionBackend and its RedisConnection base
        _records: RecordCache

        @property
        def async_client(self) -> AsyncClient | None: ...
        def _check(self) -> None: ...
        def _sync(self) -> SyncClient: ...
        def _fail(self, op: str, exc: BaseException) -> IntentionBackendError: ...
        def _drop(self, pipe: Pipe, user: str, gone: Sequence[RedisText], ttl_ms: int) -> None: ...

    def signature_key(self, user: str, signature: str) -> str:
        """The set of ids of the user's memories with meaning signature ``signature``."""
        return f"{self._base(user)}sig:{signature}"

    def _signature_refused(self, replies: Replies) -> bool:
        """Whether the store pipeline's commands on the signature set were refused (a key of another type)."""
        return index_refused(replies, SIG_POSITIONS)

    def _sig_replaced(self, key: str, replies: Replies, fixed: Replies) -> list[object]:
        self._index_warning.warn("promptcache: replaced a damaged intention signature set (%s)", key)
        out = list(replies)
        for pos, reply in zip(SIG_POSITIONS, fixed[1:]):
            out[pos] = reply
        return out

    def _replace_signature_set(
        self, client: SyncClient, user: str, record: MemoryRecord, ttl_ms: int, replies: Replies
    ) -> list[object]:
        """A signature set of another type (a damaged key) is deleted and written again: the store goes on."""
        key = self.signature_key(user, record.signature)
        pipe = client.pipeline(transaction=False)
        pipe.delete(key)
        index_commands(pipe, key, record.id, ttl_ms)
        return self._sig_replaced(key, replies, pipe.execute())

    async def _areplace_signature_set(
        self, client: AsyncClient, user: str, record: MemoryRecord, ttl_ms: int, replies: Replies
    ) -> list[object]:
        """Async `_replace_signature_set`."""
        key = self.signature_key(user, record.signature)
        pipe = client.pipeline(transaction=False)
        pipe.delete(key)
        index_commands(pipe, key, record.id, ttl_ms)
        return self._sig_replaced(key, replies, await pipe.execute())

    def vocabulary_key(self, user: str) -> str:
        """The signature version all the user's memories are indexed under (``""``: several)."""
        return self._base(user) + "vocab"

    def _vocabulary_commands(self, pipe: Pipe, user: str, record: MemoryRecord, ttl_ms: int) -> None:
        keys = (self.vocabulary_key(user), self.index_key(user))
        pipe.execute_command("EVAL", VOCABULARY_SCRIPT, 2, *keys, signature_version(record.signature), ttl_ms)

    def _match_args(self, user: str, signature: str, now: float) -> tuple[str, ...]:
        """The 3 keys and the arguments of `MATCH_SCRIPT`."""
        keys = (self.index_key(user), self.signature_key(user, signature), self.vocabulary_key(user))
        prefixes = (self.memory_key(user, ""), self.result_key(user, ""))
        return (*keys, repr(now), *prefixes, signature_version(signature))

    def _split_live(
        self, reply: Sequence[object], now: float, signature: str
    ) -> tuple[list[MemoryRecord], dict[str, bytes | None], list[RedisText], list[RedisText], int]:
        # The match script's reply, unchecked (the lookup path): [code, vocabulary, then per member: id, score,
        # record, result].
        ids = cast("Sequence[RedisText]", reply[2::4])
        scores = cast("Sequence[RedisText | float | None]", reply[3::4])
        raws = cast("Sequence[RedisText | None]", reply[4::4])
        results = cast("Sequence[bytes | None]", reply[5::4])
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

    def _cleanup_commands(
        self, pipe: Pipe, user: str, key: str, gone: list[RedisText], dropped: list[RedisText], ttl: int
    ) -> None:
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
        """The live memories with ``signature`` and their results by hash (see `matching_indexed`)."""
        return self.matching_indexed(user, signature, now)[:2]

    async def amatching_results(
        self, user: str, signature: str, now: float
    ) -> tuple[list[MemoryRecord], dict[str, bytes | None]]:
        """Async `matching_results`."""
        return (await self.amatching_indexed(user, signature, now))[:2]

    def matching_indexed(
        self, user: str, signature: str, now: float
    ) -> tuple[list[MemoryRecord], dict[str, bytes | None], str | None]:
        """The live memories with ``signature``, their results by hash and the user's indexed signature version
        (see the module docstring): one round trip whatever the number of the user's memories, a second only to
        clean up ids of gone memories or a damaged key."""
        self._check()
        try:
            client = self._sync()
            key = self.signature_key(user, signature)
            reply = client.eval(MATCH_SCRIPT, 3, *self._match_args(user, signature, now))
            code = int(reply[0])
            if code == 1:
                self._replace_damaged_index(client, user)
                return [], {}, None
            if code == 2:
                self._damaged(code, key)
                client.delete(key)
                return [], {}, None
            records, fetched, gone, dropped, ttl = self._split_live(reply, now, signature)
            if gone or dropped:
                pipe = client.pipeline(transaction=False)
                self._cleanup_commands(pipe, user, key, gone, dropped, ttl)
                if settle(pipe.execute(raise_on_error=False), -1)[1] and dropped:
                    pipe = client.pipeline(transaction=False)
                    self._repair(pipe, user, ttl)
                    pipe.execute()
            return records, fetched, _indexed(reply[1])
        except (redis.RedisError, OSError, asyncio.TimeoutError) as exc:
            raise self._fail("read", exc) from exc

    async def amatching_indexed(
        self, user: str, signature: str, now: float
    ) -> tuple[list[MemoryRecord], dict[str, bytes | None], str | None]:
        """Async `matching_indexed`."""
        client = self.async_client
        if client is None:
            return await asyncio.to_thread(self.matching_indexed, user, signature, now)
        self._check()
        try:
            key = self.signature_key(user, signature)
            reply = await client.eval(MATCH_SCRIPT, 3, *self._match_args(user, signature, now))
            code = int(reply[0])
            if code == 1:
                await self._areplace_damaged_index(client, user)
                return [], {}, None
            if code == 2:
                self._damaged(code, key)
                await client.delete(key)
                return [], {}, None
            records, fetched, gone, dropped, ttl = self._split_live(reply, now, signature)
            if gone or dropped:
                pipe = client.pipeline(transaction=False)
                self._cleanup_commands(pipe, user, key, gone, dropped, ttl)
                if settle(await pipe.execute(raise_on_error=False), -1)[1] and dropped:
                    pipe = client.pipeline(transaction=False)
                    self._repair(pipe, user, ttl)
                    await pipe.execute()
            return records, fetched, _indexed(reply[1])
        except (redis.RedisError, OSError, asyncio.TimeoutError) as exc:
            raise self._fail("read", exc) from exc

    # -- migration -------------------------------------------------------------------------------------------------
    def _reindex_commands(self, pipe: Pipe, user: str, records: list[MemoryRecord], version: str, now: float) -> None:
        # The records keep their index scores, so a process's parsed copies stay in use: they differ only in the
        # signature, which every reader of them derives again from the raw intention. This process's are dropped.
        self._records.forget(user)
        for record in records:
            ttl_ms = max(1, math.ceil((record.expires_at - now) * 1000))
            pipe.set(self.memory_key(user, record.id), record.dumps(), px=ttl_ms, xx=True)
            index_commands(pipe, self.signature_key(user, record.signature), record.id, ttl_ms)
        if records:
            self._bump(pipe, user, max(1, math.ceil((max(r.expires_at for r in records) - now) * 1000)))
        pipe.execute_command("EVAL", MARK_SCRIPT, 2, self.vocabulary_key(user), self.index_key(user), version)

    def reindex(self, user: str, records: list[MemoryRecord], version: str, now: float) -> None:
        """Write ``records`` again (``SET XX``: a memory deleted meanwhile stays deleted) with their new signatures
        into their signature sets, bump the version, and mark the user's vocabulary key ``version``: one pipeline."""
        self._check()
        try:
            pipe = self._sync().pipeline(transaction=False)
            self._reindex_commands(pipe, user, records, version, now)
            pipe.execute()
        except (redis.RedisError, OSError, asyncio.TimeoutError) as exc:
            raise self._fail("reindex", exc) from exc

    async def areindex(self, user: str, records: list[MemoryRecord], version: str, now: float) -> None:
        """Async `reindex`."""
        client = self.async_client
        if client is None:
            return await asyncio.to_thread(self.reindex, user, records, version, now)
        self._check()
        try:
            pipe = client.pipeline(transaction=False)
            self._reindex_commands(pipe, user, records, version, now)
            await pipe.execute()
        except (redis.RedisError, OSError, asyncio.TimeoutError) as exc:
            raise self._fail("reindex", exc) from exc

"""The meaning index of :class:`RedisIntentionBackend
<promptcache.integrations.redis_intention.RedisIntentionBackend>`: candidate retrieval without reading every memory.

Per user and meaning signature (:func:`promptcache.intention.meaning.signature`), a Redis set
``{prefix}intent:{user}:sig:<signature>`` holds the ids of the memories stored under that signature. Its keys carry
the user's hash tag, like every other key of the user, so one pipeline stays in one Cluster slot. A store adds the
id (``SADD``) and pushes the set's expiry out to the memory's (``PEXPIRE GT``). A lookup reads the set, then the ids'
index scores (``ZMSCORE``: an id evicted, expired or forgotten has none) and their records (``MGET``) in one
pipeline: two round trips whatever the number of the user's memories. Ids whose memory is gone are removed from the
set on the way (best effort).
"""

from __future__ import annotations

from typing import Any

from promptcache.intention.backends import MemoryRecord

__all__ = ["index_commands", "live_records", "stale_ids"]


def index_commands(pipe: Any, key: str, memory_id: str, ttl_ms: int) -> None:
    """Queue the index update of one store: ``memory_id`` into the signature set ``key``, whose expiry becomes at
    least ``ttl_ms`` milliseconds (3 commands)."""
    pipe.sadd(key, memory_id)
    pipe.pexpire(key, ttl_ms, nx=True)
    pipe.pexpire(key, ttl_ms, gt=True)


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def live_records(
    ids: list[Any], scores: list[Any], raws: list[Any], now: float, signature: str
) -> tuple[list[MemoryRecord], list[Any], list[str]]:
    """The live records among the members of a signature set.

    Args:
        ids: the set's members (memory ids, bytes or str); ``scores``: their index scores (``ZMSCORE``; ``None``
            where the id is not in the index); ``raws``: their records (``MGET``; ``None`` where gone).
        now: epoch seconds; a score at or below it is an expired memory.
        signature: the set's signature; a record now stored under another one (the same memory id replaced by an
            intention with the same exact form but, in rare tokenisations, another signature) is left out and its
            id removed from this set.

    Returns:
        ``(records, ids to remove from the set, why each unreadable record was refused)``.
    """
    records: list[MemoryRecord] = []
    gone: list[Any] = []
    corrupt: list[str] = []
    for mid, score, raw in zip(ids, scores, raws):
        if score is None or raw is None or float(score) <= now:
            if score is None or raw is None:
                gone.append(mid)
            continue
        try:
            record = MemoryRecord.loads(raw)
        except ValueError as exc:
            corrupt.append(f"{_text(mid)}: {exc}")
            continue
        if record.signature != signature:
            gone.append(mid)
        elif record.expires_at > now:
            records.append(record)
    return records, gone, corrupt


def stale_ids(ids: list[Any]) -> list[str]:
    """Members as strings (for ``SREM``)."""
    return [_text(m) for m in ids]

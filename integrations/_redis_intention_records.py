"""The per-process cache of parsed intention memory records of `RedisIntentionBackend`, and the parsing of the records Redis returns.

Per user it keeps the version counter it read the records at, the live records, and each record by id with the
index score (expiry) it had: a replaced memory has a new score, so a stale copy is never used. Thread-safe.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Sequence
from typing import TypeAlias, cast

from cachetools import LRUCache

from promptcache.integrations._redis_intention_versions import RedisText
from promptcache.intention._backends import MemoryRecord

__all__ = ["RecordCache", "Row"]

Score: TypeAlias = "RedisText | float"
"""An index score (expiry, epoch seconds) as Redis returned it: text, or a float from a RESP3 client."""

Row = tuple[bytes, Score, "MemoryRecord | None"]
"""One index entry: (memory id as the raw index read returned it, its score, its parsed record or ``None`` when not known)."""


class _UserCache:
    """What this process knows of one user's memories: the index version it read them at, the live records, and
    each record by id with the index score it had (a replaced memory has a new score)."""

    __slots__ = ("by_id", "first_expiry", "records", "version")

    def __init__(
        self, version: RedisText | None, records: list[MemoryRecord], by_id: dict[RedisText, tuple[Score, MemoryRecord]]
    ):
        self.version, self.records, self.by_id = version, records, by_id
        self.first_expiry = min((r.expires_at for r in records), default=float("inf"))


def _number(value: object) -> int | None:
    """A version counter's reply (``bytes``/``str`` digits) as an int, else ``None``."""
    text = value.decode() if isinstance(value, bytes) else value
    return int(text) if isinstance(text, str) and text.lstrip("-").isdigit() else None


class RecordCache:
    """Parsed records of up to ``users`` users (least recently used dropped first; ``0``: nothing is kept)."""

    def __init__(self, users: int) -> None:
        self._users: LRUCache[str, _UserCache] | None = LRUCache(maxsize=users) if users > 0 else None
        self._lock = threading.Lock()

    def _get(self, user: str) -> _UserCache | None:
        if self._users is None:
            return None
        with self._lock:
            return self._users.get(user)

    def reuse(self, user: str, version: RedisText | None, now: float) -> list[MemoryRecord] | None:
        """The cached records when the user's version is the one they were read at (expired ones, by ``now`` in
        epoch seconds, filtered out), else ``None``. A ``None`` version (missing or damaged counter) never
        matches."""
        entry = self._get(user)
        if entry is None or version is None or entry.version != version:
            return None
        if now < entry.first_expiry:
            return entry.records  # none expired yet: the list as cached (read, not edited, by the callers)
        return [r for r in entry.records if r.expires_at > now]

    def split(self, user: str, reply: Sequence[object]) -> tuple[list[Row], list[int]]:
        """The index reply (RESP2: ``[id, score, ...]``; RESP3: ``[[id, score], ...]``) as rows with the cached
        record where its score is unchanged, and the positions of the rows whose record must be fetched."""
        entry = self._get(user)
        by_id = entry.by_id if entry is not None else {}
        get = by_id.get
        flat = not isinstance(reply[0], (list, tuple))
        pairs = cast("Iterable[tuple[bytes, Score]]", zip(reply[0::2], reply[1::2]) if flat else reply)
        rows: list[Row] = []
        missing: list[int] = []
        for mid, score in pairs:
            hit = get(mid)
            if hit is not None and hit[0] == score:
                rows.append((mid, score, hit[1]))
            else:
                missing.append(len(rows))
                rows.append((mid, score, None))
        return rows, missing

    def merge(
        self, user: str, version: RedisText | None, rows: list[Row], missing: list[int], raw: Sequence[RedisText | None]
    ) -> tuple[list[MemoryRecord], list[bytes], list[str]]:
        """Parse the fetched records ``raw`` (``MGET`` of the rows at ``missing``) into ``rows`` and cache the
        result under ``version`` (none when some rows are gone: the index is about to change).

        Returns:
            ``(live records, ids of the rows to drop from the index, why each corrupt record was refused)``: a
            row is dropped when its record expired (``None``) or is corrupt (not a record, or a field of the wrong
            type, `loads`).
        """
        gone: list[bytes] = []
        corrupt: list[str] = []
        for pos, data in zip(missing, raw):
            mid, score, _ = rows[pos]
            record = None
            if data is not None:
                try:
                    record = MemoryRecord.loads(data)
                except ValueError as exc:
                    corrupt.append(str(exc))
            if record is None:
                gone.append(mid)
            rows[pos] = (mid, score, record)
        live = [(m, s, r) for m, s, r in rows if r is not None]
        records = [r for _, _, r in live]
        if self._users is not None:
            entry = _UserCache(None if gone else version, records, {m: (s, r) for m, s, r in live})
            with self._lock:
                self._users[user] = entry
        return records, gone, corrupt

    def stored(self, user: str, version: RedisText | None, record: MemoryRecord) -> None:
        """After this process's store of ``record`` bumped the user's counter to ``version`` (the bump's reply):
        when the cache is at the value just before it (no other write came between), ``record`` is put in and the
        entry moves to ``version``, so the next lookup needs no index read; otherwise nothing changes (the next
        read sees another version and reads the index)."""
        after = _number(version)
        if self._users is None or after is None:
            return
        with self._lock:
            entry = self._users.get(user)
            before = None if entry is None else _number(entry.version)
            if entry is None or before is None or before + 1 != after:
                return
            records = [r for r in entry.records if r.id != record.id]
            records.append(record)
            by_id = dict(entry.by_id)
            # The score as Redis would format it is not known here: a later index read fetches this record again.
            by_id.pop(record.id.encode(), None)
            by_id.pop(record.id, None)
            self._users[user] = _UserCache(version, records, by_id)

    def forget(self, user: str) -> None:
        """Drop what is cached for ``user``."""
        if self._users is not None:
            with self._lock:
                self._users.pop(user, None)

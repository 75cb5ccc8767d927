"""The per-user vector index of an `IntentionMemory` with embeddings: kept in step with the backend's version.

A user's index holds, per distinct exact key (`exact_key` of the stored raw intention), the memories stored under
it (newest first), one unit vector (the newest memory's) as a row of a float32 matrix, and the latest expiry of the
row's memories. It is known by the backend's version token of the user's memories (`records_versioned`: a counter
every store, eviction and repair changes; Redis reads it in the same round trip as the records), so a lookup while
no one wrote reuses the index as it is: no hashing of record ids, no re-parsing of vectors. When the version
changed (a store here or by another worker), the index is rebuilt from the records, reusing every row whose memory
is unchanged (same id and creation time): only new memories are unpacked, and a vector made by another model (the
record's ``similarity`` name) or by none is re-embedded from the stored raw intention. A backend without versions
(``None``) gets a token from the records' ids and creation times (every record hashed: slower, still correct).

Expiry needs no new version: a lookup masks the rows whose memories have all expired and drops expired memories
from the group it returns. Nothing derived is trusted from storage: the exact key is recomputed from the raw
intention, so a vocabulary change never strands a memory.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from operator import attrgetter
from typing import Any

import numpy as np
from cachetools import LRUCache

from promptcache.intention._backends import MemoryRecord
from promptcache.intention._select import filter_records, recent_first
from promptcache.intention._similarity import _unpack
from promptcache.intention._steps import Steps, call
from promptcache.intention._vetoes import exact_key, prepare_veto

__all__ = ["DEFAULT_INDEXED_USERS", "IndexCache", "VectorIndex"]

DEFAULT_INDEXED_USERS = 64
"""Users whose vector index an `IntentionMemory` keeps (least recently looked up dropped first). An index takes
about 1.6 KB per distinct intention with 384-dimensional vectors (15 MB at 10,000)."""

_ID_AND_TIME = attrgetter("id", "created_at")
_FIRST = 16
"""Rows ranked by a partial sort first; a lookup that needs more (a ``tool``/``args`` filter) sorts the rest."""


class VectorIndex:
    """One user's memories at one backend version: exact key -> memories (newest first), one unit vector per key.

    Attributes:
        version: the backend's version token the index was built at.
        exact: exact key -> the memories stored under it, newest first.
        keys: the exact key of each matrix row.
        matrix: float32 ``(rows, dimensions)``, unit rows (a zero vector stays zero).
        expires: float64 ``(rows,)``: the latest expiry (epoch seconds) among each row's memories.
        known: record id -> ``(created_at, exact key, unit vector or None)``, what a rebuild reuses.
    """

    __slots__ = ("exact", "expires", "keys", "known", "matrix", "tools", "version")

    def __init__(self, version: Any, exact: dict[str, list[MemoryRecord]], known: dict[str, Any]) -> None:
        self.version = version
        self.exact = exact
        self.keys = list(exact)
        self.known = known
        self.tools: dict[Any, Any] = {}
        rows = [known[exact[k][0].id][2] for k in self.keys]
        dims = max((len(v) for v in rows if v is not None), default=1)
        self.matrix = np.zeros((len(rows), dims), dtype=np.float32)
        for i, v in enumerate(rows):
            if v is not None and len(v) == dims:
                self.matrix[i] = v
        self.expires = np.asarray([max(r.expires_at for r in exact[k]) for k in self.keys], dtype=np.float64)

    def _tool_mask(self, tool: str | None) -> Any:
        """Rows holding at least one memory of ``tool`` (cached per tool; ``None``: every row)."""
        if tool is None:
            return None
        mask = self.tools.get(tool)
        if mask is None:
            mask = np.asarray([any(r.tool == tool for r in self.exact[k]) for k in self.keys], dtype=bool)
            self.tools[tool] = mask
        return mask

    def group(self, key: str, tool: str | None, args: Any, now: float) -> list[MemoryRecord]:
        """The live memories stored under exact key ``key`` of ``tool``/``args`` (when given), newest first."""
        found = self.exact.get(key)
        if not found:
            return []
        return [r for r in filter_records(found, tool, args) if r.expires_at > now]

    def ranked(self, query: Any, tool: str | None, now: float) -> Iterator[tuple[float, str]]:
        """``(cosine clipped to [0, 1], exact key)`` of the live rows (of ``tool`` when given), best first (ties by
        key). A query of another dimension than the stored vectors, or a zero query, ranks nothing."""
        if not self.keys:
            return
        q = np.asarray(_unpack(query), dtype=np.float32)
        norm = float(np.linalg.norm(q))
        if not norm or q.shape[0] != self.matrix.shape[1]:
            return
        scores = np.clip(self.matrix @ (q / norm), 0.0, 1.0)
        live = self.expires > now
        mask = self._tool_mask(tool)
        if mask is not None:
            live &= mask
        scores = np.where(live, scores, -1.0)
        n = int(live.sum())
        first = min(n, _FIRST)
        if first == 0:
            return
        # The best few by a partial sort (most lookups need no more); all live rows in order only when asked for.
        top = np.argpartition(-scores, first - 1)[:first] if first < len(scores) else np.arange(len(scores))
        order = sorted(top.tolist(), key=lambda i: (-float(scores[i]), self.keys[i]))
        for i in order:
            yield float(scores[i]), self.keys[i]
        if n > first:
            done = set(order)
            rest = [i for i in np.nonzero(live)[0].tolist() if i not in done]
            for i in sorted(rest, key=lambda i: (-float(scores[i]), self.keys[i])):
                yield float(scores[i]), self.keys[i]


def _unit(vector: Any) -> Any:
    v = np.asarray(_unpack(vector), dtype=np.float32)
    norm = float(np.linalg.norm(v))
    return v / norm if norm else v


def build(
    version: Any, records: list[MemoryRecord], similarity: Any, previous: VectorIndex | None
) -> Steps[VectorIndex]:
    """The index of ``records`` at ``version``, reusing ``previous``'s rows of unchanged memories; yields the
    re-embedding (``similarity.encode``) of vectors another model made (a record ``similarity`` name other than
    ``similarity.name``) or none made."""
    known_before = previous.known if previous is not None else {}
    known: dict[str, Any] = {}
    exact: dict[str, list[MemoryRecord]] = {}
    stale: list[MemoryRecord] = []
    for r in records:
        hit = known_before.get(r.id)
        if hit is not None and hit[0] == r.created_at:
            known[r.id] = hit
            exact.setdefault(hit[1], []).append(r)
            continue
        key = exact_key(r.intention)
        prepare_veto(r.intention)  # the vetoes' view of the stored intention, computed here once, not per lookup
        exact.setdefault(key, []).append(r)
        if r.similarity == similarity.name and r.features is not None:
            known[r.id] = (r.created_at, key, _unit(r.features))
        else:
            known[r.id] = (r.created_at, key, None)
            stale.append(r)
    if stale:  # another model's vectors (or none): re-embedded from the stored raw intention
        vectors = yield call(similarity, "encode", [r.intention for r in stale])
        for r, v in zip(stale, vectors):
            known[r.id] = (r.created_at, known[r.id][1], _unit(v))
    for k, group in exact.items():
        if len(group) > 1:
            exact[k] = recent_first(group)
    return VectorIndex(version, exact, known)


class IndexCache:
    """The vector indexes of the most recently looked-up users (thread-safe).

    Args:
        users: how many users' indexes are kept (default `DEFAULT_INDEXED_USERS`).
    """

    def __init__(self, users: int = DEFAULT_INDEXED_USERS) -> None:
        self._users: LRUCache[str, VectorIndex] = LRUCache(maxsize=users)
        self._lock = threading.Lock()

    def current(self, backend: Any, similarity: Any, user: str, now: float) -> Steps[VectorIndex]:
        """The user's index at the backend's current version: one backend read (`records_versioned`), then the
        cached index when the version is unchanged, else a rebuild (see the module docstring)."""
        records, version = yield call(backend, "records_versioned", user, now)
        if version is None:
            version = ("records", hash(tuple(map(_ID_AND_TIME, records))))
        with self._lock:
            previous = self._users.get(user)
        if previous is not None and previous.version == version:
            return previous
        index = yield from build(version, records, similarity, previous)
        with self._lock:
            self._users[user] = index
        return index

    def forget(self, user: str) -> None:
        """Drop the user's index (the next lookup rebuilds it)."""
        with self._lock:
            self._users.pop(user, None)

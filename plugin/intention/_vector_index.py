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
from typing import TypeAlias

import numpy as np
import numpy.typing as npt
from cachetools import LRUCache

from promptcache._types import JSONValue
from promptcache.intention._backends import IntentionBackend, MemoryRecord
from promptcache.intention._select import filter_records, recent_first
from promptcache.intention._similarity import Similarity, _unpack
from promptcache.intention._steps import Steps, call
from promptcache.intention._vetoes import exact_key, prepare_veto

__all__ = ["DEFAULT_INDEXED_USERS", "IndexCache", "VectorIndex"]

Vector: TypeAlias = npt.NDArray[np.float32]
"""A unit vector (float32)."""
Known: TypeAlias = tuple[float, str, "Vector | None"]
"""What a rebuild reuses of one memory: its creation time, exact key and unit vector (``None``: to re-embed)."""
Pair: TypeAlias = tuple[str, float, str]
"""One version of a memory: ``(id, created_at, result_hash)``."""

DEFAULT_INDEXED_USERS = 64
"""Users whose vector index an `IntentionMemory` keeps (least recently looked up dropped first). An index takes
about 1.6 KB per distinct intention with 384-dimensional vectors (15 MB at 10,000)."""

_ID_AND_TIME = attrgetter("id", "created_at", "result_hash")
"""What identifies one version of a memory: a replaced memory has a new creation time or a new result."""
_FIRST = 32
"""Rows ranked by a partial sort first (the consensus stage's pool); a lookup that needs more (a ``tool``/``args``
filter) sorts the rest."""


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

    __slots__ = ("dead", "exact", "expires", "keys", "known", "matrix", "pairs", "rows", "tools", "version")

    def __init__(
        self, version: object, exact: dict[str, list[MemoryRecord]], known: dict[str, Known], pairs: set[Pair]
    ) -> None:
        self.version = version
        self.exact = exact
        self.keys = list(exact)
        self.rows = {k: i for i, k in enumerate(self.keys)}
        self.known = known
        self.pairs = pairs
        self.dead = 0
        self.tools: dict[str, npt.NDArray[np.bool_]] = {}
        heads = [exact[k][0] for k in self.keys]
        rows = [known[r.id][2] for r in heads]
        dims = next((len(v) for v in rows if v is not None), 1)
        whole = [v for v in rows if v is not None and len(v) == dims]
        self.matrix: Vector
        if rows and len(whole) == len(rows):
            self.matrix = np.stack(whole)
        else:  # a zero row where a vector is missing or of another dimension (not comparable with the query)
            self.matrix = np.zeros((len(rows), dims), dtype=np.float32)
            for i, v in enumerate(rows):
                if v is not None and len(v) == dims:
                    self.matrix[i] = v
        self.expires = np.fromiter(
            (h.expires_at if len(g) == 1 else max(r.expires_at for r in g) for h, g in zip(heads, exact.values())),
            dtype=np.float64,
            count=len(heads),
        )

    def _tool_mask(self, tool: str | None) -> npt.NDArray[np.bool_] | None:
        """Rows holding at least one memory of ``tool`` (cached per tool; ``None``: every row)."""
        if tool is None:
            return None
        mask = self.tools.get(tool)
        if mask is None:
            mask = np.asarray([any(r.tool == tool for r in self.exact.get(k, ())) for k in self.keys], dtype=bool)
            self.tools[tool] = mask
        return mask

    def group(self, key: str, tool: str | None, args: JSONValue, now: float) -> list[MemoryRecord]:
        """The live memories stored under exact key ``key`` of ``tool``/``args`` (when given), newest first."""
        found = self.exact.get(key)
        if not found:
            return []
        return [r for r in filter_records(found, tool, args) if r.expires_at > now]

    def ranked(self, query: object, tool: str | None, now: float) -> Iterator[tuple[float, str]]:
        """``(cosine clipped to [0, 1], exact key)`` of the live rows (of ``tool`` when given), best first (ties by
        key). A query of another dimension than the stored vectors, or a zero query, ranks nothing."""
        if not self.keys:
            return
        q = np.asarray(_unpack(query), dtype=np.float32)
        norm = float(np.linalg.norm(q))
        if not norm or q.shape[0] != self.matrix.shape[1]:
            return
        # Not ``@``: a matrix-vector product in BLAS may wait on its other threads when the cores are busy (tens of
        # ms at 10,000 rows on a loaded 2-core machine). ``vecdot`` (NumPy >= 2) runs one SIMD dot per row in this
        # thread: 0.41 ms of CPU at 10,000 x 384 against einsum's 0.65 ms (bench/README.md, "Lookup latency").
        scores = _row_dots(self.matrix, q / norm)
        np.clip(scores, 0.0, 1.0, out=scores)  # in place: a fresh array, no copy
        live = self.expires > now
        mask = self._tool_mask(tool)
        if mask is not None:
            live &= mask
        n = int(np.count_nonzero(live))
        first = min(n, _FIRST)
        if first == 0:
            return
        if n < len(scores):
            scores[~live] = -1.0
        # The best few by a partial sort (most lookups need no more; ties at the cut all taken, so the order is
        # the full sort's); all live rows in order only when asked for.
        if first < len(scores):
            last = len(scores) - first
            cut = scores[np.argpartition(scores, last)[last]]
            top = np.nonzero(scores >= cut)[0]
        else:
            top = np.arange(len(scores))
        order = sorted((i for i in top.tolist() if scores[i] >= 0.0), key=lambda i: (-float(scores[i]), self.keys[i]))
        for i in order:
            yield float(scores[i]), self.keys[i]
        if n > len(order):
            done = set(order)
            rest = [i for i in np.nonzero(live)[0].tolist() if i not in done]
            for i in sorted(rest, key=lambda i: (-float(scores[i]), self.keys[i])):
                yield float(scores[i]), self.keys[i]


def _einsum_rows(matrix: Vector, q: Vector) -> Vector:
    return np.einsum("ij,j->i", matrix, q)  # type: ignore[no-any-return]


_row_dots = getattr(np, "vecdot", _einsum_rows)
"""Each row of a matrix dotted with one vector: ``np.vecdot`` where NumPy has it (>= 2.0), else einsum."""


def _unit(vector: object) -> Vector:
    v = np.asarray(_unpack(vector), dtype=np.float32)
    norm = float(np.linalg.norm(v))
    return (v / np.float32(norm)).astype(np.float32, copy=False) if norm else v


def build(
    version: object, records: list[MemoryRecord], similarity: Similarity, previous: VectorIndex | None
) -> Steps[VectorIndex]:
    """The index of ``records`` at ``version``, reusing ``previous``'s rows of unchanged memories; yields the
    re-embedding (``similarity.encode``) of vectors another model made (a record ``similarity`` name other than
    ``similarity.name``) or none made."""
    known_before = previous.known if previous is not None else {}
    known: dict[str, Known] = {}
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
    return VectorIndex(version, exact, known, set(map(_ID_AND_TIME, records)))


def _fresh(r: MemoryRecord, similarity: Similarity) -> Known:
    prepare_veto(r.intention)  # the vetoes' view of the stored intention, computed here once, not per lookup
    vector = _unit(r.features) if r.similarity == similarity.name and r.features is not None else None
    return (r.created_at, exact_key(r.intention), vector)


def update(
    previous: VectorIndex, version: object, records: list[MemoryRecord], similarity: Similarity
) -> Steps[VectorIndex | None]:
    """``previous`` brought up to ``records`` by what changed (memories added, replaced or gone: set differences
    of ``(id, created_at, result_hash)``, then only the changed rows touched), or ``None`` when so much changed that `build` is
    the cheaper way."""
    pairs = set(map(_ID_AND_TIME, records))
    added, removed = pairs - previous.pairs, previous.pairs - pairs
    if len(added) + len(removed) > max(16, len(previous.keys) // 8) or previous.dead > len(previous.keys) // 4:
        return None
    known = dict(previous.known)
    exact = dict(previous.exact)
    touched: set[str] = set()
    for mid, *_ in removed:
        touched.add(known.pop(mid)[1])
    new = [r for r in records if _ID_AND_TIME(r) in added] if added else []
    for r in new:
        known[r.id] = _fresh(r, similarity)
        touched.add(known[r.id][1])
    stale = [r for r in new if known[r.id][2] is None]
    if stale:  # another model's vectors (or none): re-embedded from the stored raw intention
        vectors = yield call(similarity, "encode", [r.intention for r in stale])
        for r, v in zip(stale, vectors):
            known[r.id] = (r.created_at, known[r.id][1], _unit(v))
    index = VectorIndex.__new__(VectorIndex)
    index.version, index.known, index.pairs, index.exact = version, known, pairs, exact
    index.keys, index.rows, index.dead = list(previous.keys), dict(previous.rows), previous.dead
    index.matrix, index.expires, index.tools = previous.matrix, previous.expires.copy(), {}
    by_key: dict[str, list[MemoryRecord]] = {}
    for r in new:
        by_key.setdefault(known[r.id][1], []).append(r)
    appended: list[Vector | None] = []
    for key in touched:
        kept = [r for r in exact.get(key, ()) if _ID_AND_TIME(r) not in removed]
        group = recent_first(kept + by_key.get(key, []))
        row = index.rows.get(key)
        if not group:
            exact.pop(key, None)
            if row is not None:
                index.expires[row] = -np.inf
                index.dead += 1
            continue
        exact[key] = group
        vector = known[group[0].id][2]
        if row is None:
            index.rows[key] = len(index.keys)
            index.keys.append(key)
            appended.append(vector)
            index.expires = np.append(index.expires, max(r.expires_at for r in group))
            continue
        if index.matrix is previous.matrix:
            index.matrix = previous.matrix.copy()  # the previous index may still be read by another lookup
        if vector is not None and len(vector) == index.matrix.shape[1]:
            index.matrix[row] = vector
        index.expires[row] = max(r.expires_at for r in group)
    if appended:
        dims = index.matrix.shape[1]
        rows = [v if v is not None and len(v) == dims else np.zeros(dims, dtype=np.float32) for v in appended]
        index.matrix = np.vstack([index.matrix, np.stack(rows)])
    for tool, mask in previous.tools.items():  # the tool masks: only the touched rows recomputed
        mask = np.append(mask, np.zeros(len(appended), dtype=bool))
        for key in touched:
            if key in index.rows:
                mask[index.rows[key]] = any(r.tool == tool for r in exact.get(key, ()))
        index.tools[tool] = mask
    return index


class IndexCache:
    """The vector indexes of the most recently looked-up users (thread-safe).

    Args:
        users: how many users' indexes are kept (default `DEFAULT_INDEXED_USERS`).
    """

    def __init__(self, users: int = DEFAULT_INDEXED_USERS) -> None:
        self._users: LRUCache[str, VectorIndex] = LRUCache(maxsize=users)
        self._lock = threading.Lock()

    def peek(self, user: str) -> VectorIndex | None:
        """The user's index as last built here (maybe stale: `current` checks the backend's version), or ``None``."""
        with self._lock:
            return self._users.get(user)

    def current(self, backend: IntentionBackend, similarity: Similarity, user: str, now: float) -> Steps[VectorIndex]:
        """The user's index at the backend's current version: one backend read (`records_versioned`), then the
        cached index when the version is unchanged, else a rebuild (see the module docstring)."""
        index, _ = yield from self.current_results(backend, similarity, user, now, [])
        return index

    def current_results(
        self, backend: IntentionBackend, similarity: Similarity, user: str, now: float, result_hashes: list[str]
    ) -> Steps[tuple[VectorIndex, dict[str, bytes | None]]]:
        """`current`, and the results of ``result_hashes`` the backend read in the same round trip, by hash
        (`records_versioned_results`; none from a backend that reads them apart)."""
        records, version, results = yield call(backend, "records_versioned_results", user, now, result_hashes)
        if version is None:
            version = ("records", hash(tuple(map(_ID_AND_TIME, records))))
        with self._lock:
            previous = self._users.get(user)
        if previous is not None and previous.version == version:
            return previous, results
        index = None
        if previous is not None and previous.keys:
            index = yield from update(previous, version, records, similarity)
        if index is None:
            index = yield from build(version, records, similarity, previous)
        with self._lock:
            self._users[user] = index
        return index, results

    def forget(self, user: str) -> None:
        """Drop the user's index (the next lookup rebuilds it)."""
        with self._lock:
            self._users.pop(user, None)

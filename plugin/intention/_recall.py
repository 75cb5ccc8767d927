"""The lookup of an `IntentionMemory` with embeddings: propose, veto, accept.

1. **Read**: the user's live memories (`records`: one round
   trip; Redis reuses the records it parsed while the user's version counter is unchanged), narrowed to the
   ``tool``/``args`` asked for. Their index (exact keys and a unit-vector matrix) is built once per set of memories
   and reused. Nothing derived is trusted from storage: the exact key is recomputed from the stored raw intention
   (`exact_key`), and a vector made by another model (the record's
   ``similarity`` name) or by none is re-embedded, so a vocabulary or model change never strands a memory.
2. **exact**: a memory whose exact key is the query's (stage ``"exact"``).
3. **propose**: the ``proposals`` most similar stored intentions (one per intention) by cosine of the vectors.
4. **veto**: a proposal is dropped when a cheap, principled check says it asks for something else
   (`veto`).
5. **accept**, in stages: cosine at least the memory's threshold (stage ``"embeddings"``; the threshold is
   calibrated from labelled pairs, `promptcache.intention._calibrate`); else, with a model verifier
   (`ChatModelVerifier`), the model is asked about the remaining proposals
   above the proposal floor (at most its ``max_checks``; stage: the verifier's name). Of the accepted, the most
   similar, or the newest among those within ``margin`` of it.

`suggest` is the second contract (``retrieve_memory``): the best few proposals with their similarity and
whether a veto fired, for the agent to judge; nothing is accepted or refused there.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from operator import attrgetter
from typing import TYPE_CHECKING, Any, NamedTuple

from cachetools import LRUCache

from promptcache.intention._agreement import ambiguous
from promptcache.intention._backends import MemoryRecord
from promptcache.intention._lookup import Picked, _result_text
from promptcache.intention._matching import choose
from promptcache.intention._meaning import compare
from promptcache.intention._select import filter_records, recent_first
from promptcache.intention._similarity import _unpack
from promptcache.intention._vetoes import exact_key, prepare_veto, veto

if TYPE_CHECKING:
    from promptcache.intention._memory import IntentionMemory

__all__ = ["Proposal", "RecallIndex", "afind_recall", "find_recall", "proposals_for", "suggest"]


class Proposal(NamedTuple):
    """A stored intention proposed for a query: its similarity, its memories (newest first) and the veto that
    fired (``None``: none)."""

    score: float
    group: list[MemoryRecord]
    veto: str | None


class RecallIndex:
    """One set of memories, indexed: exact key -> memories, and the unit vectors (one row per distinct exact key)."""

    __slots__ = ("exact", "keys", "matrix")

    def __init__(self, exact: dict[str, list[MemoryRecord]], keys: list[str], matrix: Any) -> None:
        self.exact, self.keys, self.matrix = exact, keys, matrix


_ID_AND_TIME = attrgetter("id", "created_at")


class IndexCache:
    """Indexes of recently looked-up sets of memories (thread-safe; a set is known by its ids and creation times)."""

    def __init__(self, size: int = 64) -> None:
        self._cache: LRUCache[Any, RecallIndex] = LRUCache(maxsize=size)
        self._lock = threading.Lock()

    def get(self, records: list[MemoryRecord], build: Callable[[], RecallIndex]) -> RecallIndex:
        key = hash(tuple(map(_ID_AND_TIME, records)))
        with self._lock:
            hit = self._cache.get(key)
        if hit is None:
            hit = build()
            with self._lock:
                self._cache[key] = hit
        return hit


def _build(memory: IntentionMemory, records: list[MemoryRecord], encode: Callable[[list[str]], list[Any]]) -> Any:
    import numpy as np

    exact: dict[str, list[MemoryRecord]] = {}
    for r in records:
        exact.setdefault(exact_key(r.intention), []).append(r)
    keys = list(exact)
    for k in keys:
        exact[k] = recent_first(exact[k])
    name = memory.similarity.name
    heads = [exact[k][0] for k in keys]
    for r in heads:  # the vetoes' view of each stored intention, computed once here rather than in a lookup
        prepare_veto(r.intention)
    vectors: list[Any] = [None] * len(heads)
    stale: list[int] = []
    for i, r in enumerate(heads):
        if r.similarity == name and r.features is not None:
            vectors[i] = _unpack(r.features)
        else:
            stale.append(i)
    if stale:  # another model's vectors (or none): re-embedded from the stored raw intention
        for i, v in zip(stale, encode([heads[i].intention for i in stale])):
            vectors[i] = _unpack(v)
    if not heads:
        return RecallIndex(exact, keys, np.zeros((0, 1), dtype=np.float32))
    matrix = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return RecallIndex(exact, keys, matrix / np.where(norms == 0, 1.0, norms))


def proposals_for(index: RecallIndex, intention: str, query: Any, count: int) -> list[Proposal]:
    """The ``count`` stored intentions most similar to ``query`` (packed or plain vector), best first, each with
    the veto that fires against ``intention`` (if any)."""
    import numpy as np

    if not index.keys:
        return []
    q = np.asarray(_unpack(query), dtype=np.float32)
    norm = float(np.linalg.norm(q))
    if not norm or q.shape[0] != index.matrix.shape[1]:
        return []
    scores = np.clip(index.matrix @ (q / norm), 0.0, 1.0)
    k = min(count, len(index.keys))
    top = np.argpartition(-scores, k - 1)[:k] if k < len(index.keys) else np.arange(len(index.keys))
    order = sorted(top.tolist(), key=lambda i: (-float(scores[i]), index.keys[i]))
    out = []
    for i in order:
        group = index.exact[index.keys[i]]
        out.append(Proposal(float(scores[i]), group, veto(intention, group[0].intention)))
    return out


Accepted = list[tuple[Proposal, str]]
"""Accepted proposals with the stage that accepted each."""


def _accept_cheap(memory: IntentionMemory, intention: str, proposals: list[Proposal]) -> Accepted:
    """Proposals no veto blocks that clear the threshold (stage ``"embeddings"``) or whose meaning normal form is
    the query's (stage ``"lexical"``: every difference an equivalence, `promptcache.intention._meaning.compare`)."""
    out: Accepted = []
    for p in proposals:
        if p.veto is not None:
            continue
        if compare(intention, p.group[0].intention) is None:
            out.append((p, "lexical"))
        elif p.score >= memory.threshold and memory.word_check.passes(intention, p.group[0].intention):
            if not ambiguous(p, proposals):  # a near-tied rival holding another result: a guess, refused
                out.append((p, "embeddings"))
    return out


def _to_model(memory: IntentionMemory, proposals: list[Proposal]) -> list[Proposal]:
    """The proposals the model verifier is asked about when the cheap stages accepted none: no veto, at least the
    proposal floor (at most its ``max_checks``, most similar first)."""
    if not memory.verifier.asks_model:
        return []
    limit = getattr(memory.verifier, "max_checks", 3)
    todo = [p for p in proposals if p.veto is None and p.score >= memory.proposal_floor]
    return todo[:limit]


def _pick(memory: IntentionMemory, accepted: Accepted) -> Picked | None:
    by_head = {id(p.group[0]): (p, stage) for p, stage in accepted}
    chosen = choose([(p.score, p.group[0]) for p, _ in accepted], 0.0, memory.margin)
    if chosen is None:
        return None
    proposal, stage = by_head[id(chosen[1])]
    return Picked(proposal.group, proposal.score, "similar", _note(proposal), stage)


def _note(proposal: Proposal) -> str:
    return f"similarity {proposal.score:.2f} by embeddings"


def _start(
    memory: IntentionMemory, records: list[MemoryRecord], intention: str, tool: Any, args: Any
) -> tuple[RecallIndex, list[MemoryRecord]]:
    pool = filter_records(records, tool, args)
    return memory._recall_index(pool), pool


def find_recall(
    memory: IntentionMemory, user: str, intention: str, tool: Any, args: Any, exact_only: bool
) -> tuple[Picked | None, float]:
    """``(Picked | None, now)`` for a lookup (see the module docstring)."""
    now = memory.clock()
    index, _ = _start(memory, memory.backend.records(user, now), intention, tool, args)
    group = index.exact.get(exact_key(intention))
    if group:
        return Picked(group, 1.0, "exact", verified_by="exact"), now
    if exact_only or memory.exact_only or not index.keys:
        return None, now
    proposals = proposals_for(index, intention, memory.similarity.encode_query(intention), memory.proposals)
    accepted = _accept_cheap(memory, intention, proposals)
    if not accepted:
        for p in _to_model(memory, proposals):
            text = _result_text(memory.backend.result(user, p.group[0].result_hash))
            if text is not None and memory.verifier.verify(intention, p.group[0].intention, text):
                accepted.append((p, memory.verifier.name))
    return _pick(memory, accepted), now


async def afind_recall(
    memory: IntentionMemory, user: str, intention: str, tool: Any, args: Any, exact_only: bool
) -> tuple[Picked | None, float]:
    """Async `find_recall`."""
    now = memory.clock()
    index, _ = _start(memory, await memory.backend.arecords(user, now), intention, tool, args)
    group = index.exact.get(exact_key(intention))
    if group:
        return Picked(group, 1.0, "exact", verified_by="exact"), now
    if exact_only or memory.exact_only or not index.keys:
        return None, now
    query = await memory.similarity.aencode_query(intention)
    proposals = proposals_for(index, intention, query, memory.proposals)
    accepted = _accept_cheap(memory, intention, proposals)
    if not accepted:
        for p in _to_model(memory, proposals):
            text = _result_text(await memory.backend.aresult(user, p.group[0].result_hash))
            if text is not None and await memory.verifier.averify(intention, p.group[0].intention, text):
                accepted.append((p, memory.verifier.name))
    return _pick(memory, accepted), now


def suggest(memory: IntentionMemory, user: str, intention: str, count: int) -> tuple[list[Proposal], float]:
    """The ``count`` best proposals for ``intention`` (exact first), vetoed ones included and marked; ``now``."""
    now = memory.clock()
    index, _ = _start(memory, memory.backend.records(user, now), intention, None, None)
    return _suggestions(memory, index, intention, memory.similarity.encode_query(intention), count), now


async def asuggest(memory: IntentionMemory, user: str, intention: str, count: int) -> tuple[list[Proposal], float]:
    """Async `suggest`."""
    now = memory.clock()
    index, _ = _start(memory, await memory.backend.arecords(user, now), intention, None, None)
    query = await memory.similarity.aencode_query(intention)
    return _suggestions(memory, index, intention, query, count), now


def _suggestions(memory: IntentionMemory, index: RecallIndex, intention: str, query: Any, count: int) -> list[Any]:
    key = exact_key(intention)
    out: list[Proposal] = []
    if key in index.exact:
        out.append(Proposal(1.0, index.exact[key], None))
    for p in proposals_for(index, intention, query, count + 1):
        if p.group is not index.exact.get(key):
            out.append(p)
    return out[:count]

"""How `IntentionMemory` finds the stored intention that answers a query.

1. The candidates: the user's memories with the query's meaning signature, read from the backend's index
   (`matching`: not every memory), narrowed to the
   ``tool``/``args`` asked for.
2. **exact**: a candidate whose exact key (`exact_key`, recomputed from the
   stored raw intention) is the query's: that intention's memories. Candidates a veto blocks
   (`veto`) are not offered as similar matches.
3. **similar**: otherwise every candidate is lexically equivalent to the query (the
   `LexicalVerifier`'s verdict); with a verifier that asks a model
   (`ChatModelVerifier`), the user's most similar other memories above the
   threshold whose numbers and names agree (`anchors_agree`) are put to it
   as well (these lookups read all the user's memories). Of the verified candidates,
   `choose` picks one (threshold, then the newest within ``margin`` of the
   best similarity).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NamedTuple

import orjson

from promptcache.intention._backends import MemoryRecord
from promptcache.intention._matching import anchor_info, choose
from promptcache.intention._meaning import signature
from promptcache.intention._normalize import anchors_agree
from promptcache.intention._select import exact_group, filter_records, group_of
from promptcache.intention._vetoes import exact_key, veto

if TYPE_CHECKING:
    from promptcache.intention._memory import IntentionMemory

__all__ = ["Picked", "afind", "find"]


class Picked(NamedTuple):
    """A lookup's choice: the intention's memories (most recent first), similarity, kind, and for a similar match
    how the stored intention differs (``note``), who verified it (``verified_by``) and results already read."""

    group: list[MemoryRecord]
    score: float
    kind: str
    note: str = ""
    verified_by: str = ""
    results: dict[str, bytes | None] | None = None
    """Results the backend read with the candidates, by hash (``None``: fetch them)."""


def _features(records: list[MemoryRecord], stale: dict[str, Any]) -> list[Any]:
    return [stale.get(r.id, r.features) for r in records]


def _stale(memory: IntentionMemory, records: list[MemoryRecord]) -> list[MemoryRecord]:
    """The records whose stored features are not the similarity's (another model, or none): re-encoded."""
    return [r for r in records if r.similarity != memory.similarity.name or r.features is None]


def _scores(
    memory: IntentionMemory, intention: str, query: Any, records: list[MemoryRecord], stale: Any
) -> list[float]:
    if not records:
        return []
    if not memory.similarity.stored_features:
        return list(memory.similarity.scores(intention, [r.intention for r in records]))
    return list(memory.similarity.scores(query, _features(records, stale)))


def _others(
    memory: IntentionMemory, records: list[MemoryRecord], intention: str, query: Any, skip: set[str], stale: Any
) -> list[tuple[float, MemoryRecord]]:
    """The most similar memories (one per intention) outside ``skip`` whose anchors agree, for the model."""
    sim = memory.similarity
    if query is None:
        prepared = memory._prepared_for(records, lambda: [r.intention for r in records])
        hits = sim.above(intention, prepared, memory.threshold)
    else:
        prepared = memory._prepared_for(records, lambda: _features(records, stale))
        hits = sim.above(query, prepared, memory.threshold)
    ranked = sorted(((s, records[i]) for i, s in hits), key=lambda sr: (-sr[0], -sr[1].created_at, sr[1].id))
    qa, qt = anchor_info(intention)
    out: list[tuple[float, MemoryRecord]] = []
    seen = set(skip)
    limit = getattr(memory.verifier, "max_checks", 3)
    for score, record in ranked:
        if record.normalized in seen:
            continue
        seen.add(record.normalized)
        if anchors_agree(qa, qt, *anchor_info(record.intention)) and veto(intention, record.intention) is None:
            out.append((score, record))
            if len(out) >= limit:
                break
    return out


def _result_text(raw: bytes | None) -> str | None:
    """A stored result as the model is shown it: a string as is, any other JSON value as JSON text."""
    if raw is None:
        return None
    try:
        value = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return None  # corrupt: not offered to the model
    return value if isinstance(value, str) else orjson.dumps(value).decode()


def _finish(
    memory: IntentionMemory,
    intention: str,
    pool: list[MemoryRecord],
    lexical: list[tuple[float, MemoryRecord]],
    by_model: list[tuple[float, MemoryRecord]],
    fetched: dict[str, bytes | None],
) -> Picked | None:
    chosen = choose(lexical + by_model, memory.threshold, memory.margin)
    if chosen is None:
        return None
    score, record = chosen
    equivalent = any(r is record for _, r in lexical)
    return Picked(
        group_of(pool, record),
        score,
        "similar",
        memory.verifier.describe(intention, record.intention),
        "lexical" if equivalent else memory.verifier.name,
        fetched,
    )


def find(
    memory: IntentionMemory, user: str, intention: str, tool: Any, args: Any, exact_only: bool
) -> tuple[Picked | None, float]:
    """``(Picked | None, now)`` for a lookup (see the module docstring)."""
    now = memory.clock()
    sig = signature(intention)
    asks = memory.verifier.asks_model and not exact_only and memory.threshold < 1.0
    fetched: dict[str, bytes | None] = {}
    if asks:
        pool = filter_records(memory.backend.records(user, now), tool, args)
        same = [r for r in pool if signature(r.intention) == sig]
    else:  # the meaning index: only the memories with the query's signature, their results with them
        found, fetched = memory.backend.matching_results(user, sig, now)
        same = [r for r in filter_records(found, tool, args) if signature(r.intention) == sig]
        pool = same
    cands = [r for r in same if veto(intention, r.intention) is None]
    group = exact_group(pool, exact_key(intention))
    if group:
        return Picked(group, 1.0, "exact", results=fetched), now
    if exact_only or memory.threshold >= 1.0 or not pool:
        return None, now
    query = memory.similarity.encode_query(intention) if memory.similarity.stored_features else None
    todo = _stale(memory, pool) if query is not None else []
    stale = dict(zip((r.id for r in todo), memory.similarity.encode([r.intention for r in todo]))) if todo else {}
    lexical = list(zip(_scores(memory, intention, query, cands, stale), cands))
    by_model: list[tuple[float, MemoryRecord]] = []
    if asks:
        skip = {r.normalized for r in cands}
        for score, record in _others(memory, pool, intention, query, skip, stale):
            text = _result_text(memory.backend.result(user, record.result_hash))
            if text is not None and memory.verifier.verify(intention, record.intention, text):
                by_model.append((score, record))
    return _finish(memory, intention, pool, lexical, by_model, fetched), now


async def afind(
    memory: IntentionMemory, user: str, intention: str, tool: Any, args: Any, exact_only: bool
) -> tuple[Picked | None, float]:
    """Async `find`."""
    now = memory.clock()
    sig = signature(intention)
    asks = memory.verifier.asks_model and not exact_only and memory.threshold < 1.0
    fetched: dict[str, bytes | None] = {}
    if asks:
        pool = filter_records(await memory.backend.arecords(user, now), tool, args)
        same = [r for r in pool if signature(r.intention) == sig]
    else:  # the meaning index: only the memories with the query's signature, their results with them
        found, fetched = await memory.backend.amatching_results(user, sig, now)
        same = [r for r in filter_records(found, tool, args) if signature(r.intention) == sig]
        pool = same
    cands = [r for r in same if veto(intention, r.intention) is None]
    group = exact_group(pool, exact_key(intention))
    if group:
        return Picked(group, 1.0, "exact", results=fetched), now
    if exact_only or memory.threshold >= 1.0 or not pool:
        return None, now
    query = await memory.similarity.aencode_query(intention) if memory.similarity.stored_features else None
    todo = _stale(memory, pool) if query is not None else []
    stale = (
        dict(zip((r.id for r in todo), await memory.similarity.aencode([r.intention for r in todo]))) if todo else {}
    )
    lexical = list(zip(_scores(memory, intention, query, cands, stale), cands))
    by_model: list[tuple[float, MemoryRecord]] = []
    if asks:
        skip = {r.normalized for r in cands}
        for score, record in _others(memory, pool, intention, query, skip, stale):
            text = _result_text(await memory.backend.aresult(user, record.result_hash))
            if text is not None and await memory.verifier.averify(intention, record.intention, text):
                by_model.append((score, record))
    return _finish(memory, intention, pool, lexical, by_model, fetched), now

"""How `IntentionMemory` finds the stored intention that answers a query.

1. The candidates: the user's memories with the query's meaning signature, read from the backend's index
   (`matching_indexed`: not every memory), narrowed to the ``tool``/``args`` asked for. When the backend says
   the user's index was made under another vocabulary version (the word lists changed since), every memory's
   signature is derived again from its stored raw intention and stored under it (`reindex`), once: memories
   stored before a vocabulary change are found after it.
2. **exact**: a candidate whose exact key (`exact_key`, recomputed from the
   stored raw intention) is the query's: that intention's memories (asked first of the backend's index by exact
   key, `exact_matching`, where it keeps one: then the group is read only for a similar match). Candidates a veto blocks
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

from dataclasses import replace
from typing import TYPE_CHECKING, Any, NamedTuple

import orjson

from promptcache._keys import canonical_json
from promptcache.intention._matching import anchor_info, choose
from promptcache.intention._meaning import signature
from promptcache.intention._normalize import anchors_agree
from promptcache.intention._record import MemoryRecord, signature_version
from promptcache.intention._select import exact_group, filter_records, group_of
from promptcache.intention._steps import Steps, call, run
from promptcache.intention._vetoes import exact_key, veto

if TYPE_CHECKING:
    from promptcache.intention._context import LookupContext

__all__ = ["Picked", "find", "find_steps", "result_text"]


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


def _stale(ctx: LookupContext, records: list[MemoryRecord]) -> list[MemoryRecord]:
    """The records whose stored features are not the similarity's (another model, or none): re-encoded."""
    return [r for r in records if r.similarity != ctx.similarity.name or r.features is None]


def _scores(ctx: LookupContext, intention: str, query: Any, records: list[MemoryRecord], stale: Any) -> list[float]:
    if not records:
        return []
    if not ctx.similarity.stored_features:
        return list(ctx.similarity.scores(intention, [r.intention for r in records]))
    return list(ctx.similarity.scores(query, _features(records, stale)))


def _others(
    ctx: LookupContext, records: list[MemoryRecord], intention: str, query: Any, skip: set[str], stale: Any
) -> list[tuple[float, MemoryRecord]]:
    """The most similar memories (one per intention) outside ``skip`` whose anchors agree, for the model."""
    sim = ctx.similarity
    if query is None:
        prepared = ctx.prepared.get(ctx.similarity, records, lambda: [r.intention for r in records])
        hits = sim.above(intention, prepared, ctx.threshold)
    else:
        prepared = ctx.prepared.get(ctx.similarity, records, lambda: _features(records, stale))
        hits = sim.above(query, prepared, ctx.threshold)
    ranked = sorted(((s, records[i]) for i, s in hits), key=lambda sr: (-sr[0], -sr[1].created_at, sr[1].id))
    qa, qt = anchor_info(intention)
    out: list[tuple[float, MemoryRecord]] = []
    seen = set(skip)
    limit = getattr(ctx.verifier, "max_checks", 3)
    for score, record in ranked:
        if record.normalized in seen:
            continue
        seen.add(record.normalized)
        if anchors_agree(qa, qt, *anchor_info(record.intention)) and veto(intention, record.intention) is None:
            out.append((score, record))
            if len(out) >= limit:
                break
    return out


def result_text(raw: bytes | None) -> str | None:
    """A stored result as the model is shown it: a string as is, any other JSON value as JSON text."""
    if raw is None:
        return None
    try:
        value = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return None  # corrupt: not offered to the model
    return value if isinstance(value, str) else orjson.dumps(value).decode()


def _finish(
    ctx: LookupContext,
    intention: str,
    pool: list[MemoryRecord],
    lexical: list[tuple[float, MemoryRecord]],
    by_model: list[tuple[float, MemoryRecord]],
    fetched: dict[str, bytes | None],
) -> Picked | None:
    chosen = choose(lexical + by_model, ctx.threshold, ctx.margin)
    if chosen is None:
        return None
    score, record = chosen
    equivalent = any(r is record for _, r in lexical)
    return Picked(
        group_of(pool, record),
        score,
        "similar",
        ctx.verifier.describe(intention, record.intention),
        "lexical" if equivalent else ctx.verifier.name,
        fetched,
    )


def _migrate(ctx: LookupContext, user: str, version: str, now: float) -> Steps[None]:
    """Re-derive the signature of every memory of ``user`` made under another vocabulary from its stored raw
    intention, and store them again under it (`reindex`): they are found again."""
    records = yield call(ctx.backend, "records", user, now)
    moved = [replace(r, signature=signature(r.intention)) for r in records if r.signature_version != version]
    yield call(ctx.backend, "reindex", user, [r for r in moved if r.signature_version == version], version, now)


def _candidates(
    ctx: LookupContext, user: str, sig: str, now: float
) -> Steps[tuple[list[MemoryRecord], dict[str, bytes | None]]]:
    """The memories with the query's signature, and the results read with them, from the meaning index; an index
    at another vocabulary version is migrated first (once)."""
    found, fetched, indexed = yield call(ctx.backend, "matching_indexed", user, sig, now)
    version = signature_version(sig)
    if indexed != version:
        yield from _migrate(ctx, user, version, now)
        found, fetched, _ = yield call(ctx.backend, "matching_indexed", user, sig, now)
    return found, fetched


def find(
    ctx: LookupContext, user: str, intention: str, tool: Any, args: Any, exact_only: bool
) -> tuple[Picked | None, float]:
    """``(Picked | None, now)`` for a lookup (see the module docstring), with sync calls."""
    return run(find_steps(ctx, user, intention, tool, args, exact_only))


def find_steps(
    ctx: LookupContext, user: str, intention: str, tool: Any, args: Any, exact_only: bool
) -> Steps[tuple[Picked | None, float]]:
    """`find` as steps (`promptcache.intention._steps`), for the sync and the async lookup."""
    now = ctx.clock()
    sig = signature(intention)
    asks = ctx.verifier.asks_model and not exact_only and ctx.threshold < 1.0
    fetched: dict[str, bytes | None] = {}
    hit = None  # the exact group, from the backend's index by exact key (``None``: not asked, or not known so)
    if asks:
        pool = filter_records((yield call(ctx.backend, "records", user, now)), tool, args)
        same = [r for r in pool if signature(r.intention) == sig]
    else:  # the meaning index: only the memories with the query's signature, their results with them
        wanted = None if args is None else canonical_json(args)
        hit = yield call(ctx.backend, "exact_matching", user, sig, exact_key(intention), tool, wanted, now, exact_key)
        if hit is None or not (hit or exact_only or ctx.threshold >= 1.0):  # a similar match needs the group
            hit, (found, fetched) = None, (yield from _candidates(ctx, user, sig, now))
        else:
            found = []
        # a stored signature equal to ``sig`` (same vocabulary version) is what re-deriving it would give
        same = [r for r in filter_records(found, tool, args) if r.signature == sig or signature(r.intention) == sig]
        pool = same
    group = hit or exact_group(pool, exact_key(intention))
    if group:
        return Picked(group, 1.0, "exact", verified_by="exact", results=fetched), now
    if exact_only or ctx.threshold >= 1.0 or not pool:
        return None, now
    cands = [r for r in same if veto(intention, r.intention) is None]
    sim = ctx.similarity
    query = (yield call(sim, "encode_query", intention)) if sim.stored_features else None
    todo = _stale(ctx, pool) if query is not None else []
    stale = dict(zip((r.id for r in todo), (yield call(sim, "encode", [r.intention for r in todo])))) if todo else {}
    lexical = list(zip(_scores(ctx, intention, query, cands, stale), cands))
    by_model: list[tuple[float, MemoryRecord]] = []
    if asks:
        skip = {r.normalized for r in cands}
        for score, record in _others(ctx, pool, intention, query, skip, stale):
            text = result_text((yield call(ctx.backend, "result", user, record.result_hash)))
            if text is not None and (yield call(ctx.verifier, "verify", intention, record.intention, text)):
                by_model.append((score, record))
    return _finish(ctx, intention, pool, lexical, by_model, fetched), now

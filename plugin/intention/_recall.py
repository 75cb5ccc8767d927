"""The lookup of an `IntentionMemory` with embeddings: propose, veto, accept.

1. **Read**: the user's vector index at the backend's current version (`promptcache.intention._vector_index`: one
   backend read, the cached index reused while the user's memories are unchanged). Nothing derived is trusted
   from storage: the exact key is recomputed from the stored raw intention (`exact_key`), and a vector made by
   another model (the record's ``similarity`` name) or by none is re-embedded, so a vocabulary or model change never
   strands a memory.
2. **exact**: a memory whose exact key is the query's (stage ``"exact"``), of the ``tool``/``args`` asked for.
3. **propose**: the ``proposals`` most similar stored intentions (one per intention) by cosine of the vectors.
4. **veto**: a proposal is dropped when a cheap, principled check says it asks for something else
   (`veto`).
5. **accept**, in stages (none of them with ``threshold=1.0``: exact only): the meaning normal form is the
   query's (stage ``"lexical"``, at every threshold below 1.0: a rule, not a similarity); else the cosine is at
   least the memory's threshold and the word check passes (stage ``"embeddings"``; the threshold is calibrated
   from labelled pairs, `promptcache.intention._calibrate`, which judges a pair as this stage and the two above
   do); else, with a model verifier
   (`ChatModelVerifier`), the model is asked about the remaining proposals
   above the proposal floor (at most its ``max_checks``; stage: the verifier's name). Of the accepted, the most
   similar, or the newest among those within ``margin`` of it.
6. **consensus**, when steps 5's cheap stages accepted none: the nearest few proposals (no veto, at least the
   proposal floor) hold one result and no other result is within the calibrated gap
   (`promptcache.intention._consensus`; stage ``"consensus"``), before any model is asked.

`suggest` is the second contract (``retrieve_memory``): the best few proposals with their similarity and
whether a veto fired, for the agent to judge; nothing is accepted or refused there, but each proposal says which
check of steps 3-6 refuses it to `retrieve` (``refused_by``, `refusal`; ``"not-picked"``: accepted, another
served; ``""``: the one `retrieve` serves), so a user sees why a candidate offered was not served.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, NamedTuple

from promptcache._types import JSONValue
from promptcache.intention._agreement import ambiguous
from promptcache.intention._consensus import agreeing
from promptcache.intention._lookup import Picked, result_text
from promptcache.intention._matching import choose
from promptcache.intention._meaning import compare
from promptcache.intention._record import MemoryRecord
from promptcache.intention._results import IntentionMatch, to_matches
from promptcache.intention._steps import Steps, call
from promptcache.intention._vector_index import VectorIndex
from promptcache.intention._vetoes import exact_key, veto

if TYPE_CHECKING:
    from promptcache.intention._context import LookupContext

__all__ = ["Proposal", "find_recall", "proposals_for", "refusal", "suggest", "suggested"]


class Proposal(NamedTuple):
    """A stored intention proposed for a query: its similarity, its memories (newest first), the veto that
    fired (``None``: none), from `suggest`, the check that refuses it to `retrieve` (``""``: served) and whether
    it is the exact match (its exact key the query's: ``kind`` ``"exact"``, whatever the similarity of others)."""

    score: float
    group: list[MemoryRecord]
    veto: str | None
    refused_by: str = ""
    exact: bool = False


def proposals_for(
    index: VectorIndex,
    intention: str,
    query: object,
    count: int,
    now: float,
    tool: str | None = None,
    args: JSONValue = None,
    skip: str | None = None,
) -> list[Proposal]:
    """The ``count`` stored intentions most similar to ``query`` (packed or plain vector), best first, each with
    its live memories of ``tool``/``args`` and the veto that fires against ``intention`` (if any); the exact key
    ``skip`` left out."""
    out: list[Proposal] = []
    if count < 1:
        return out
    for score, key in index.ranked(query, tool, now):
        if key == skip:
            continue
        group = index.group(key, tool, args, now)
        if not group:
            continue
        out.append(Proposal(score, group, veto(intention, group[0].intention)))
        if len(out) >= count:
            break
    return out


Accepted = list[tuple[Proposal, str]]
"""Accepted proposals with the stage that accepted each."""


def _accept_cheap(ctx: LookupContext, intention: str, proposals: list[Proposal]) -> Accepted:
    """Proposals no veto blocks that clear the threshold (stage ``"embeddings"``) or whose meaning normal form is
    the query's (stage ``"lexical"``: every difference an equivalence, `promptcache.intention._meaning.compare`)."""
    verdicts = ((p, _verdict(ctx, intention, p, proposals)) for p in proposals)
    return [(p, stage) for p, (stage, _) in verdicts if stage]


def _verdict(ctx: LookupContext, intention: str, p: Proposal, proposals: list[Proposal]) -> tuple[str, str]:
    """``(stage that accepts p, check that refuses it)`` among the cheap stages, one of them ``""``: ``"veto"``,
    ``"threshold"`` (similarity under the memory's threshold), ``"word-check"`` (a content word without a
    near-synonym on the other side) or ``"agreement"`` (a near-tied rival holding another result: a guess)."""
    if p.veto is not None:
        return "", "veto"
    if compare(intention, p.group[0].intention) is None:
        return "lexical", ""
    if p.score < ctx.threshold:
        return "", "threshold"
    if not ctx.word_check.passes(intention, p.group[0].intention):
        return "", "word-check"
    if ambiguous(p, proposals):
        return "", "agreement"
    return "embeddings", ""


def refusal(
    ctx: LookupContext, index: VectorIndex, intention: str, query: object, now: float, exact: bool
) -> dict[str, str]:
    """Why `retrieve` (no ``tool``/``args``) would not serve each stored intention it proposes for ``intention``:
    the id of its newest memory -> the check that refuses it (`_verdict`; ``"exact-only"`` on an exact-only memory),
    ``"not-picked"`` for one accepted but not served (``exact``: an exact match is served first; else `_pick`, the
    choice `retrieve` makes among the accepted) and ``""`` for the one `retrieve` serves. The accepted are those
    of `_accepted`, as `retrieve` finds them. A model verifier is not asked: what it would accept keeps the refusal
    of the checks before it. A stored intention outside the ``ctx.proposals`` most similar is not in the map
    (`retrieve` never considers it) unless the consensus stage accepts it."""
    proposals = proposals_for(index, intention, query, ctx.proposals, now)
    if ctx.exact_only:
        return {p.group[0].id: "exact-only" for p in proposals}
    why = {p.group[0].id: _verdict(ctx, intention, p, proposals)[1] for p in proposals}
    accepted = _accepted(ctx, index, intention, query, proposals, None, None, now)
    picked = None if exact else _pick(ctx, accepted)
    served = None if picked is None else picked.group[0].id
    for p, _ in accepted:
        why[p.group[0].id] = "" if p.group[0].id == served else "not-picked"
    return why


def _accepted(
    ctx: LookupContext,
    index: VectorIndex,
    intention: str,
    query: object,
    proposals: list[Proposal],
    tool: str | None,
    args: JSONValue,
    now: float,
) -> Accepted:
    """What `retrieve` accepts before any model is asked: step 5's cheap stages, else step 6 (consensus)."""
    return _accept_cheap(ctx, intention, proposals) or _accept_consensus(ctx, index, intention, query, tool, args, now)


def _accept_consensus(
    ctx: LookupContext,
    index: VectorIndex,
    intention: str,
    query: object,
    tool: str | None,
    args: JSONValue,
    now: float,
) -> Accepted:
    """The nearest stored intention when the nearest few no veto blocks hold one result, all at least the proposal
    floor, and no other result is within the calibrated gap of them (stage ``"consensus"``,
    `promptcache.intention._consensus`); off when no gap is calibrated (``ctx.consensus_gap`` ``None``)."""
    gap = ctx.consensus_gap
    if gap is None:
        return []
    ranked = ((score, index.group(key, tool, args, now)) for score, key in index.ranked(query, tool, now))
    vote = agreeing(ranked, lambda r: veto(intention, r.intention) is not None, ctx.proposal_floor)
    if vote is None or vote[2] < gap:
        return []
    return [(Proposal(vote[0], vote[1], None), "consensus")]


def _to_model(ctx: LookupContext, proposals: list[Proposal]) -> list[Proposal]:
    """The proposals the model verifier is asked about when the cheap stages accepted none: no veto, at least the
    proposal floor (at most its ``max_checks``, most similar first)."""
    if not ctx.verifier.asks_model:
        return []
    limit = getattr(ctx.verifier, "max_checks", 3)
    todo = [p for p in proposals if p.veto is None and p.score >= ctx.proposal_floor]
    return todo[:limit]


def _pick(ctx: LookupContext, accepted: Accepted) -> Picked | None:
    """The accepted proposal `retrieve` serves: the most similar, or the newest within ``margin`` of it."""
    by_head = {id(p.group[0]): (p, stage) for p, stage in accepted}
    chosen = choose([(p.score, p.group[0]) for p, _ in accepted], 0.0, ctx.margin)
    if chosen is None:
        return None
    proposal, stage = by_head[id(chosen[1])]
    return Picked(proposal.group, proposal.score, "similar", f"similarity {proposal.score:.2f} by embeddings", stage)


def _decide(
    ctx: LookupContext,
    index: VectorIndex,
    user: str,
    intention: str,
    tool: str | None,
    args: JSONValue,
    exact_only: bool,
    now: float,
) -> Steps[Picked | None]:
    """Steps 2-6 of the module docstring on ``index``."""
    group = index.group(exact_key(intention), tool, args, now)
    if group:
        return Picked(group, 1.0, "exact", verified_by="exact")
    if exact_only or ctx.exact_only or ctx.threshold >= 1.0 or not index.keys:  # threshold 1.0: exact only
        return None
    query = yield call(ctx.similarity, "encode_query", intention)
    proposals = proposals_for(index, intention, query, ctx.proposals, now, tool, args)
    accepted = _accepted(ctx, index, intention, query, proposals, tool, args, now)
    if not accepted:
        for p in _to_model(ctx, proposals):
            text = result_text((yield call(ctx.backend, "result", user, p.group[0].result_hash)))
            if text is not None and (yield call(ctx.verifier, "verify", intention, p.group[0].intention, text)):
                accepted.append((p, ctx.verifier.name))
    return _pick(ctx, accepted)


def find_recall(
    ctx: LookupContext, user: str, intention: str, tool: str | None, args: JSONValue, exact_only: bool
) -> Steps[tuple[Picked | None, float]]:
    """``(Picked | None, now)`` for a lookup (see the module docstring).

    With the user's index already built here and no model verifier, the choice is made on that index first and
    its results are read with the version check (`IndexCache.current_results`): while nobody wrote, that choice
    stands and a hit is one backend round trip; after a write the choice is made again on the updated index.
    """
    now = ctx.clock()
    held = ctx.indexes.peek(user)
    guess: Picked | None = None
    hashes: list[str] = []
    if held is not None and not ctx.verifier.asks_model:
        guess = yield from _decide(ctx, held, user, intention, tool, args, exact_only, now)
        hashes = [r.result_hash for r in guess.group] if guess is not None else []
    index, results = yield from ctx.indexes.current_results(ctx.backend, ctx.similarity, user, now, hashes)
    if held is not None and index is held and not ctx.verifier.asks_model:
        return (None if guess is None else guess._replace(results=results)), now
    return (yield from _decide(ctx, index, user, intention, tool, args, exact_only, now)), now


def suggest(ctx: LookupContext, user: str, intention: str, count: int) -> Steps[tuple[list[Proposal], float]]:
    """The ``count`` best proposals for ``intention`` (exact first), vetoed ones included and marked, each with the
    check that refuses it to `retrieve` (`refusal`; ``"proposals"``: not among the ``ctx.proposals`` it
    considers); ``now``."""
    now = ctx.clock()
    index = yield from ctx.indexes.current(ctx.backend, ctx.similarity, user, now)
    query = yield call(ctx.similarity, "encode_query", intention)
    key = exact_key(intention)
    out: list[Proposal] = []
    group = index.group(key, None, None, now)
    if group:
        out.append(Proposal(1.0, group, None, exact=True))
    rest = proposals_for(index, intention, query, count - len(out), now, skip=key)
    if rest:
        why = refusal(ctx, index, intention, query, now, exact=bool(group))
        out.extend(p._replace(refused_by=why.get(p.group[0].id, "proposals")) for p in rest)
    return out, now


def suggested(proposals: list[Proposal], raws: list[bytes | None], now: float) -> list[IntentionMatch]:
    """The matches `IntentionMemory.suggest` returns for ``proposals`` and their newest memories' results."""
    out: list[IntentionMatch] = []
    for p, raw in zip(proposals, raws):
        kind = "exact" if p.exact else ("similar" if p.veto is None else "partial")  # as retrieve gives it
        note = f"differs in {p.veto}" if p.veto else ""
        picked = Picked(p.group, p.score, kind, note, "")
        out.extend(replace(m, refused_by=p.refused_by) for m in to_matches(p.group[:1], picked, [raw], now, []))
    return out

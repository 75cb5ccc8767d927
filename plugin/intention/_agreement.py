"""The agreement check of a match accepted by embeddings: refuse when the query is about as close to another stored
intention that holds a different result.

A sentence embedding places a query near every stored intention that shares its topic. When two stored intentions
with different results are both near it and nearly tied, the vectors do not say which one the query asks for:
serving either is a guess (Banking77: "why didn't my top up work" is as close to a failed top-up as to a reverted
one). The check only ever refuses, and only matches accepted by the sentence similarity (stage ``"embeddings"``);
exact and lexical matches are decided by their own rules. Rivals a veto blocks (another number, a negation, ...)
ask for something else and do not count, nor do stored intentions holding the same result (they agree).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from promptcache.intention._recall import Proposal

__all__ = ["AGREEMENT_MARGIN", "ambiguous"]

AGREEMENT_MARGIN = 0.02
"""A rival within this much cosine of the accepted proposal makes the match ambiguous (all-MiniLM-L6-v2 scale).
Set before measuring, as a near tie on the model's scale, not tuned: on Banking77 training rows (every fifth looked
up against the others) margins 0 to 0.05 refuse 3 to 6 of about 920 hits, none of them wrong (bench/README.md,
"What each constant was measured on")."""


def ambiguous(best: Proposal, proposals: Sequence[Proposal], margin: float = AGREEMENT_MARGIN) -> bool:
    """Whether a proposal other than ``best``, that no veto blocks and whose newest memory holds another result,
    scores at least ``best.score - margin``.

    Args:
        best: the accepted proposal (a `promptcache.intention._recall.Proposal`: ``score``, ``group`` of memories
            newest first, ``veto``). proposals: every proposal of the lookup. margin: cosine, in ``[0, 1]``.
    """
    mine = best.group[0].result_hash
    floor = best.score - margin
    return any(
        p is not best and p.veto is None and p.score >= floor and p.group[0].result_hash != mine for p in proposals
    )

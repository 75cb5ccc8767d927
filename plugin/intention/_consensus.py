"""The consensus stage of a lookup with embeddings: several stored intentions agree, and no other result is close.

A sentence embedding is a poor judge of one pair (two rephrasings of one request often share few words, and two
requests that differ in one word can be very close), but a good judge of a neighbourhood: when the
`CONSENSUS_NEIGHBOURS` stored intentions nearest to the query all hold the *same* result, and the best stored
intention holding *another* result is at least ``gap`` less similar than the nearest one, the query sits inside a
region of intentions that were all answered the same way. That is a k-nearest-neighbour vote with a rejection
margin (Chow's reject option: refuse where the vote is close), not a judgement of one pair.

The stage only ever accepts what no veto blocks (numbers, names, negation, roles, ... are checked first) and counts
only proposals no veto blocks: a stored intention asking for another number is no neighbour. It cannot fire on a
user with fewer than `CONSENSUS_NEIGHBOURS` stored intentions sharing one result, so one memory per result (the
usual case of tool results that differ call by call) is decided by the other stages alone.

``gap`` is calibrated, never guessed: `pick_gap` takes the lowest gap at which the accepted lookups of a labelled
set hold at most ``max_error`` wrong results (the same rule as `promptcache.intention._calibrate.pick_threshold`);
for the default local model the value is shipped (``data/consensus.json``, written by
``python bench/intention_consensus.py --write``, which says what it was measured on).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from functools import lru_cache
from importlib.resources import files
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from promptcache.intention._recall import Proposal

__all__ = ["CONSENSUS_NEIGHBOURS", "agreeing", "consensus_gap", "pick_gap", "shipped_gaps"]

CONSENSUS_NEIGHBOURS = 3
"""Stored intentions (distinct exact keys, no veto) nearest the query that must hold the same result: the smallest
vote in which one stray neighbour cannot decide alone (two could be a near-duplicate pair stored twice). Set before
measuring, not tuned."""


def agreeing(proposals: Sequence[Proposal], neighbours: int = CONSENSUS_NEIGHBOURS) -> tuple[Proposal, float] | None:
    """The nearest proposal and its gap when the ``neighbours`` nearest proposals no veto blocks hold one result.

    The gap is the nearest one's cosine minus the best cosine of a proposal no veto blocks holding another result;
    when none is among ``proposals``, minus the last proposal's cosine (every stored intention not proposed is at
    most that similar). ``None`` when fewer than ``neighbours`` proposals pass the vetoes or they disagree.

    Args:
        proposals: a lookup's proposals, most similar first (`promptcache.intention._recall.Proposal`: ``score``
            cosine in ``[0, 1]``, ``group`` of memories newest first, ``veto``).
        neighbours: the vote's size, an int >= 1.
    """
    live = [p for p in proposals if p.veto is None and p.group]
    if len(live) < neighbours:
        return None
    best = live[0]
    result = best.group[0].result_hash
    if any(p.group[0].result_hash != result for p in live[:neighbours]):
        return None
    rival = next((p.score for p in live[neighbours:] if p.group[0].result_hash != result), proposals[-1].score)
    return best, best.score - rival


def pick_gap(observed: Sequence[tuple[float, bool]], max_error: float) -> float | None:
    """The lowest gap at which the lookups accepted (gap at least it) hold at most ``max_error`` wrong results.

    Args:
        observed: ``(gap, right)`` per labelled lookup where `agreeing` found a vote (its gap, and whether the
            vote's result was the right one).
        max_error: the bound on wrong / accepted, in ``[0, 1]``.

    Returns:
        The gap (cosine), or ``None`` when no gap keeps to the bound (the stage then stays off).

    Raises:
        ValueError: ``max_error`` outside ``[0, 1]``.
    """
    if isinstance(max_error, bool) or not isinstance(max_error, (int, float)) or not 0.0 <= max_error <= 1.0:
        raise ValueError(f"max_error must be a number in [0, 1], got {max_error!r}")
    ranked = sorted(observed, key=lambda x: -x[0])
    chosen: float | None = None
    wrong = 0
    for i, (gap, right) in enumerate(ranked):
        wrong += not right
        boundary = i + 1 == len(ranked) or ranked[i + 1][0] < gap
        if boundary and wrong <= max_error * (i + 1):
            chosen = gap
    return chosen


@lru_cache(maxsize=1)
def shipped_gaps() -> dict[str, dict[str, float]]:
    """The shipped gaps: ``{model name: {max_error as text: gap}}`` (``data/consensus.json``)."""
    raw = files("promptcache.intention").joinpath("data/consensus.json").read_text(encoding="utf-8")
    table = json.loads(raw)
    gaps = table.get("gaps", {}) if isinstance(table, dict) else {}
    return {str(k): {str(e): float(g) for e, g in v.items()} for k, v in gaps.items() if isinstance(v, dict)}


def consensus_gap(name: str, max_error: float) -> float | None:
    """The shipped gap of the model named ``name`` (an `EmbeddingsSimilarity` name) for ``max_error``, or ``None``
    (the consensus stage is off: no gap was calibrated for that model and bound)."""
    return shipped_gaps().get(name, {}).get(repr(float(max_error)))

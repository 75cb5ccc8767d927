"""The consensus stage of a lookup with embeddings: several stored intentions agree, and no other result is close.

A sentence embedding is a poor judge of one pair (two rephrasings of one request often share few words, and two
requests that differ in one word can be very close), but a good judge of a neighbourhood: when the
`CONSENSUS_NEIGHBOURS` stored intentions nearest to the query all hold the *same* result, and the best stored
intention holding *another* result is at least ``gap`` less similar than the weakest of them, the query sits inside a
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
from collections.abc import Callable, Iterable, Mapping, Sequence
from functools import lru_cache
from importlib.resources import files

from promptcache.intention._record import MemoryRecord

__all__ = [
    "CONSENSUS_NEIGHBOURS",
    "CONSENSUS_POOL",
    "agreeing",
    "consensus_gap",
    "pick_gap",
    "pick_gap_per_source",
    "shipped_gaps",
]

CONSENSUS_NEIGHBOURS = 3
"""Stored intentions (distinct exact keys, no veto) nearest the query that must hold the same result: the smallest
vote in which one stray neighbour cannot decide alone (two could be a near-duplicate pair stored twice). Set before
measuring, not tuned."""


CONSENSUS_POOL = 32
"""Stored intentions (most similar first) a vote looks through for its voters and the best rival."""


def agreeing(
    ranked: Iterable[tuple[float, list[MemoryRecord]]],
    vetoed: Callable[[MemoryRecord], bool],
    floor: float,
    neighbours: int = CONSENSUS_NEIGHBOURS,
    pool: int = CONSENSUS_POOL,
) -> tuple[float, list[MemoryRecord], float] | None:
    """The vote of the stored intentions nearest a query, or ``None`` when there is none.

    Walks ``ranked`` (at most ``pool`` entries): the first ``neighbours`` entries no veto blocks are the voters; they
    must hold one result (their newest memory's ``result_hash``) and score at least ``floor``. The gap is the
    weakest voter's cosine minus the best cosine of an entry no veto blocks holding another result (the rival); with
    no rival among the first ``pool`` entries, minus the last cosine looked at (every stored intention further down
    is at most that similar; ``0.0`` when the ranking ended). A veto is computed only for the voters and for rivals,
    so a vote costs a few vetoes, not ``pool``.

    Args:
        ranked: ``(cosine in [0, 1], live memories of one stored intention newest first)``, most similar first.
        vetoed: whether a veto blocks a stored memory for the query.
        floor: the least cosine of a voter.
        neighbours: the vote's size, an int >= 1. pool: entries looked at, an int >= ``neighbours``.

    Returns:
        ``(nearest voter's cosine, its memories, gap)``.
    """
    voters: list[tuple[float, list[MemoryRecord]]] = []
    last = 0.0
    for seen, (score, group) in enumerate(ranked):
        if seen >= pool:
            break
        last = score
        if not group:
            continue
        mine = voters[0][1][0].result_hash if voters else None
        if len(voters) < neighbours:
            if vetoed(group[0]):
                continue
            if score < floor or (mine is not None and group[0].result_hash != mine):
                return None
            voters.append((score, group))
        elif group[0].result_hash != mine and not vetoed(group[0]):
            return voters[0][0], voters[0][1], voters[-1][0] - score
    else:
        last = 0.0  # the ranking ended: nothing further down
    if len(voters) < neighbours:
        return None
    return voters[0][0], voters[0][1], voters[-1][0] - last


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
    _check_max_error(max_error)
    ranked = sorted(observed, key=lambda x: -x[0])
    chosen: float | None = None
    wrong = 0
    for i, (gap, right) in enumerate(ranked):
        wrong += not right
        boundary = i + 1 == len(ranked) or ranked[i + 1][0] < gap
        if boundary and wrong <= max_error * (i + 1):
            chosen = gap
    return chosen


def pick_gap_per_source(observed: Mapping[str, Sequence[tuple[float, bool]]], max_error: float) -> float | None:
    """The lowest gap at which the accepted lookups of *every* source hold at most ``max_error`` wrong results (per
    source, not pooled, as `promptcache.intention._calibrate.pick_threshold`: a large source of easy votes must not
    hide a small source of hard ones).

    Args:
        observed: source name -> ``(gap, right)`` per labelled lookup with a vote (as `pick_gap`).
        max_error: the bound on wrong / accepted, in ``[0, 1]``.

    Returns:
        The gap, or ``None`` when no observed gap keeps every source to the bound.

    Raises:
        ValueError: ``max_error`` outside ``[0, 1]``.
    """
    _check_max_error(max_error)
    candidates = sorted({g for rows in observed.values() for g, _ in rows})
    for gap in candidates:  # lowest first: the first gap every source accepts
        if all(_within(rows, gap, max_error) for rows in observed.values()):
            return gap
    return None


def _check_max_error(max_error: float) -> None:
    if isinstance(max_error, bool) or not isinstance(max_error, (int, float)) or not 0.0 <= max_error <= 1.0:
        raise ValueError(f"max_error must be a number in [0, 1], got {max_error!r}")


def _within(rows: Sequence[tuple[float, bool]], gap: float, max_error: float) -> bool:
    accepted = [right for g, right in rows if g >= gap]
    return accepted.count(False) <= max_error * len(accepted)


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

"""Choosing which stored memories answer an intention: the tool/argument filter, the exact group, and the
candidates of a similar match grouped by intention.

An intention can hold several memories, one per ``(tool, args)`` (an agent makes several tool calls for one user
message). A lookup first decides *which stored intention* answers the query, then returns that intention's memories
(most recent first). For the similar match, the candidates are the stored intentions (not the single memories), and
two intentions are interchangeable when they hold the same set of results; the margin rule of
:func:`~promptcache.intention.matching.pick_similar` acts on that set, so a query close to two intentions with
different results is a miss.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from promptcache.intention.backends import MemoryRecord
from promptcache.keys import canonical_json

__all__ = ["exact_group", "filter_records", "group_of", "intention_candidates", "recent_first"]


def filter_records(records: list[MemoryRecord], tool: str | None, args: Any) -> list[MemoryRecord]:
    """The records of ``tool`` (when not ``None``) whose arguments equal ``args`` (when not ``None``; compared as
    canonical JSON, so key order does not matter)."""
    if tool is None and args is None:
        return records
    wanted = None if args is None else canonical_json(args)
    return [
        r for r in records if (tool is None or r.tool == tool) and (wanted is None or canonical_json(r.args) == wanted)
    ]


def recent_first(records: Sequence[MemoryRecord]) -> list[MemoryRecord]:
    """``records`` sorted by creation time, newest first (ties by id, so the order is stable)."""
    return sorted(records, key=lambda r: (-r.created_at, r.id))


def exact_group(records: list[MemoryRecord], normalized: str) -> list[MemoryRecord]:
    """The records whose normalised intention is ``normalized``, most recent first (empty when none)."""
    return recent_first([r for r in records if r.normalized == normalized])


def group_of(records: list[MemoryRecord], record: MemoryRecord) -> list[MemoryRecord]:
    """The records stored under ``record``'s normalised intention, most recent first."""
    return exact_group(records, record.normalized)


def intention_candidates(
    scored: Sequence[tuple[float, MemoryRecord]], records: Sequence[MemoryRecord]
) -> list[tuple[float, tuple[str, ...], MemoryRecord]]:
    """Similar-match candidates, one per stored intention, for
    :func:`~promptcache.intention.matching.pick_similar`.

    Args:
        scored: ``(similarity, record)`` of the records close enough to matter.
        records: all the records the lookup considers (a group's result set is taken from all of them).

    Returns:
        ``(score, result_key, record)`` sorted by score (highest first, then the most recent): ``score`` is the
        best score of the intention's records, ``result_key`` the sorted result hashes of all records under that
        intention, ``record`` the best-scoring one (its text is what the anchor check compares).
    """
    hashes: dict[str, set[str]] = {}
    for r in records:
        hashes.setdefault(r.normalized, set()).add(r.result_hash)
    best: dict[str, tuple[float, MemoryRecord]] = {}
    for score, r in scored:
        seen = best.get(r.normalized)
        if seen is None or (score, r.created_at) > (seen[0], seen[1].created_at):
            best[r.normalized] = (score, r)
    ranked = sorted(best.values(), key=lambda sr: (-sr[0], -sr[1].created_at, sr[1].id))
    return [(score, tuple(sorted(hashes[r.normalized])), r) for score, r in ranked]

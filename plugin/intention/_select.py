"""Choosing which stored memories answer an intention: the tool/argument filter and the group of an intention.

An intention can hold several memories, one per ``(tool, args)`` (an agent makes several tool calls for one user
message). A lookup first decides *which stored intention* answers the query
(`choose`), then returns that intention's memories (most recent first).
"""

from __future__ import annotations

from collections.abc import Sequence
from operator import attrgetter
from typing import Any

from promptcache._keys import canonical_json
from promptcache.intention._backends import MemoryRecord
from promptcache.intention._vetoes import exact_key

__all__ = ["exact_group", "filter_records", "group_of", "recent_first"]


def filter_records(records: list[MemoryRecord], tool: str | None, args: Any) -> list[MemoryRecord]:
    """The records of ``tool`` (when not ``None``) whose arguments equal ``args`` (when not ``None``; compared as
    canonical JSON, so key order does not matter)."""
    if tool is None and args is None:
        return records
    wanted = None if args is None else canonical_json(args)
    return [r for r in records if (tool is None or r.tool == tool) and (wanted is None or r.args_json == wanted)]


def recent_first(records: Sequence[MemoryRecord]) -> list[MemoryRecord]:
    """``records`` sorted by creation time, newest first (ties by id, so the order is stable)."""
    # two stable C-keyed sorts (ids ascending, then creation time descending) give the order of the key
    # ``(-created_at, id)`` without building a tuple per record on every lookup
    out = sorted(records, key=_BY_ID)
    out.sort(key=_BY_CREATED, reverse=True)
    return out


_BY_ID = attrgetter("id")
_BY_CREATED = attrgetter("created_at")


def exact_group(records: list[MemoryRecord], key: str) -> list[MemoryRecord]:
    """The records whose exact key (`exact_key`, recomputed from the stored
    raw intention) is ``key``, most recent first (empty when none)."""
    return recent_first([r for r in records if exact_key(r.intention) == key])


def group_of(records: list[MemoryRecord], record: MemoryRecord) -> list[MemoryRecord]:
    """The records stored under ``record``'s intention (the same exact key), most recent first."""
    return exact_group(records, exact_key(record.intention))

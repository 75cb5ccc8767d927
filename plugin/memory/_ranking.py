"""Ordering of typed memories: the stable order every read returns, and the lexical ranking of ``search``.

- `stable_order`: oldest first, then by id. The rendered memory block depends on it, and prompt caching
  downstream needs the same memories to give the same text on every turn.
- `lexical_rank`: for stores without an embedding index, memories sharing at least one word (after
  `promptcache.memory._records.normalise_text`) with the query, most shared words first.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from promptcache.memory._records import TypedMemory, normalise_text

__all__ = ["lexical_rank", "stable_order"]

_WORD = re.compile(r"\w+", re.UNICODE)


def _words(text: str) -> set[str]:
    return set(_WORD.findall(normalise_text(text)))


def lexical_rank(memories: list[TypedMemory], query: str) -> list[TypedMemory]:
    """Memories sharing at least one word with ``query``, most shared words first (ties: older first, then id)."""
    q = _words(query)
    scored = [(len(q & _words(m.content + " " + (m.subject or ""))), m) for m in memories]
    scored = [(s, m) for s, m in scored if s > 0]
    scored.sort(key=lambda sm: (-sm[0], sm[1].created_at, sm[1].id))
    return [m for _, m in scored]


def stable_order(memories: Iterable[TypedMemory]) -> list[TypedMemory]:
    """Oldest first, then by id: the order used everywhere."""
    return sorted(memories, key=lambda m: (m.created_at, m.id))

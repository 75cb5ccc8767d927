"""``IntentionMatch``: what a lookup returns, one per memory (tool call) of the matched intention."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import orjson

from promptcache.intention.backends import MemoryRecord

__all__ = ["IntentionMatch", "to_match", "to_matches"]


@dataclass(frozen=True)
class IntentionMatch:
    """A memory found for an intention.

    Attributes:
        kind: ``"exact"`` (same normalised intention) or ``"similar"``.
        intention: the stored intention that matched (as it was stored).
        similarity: closeness in ``[0, 1]``, higher is closer (``1.0`` for an exact match); the scale of the
            memory's :class:`~promptcache.intention.similarity.Similarity`.
        tool / args: the tool call that produced the result (``None`` when not recorded).
        age_s: seconds since the memory was stored.
        result: the stored result (the JSON value that was stored: ``str``, ``dict``, ``list``, ...).
        memory_id: the memory's id; ``result_hash``: SHA-256 of its serialised result.
    """

    kind: str
    intention: str
    similarity: float
    tool: str | None
    args: Any
    age_s: float
    result: Any
    memory_id: str
    result_hash: str

    def result_text(self) -> str:
        """The result as text: a string as is, anything else as JSON."""
        if isinstance(self.result, str):
            return self.result
        return orjson.dumps(self.result).decode()


def to_match(record: MemoryRecord, score: float, kind: str, raw: bytes | None, now: float) -> IntentionMatch | None:
    """The match for ``record`` with its stored result ``raw`` (``None`` when the result expired: no match).

    ``now`` and the record's creation time are epoch seconds (``age_s`` is their difference, at least 0).
    """
    if raw is None:
        return None
    return IntentionMatch(
        kind=kind,
        intention=record.intention,
        similarity=round(float(score), 6),
        tool=record.tool,
        args=record.args,
        age_s=max(0.0, now - record.created_at),
        result=orjson.loads(raw),
        memory_id=record.id,
        result_hash=record.result_hash,
    )


def to_matches(records: list[MemoryRecord], score: float, kind: str, raws: list[bytes | None],
               now: float) -> list[IntentionMatch]:
    """:func:`to_match` for each record and its result, in order, leaving out records whose result expired."""
    out = [to_match(r, score, kind, raw, now) for r, raw in zip(records, raws)]
    return [m for m in out if m is not None]

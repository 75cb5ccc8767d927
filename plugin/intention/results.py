"""``IntentionMatch``: what a lookup returns, one per memory (tool call) of the matched intention; and the JSON
form results are stored in (:func:`serialise_json`) and read back from (:func:`to_match`)."""

from __future__ import annotations

import math
from dataclasses import dataclass, fields, is_dataclass
from typing import Any

import orjson

from promptcache.intention.backends import MemoryRecord

__all__ = ["IntentionMatch", "serialise_json", "to_match", "to_matches"]


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


def _non_finite(value: Any) -> float | None:
    """The first NaN/infinity inside ``value`` (dicts, lists, tuples, dataclasses), or None."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, float):
            if not math.isfinite(item):
                return item
        elif isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, (list, tuple)):
            stack.extend(item)
        elif is_dataclass(item) and not isinstance(item, type):
            stack.extend(getattr(item, f.name) for f in fields(item))
    return None


def serialise_json(value: Any, what: str) -> bytes:
    """``value`` as JSON bytes (sorted keys), the form a result or arguments are stored in.

    Raises:
        TypeError: ``value`` is not JSON-serialisable (``what`` names it: ``"result"``, ``"args"``).
        ValueError: ``value`` holds NaN or an infinity (named), which JSON cannot represent.
    """
    try:
        data = orjson.dumps(value, option=orjson.OPT_SORT_KEYS)
    except TypeError as exc:
        raise TypeError(f"{what} must be JSON-serialisable (str, number, bool, None, list, dict): {exc}") from exc
    # orjson writes NaN and +-infinity as ``null`` (RFC 8259 JSON has no such numbers): the value read back would
    # differ from the one stored. They can only be there when the output holds a ``null``.
    if b"null" in data:
        bad = _non_finite(value)
        if bad is not None:
            raise ValueError(f"{what} must hold finite numbers only (JSON has no NaN/infinity), got {bad!r}")
    return data


def to_match(record: MemoryRecord, score: float, kind: str, raw: bytes | None, now: float,
             corrupt: list[str] | None = None) -> IntentionMatch | None:
    """The match for ``record`` with its stored result ``raw`` (``None`` when the result expired: no match).

    ``now`` and the record's creation time are epoch seconds (``age_s`` is their difference, at least 0). A ``raw``
    that is not JSON (a corrupt entry) is no match either; its ``result_hash`` is appended to ``corrupt`` when given.
    """
    if raw is None:
        return None
    try:
        result = orjson.loads(raw)
    except orjson.JSONDecodeError:
        if corrupt is not None:
            corrupt.append(record.result_hash)
        return None
    return IntentionMatch(
        kind=kind,
        intention=record.intention,
        similarity=round(float(score), 6),
        tool=record.tool,
        args=record.args,
        age_s=max(0.0, now - record.created_at),
        result=result,
        memory_id=record.id,
        result_hash=record.result_hash,
    )


def to_matches(records: list[MemoryRecord], score: float, kind: str, raws: list[bytes | None],
               now: float, corrupt: list[str] | None = None) -> list[IntentionMatch]:
    """:func:`to_match` for each record and its result, in order, leaving out records whose result expired or is
    corrupt (their hashes appended to ``corrupt``)."""
    out = [to_match(r, score, kind, raw, now, corrupt) for r, raw in zip(records, raws)]
    return [m for m in out if m is not None]

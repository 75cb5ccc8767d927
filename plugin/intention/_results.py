"""``IntentionMatch``: what a lookup returns, one per memory (tool call) of the matched intention; and the JSON
form results are stored in (`serialise_json`) and read back from (`to_match`)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, cast

import orjson

from promptcache._types import JSONValue
from promptcache.intention._backends import MemoryRecord, copy_json

if TYPE_CHECKING:
    from promptcache.intention._lookup import Picked

__all__ = ["IntentionMatch", "serialise_json", "to_match", "to_matches"]


@dataclass(frozen=True)
class IntentionMatch:
    """A memory found for an intention.

    Attributes:
        kind: ``"exact"`` (the same exact key: same normalised intention) or ``"similar"``; from
            `IntentionMemory.suggest` also ``"partial"`` (a veto fired), and never ``"exact"`` for a similarity alone.
        intention: the stored intention that matched (as it was stored).
        similarity: closeness in ``[0, 1]``, higher is closer (``1.0`` for an exact match); the scale of the
            memory's `Similarity`.
        tool / args: the tool call that produced the result (``None`` when not recorded).
        age_s: seconds since the memory was stored.
        result: the stored result (the JSON value that was stored: ``str``, ``dict``, ``list``, ...).
        memory_id: the memory's id; ``result_hash``: SHA-256 of its serialised result.
        note: for a similar match, how the stored intention differs from the one asked (``""`` for exact).
        verified_by: the stage that accepted the match: ``"exact"`` (the same intention), ``"lexical"``,
            ``"embeddings"``, ``"consensus"`` (`promptcache.intention._consensus`), or a model verifier's name.
        refused_by: for a match `IntentionMemory.suggest` offers, the check that keeps `IntentionMemory.retrieve`
            from serving it: ``"veto"`` (``note`` says which), ``"threshold"`` (similarity under the memory's
            threshold), ``"word-check"`` (a content word without a near-synonym in the other intention),
            ``"agreement"`` (a nearly tied stored intention holds another result), ``"exact-only"`` (the memory
            serves exact matches only) or ``"proposals"`` (not among the ``proposals`` most similar that
            ``retrieve`` considers), ``"not-picked"`` (a stage accepts it but ``retrieve`` serves another accepted
            match: an exact one first, else the most similar, or the newest within ``margin`` of it); ``""`` for
            the one match ``retrieve`` serves (and for every match ``retrieve`` returns). A model verifier is not
            asked by ``suggest``: with one, ``retrieve`` may still accept a match refused by ``"threshold"``,
            ``"word-check"`` or ``"agreement"`` (and then no match ``suggest`` offers has ``""``).
    """

    kind: str
    intention: str
    similarity: float
    tool: str | None
    args: JSONValue
    age_s: float
    result: JSONValue
    memory_id: str
    result_hash: str
    note: str = ""
    verified_by: str = ""
    refused_by: str = ""

    def result_text(self) -> str:
        """The result as text: a string as is, anything else as JSON."""
        if isinstance(self.result, str):
            return self.result
        return orjson.dumps(self.result).decode()


_LEAVES = (str, int, bool, type(None))


def _not_json(value: object) -> tuple[str, object] | None:
    """The first item inside ``value`` that is not a JSON value, as ``("type", item)`` (a datetime, date, UUID,
    enum, dataclass, ...: orjson writes those as strings or objects, so they would come back as another type) or
    ``("number", item)`` (NaN/infinity, which orjson writes as ``null``); ``None`` when every item is JSON.
    Containers: ``dict`` (string keys), ``list``, ``tuple`` (an array; read back as a list). Subclasses of
    ``str``/``int``/``float``/``dict``/``list`` (a ``str``/``int`` enum too) count as those: they come back as an
    equal plain value."""
    stack: list[object] = [value]
    while stack:
        item = stack.pop()
        kind = type(item)
        if kind in _LEAVES:
            continue
        if kind is dict:  # exact type checks first (the common case); ``type()`` does not narrow: cast
            stack.extend(cast("dict[str, object]", item).values())
        elif kind is list or kind is tuple:
            stack.extend(cast("list[object]", item))
        elif isinstance(item, float):
            if not math.isfinite(item):
                return "number", item
        elif isinstance(item, (str, int)):
            continue
        elif isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, (list, tuple)):
            stack.extend(item)
        else:
            return "type", item
    return None


def serialise_json(value: object, what: str) -> bytes:
    """``value`` as JSON bytes (sorted keys), the form a result or arguments are stored in.

    ``value`` must be a JSON value: ``str``, ``int``, ``float``, ``bool``, ``None``, and ``list``/``tuple``/``dict``
    (string keys) of those; what is stored is what a lookup gives back (a tuple comes back as a list).

    Raises:
        TypeError: ``value`` is not a JSON value (``what`` names it: ``"result"``, ``"args"``), e.g. an object, or
            a ``datetime``/``date``/``UUID``/enum/dataclass that would be stored as a string or object and read back
            as another type.
        ValueError: ``value`` holds NaN or an infinity (named), which JSON cannot represent.
    """
    try:
        data = orjson.dumps(value, option=orjson.OPT_SORT_KEYS)
    except TypeError as exc:
        raise TypeError(f"{what} must be JSON-serialisable (str, number, bool, None, list, dict): {exc}") from exc
    bad = None if type(value) in _LEAVES else _not_json(value)  # no cycle: orjson refused those above
    if bad is not None:
        if bad[0] == "number":
            raise ValueError(f"{what} must hold finite numbers only (JSON has no NaN/infinity), got {bad[1]!r}")
        raise TypeError(
            f"{what} must be a JSON value (str, number, bool, None, list, dict), got "
            f"{type(bad[1]).__name__}: {bad[1]!r}"
        )
    return data


def to_match(
    record: MemoryRecord,
    score: float,
    kind: str,
    raw: bytes | None,
    now: float,
    corrupt: list[str] | None = None,
    note: str = "",
    verified_by: str = "",
) -> IntentionMatch | None:
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
        args=copy_json(record.args),  # the caller's own copy: editing it must not change the stored memory
        age_s=max(0.0, now - record.created_at),
        result=result,
        memory_id=record.id,
        result_hash=record.result_hash,
        note=note,
        verified_by=verified_by,
    )


def to_matches(
    records: list[MemoryRecord],
    picked: Picked,
    raws: list[bytes | None],
    now: float,
    corrupt: list[str] | None = None,
) -> list[IntentionMatch]:
    """`to_match` for each record and its result, in order, leaving out records whose result expired or is
    corrupt (their hashes appended to ``corrupt``). ``picked``: the lookup's
    `Picked` (similarity, kind, note, verified_by)."""
    p = picked
    out = [to_match(r, p.score, p.kind, raw, now, corrupt, p.note, p.verified_by) for r, raw in zip(records, raws)]
    return [m for m in out if m is not None]

"""``MemoryRecord``: one stored intention memory (without its result), and `copy_json`.

A record keeps the raw intention as given, so everything a lookup compares (the exact key, the meaning signature,
a vector) can be derived again when the code or data that derive it change. Its ``signature`` carries the version
of the vocabulary that made it (`signature_version`): a lookup that finds a user's index at another version
re-derives the signatures from the raw intentions (`promptcache.intention._lookup`).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from functools import cached_property
from typing import Any

import orjson

from promptcache._keys import canonical_json

__all__ = ["MemoryRecord", "copy_json", "signature_version"]


def signature_version(signature: str) -> str:
    """The version part of a meaning signature (``"m3-<vocabulary version>"`` of ``"m3-<version>-<digest>"``;
    ``""`` for a record written before signatures existed)."""
    return signature.rpartition("-")[0]


_IMMUTABLE = (str, int, float, bool, type(None))


def copy_json(value: Any) -> Any:
    """A deep copy of a JSON value (``dict``/``list`` nesting; a tuple becomes a list); immutable leaves as is."""
    if type(value) in _IMMUTABLE:
        return value
    return orjson.loads(orjson.dumps(value))


@dataclass(frozen=True)
class MemoryRecord:
    """One stored memory (without its result, which is stored once per content hash).

    Attributes:
        id: stable id of (normalised intention, tool, args): storing the same triple again replaces it.
        intention: the intention as given; ``normalized``: its exact-match form.
        tool / args: the tool call that produced the result (``None`` when not given).
        result_hash: SHA-256 (hex) of the serialised result; the key of the stored result.
        created_at / expires_at: epoch seconds.
        similarity: name of the `Similarity` that made ``features``.
        features: the stored features (``None`` for the lexical default, which works from ``intention``).
        signature: the intention's meaning digest (`promptcache.intention._meaning.signature`), the key
            backends index memories by for the similar match (``""`` in records written before it existed: those
            are found by an exact match only).
    """

    id: str
    intention: str
    normalized: str
    tool: str | None
    args: Any
    result_hash: str
    created_at: float
    expires_at: float
    similarity: str
    features: Any = None
    signature: str = ""

    @property
    def signature_version(self) -> str:
        """The version of the vocabulary that made ``signature`` (`signature_version`)."""
        return signature_version(self.signature)

    @cached_property
    def args_json(self) -> bytes:
        """``args`` as canonical JSON (`promptcache._keys.canonical_json`), computed once per record: a record is
        never changed after it is made (backends keep their own copy of ``args``), and a lookup filtered by
        arguments compares every memory of a group, so recomputing it made each lookup cost the group's size."""
        return canonical_json(self.args)

    def dumps(self) -> bytes:
        """The record as JSON bytes."""
        return orjson.dumps(asdict(self))

    @classmethod
    def loads(cls, data: bytes | str) -> MemoryRecord:
        """Parse `dumps` output, checking every field's type (a record read from a shared store may have been
        damaged: a lookup must be able to trust what it compares).

        Raises:
            ValueError: not a record (not JSON, missing or unknown fields, or a field of the wrong type: ``id``,
                ``intention``, ``normalized``, ``result_hash``, ``similarity`` strings; ``tool`` a string or
                ``null``; ``created_at``/``expires_at`` finite numbers).
        """
        try:
            record = cls(**orjson.loads(data))
        except (orjson.JSONDecodeError, TypeError) as exc:
            raise ValueError(f"not an intention memory record: {exc}") from exc
        for name in _STR_FIELDS:
            if not isinstance(getattr(record, name), str):
                raise ValueError(f"not an intention memory record: {name} is {getattr(record, name)!r}, not a str")
        if record.tool is not None and not isinstance(record.tool, str):
            raise ValueError(f"not an intention memory record: tool is {record.tool!r}, not a str or null")
        for name in ("created_at", "expires_at"):
            value = getattr(record, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
                raise ValueError(f"not an intention memory record: {name} is {value!r}, not a number")
        return record


_STR_FIELDS = ("id", "intention", "normalized", "result_hash", "similarity", "signature")

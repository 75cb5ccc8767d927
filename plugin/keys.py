"""Canonical JSON and hashing: the one way every promptcache cache turns data into a key.

Canonical JSON here means: ``orjson`` with sorted keys at every level, non-string dict keys as strings, ``bytes``
replaced by ``{"$bytes": <length>, "sha256": <hex>}`` (an image or document block keys by its content, not by the
megabytes themselves), pydantic models by their ``model_dump()``, dataclasses/sets/tuples as JSON values.
The same input always gives the same bytes, across processes and machines.
"""

from __future__ import annotations

import hashlib
from typing import Any

import orjson

__all__ = ["canonical_json", "hash_tag", "stable_hash"]

_OPTS = orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS | orjson.OPT_SERIALIZE_NUMPY


def _default(value: Any) -> Any:
    if isinstance(value, (bytes, bytearray, memoryview)):
        data = bytes(value)
        return {"$bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()}
    if isinstance(value, (set, frozenset)):
        return sorted(value, key=repr)
    if isinstance(value, tuple):
        return list(value)
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        return dump(mode="json")
    if isinstance(value, type):
        return f"{value.__module__}.{value.__qualname__}"
    return repr(value)


def canonical_json(value: Any) -> bytes:
    """``value`` as canonical JSON bytes (see the module docstring). Never raises for odd types: they use ``repr``."""
    return orjson.dumps(value, default=_default, option=_OPTS)


def stable_hash(value: Any, length: int = 64) -> str:
    """Hex SHA-256 of ``canonical_json(value)`` (``bytes``/``str`` are hashed as they are), cut to ``length``."""
    if isinstance(value, str):
        data = value.encode()
    elif isinstance(value, (bytes, bytearray)):
        data = bytes(value)
    else:
        data = canonical_json(value)
    return hashlib.sha256(data).hexdigest()[:length]


def hash_tag(value: str) -> str:
    """A Redis Cluster hash tag for ``value``: ``{...}`` around a value free of braces (hashed when it has any)."""
    text = str(value)
    if "{" in text or "}" in text or not text:
        text = stable_hash(text, 16)
    return "{" + text + "}"

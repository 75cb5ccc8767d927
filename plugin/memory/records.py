"""``TypedMemory``: one memory record, its store key and its stored value.

A memory's key (also its ``id``) is derived from what makes it *the same memory*:

- with a ``subject``: ``"s-" + sha256(normalised subject)[:24]`` -- a newer memory with the same subject (in the
  same scope and kind) lands on the same key and replaces the older one ("ETA for order 42" at 3 pm, then at 5 pm);
- without: ``"c-" + sha256(normalised content)[:24]`` -- the same content written twice is one memory.

Normalising = Unicode NFKC, case-folded, runs of whitespace collapsed to one space, stripped.
"""

from __future__ import annotations

import hashlib
import math
import re
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import orjson

from promptcache.backends.base import MAX_TTL_S, validate_ttl
from promptcache.memory.kinds import MemoryKind, parse_kind

__all__ = ["MAX_TTL_S", "TypedMemory", "check_metadata", "content_hash", "memory_key", "normalise_text",
           "validate_ttl_s"]

_WS = re.compile(r"\s+")
VALUE_VERSION = 1

# The TTL rule is the one every promptcache cache uses (at most MAX_TTL_S = 10 years; PostgresStore keeps a TTL as
# whole minutes in an INT column and adds it to NOW(), so far larger values would fail inside the store).
validate_ttl_s = validate_ttl


def normalise_text(text: str) -> str:
    """NFKC, case-fold, collapse whitespace, strip: ``"  ETA  is\\n3 PM "`` -> ``"eta is 3 pm"``."""
    return _WS.sub(" ", unicodedata.normalize("NFKC", text).casefold()).strip()


def content_hash(content: str) -> str:
    """SHA-256 hex digest (first 24 chars) of the normalised content."""
    return hashlib.sha256(normalise_text(content).encode("utf-8")).hexdigest()[:24]


def memory_key(content: str, subject: str | None) -> str:
    """The store key (and ``id``) of a memory: by subject when given, else by content (see module docstring)."""
    if subject is not None:
        return "s-" + hashlib.sha256(normalise_text(subject).encode("utf-8")).hexdigest()[:24]
    return "c-" + content_hash(content)


def validate_content(content: Any) -> str:
    """Check memory content: a string with at least one non-space character and no NUL.

    Raises:
        TypeError: not a string.  ValueError: empty, all whitespace, or containing NUL (``"\\x00"``: PostgreSQL
        text and jsonb cannot hold it).
    """
    if not isinstance(content, str):
        raise TypeError(f"memory content must be a string, got {type(content).__name__}: {content!r}")
    if not content.strip():
        raise ValueError(f"memory content must not be empty, got {content!r}")
    _no_nul(content, "memory content")
    return content.strip()


def validate_subject(subject: Any) -> str | None:
    """Check a subject: ``None`` or a non-empty string without NUL.

    Raises:
        TypeError: not a string.  ValueError: empty, all whitespace, or containing NUL.
    """
    if subject is None:
        return None
    if not isinstance(subject, str):
        raise TypeError(f"memory subject must be a string or None, got {type(subject).__name__}: {subject!r}")
    if not subject.strip():
        raise ValueError(f"memory subject must be None or a non-empty string, got {subject!r}")
    _no_nul(subject, "memory subject")
    return subject.strip()


def _no_nul(text: str, what: str) -> None:
    if "\x00" in text:
        raise ValueError(f"{what} must not contain a NUL character (PostgreSQL cannot store it), got {text!r}")


def _check_json(value: Any, path: str) -> None:
    """Refuse what orjson would write but a JSON store rejects or changes: NaN/inf (written as null), NUL."""
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError(f"metadata must be JSON: {path} is {value!r} (NaN and infinity are not JSON numbers)")
    if isinstance(value, str):
        _no_nul(value, path)
    elif isinstance(value, Mapping):
        for key, item in value.items():
            if isinstance(key, str):
                _no_nul(key, f"a key of {path}")
            _check_json(item, f"{path}[{key!r}]")
    elif isinstance(value, (list, tuple)):
        for i, item in enumerate(value):
            _check_json(item, f"{path}[{i}]")


def check_metadata(metadata: Any) -> dict[str, Any]:
    """Check memory metadata: ``None`` (-> ``{}``) or a mapping that is strict JSON (string keys, no bytes, ints
    within 64 bits, no NaN/infinity, no NUL in strings) -- checked before anything is written.

    Raises:
        TypeError: not a mapping, or not JSON-serialisable (orjson's reason).  ValueError: NaN/inf or NUL.
    """
    if metadata is None:
        return {}
    if not isinstance(metadata, Mapping):
        raise TypeError(f"metadata must be a mapping, got {type(metadata).__name__}: {metadata!r}")
    try:
        orjson.dumps(dict(metadata))
    except TypeError as exc:
        raise TypeError(f"metadata must be JSON-serialisable: {exc}") from None
    _check_json(metadata, "metadata")
    return dict(metadata)


def _stored_time(value: Any, what: str) -> float:
    """A stored epoch time; a non-number or NaN/inf makes the record corrupt (ValueError/TypeError)."""
    if isinstance(value, bool):
        raise TypeError(f"stored {what} is not a number: {value!r}")
    number = float(value)
    if not math.isfinite(number):
        raise ValueError(f"stored {what} is not a finite number: {value!r}")
    return number


@dataclass(frozen=True)
class TypedMemory:
    """One typed memory.

    Attributes:
        id: the store key (see :func:`memory_key`).
        kind: a :class:`MemoryKind`.
        content: the text shown to the model (for a ``reference``: the pointer itself, e.g. a URL or document id).
        subject: optional; a newer memory with the same subject (same scope and kind) replaces this one.
        created_at: when it was written, seconds since the epoch (UTC).
        expires_at: when it stops being true, seconds since the epoch; ``None`` = never. Enforced on every read.
        metadata: free-form JSON-serialisable data; ``metadata["description"]`` is the pointer text of a reference.
    """

    id: str
    kind: MemoryKind
    content: str
    subject: str | None = None
    created_at: float = 0.0
    expires_at: float | None = None
    metadata: Mapping[str, Any] = field(default_factory=dict)

    def is_expired(self, now: float) -> bool:
        """True when ``expires_at`` is set and ``now`` (epoch seconds) is at or past it."""
        return self.expires_at is not None and now >= self.expires_at

    @property
    def description(self) -> str:
        """A short description: ``metadata["description"]``, else the subject, else the content."""
        desc = self.metadata.get("description") if self.metadata else None
        return str(desc or self.subject or self.content)

    def to_value(self) -> dict[str, Any]:
        """The JSON value stored in the ``BaseStore`` (``kind`` as its string, ``v`` = value format version)."""
        return {
            "v": VALUE_VERSION,
            "id": self.id,
            "kind": self.kind.value,
            "content": self.content,
            "subject": self.subject,
            "content_hash": content_hash(self.content),
            "created_at": self.created_at,
            "expires_at": self.expires_at,
            "metadata": dict(self.metadata),
        }

    def to_dict(self) -> dict[str, Any]:
        """A plain dict (for graph state and checkpoints): the fields, ``kind`` as its string."""
        return {
            "id": self.id,
            "kind": self.kind.value,
            "content": self.content,
            "subject": self.subject,
            "created_at": self.created_at,
            "expires_at": self.expires_at,
            "metadata": dict(self.metadata),
        }

    @classmethod
    def from_value(cls, value: Mapping[str, Any], key: str | None = None) -> TypedMemory:
        """Rebuild a memory from a stored value (or :meth:`to_dict`).

        Raises:
            ValueError / KeyError / TypeError: the value is not a typed-memory record (a missing kind or content,
            an unknown kind, a ``created_at``/``expires_at`` that is not a finite number).
        """
        if not isinstance(value, Mapping):
            raise TypeError(f"a stored memory must be a mapping, got {type(value).__name__}")
        expires = value.get("expires_at")
        return cls(
            id=str(value.get("id") or key),
            kind=parse_kind(value["kind"]),
            content=str(value["content"]),
            subject=value.get("subject"),
            created_at=_stored_time(value.get("created_at") or 0.0, "created_at"),
            expires_at=None if expires is None else _stored_time(expires, "expires_at"),
            metadata=dict(value.get("metadata") or {}),
        )

    from_dict = from_value

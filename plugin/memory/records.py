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

from promptcache.memory.kinds import MemoryKind, parse_kind

__all__ = ["TypedMemory", "content_hash", "memory_key", "normalise_text", "validate_ttl_s"]

_WS = re.compile(r"\s+")
VALUE_VERSION = 1


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


def validate_ttl_s(ttl_s: Any, *, what: str = "ttl_s") -> float | None:
    """Check a time-to-live in seconds: ``None`` (no expiry) or a finite number > 0.

    Raises:
        TypeError: not a number (``bool`` is refused too).
        ValueError: zero, negative, NaN or infinite.
    """
    if ttl_s is None:
        return None
    if isinstance(ttl_s, bool) or not isinstance(ttl_s, (int, float)):
        raise TypeError(f"{what} must be a number of seconds or None, got {type(ttl_s).__name__}: {ttl_s!r}")
    value = float(ttl_s)
    if not math.isfinite(value) or value <= 0:
        raise ValueError(f"{what} must be a finite number of seconds > 0, got {ttl_s!r}")
    return value


def validate_content(content: Any) -> str:
    """Check memory content: a string with at least one non-space character.

    Raises:
        TypeError: not a string.  ValueError: empty or all whitespace.
    """
    if not isinstance(content, str):
        raise TypeError(f"memory content must be a string, got {type(content).__name__}: {content!r}")
    if not content.strip():
        raise ValueError(f"memory content must not be empty, got {content!r}")
    return content.strip()


def validate_subject(subject: Any) -> str | None:
    """Check a subject: ``None`` or a non-empty string.

    Raises:
        TypeError: not a string.  ValueError: empty or all whitespace.
    """
    if subject is None:
        return None
    if not isinstance(subject, str):
        raise TypeError(f"memory subject must be a string or None, got {type(subject).__name__}: {subject!r}")
    if not subject.strip():
        raise ValueError(f"memory subject must be None or a non-empty string, got {subject!r}")
    return subject.strip()


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
            ValueError / KeyError / TypeError: the value is not a typed-memory record.
        """
        expires = value.get("expires_at")
        return cls(
            id=str(value.get("id") or key),
            kind=parse_kind(value["kind"]),
            content=str(value["content"]),
            subject=value.get("subject"),
            created_at=float(value.get("created_at") or 0.0),
            expires_at=None if expires is None else float(expires),
            metadata=dict(value.get("metadata") or {}),
        )

    from_dict = from_value

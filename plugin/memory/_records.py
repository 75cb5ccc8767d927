"""``TypedMemory``: one memory record, its store key and its stored value.

A memory's key (also its ``id``) is derived from what makes it *the same memory*:

- with a ``subject``: ``"s-" + sha256(normalised subject)[:24]`` -- a newer memory with the same subject (in the
  same scope and kind) lands on the same key and replaces the older one ("ETA for order 42" at 3 pm, then at 5 pm);
- without: ``"c-" + sha256(normalised content)[:24]`` -- the same content written twice is one memory
  (`resolve_duplicates`: also when one of the two has a subject; not when both have different subjects).

Normalising = Unicode NFKC, case-folded, runs of whitespace collapsed to one space, stripped.
"""

from __future__ import annotations

import hashlib
import math
import re
import unicodedata
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Protocol

import orjson

from promptcache._config import check_unicode
from promptcache._types import JSONMapping, JSONObject
from promptcache.backends._base import MAX_TTL_S, validate_ttl
from promptcache.memory._kinds import MemoryKind, parse_kind

__all__ = [
    "MAX_TTL_S",
    "StoredItem",
    "TypedMemory",
    "check_metadata",
    "content_hash",
    "memory_key",
    "normalise_text",
    "resolve_duplicates",
    "stored_values",
    "validate_memory_id",
    "validate_ttl_s",
]

_WS = re.compile(r"\s+")
VALUE_VERSION = 1

# The TTL rule is the one every promptcache cache uses (at most MAX_TTL_S = 10 years; PostgresStore keeps a TTL as
# whole minutes in an INT column and adds it to NOW(), so far larger values would fail inside the store).
validate_ttl_s = validate_ttl


def normalise_text(text: str) -> str:
    """NFKC, case-fold, collapse whitespace, strip, and drop trailing sentence punctuation (``.``, ``!``, ``;``,
    ``:``, ``,``; ``?`` stays: a question is not the statement): ``"  ETA  is 3 PM. "`` -> ``"eta is 3 pm"``."""
    folded = _WS.sub(" ", unicodedata.normalize("NFKC", text).casefold()).strip()
    return folded.rstrip(".!;:,\u3002").rstrip()


def content_hash(content: str) -> str:
    """SHA-256 hex digest (first 24 chars) of the normalised content."""
    return hashlib.sha256(normalise_text(content).encode("utf-8")).hexdigest()[:24]


def memory_key(content: str, subject: str | None) -> str:
    """The store key (and ``id``) of a memory: by subject when given, else by content (see module docstring)."""
    if subject is not None:
        return "s-" + hashlib.sha256(normalise_text(subject).encode("utf-8")).hexdigest()[:24]
    return "c-" + content_hash(content)


def validate_content(content: object) -> str:
    """Check memory content: a string with at least one non-space character and no NUL.

    Raises:
        TypeError: not a string.  ValueError: empty, all whitespace, or containing NUL (``"\\x00"``: PostgreSQL
        text and jsonb cannot hold it).
    """
    if not isinstance(content, str):
        raise TypeError(f"memory content must be a string, got {type(content).__name__}: {content!r}")
    if not content.strip():
        raise ValueError(f"memory content must not be empty, got {content!r}")
    _storable_text(content, "memory content")
    return content.strip()


def validate_subject(subject: object) -> str | None:
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
    _storable_text(subject, "memory subject")
    return subject.strip()


def validate_memory_id(memory_id: object) -> str:
    """Check a memory id given to ``get``/``delete``: a string (ints are turned into strings) no store refuses.

    Raises:
        TypeError: neither a string nor an int.  ValueError: it holds NUL or a lone surrogate (no memory can have
        such an id; PostgreSQL would fail on it).
    """
    if isinstance(memory_id, bool) or not isinstance(memory_id, (str, int)):
        raise TypeError(f"memory id must be a string, got {type(memory_id).__name__}: {memory_id!r}")
    text = str(memory_id)
    _storable_text(text, "memory id")
    return text


def _storable_text(text: str, what: str) -> None:
    """Refuse text no store can keep: NUL (PostgreSQL text and jsonb cannot hold it) and lone surrogates (not
    encodable as UTF-8)."""
    if "\x00" in text:
        raise ValueError(f"{what} must not contain a NUL character (PostgreSQL cannot store it), got {text!r}")
    check_unicode(text, what)


_JSON_SCALARS = (str, int, float, bool, type(None))


def _check_json(value: object, path: str) -> None:
    """Refuse anything but strict JSON values: only dicts with string keys, lists/tuples, strings, ints, finite
    floats, booleans and ``None`` (orjson alone would also write datetimes, UUIDs, enums and dataclasses, which
    read back as other types, and NaN/inf as null); no NUL or lone surrogate in strings."""
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError(f"metadata must be JSON: {path} is {value!r} (NaN and infinity are not JSON numbers)")
    if isinstance(value, str):
        _storable_text(value, path)
    elif isinstance(value, Mapping):
        for key, item in value.items():
            if not isinstance(key, str):
                raise TypeError(f"metadata must be JSON: a key of {path} is {type(key).__name__} {key!r}, not a string")
            _storable_text(key, f"a key of {path}")
            _check_json(item, f"{path}[{key!r}]")
    elif isinstance(value, (list, tuple)):
        for i, item in enumerate(value):
            _check_json(item, f"{path}[{i}]")
    elif type(value) not in _JSON_SCALARS:
        raise TypeError(f"metadata must be JSON-serialisable: {path} is a {type(value).__name__} ({value!r})")


def _json_copy(value: JSONMapping) -> JSONObject:
    """A deep copy of checked JSON (so neither the caller nor a reader can change a stored memory in place)."""
    if not value:
        return {}
    copied: JSONObject = orjson.loads(orjson.dumps(value))
    return copied


def check_metadata(metadata: object) -> JSONObject:
    """Check memory metadata and return a deep copy: ``None`` (-> ``{}``) or a mapping that is strict JSON (string
    keys, no bytes/datetimes/UUIDs/other objects, ints within 64 bits, no NaN/infinity, no NUL or lone surrogate in
    strings) -- checked before anything is written.

    Raises:
        TypeError: not a mapping, or not strict JSON (the message names the path, e.g. ``metadata['since']``).
        ValueError: NaN/inf, NUL, or a lone surrogate.
    """
    if metadata is None:
        return {}
    if not isinstance(metadata, Mapping):
        raise TypeError(f"metadata must be a mapping, got {type(metadata).__name__}: {metadata!r}")
    _check_json(metadata, "metadata")
    try:
        return _json_copy(metadata)
    except TypeError as exc:  # e.g. an int beyond 64 bits
        raise TypeError(f"metadata must be JSON-serialisable: {exc}") from None


def _stored_time(value: object, what: str) -> float:
    """A stored epoch time; a non-number or NaN/inf makes the record corrupt (ValueError/TypeError)."""
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise TypeError(f"stored {what} is not a number: {value!r}")
    number = float(value)
    if not math.isfinite(number):
        raise ValueError(f"stored {what} is not a finite number: {value!r}")
    return number


@dataclass(frozen=True)
class TypedMemory:
    """One typed memory.

    Attributes:
        id: the store key (see `memory_key`).
        kind: a `MemoryKind`.
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
    metadata: JSONMapping = field(default_factory=dict)

    def is_expired(self, now: float) -> bool:
        """True when ``expires_at`` is set and ``now`` (epoch seconds) is at or past it."""
        return self.expires_at is not None and now >= self.expires_at

    @property
    def description(self) -> str:
        """A short description: ``metadata["description"]``, else the subject, else the content."""
        desc = self.metadata.get("description") if self.metadata else None
        return str(desc or self.subject or self.content)

    def to_value(self) -> dict[str, object]:
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

    def to_dict(self) -> dict[str, object]:
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
    def from_value(cls, value: JSONMapping, key: str | None = None, kind: MemoryKind | None = None) -> TypedMemory:
        """Rebuild a memory from a stored value (or `to_dict`).

        Args:
            value: the stored value.
            key: its store key, which becomes the ``id`` (what ``get``/``delete`` take), whatever the value says.
            kind: the kind of the namespace it was read from (``None``: not read from a store, e.g. graph state); the
                value must be of that kind, and project state read from the store must have ``expires_at``.

        Raises:
            ValueError: (also KeyError / TypeError) the value is not a typed-memory record: a missing kind, an
                unknown kind or one other than ``kind``, content that is not a non-empty string, a subject that is
                neither a string nor null, metadata that is not an object, a ``created_at``/``expires_at`` that is
                not a finite number, or project state read from its namespace without ``expires_at`` (project
                state must expire).
        """
        if not isinstance(value, Mapping):
            raise TypeError(f"a stored memory must be a mapping, got {type(value).__name__}")
        parsed = parse_kind(value["kind"])
        if kind is not None and parsed is not kind:
            raise ValueError(f"a {parsed.value} memory in the {kind.value} namespace")
        content, subject, metadata = value["content"], value.get("subject"), value.get("metadata")
        if not isinstance(content, str) or not content.strip():
            raise TypeError(f"stored content is not a non-empty string: {content!r}")
        if subject is not None and not isinstance(subject, str):
            raise TypeError(f"stored subject is not a string: {subject!r}")
        if metadata is not None and not isinstance(metadata, Mapping):
            raise TypeError(f"stored metadata is not an object: {metadata!r}")
        expires = value.get("expires_at")
        if expires is None and kind is MemoryKind.PROJECT_STATE:  # read from the store: it must expire
            raise ValueError("stored project state has no expires_at (project state must expire)")
        return cls(
            id=str(key if key is not None else value["id"]),
            kind=parsed,
            content=content,
            subject=subject,
            created_at=_stored_time(value.get("created_at") or 0.0, "created_at"),
            expires_at=None if expires is None else _stored_time(expires, "expires_at"),
            metadata=_json_copy(metadata) if metadata else {},
        )

    from_dict = from_value


class StoredItem(Protocol):
    """What the duplicate rules read of a store item (``langgraph.store.base.Item`` has both)."""

    @property
    def key(self) -> str: ...

    @property
    def value(self) -> object: ...


def stored_values(existing: Iterable[StoredItem]) -> list[tuple[str, JSONMapping]]:
    """``(key, value)`` of the items whose value is a mapping (others are no typed memory and are left alone)."""
    return [(it.key, it.value) for it in existing if isinstance(it.value, Mapping)]


def resolve_duplicates(record: TypedMemory, existing: Iterable[StoredItem]) -> tuple[TypedMemory, list[str]]:
    """The duplicate rule of one namespace (module docstring), applied to its ``existing`` store items
    (``langgraph.store.base.Item``: ``key`` and ``value``) before ``record`` is written.

    Returns the record to write and the keys to delete. A record without a subject whose text a subjected memory
    already holds takes that memory's key and subject (one memory). Items holding the same normalised text without
    a subject are deleted. The same text under *another* subject is another memory and stays ("arrives at 17:00"
    for order 42 and for order 43); between subjected memories only the subject decides.
    """
    digest = content_hash(record.content)
    same = [(key, value) for key, value in stored_values(existing) if value.get("content_hash") == digest]
    if record.subject is None:
        for key, value in same:
            subject = value.get("subject")
            if key != record.id and isinstance(subject, str) and subject:
                record = TypedMemory(
                    id=key,
                    kind=record.kind,
                    content=record.content,
                    subject=subject,
                    created_at=record.created_at,
                    expires_at=record.expires_at,
                    metadata=record.metadata,
                )
                break
    return record, [key for key, value in same if key != record.id and not value.get("subject")]

"""Memory kinds and their default lifetimes.

The four kinds (docs/architecture.md, "Typed memory"): user facts (stable attributes of the user,
kept for a whole session), feedback (explicit rules the agent must follow: they belong in the system prompt),
project state (fast-moving data such as an ETA or task progress: it must expire) and references (pointers to
external services, document ids or endpoints: paths to fresh data, not content to show).
"""

from __future__ import annotations

from collections.abc import Iterable
from enum import Enum
from typing import Final

__all__ = ["DEFAULT_PROJECT_STATE_TTL_S", "MemoryKind", "parse_kind", "parse_kinds"]


class MemoryKind(str, Enum):
    """The kind of a typed memory; the value is the namespace label used in the store."""

    USER_FACT = "user_fact"
    FEEDBACK = "feedback"
    PROJECT_STATE = "project_state"
    REFERENCE = "reference"

    def __str__(self) -> str:  # "user_fact", not "MemoryKind.USER_FACT"
        return self.value


DEFAULT_PROJECT_STATE_TTL_S: Final[float] = 3600.0
"""Default freshness window of project state, in seconds (60 minutes, the design's example value). A per-memory
``ttl_s`` or the store's ``project_state_ttl_s`` overrides it."""


def parse_kind(kind: object) -> MemoryKind:
    """Turn ``kind`` (a `MemoryKind` or its string value, any case) into a `MemoryKind`.

    Raises:
        ValueError: ``kind`` is not one of ``user_fact``, ``feedback``, ``project_state``, ``reference``.
    """
    if isinstance(kind, MemoryKind):
        return kind
    if isinstance(kind, str):
        try:
            return MemoryKind(kind.strip().lower())
        except ValueError:
            pass
    allowed = ", ".join(k.value for k in MemoryKind)
    raise ValueError(f"unknown memory kind {kind!r}; expected one of: {allowed}")


def parse_kinds(kinds: Iterable[MemoryKind | str] | MemoryKind | str | None) -> list[MemoryKind]:
    """Several kinds: ``None`` for all four, one kind (a string is one kind, not its letters), or an iterable.

    Raises:
        ValueError: an unknown kind (named as given).
    """
    if kinds is None:
        return list(MemoryKind)
    if isinstance(kinds, (str, MemoryKind)):
        return [parse_kind(kinds)]
    return [parse_kind(k) for k in kinds]

"""What a lookup reads of its `IntentionMemory`: the settings and parts, as a protocol.

The lookup steps (`promptcache.intention._lookup`, `promptcache.intention._recall`) depend on this, not on the
memory class, so the memory can import them without a circle.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from promptcache.intention._backends import IntentionBackend
from promptcache.intention._differences import WordCheck
from promptcache.intention._judges import Verifier
from promptcache.intention._prepared import PreparedCache
from promptcache.intention._similarity import Similarity
from promptcache.intention._vector_index import IndexCache

__all__ = ["LookupContext"]


class LookupContext(Protocol):
    """The parts of an `IntentionMemory` a lookup uses (see its docstring for each)."""

    backend: IntentionBackend
    similarity: Similarity
    verifier: Verifier
    clock: Callable[[], float]
    margin: float
    exact_only: bool
    proposals: int
    proposal_floor: float
    consensus_gap: float | None
    word_check: WordCheck
    indexes: IndexCache

    prepared: PreparedCache

    @property
    def threshold(self) -> float: ...

"""Reference pointers: the short id a reference is shown under, and finding a reference again by that id.

Typed memory (docs/architecture.md) keeps references as *pointers* in the prompt -- an id and a description,
not the contents (a URL, a document id, an endpoint, or a longer text). The agent fetches the contents when it needs
them, with the ``read_reference`` tool (`promptcache.memory.make_reference_tool`).

The short id is the first `REF_ID_CHARS` hex characters of the hash in the memory id (``memory_key``:
``"s-"``/``"c-"`` + SHA-256 of the normalised subject or content). It depends on the memory alone, so it is the
same on every turn, thread and process, and does not change when other references are added -- except when two
references of one scope share those characters (odds about 1 in 88,000 for 20 references): then both show the shortest
longer prefix that tells them apart, decided by their ids only, so it is still the same on every turn.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from promptcache._types import JSONMapping
from promptcache.memory._records import TypedMemory, normalise_text

__all__ = ["REF_ID_CHARS", "find_reference", "reference_ids", "short_reference_id"]

REF_ID_CHARS = 6
"""Hex characters in a reference's short id (24 bits: 2 to 6 cl100k tokens, vs ~10 for a typical URL)."""


def _hash_part(memory_id: str) -> str:
    return memory_id.split("-", 1)[1] if "-" in memory_id else memory_id


def short_reference_id(memory: TypedMemory | str, length: int = REF_ID_CHARS) -> str:
    """The short id of a reference (``memory`` or its memory id): the first ``length`` characters of its hash."""
    memory_id = memory.id if isinstance(memory, TypedMemory) else str(memory)
    return _hash_part(memory_id)[:length]


def reference_ids(memories: Iterable[TypedMemory | JSONMapping]) -> dict[str, str]:
    """``memory id -> short id`` for ``memories`` (one scope's references).

    Short ids are `REF_ID_CHARS` long; references that share one get the shortest longer prefix unique among
    them (module docstring). The result depends only on the set of ids, never on their order.
    """
    ids = sorted({m.id if isinstance(m, TypedMemory) else str(m["id"]) for m in memories})
    out: dict[str, str] = {}
    groups: dict[str, list[str]] = {}
    for memory_id in ids:
        groups.setdefault(short_reference_id(memory_id), []).append(memory_id)
    for short, members in groups.items():
        if len(members) == 1:
            out[members[0]] = short
            continue
        length = REF_ID_CHARS + 1
        while len({short_reference_id(m, length) for m in members}) < len(members) and length < 64:
            length += 1
        for m in members:
            out[m] = short_reference_id(m, length)
    return out


def _clean(ref_id: str) -> str:
    return ref_id.strip().strip("[]#").strip()


def find_reference(references: Sequence[TypedMemory], ref_id: str) -> TypedMemory | None:
    """The reference ``ref_id`` names among ``references`` (one scope's live references), or ``None``.

    ``ref_id`` may be the short id shown in the memory block (brackets and ``#`` are ignored), any longer prefix of
    the hash, the full memory id, or the reference's subject (normalised: case and whitespace do not matter). A
    prefix shorter than `REF_ID_CHARS` or one that matches several references finds nothing.

    Raises:
        TypeError: ``ref_id`` is not a string.
    """
    if not isinstance(ref_id, str):
        raise TypeError(f"ref_id must be a string, got {type(ref_id).__name__}: {ref_id!r}")
    wanted = _clean(ref_id)
    if not wanted:
        return None
    for memory in references:
        if memory.id == wanted:
            return memory
    key = wanted.lower()
    if len(key) >= REF_ID_CHARS:
        hits = [m for m in references if _hash_part(m.id).startswith(key)]
        if len(hits) == 1:
            return hits[0]
    subject = normalise_text(wanted)
    hits = [m for m in references if m.subject is not None and normalise_text(m.subject) == subject]
    return hits[0] if len(hits) == 1 else None

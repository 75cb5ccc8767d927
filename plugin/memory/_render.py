"""Rendering loaded memories as the memory block of the system prompt: compact, and the same text for the same
memories (prompt caching downstream depends on it).

Where it goes (`with_memory_prompt`): *after* the agent's system prompt. With a cache point (caching on) it is its
own text block, never merged into the system prompt; without one, a string system prompt stays a string (the block
follows a blank line) and a list of blocks gets the memory block as one more. The system prompt (with the tools before it) is the prefix every conversation of the agent shares; the memory
block is the user's, so it follows that prefix. With prompt caching on a Bedrock Converse model a cache point goes
between the two (`MEMORY_CACHE_POINT`): Bedrock cache-point placement
(``promptcache.integrations.bedrock``) then keeps that point as the anchor of the shared prefix and covers the
memory block and the conversation with its tail point, so a memory block that changes rewrites only what follows it.
The block holds no timestamps and no per-turn text: its bytes change only when the loaded memories change.

Layout (sections left out when empty)::

    Rules:
    Keep answers short.
    Never paste passwords.

    About the user:
    Dana leads the shipping-API team.

    References (fetch by id):
    [3fa9e1] shipping-API on-call runbook

    Current state:
    Main-branch build #841 passed.

- Section order is fixed: feedback rules, user facts, references (the per-thread part, a stable prefix), then
  project state (the per-turn part) last.
- Within a section, memories oldest first, ties by memory id.
- One memory per line, no bullet: runs of whitespace in a memory (newlines included) become one space, so a line
  is always exactly one memory and a bullet would add a token per memory without adding information.
- A reference renders as a pointer, ``[short id] description`` (`promptcache.memory._references`): never its
  contents. The description is ``metadata["description"]``, else the subject, else the contents cut to
  `DESCRIPTION_MAX_CHARS` (a reference written without any description has nothing else to show).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from langchain_core.messages import SystemMessage

from promptcache._types import JSONMapping
from promptcache.memory._kinds import MemoryKind
from promptcache.memory._records import TypedMemory
from promptcache.memory._references import reference_ids

__all__ = [
    "MEMORY_SEPARATOR",
    "DESCRIPTION_MAX_CHARS",
    "HEADINGS",
    "SECTION_ORDER",
    "MEMORY_CACHE_POINT",
    "holds_memory_prompt",
    "render_memory_block",
    "render_reference",
    "with_memory_prompt",
]

SECTION_ORDER: tuple[MemoryKind, ...] = (
    MemoryKind.FEEDBACK,
    MemoryKind.USER_FACT,
    MemoryKind.REFERENCE,
    MemoryKind.PROJECT_STATE,
)
HEADINGS: Mapping[MemoryKind, str] = {
    MemoryKind.FEEDBACK: "Rules:",
    MemoryKind.USER_FACT: "About the user:",
    MemoryKind.REFERENCE: "References (fetch by id):",
    MemoryKind.PROJECT_STATE: "Current state:",
}
DESCRIPTION_MAX_CHARS = 80
"""A reference without a description or subject shows at most this many characters of its contents."""

_WS = re.compile(r"\s+")


def _one_line(text: str) -> str:
    return _WS.sub(" ", text).strip()


def render_reference(memory: TypedMemory, short_id: str) -> str:
    """One reference as a pointer line: ``[short_id] description`` (module docstring)."""
    desc = (memory.metadata.get("description") if memory.metadata else None) or memory.subject
    text = _one_line(str(desc)) if desc else _one_line(memory.content)
    if not desc and len(text) > DESCRIPTION_MAX_CHARS:
        text = text[: DESCRIPTION_MAX_CHARS - 3].rstrip() + "..."
    return f"[{short_id}] {text}"


def render_memory_block(memories: Mapping[MemoryKind, Sequence[TypedMemory | JSONMapping]]) -> str:
    """Render loaded memories as one text block (layout in the module docstring); "" when nothing is loaded.

    Args:
        memories: ``kind -> memories`` (`TypedMemory` or `TypedMemory.to_dict` dicts); kinds missing
            or empty are left out.
    """
    parts = []
    for kind in SECTION_ORDER:
        items = [m if isinstance(m, TypedMemory) else TypedMemory.from_dict(m) for m in memories.get(kind, ())]
        if not items:
            continue
        items.sort(key=lambda m: (m.created_at, m.id))
        if kind is MemoryKind.REFERENCE:
            ids = reference_ids(items)
            lines = [render_reference(m, ids[m.id]) for m in items]
        else:
            lines = [_one_line(m.content) for m in items]
        parts.append("\n".join([HEADINGS[kind], *lines]))
    return "\n\n".join(parts)


MEMORY_CACHE_POINT: JSONMapping = {"cachePoint": {"type": "default"}}
"""The Converse cache-point block `with_memory_prompt` puts between the system prompt and the memory block."""


def _blocks(content: str | list[str | dict[str, object]]) -> list[str | dict[str, object]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}] if content else []
    return list(content)


MEMORY_SEPARATOR = "\n\n"
"""What joins a string system prompt and the memory block when no cache point goes between them (the blank line
that separates the block's own sections)."""


def with_memory_prompt(
    system: SystemMessage | None, memory_prompt: str | None, *, cache_point: JSONMapping | None = None
) -> SystemMessage | None:
    """A new system message holding ``system``'s content and then ``memory_prompt`` (module docstring).

    - ``system`` is ``None``: ``memory_prompt`` alone, a string.
    - No ``cache_point`` and ``system``'s content is a string: still a string, ``system`` + `MEMORY_SEPARATOR`
      + ``memory_prompt`` (the caller's type is kept; the system prompt stays a byte prefix of the result).
    - Otherwise a list: ``system``'s content blocks (a string content becomes one text block), then
      ``cache_point`` (when given and ``system`` has content and no cache point of its own), then ``memory_prompt``
      as its own text block.

    Args:
        system: the agent's system message, or ``None``.
        memory_prompt: the rendered block (`render_memory_block`); empty or ``None`` -> ``system`` itself.
        cache_point: a provider cache-point block to end the shared prefix with (``MEMORY_CACHE_POINT`` for
            Bedrock Converse, when the provider caches the prompt), or ``None``.

    Returns:
        The new message (``system`` itself when there is no block).
    """
    if not memory_prompt:
        return system
    if system is None:
        return SystemMessage(content=memory_prompt)
    kwargs = dict(system.additional_kwargs)
    if cache_point is None and isinstance(system.content, str):
        text = f"{system.content}{MEMORY_SEPARATOR}{memory_prompt}" if system.content else memory_prompt
        return SystemMessage(content=text, additional_kwargs=kwargs)
    blocks = _blocks(system.content)
    if cache_point is not None and blocks and not any(isinstance(b, Mapping) and "cachePoint" in b for b in blocks):
        blocks.append(dict(cache_point))
    return SystemMessage(content=[*blocks, {"type": "text", "text": memory_prompt}], additional_kwargs=kwargs)


def holds_memory_prompt(system: SystemMessage | None, memory_prompt: str) -> bool:
    """Whether ``system`` already ends with ``memory_prompt`` as `with_memory_prompt` adds it."""
    if system is None:
        return False
    content = system.content
    if isinstance(content, str):
        return content == memory_prompt or content.endswith(MEMORY_SEPARATOR + memory_prompt)
    last = content[-1] if content else None
    return isinstance(last, dict) and last.get("text") == memory_prompt

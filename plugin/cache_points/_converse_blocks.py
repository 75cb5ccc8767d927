"""The shapes of a Converse request as placement reads and builds it (Amazon Bedrock ``Converse`` API reference:
``Message``, ``ContentBlock``, ``SystemContentBlock``, ``Tool``, ``CachePointBlock``), and the cache point block:
`cache_point_block` builds one, `is_cache_point` recognises one, `is_blank_text` finds the text blocks Bedrock refuses
a point after.

What placement reads comes from the caller and is checked as it is walked (``scan_request``), so it is typed as
read-only JSON objects of unchecked shape (`Block`, `MessageIn`), narrowed with ``type``/``isinstance`` where a value
is used. What placement builds has a fixed shape: `CachePointBlock`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal, TypeAlias, TypedDict

__all__ = [
    "Block",
    "BlockList",
    "CachePointBlock",
    "CachePointBody",
    "MessageIn",
    "cache_point_block",
    "is_blank_text",
    "is_cache_point",
]

#: A content block, system block or tool entry as read (``{"text": ...}``, ``{"toolUse": {...}}``,
#: ``{"cachePoint": {...}}``, an Anthropic ``{"type": ...}`` block, ...): a JSON object of unchecked shape.
Block: TypeAlias = Mapping[str, object]
#: A list of blocks as given: ``system``, ``toolConfig.tools`` or a message's ``content`` (entries unchecked).
BlockList: TypeAlias = list[object]
#: A message as read: ``{"role": "user" | "assistant", "content": str | list[block]}``, unchecked.
MessageIn: TypeAlias = Mapping[str, object]


class CachePointBody(TypedDict, total=False):
    """``CachePointBlock``'s fields: ``type`` (always ``"default"``) and an optional ``ttl`` (``"5m"`` / ``"1h"``)."""

    type: Literal["default"]
    ttl: str


class CachePointBlock(TypedDict):
    """A Converse cache point: ``{"cachePoint": {"type": "default"}}``."""

    cachePoint: CachePointBody


def is_blank_text(block: object) -> bool:
    """Whether ``block`` is a text block (``{"text": ...}`` or ``{"type": "text", "text": ...}``) whose text is
    empty or whitespace only: Bedrock refuses such a block ("blank text field"), so no point is placed after it."""
    if type(block) is dict:
        if not isinstance(block.get("text"), str):
            return False
    elif not isinstance(block, Mapping) or not isinstance(block.get("text"), str):
        return False
    return set(block) <= {"text", "type"} and not block["text"].strip()


def cache_point_block(ttl: str | None = None) -> CachePointBlock:
    """A Converse cache point: ``{"cachePoint": {"type": "default"}}`` (+ ``"ttl"`` unless it is the default 5m)."""
    point: CachePointBody = {"type": "default"}
    if ttl and ttl != "5m":
        point["ttl"] = ttl
    return {"cachePoint": point}


def is_cache_point(block: object) -> bool:
    """True for a Converse ``{"cachePoint": {...}}`` block."""
    if type(block) is not dict and not isinstance(block, Mapping):
        return False
    point = block.get("cachePoint")
    return point is not None and (type(point) is dict or isinstance(point, Mapping))

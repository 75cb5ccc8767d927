"""Bedrock Converse content blocks (``ContentBlock``, ``SystemContentBlock``) -> our ``Block``s, by the shared
walk (``promptcache.replay._block_walk``), and the cache points a logged request carried (``CachePoint``).

Shapes follow the Bedrock Runtime API reference: a block is an object with exactly one key, ``text``, ``image``,
``document``, ``video``, ``toolUse``, ``toolResult``, ``reasoningContent``, ``guardContent`` or ``cachePoint``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, TypeAlias, TypedDict

from ._bad_record import BadRecord, _short
from ._block_walk import Dialect, Handler, Unsupported, walk_blocks
from ._jsonpos import JSONPath
from ._messages import _args_text
from ._transcript import Block

__all__ = ["CachePoint"]


class CachePoint(TypedDict):
    """One cache point a logged request carried: in the ``where`` part (``"tools"``, ``"system"``, ``"message"`` or
    ``"reply"``), of message ``index`` (``None`` outside messages), after its first ``after`` blocks (tools for
    ``"tools"``), with the logged ``ttl`` (``"5m"``, ``"1h"``; ``None`` when the log names none)."""

    where: Literal["tools", "system", "message", "reply"]
    index: int | None
    after: int
    ttl: str | None


_Where: TypeAlias = Literal["tools", "system", "message", "reply"]


def _point(where: _Where, index: int | None, after: int, ttl: object) -> CachePoint:
    return {"where": where, "index": index, "after": after, "ttl": ttl if isinstance(ttl, str) else None}


def _only_key(part: object, at: JSONPath) -> tuple[object, object]:
    if not isinstance(part, dict) or len(part) != 1:
        raise BadRecord(at, f"a Converse content block has exactly one key, got {_short(part)}")
    ((kind, body),) = part.items()
    return kind, body


@dataclass(slots=True)
class _Marks:
    """Where the cache points of the content being walked go (the walk's context)."""

    points: list[CachePoint]
    where: _Where
    index: int | None


def _cache_point(body: object, _at: JSONPath, n: int, marks: object) -> None:
    if isinstance(marks, _Marks):
        ttl = body.get("ttl") if isinstance(body, dict) else None
        marks.points.append(_point(marks.where, marks.index, n, ttl))


def _text(body: object, at: JSONPath, _n: int, _ctx: object) -> Block:
    if not isinstance(body, str):
        raise BadRecord((*at, "text"), f"text must be a string, got {_short(body)}")
    return Block("text", body)


def _guard(body: object, _at: JSONPath, _n: int, _ctx: object) -> Block:
    text = body.get("text", {}) if isinstance(body, dict) else {}
    return Block("text", str(text.get("text", "")) if isinstance(text, dict) else str(text))


def _tool_use(body: object, at: JSONPath, _n: int, _ctx: object) -> Block:
    if not isinstance(body, dict):
        raise Unsupported
    name = body.get("name")
    if not isinstance(name, str) or not name:
        raise BadRecord(at, f"toolUse without a name: {_short({'toolUse': body})}")
    args = _args_text(body.get("input", {}), (*at, "toolUse", "input"))
    return Block("tool_use", args, name, str(body.get("toolUseId") or ""))


def _result_part(item: object, at: JSONPath) -> str:
    if isinstance(item, dict) and "text" in item:
        return str(item["text"])
    if isinstance(item, dict) and "json" in item:
        return _args_text(item["json"], (*at, "json"))
    if isinstance(item, dict) and ({"image", "document", "video"} & item.keys()):
        return f"[{next(iter(item))}]"
    raise BadRecord(at, f"unsupported tool result part {_short(item)}")


def _tool_result(body: object, at: JSONPath, _n: int, _ctx: object) -> Block:
    if not isinstance(body, dict):
        raise Unsupported
    content = body.get("content") or []
    if not isinstance(content, list):
        raise BadRecord((*at, "toolResult", "content"), f"toolResult content must be a list, got {_short(content)}")
    parts = [_result_part(item, (*at, "toolResult", "content", j)) for j, item in enumerate(content)]
    return Block(
        "tool_result", "\n".join(parts), id=str(body.get("toolUseId") or ""), is_error=body.get("status") == "error"
    )


def _media(kind: str) -> Handler[object]:
    def media(body: object, _at: JSONPath, _n: int, _ctx: object) -> Block:
        fmt = body.get("format", kind) if isinstance(body, dict) else kind
        return Block("image", f"{kind}/{fmt}")

    return media


def _reasoning(body: object, _at: JSONPath, _n: int, _ctx: object) -> Block:
    if not isinstance(body, dict):
        raise Unsupported
    text = body.get("reasoningText", {})
    return Block("reasoning", str(text.get("text", "")) if isinstance(text, dict) else "")


#: Converse ``ContentBlock``s, each named by its only key; a ``cachePoint`` is recorded in the walk's `_Marks`.
_CONVERSE_BLOCKS: Dialect[object] = Dialect(
    kind_of=_only_key,
    handlers={
        "cachePoint": _cache_point,
        "text": _text,
        "guardContent": _guard,
        "toolUse": _tool_use,
        "toolResult": _tool_result,
        **{kind: _media(kind) for kind in ("image", "document", "video")},
        "reasoningContent": _reasoning,
    },
    plain_text=False,
    not_a_list="content must be a list of blocks",
    unsupported="unsupported Converse content block {}",
)


def _converse_blocks(
    content: object, at: JSONPath, points: list[CachePoint], where: _Where, index: int | None
) -> list[Block]:
    """Blocks of a Converse content list; each ``cachePoint`` is recorded in ``points`` (after the blocks so far)."""
    return walk_blocks(content, at, _CONVERSE_BLOCKS, _Marks(points, where, index))

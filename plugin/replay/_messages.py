"""Normalising one recorded message (OpenAI, Anthropic or LangChain form) into a ``Message``.

Recognised shapes (the format is decided per message, so a file may mix them):

- LangChain ``messages_to_dict``: ``{"type": "human"|"ai"|"system"|"tool"|..., "data": {"content", "tool_calls",
  "tool_call_id", ...}}``.
- OpenAI chat: ``{"role": "system"|"developer"|"user"|"assistant"|"tool"|"function", "content": str | parts | null,
  "tool_calls": [{"id", "function": {"name", "arguments"}}], "tool_call_id"}`` (also the older
  ``"function_call": {"name", "arguments"}``, and ``refusal`` content parts, read as text).
- Anthropic messages: ``{"role": "user"|"assistant", "content": str | [{"type": "text"|"tool_use"|"tool_result"|
  "image"|"thinking"|"redacted_thinking"|"document", ...}]}``.

An assistant message's logged ``usage`` (Anthropic, OpenAI or Converse shape; LangChain ``usage_metadata`` or
``response_metadata.usage``) and ``model`` (``model``, ``response_metadata.model_name``/``model``) are kept.

Anything else raises ``BadRecord`` naming the offending value; the reader adds the file and line.
"""

from __future__ import annotations

import json
from datetime import datetime, timezone
from typing import Any

import orjson

from promptcache._types import JSONMapping

from ._bad_record import BadRecord, _short
from ._block_walk import Dialect, walk_blocks
from ._jsonpos import JSONPath
from ._logged_usage import message_usage
from ._transcript import Block, Message

__all__ = [
    "TYPED_BLOCKS",
    "BadRecord",
    "_short",  # re-exported: the readers' error texts
    "normalise_message",
    "parse_timestamp",
    "is_message_like",
]

_ROLE_MAP = {
    "system": "system",
    "developer": "system",
    "user": "user",
    "human": "user",
    "assistant": "assistant",
    "ai": "assistant",
    "tool": "tool",
    "function": "tool",
    "AIMessageChunk": "assistant",
    "HumanMessageChunk": "user",
    "SystemMessageChunk": "system",
    "ToolMessageChunk": "tool",
}


def _dumps(value: object, where: JSONPath) -> str:
    """Canonical JSON text (sorted keys, compact) of a recorded JSON value, e.g. tool arguments.

    Raises:
        BadRecord: the value is nested deeper than JSON writers accept (orjson stops at 255 levels; the standard
            library's writer, tried next, at Python's recursion limit).
    """
    try:
        return orjson.dumps(value, option=orjson.OPT_SORT_KEYS, default=repr).decode()
    except TypeError:
        pass
    try:
        return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=repr)
    except (RecursionError, TypeError, ValueError):
        raise BadRecord(where, f"{type(value).__name__} value nested too deeply to replay") from None


def _text(value: object, where: JSONPath) -> str:
    """A text field: a string, or ``None`` for no text. Raises ``BadRecord`` for anything else."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    raise BadRecord(where, f"text must be a string, got {_short(value)}")


def _call_id(value: object, where: JSONPath) -> str:
    """A tool-call id: a string or an integer (as text); ``None`` or absent is no id (``""``)."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    raise BadRecord(where, f"tool call id must be a string, got {_short(value)}")


def is_message_like(value: object) -> bool:
    """True for a dict that looks like one message of a supported format (not a conversation container)."""
    return isinstance(value, dict) and ("role" in value or ("type" in value and "data" in value))


def parse_timestamp(value: object, where: JSONPath = ()) -> float | None:
    """Epoch seconds from a number (seconds, or milliseconds when > 1e11) or an ISO-8601 string; ``None`` stays.

    A time written without a zone is UTC (LangSmith, Langfuse and OTLP exports write UTC), never the local time of the
    machine running the replay: the same log gives the same report anywhere.
    """
    if value is None:
        return None
    if isinstance(value, bool):
        raise BadRecord(where, f"timestamp {_short(value)} is not a time")
    if isinstance(value, (int, float)):
        return float(value) / 1000.0 if value > 1e11 else float(value)
    if isinstance(value, str):
        try:
            moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            pass
        else:
            return (moment if moment.tzinfo is not None else moment.replace(tzinfo=timezone.utc)).timestamp()
    raise BadRecord(where, f"timestamp {_short(value)} is neither epoch seconds nor ISO-8601")


def _args_text(args: object, where: JSONPath = ()) -> str:
    if isinstance(args, str):
        text = args
        try:
            args = orjson.loads(text) if text.strip() else {}
        except orjson.JSONDecodeError:
            return text  # recorded verbatim (not JSON, or nested past orjson's 1,024 levels); odd but usable
    return _dumps(args, where)


def _result_text(content: object, where: JSONPath) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for i, part in enumerate(content):
            if isinstance(part, str):
                parts.append(part)
            elif isinstance(part, dict) and part.get("type") == "text":
                parts.append(_text(part.get("text"), (*where, i, "text")))
            elif isinstance(part, dict) and part.get("type") in ("image", "image_url"):
                parts.append("[image]")
            elif isinstance(part, dict) and part.get("type") == "document":  # e.g. a PDF a Read tool returned
                parts.append("[document]")
            elif isinstance(part, dict) and "json" in part:
                parts.append(_args_text(part["json"], (*where, i, "json")))
            else:
                raise BadRecord((*where, i), f"unsupported tool result part {_short(part)}")
        return "\n".join(parts)
    if isinstance(content, dict):
        return _args_text(content, where)
    raise BadRecord(where, f"unsupported tool result content {_short(content)}")


def _typed(part: object, at: JSONPath) -> tuple[object, JSONMapping]:
    if not isinstance(part, dict):
        raise BadRecord(at, f"content block {_short(part)} is not an object")
    return part.get("type"), part


def _text_block(part: JSONMapping, at: JSONPath, _n: int, _ctx: object) -> Block:
    return Block("text", _text(part.get("text"), (*at, "text")))


def _refusal_block(part: JSONMapping, at: JSONPath, _n: int, _ctx: object) -> Block:
    """OpenAI: an assistant's refusal is text the next request carries."""
    return Block("text", _text(part.get("refusal"), (*at, "refusal")))


def _tool_use_block(part: JSONMapping, at: JSONPath, _n: int, _ctx: object) -> Block:
    name = part.get("name")
    if not isinstance(name, str) or not name:
        raise BadRecord(at, f"tool call block without a name: {_short(part)}")
    args = _args_text(part.get("input", part.get("args", {})), (*at, "input"))
    return Block("tool_use", args, name, _call_id(part.get("id"), (*at, "id")))


def _tool_result_block(part: JSONMapping, at: JSONPath, _n: int, _ctx: object) -> Block:
    return Block(
        "tool_result",
        _result_text(part.get("content"), (*at, "content")),
        id=_call_id(part.get("tool_use_id"), (*at, "tool_use_id")),
        is_error=bool(part.get("is_error")),
    )


def _image_block(part: JSONMapping, at: JSONPath, _n: int, _ctx: object) -> Block:
    src = part.get("image_url") or part.get("source") or {}
    desc = src.get("url", src.get("media_type", part.get("type"))) if isinstance(src, dict) else str(src)
    return Block("image", str(desc)[:200])


def _reasoning_block(part: JSONMapping, at: JSONPath, _n: int, _ctx: object) -> Block:
    field = next((k for k in ("thinking", "text", "data") if k in part), "thinking")
    return Block("reasoning", _text(part.get(field), (*at, field)))


#: Content blocks named by their ``type`` (Anthropic Messages, OpenAI Chat Completions parts, LangChain blocks).
TYPED_BLOCKS: Dialect[JSONMapping] = Dialect(
    kind_of=_typed,
    handlers={
        "text": _text_block,
        "refusal": _refusal_block,
        **dict.fromkeys(("tool_use", "tool_call", "server_tool_use"), _tool_use_block),
        "tool_result": _tool_result_block,
        **dict.fromkeys(("image", "image_url", "document", "file"), _image_block),
        **dict.fromkeys(("thinking", "reasoning", "redacted_thinking", "reasoning_content"), _reasoning_block),
    },
    plain_text=True,
    not_a_list="content must be a string or a list of blocks",
    unsupported="unsupported content block type {}",
)


def _content_blocks(content: object, where: JSONPath) -> list[Block]:
    """Blocks from a ``content`` value: a string, ``None``, or a list of parts of any supported format."""
    return walk_blocks(content, where, TYPED_BLOCKS)


def normalise_message(raw: object, where: JSONPath = ()) -> Message:
    """One recorded message as a ``Message``.

    Args:
        raw: the recorded message (see the module docstring for the accepted shapes).
        where: its path in the document, used in errors.

    Raises:
        BadRecord: unknown role/type, a content block of an unknown type, tool calls without a name, bad timestamp.
    """
    if not isinstance(raw, dict):
        raise BadRecord(where, f"a message must be an object, got {_short(raw)}")
    if "data" in raw and "type" in raw and "role" not in raw:  # LangChain messages_to_dict
        data = raw["data"]
        if not isinstance(data, dict):
            raise BadRecord((*where, "data"), f"LangChain message data must be an object, got {_short(data)}")
        role_key, body, body_at = str(raw["type"]), data, (*where, "data")
        if role_key == "chat":
            role_key = str(data.get("role", "user"))
    else:
        if "role" not in raw:
            raise BadRecord(where, f"message without a role: {_short(raw)}")
        role_key, body, body_at = raw["role"], raw, where
    role = _ROLE_MAP.get(role_key) if isinstance(role_key, str) else None
    if role is None:
        raise BadRecord(where, f"unknown message role/type {_short(role_key)}")

    blocks = _content_blocks(body.get("content"), (*body_at, "content"))
    if role == "tool":  # OpenAI / LangChain tool message: its whole content is one tool result
        text = "\n".join(b.text for b in blocks)
        is_error = body.get("status") == "error"
        blocks = [
            Block(
                "tool_result",
                text,
                name=str(body.get("name") or ""),
                id=_call_id(body.get("tool_call_id"), (*body_at, "tool_call_id")),
                is_error=is_error,
            )
        ]
    calls = body.get("tool_calls") or []
    if not isinstance(calls, list):
        raise BadRecord((*body_at, "tool_calls"), f"tool_calls must be a list, got {_short(calls)}")
    legacy = body.get("function_call")  # OpenAI's older single call (its result has role "function", no id)
    if legacy is not None:
        calls = [*calls, {"function": legacy}]
    for i, call in enumerate(calls):
        at = (*body_at, "tool_calls", i)
        if not isinstance(call, dict):
            raise BadRecord(at, f"tool call {_short(call)} is not an object")
        nested = call.get("function")
        fn: dict[str, Any] = nested if isinstance(nested, dict) else call  # OpenAI nests it
        name = fn.get("name")
        if not isinstance(name, str) or not name:
            raise BadRecord(at, f"tool call without a name: {_short(call)}")
        blocks.append(
            Block(
                "tool_use",
                _args_text(fn.get("arguments", fn.get("args", {})), at),
                name,
                _call_id(call.get("id"), (*at, "id")),
            )
        )
    stamp = raw.get("timestamp", raw.get("created_at", body.get("timestamp")))
    message = Message(role, tuple(blocks), parse_timestamp(stamp, (*where, "timestamp")))
    if role == "assistant":  # logged usage and model, when the record keeps them (see ``logged_usage``)
        message.usage = message_usage(body) or message_usage(raw)
        found = body.get("response_metadata")
        meta: dict[str, Any] = found if isinstance(found, dict) else {}
        if message.usage is None and isinstance(meta.get("usage"), dict):
            message.usage = message_usage(meta)
        model = body.get("model") or meta.get("model_name") or meta.get("model")
        message.model = model if isinstance(model, str) and model else None
    return message

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
from datetime import datetime
from typing import Any

import orjson

from promptcache._errors import PromptCacheError

from ._jsonpos import JSONPath
from ._logged_usage import message_usage
from ._transcript import Block, Message

__all__ = ["BadRecord", "normalise_message", "parse_timestamp", "is_message_like"]

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


class BadRecord(PromptCacheError, ValueError):
    """A malformed record: ``where`` is the path (keys/indices) below the record, ``reason`` says what is wrong."""

    def __init__(self, where: JSONPath, reason: str) -> None:
        super().__init__(reason)
        self.where, self.reason = where, reason


def _short(value: object, limit: int = 60) -> str:
    """``value`` as short JSON (strings as ``repr``) for an error message; never raises."""
    if isinstance(value, str):
        text = repr(value)
    else:
        try:
            text = orjson.dumps(value, default=repr).decode()
        except TypeError:  # nested deeper than orjson's 255 levels
            text = f"a {type(value).__name__} nested too deeply to show"
    return text if len(text) <= limit else text[: limit - 3] + "..."


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
    """Epoch seconds from a number (seconds, or milliseconds when > 1e11) or an ISO-8601 string; ``None`` stays."""
    if value is None:
        return None
    if isinstance(value, bool):
        raise BadRecord(where, f"timestamp {_short(value)} is not a time")
    if isinstance(value, (int, float)):
        return float(value) / 1000.0 if value > 1e11 else float(value)
    if isinstance(value, str):
        try:
            return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()
        except ValueError:
            pass
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


def _content_blocks(content: object, where: JSONPath) -> list[Block]:
    """Blocks from a ``content`` value: a string, ``None``, or a list of parts of any supported format."""
    if content is None or content == "":
        return []
    if isinstance(content, str):
        return [Block("text", content)]
    if not isinstance(content, list):
        raise BadRecord(where, f"content must be a string or a list of blocks, got {_short(content)}")
    blocks: list[Block] = []
    for i, part in enumerate(content):
        at = (*where, i)
        if isinstance(part, str):
            blocks.append(Block("text", part))
            continue
        if not isinstance(part, dict):
            raise BadRecord(at, f"content block {_short(part)} is not an object")
        kind = part.get("type")
        if kind == "text":
            blocks.append(Block("text", _text(part.get("text"), (*at, "text"))))
        elif kind == "refusal":  # OpenAI: an assistant's refusal is text the next request carries
            blocks.append(Block("text", _text(part.get("refusal"), (*at, "refusal"))))
        elif kind in ("tool_use", "tool_call", "server_tool_use"):
            name = part.get("name")
            if not isinstance(name, str) or not name:
                raise BadRecord(at, f"tool call block without a name: {_short(part)}")
            blocks.append(
                Block(
                    "tool_use",
                    _args_text(part.get("input", part.get("args", {})), (*at, "input")),
                    name,
                    _call_id(part.get("id"), (*at, "id")),
                )
            )
        elif kind == "tool_result":
            blocks.append(
                Block(
                    "tool_result",
                    _result_text(part.get("content"), (*at, "content")),
                    id=_call_id(part.get("tool_use_id"), (*at, "tool_use_id")),
                    is_error=bool(part.get("is_error")),
                )
            )
        elif kind in ("image", "image_url", "document", "file"):
            src = part.get("image_url") or part.get("source") or {}
            desc = src.get("url", src.get("media_type", kind)) if isinstance(src, dict) else str(src)
            blocks.append(Block("image", str(desc)[:200]))
        elif kind in ("thinking", "reasoning", "redacted_thinking", "reasoning_content"):
            field = next((k for k in ("thinking", "text", "data") if k in part), "thinking")
            blocks.append(Block("reasoning", _text(part.get(field), (*at, field))))
        else:
            raise BadRecord(at, f"unsupported content block type {_short(kind)}")
    return blocks


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

"""One Bedrock model invocation log record -> its prompt, reply, usage and cache points (``ParsedCall``).

Converse shapes follow the Bedrock Runtime API reference (``Message``, ``ContentBlock``: ``text``, ``image``,
``document``, ``video``, ``toolUse``, ``toolResult``, ``reasoningContent``, ``guardContent``, ``cachePoint``;
``SystemContentBlock``; ``ToolConfiguration.tools``; ``TokenUsage`` with ``cacheDetails``; stream events
``contentBlockStart`` / ``contentBlockDelta`` / ``metadata``). Anthropic bodies follow the Anthropic Messages API
(``cache_control`` on content blocks, system blocks and tools; stream events ``message_start`` /
``content_block_start`` / ``content_block_delta`` / ``message_delta``). The reader is ``bedrock_logs``.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import TypeAlias

import orjson

from promptcache._errors import PromptCacheError
from promptcache._types import JSONMapping, JSONObject

from ._converse_blocks import CachePoint, _converse_blocks, _point, _Where
from ._logged_usage import anthropic_usage, converse_usage, count_of
from ._messages import BadRecord, _args_text, _content_blocks, _short, normalise_message, parse_timestamp
from ._transcript import Block, Message, Usage

__all__ = ["CachePoint", "ParsedCall", "UnsupportedBody", "parse_record"]


class UnsupportedBody(PromptCacheError):
    """A record this reader does not replay; ``kind`` groups the warning, ``reason`` says what was skipped."""

    def __init__(self, kind: str, reason: str) -> None:
        super().__init__(reason)
        self.kind, self.reason = kind, reason


@dataclass(slots=True)
class ParsedCall:
    """One logged API call. ``prefix[n]`` is a digest of the system prompt, the tools and the first ``n`` messages
    (content without cache points), for grouping; ``cache_points`` as in the ``bedrock_logs`` docstring."""

    request_id: str
    operation: str
    model: str
    timestamp: float | None
    system: tuple[Block, ...]
    tools: list[JSONObject]
    messages: list[Message]
    prefix: list[bytes]
    reply: Message
    cache_points: list[CachePoint] = field(default_factory=list)
    line: int = 0
    scoped: bool = False  # the log named the call's thread (a ``make_call`` scope): its calls are one thread


#: What a body parser gives: system blocks, tools, messages, cache points, reply blocks and the reply's usage.
_Parsed: TypeAlias = tuple[
    tuple[Block, ...], list[JSONObject], list[Message], list[CachePoint], tuple[Block, ...], Usage | None
]


def _key(role: str, blocks: tuple[Block, ...]) -> bytes:
    return orjson.dumps([role, [[b.kind, b.text, b.name, b.id, b.is_error] for b in blocks]])


def _record_usage(rec: JSONMapping) -> Usage | None:
    """The record's own token counts (``input.inputTokenCount``, ...), when the body has no usage."""
    inp, out = rec.get("input"), rec.get("output")
    if not any(isinstance(o, dict) and k in o for o, k in ((inp, "inputTokenCount"), (out, "outputTokenCount"))):
        return None
    return Usage(
        count_of(inp, "inputTokenCount"),
        count_of(inp, "cacheReadInputTokenCount"),
        count_of(inp, "cacheWriteInputTokenCount"),
        0,
        count_of(out, "outputTokenCount"),
    )


def _converse(body: JSONMapping, out: object) -> _Parsed:
    at = ("input", "inputBodyJson")
    points: list[CachePoint] = []
    tools: list[JSONObject] = []
    config = body.get("toolConfig") or {}
    raw_tools = config.get("tools") or [] if isinstance(config, dict) else []
    if not isinstance(raw_tools, list):
        raise BadRecord(
            (*at, "toolConfig", "tools"), f"toolConfig.tools must be a list of tools, got {_short(raw_tools)}"
        )
    for i, tool in enumerate(raw_tools):
        if isinstance(tool, dict) and "cachePoint" in tool:
            cp = tool["cachePoint"]
            points.append(_point("tools", None, len(tools), cp.get("ttl") if isinstance(cp, dict) else None))
        elif isinstance(tool, dict):
            tools.append(tool)
        else:
            raise BadRecord((*at, "toolConfig", "tools", i), f"a tool must be an object, got {_short(tool)}")
    system = tuple(_converse_blocks(body.get("system") or [], (*at, "system"), points, "system", None))
    raw_messages = body.get("messages")
    if not isinstance(raw_messages, list):
        raise BadRecord((*at, "messages"), f"Converse request without a messages list: {_short(raw_messages)}")
    messages = []
    for i, raw in enumerate(raw_messages):
        if not isinstance(raw, dict) or raw.get("role") not in ("user", "assistant"):
            raise BadRecord((*at, "messages", i), f"a Converse message needs role user or assistant: {_short(raw)}")
        blocks = _converse_blocks(raw.get("content"), (*at, "messages", i, "content"), points, "message", i)
        messages.append(Message(raw["role"], tuple(blocks)))
    reply_blocks, usage = _converse_output(out)
    return system, tools, messages, points, reply_blocks, usage


def _index(value: object) -> int:
    """A stream event's block index: an int, or an int written as a string; anything else (absent, ``null``, not a
    number) is block 0, as an event without an index means."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().isdigit():
        return int(value)
    return 0


def _obj(value: object) -> JSONMapping:
    """``value`` when it is a JSON object, else ``{}`` (a stream event field of the wrong shape carries nothing)."""
    return value if isinstance(value, dict) else {}


def _converse_output(out: object) -> tuple[tuple[Block, ...], Usage | None]:
    at = ("output", "outputBodyJson")
    if isinstance(out, list):  # ConverseStream: the stream events
        texts: dict[int, list[str]] = {}
        starts: dict[int, JSONMapping] = {}
        usage = None
        for event in out:
            if not isinstance(event, dict):
                continue
            if isinstance(event.get("contentBlockStart"), dict):
                e = event["contentBlockStart"]
                starts[_index(e.get("contentBlockIndex"))] = _obj(_obj(e.get("start")).get("toolUse"))
            elif isinstance(event.get("contentBlockDelta"), dict):
                e = event["contentBlockDelta"]
                delta = _obj(e.get("delta"))
                piece = delta.get("text") or _obj(delta.get("toolUse")).get("input") or ""
                texts.setdefault(_index(e.get("contentBlockIndex")), []).append(str(piece))
            elif isinstance(event.get("metadata"), dict):
                usage = converse_usage(event["metadata"].get("usage"))
        blocks = []
        for index in sorted(set(texts) | set(starts)):
            text = "".join(texts.get(index, []))
            start = starts.get(index)
            if start and start.get("name"):
                blocks.append(Block("tool_use", _args_text(text), str(start["name"]), str(start.get("toolUseId", ""))))
            else:
                blocks.append(Block("text", text))
        return tuple(blocks), usage
    if not isinstance(out, dict):
        raise BadRecord(at, f"Converse output body must be an object, got {_short(out)}")
    message = (out.get("output") or {}).get("message") if isinstance(out.get("output"), dict) else None
    if not isinstance(message, dict):
        raise BadRecord((*at, "output"), f"Converse output without output.message: {_short(out)}")
    blocks = _converse_blocks(message.get("content") or [], (*at, "output", "message", "content"), [], "reply", None)
    return tuple(blocks), converse_usage(out.get("usage"))


def _anthropic_marks(parts: object, points: list[CachePoint], where: _Where, index: int | None) -> None:
    if isinstance(parts, list):
        for k, part in enumerate(parts):
            if isinstance(part, dict) and isinstance(part.get("cache_control"), dict):
                points.append(_point(where, index, k + 1, part["cache_control"].get("ttl")))


def _anthropic(body: JSONMapping, out: object) -> _Parsed:
    at = ("input", "inputBodyJson")
    points: list[CachePoint] = []
    raw_tools = body.get("tools") or []
    if not isinstance(raw_tools, list) or not all(isinstance(t, dict) for t in raw_tools):
        raise BadRecord((*at, "tools"), f"tools must be a list of tool schemas, got {_short(raw_tools)}")
    _anthropic_marks(raw_tools, points, "tools", None)
    tools: list[JSONObject] = [{k: v for k, v in t.items() if k != "cache_control"} for t in raw_tools]
    raw_system = body.get("system")
    system: tuple[Block, ...] = ()
    if isinstance(raw_system, str):
        system = (Block("text", raw_system),) if raw_system else ()
    elif raw_system is not None:
        system = tuple(_content_blocks(raw_system, (*at, "system")))
        _anthropic_marks(raw_system, points, "system", None)
    raw_messages = body["messages"]
    messages = []
    for i, raw in enumerate(raw_messages if isinstance(raw_messages, list) else []):
        messages.append(normalise_message(raw, (*at, "messages", i)))
        _anthropic_marks(raw.get("content") if isinstance(raw, dict) else None, points, "message", i)
    if isinstance(out, list):  # a streamed reply: Anthropic stream events
        usage_raw: dict[str, object] = {}
        texts: dict[int, list[str]] = {}
        starts: dict[int, JSONMapping] = {}
        for event in out:
            if not isinstance(event, dict):
                continue
            kind = event.get("type")
            if kind == "message_start" and isinstance(event.get("message"), dict):
                usage_raw.update(_obj(event["message"].get("usage")))
            elif kind == "message_delta" and isinstance(event.get("usage"), dict):
                usage_raw.update(event["usage"])
            elif kind == "content_block_start" and isinstance(event.get("content_block"), dict):
                starts[_index(event.get("index"))] = event["content_block"]
            elif kind == "content_block_delta" and isinstance(event.get("delta"), dict):
                d = event["delta"]
                piece = d.get("text") or d.get("partial_json") or d.get("thinking") or ""
                texts.setdefault(_index(event.get("index")), []).append(str(piece))
        blocks = []
        for index in sorted(starts):
            start, text = starts[index], "".join(texts.get(index, []))
            if start.get("type") == "tool_use":
                blocks.append(Block("tool_use", _args_text(text), str(start.get("name", "")), str(start.get("id", ""))))
            elif start.get("type") == "thinking":
                blocks.append(Block("reasoning", text))
            else:
                blocks.append(Block("text", str(start.get("text") or "") + text))
        return system, tools, messages, points, tuple(blocks), anthropic_usage(usage_raw or None)
    if not isinstance(out, dict):
        raise BadRecord(("output", "outputBodyJson"), f"output body must be an object, got {_short(out)}")
    reply = _content_blocks(out.get("content") or [], ("output", "outputBodyJson", "content"))
    return system, tools, messages, points, tuple(reply), anthropic_usage(out.get("usage"))


def _is_anthropic(body: JSONMapping) -> bool:
    """An Anthropic Messages body: ``anthropic_version``, or content blocks typed by a ``type`` key (Converse and
    Amazon Nova's InvokeModel body name a block by its only key: ``{"text": ...}``)."""
    if "anthropic_version" in body:
        return True
    messages = body["messages"]
    for message in messages if isinstance(messages, list) else []:
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, str):
            return True
        if isinstance(content, list) and content and isinstance(content[0], dict):
            return "type" in content[0]
    return False


def _json_body(value: object, part: str, key: str) -> object:
    """A logged body: JSON as logged, or a body logged as a JSON string (some log shippers re-encode it) parsed.

    Raises:
        BadRecord: a string body that is not JSON (names ``part.key``).
    """
    if not isinstance(value, str):
        return value
    try:
        return orjson.loads(value)
    except orjson.JSONDecodeError as exc:
        raise BadRecord(
            (part, key), f"{part}.{key} is a string that is not JSON ({exc.msg}): {_short(value)}"
        ) from None


def parse_record(rec: JSONMapping) -> ParsedCall:
    """Parse one ``ModelInvocationLog`` record.

    Raises:
        UnsupportedBody: a body format this reader does not replay, or no output (a failed call).
        BadRecord: a Converse or Anthropic body that is malformed (names the path below the record).
    """
    operation = str(rec.get("operation") or "")
    model = rec.get("modelId")
    if not isinstance(model, str) or not model:
        raise BadRecord(("modelId",), f"record without a modelId: {_short(rec)}")
    inp, out = rec.get("input"), rec.get("output")
    body = _json_body(inp.get("inputBodyJson") if isinstance(inp, dict) else None, "input", "inputBodyJson")
    out_body = _json_body(out.get("outputBodyJson") if isinstance(out, dict) else None, "output", "outputBodyJson")
    if not isinstance(body, dict):
        raise UnsupportedBody("no-input", "records without an inline input.inputBodyJson (large bodies go to S3)")
    if out_body is None:
        raise UnsupportedBody("no-output", "records without an output body (failed or unfinished calls)")
    if isinstance(body.get("messages"), list) and _is_anthropic(body):
        parsed = _anthropic(body, out_body)
    elif isinstance(body.get("messages"), list):
        parsed = _converse(body, out_body)
    else:
        raise UnsupportedBody(
            f"body:{operation}",
            f"{operation or 'InvokeModel'} records whose body is neither a "
            "Converse request nor an Anthropic Messages request",
        )
    system, tools, messages, points, reply_blocks, usage = parsed
    if not messages:
        raise BadRecord(("input", "inputBodyJson", "messages"), "request without messages")
    stamp = parse_timestamp(rec.get("timestamp"), ("timestamp",))
    usage = usage or _record_usage(rec)
    digest = hashlib.blake2b(
        orjson.dumps([[b.kind, b.text] for b in system], default=repr)
        + orjson.dumps(tools, option=orjson.OPT_SORT_KEYS, default=repr),
        digest_size=16,
    ).digest()
    prefix = [digest]
    for m in messages:
        digest = hashlib.blake2b(digest + _key(m.role, m.blocks), digest_size=16).digest()
        prefix.append(digest)
    for m in messages:
        m.timestamp = stamp
    return ParsedCall(
        request_id=str(rec.get("requestId") or ""),
        operation=operation,
        model=model,
        timestamp=stamp,
        system=system,
        tools=tools,
        messages=messages,
        prefix=prefix,
        reply=Message("assistant", reply_blocks, stamp, usage, model),
        cache_points=points,
    )

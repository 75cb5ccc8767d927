"""Reading ``TrafficRecorder`` recordings (layout: ``promptcache._recording``): one line per model call.

Each line becomes one call (``promptcache.replay._calls``) with its recorded usage (``usage_metadata``, whose
``input_tokens`` include ``input_token_details.cache_read`` / ``cache_creation``) and model:

- a line with ``sent`` (a Bedrock Converse model) replays the body boto3 sent: its system blocks, messages and
  ``toolConfig.tools``, and the ``cachePoint`` blocks in them as the call's cache points, so the ``as-logged``
  strategy replays the layout the plugins placed;
- any other line replays ``request.messages`` (LangChain ``messages_to_dict`` form; leading system messages are the
  system prompt) and ``request.tools``; a content block with ``cache_control`` is a cache point after it.

Calls are grouped per ``thread_id``. A recording made with ``drop_text=True`` is replayed with stand-in texts of the
recorded sizes and digests (``promptcache._recording.restore``); the logged usage sets the real sizes. The
intention-cache family of a conversation is the recorded ``user``.
"""

from __future__ import annotations

from promptcache._recording import VERSION, RedactedTooLong, is_recording, restore
from promptcache._types import JSONMapping, JSONObject

from . import _input_guard
from ._bedrock_bodies import ParsedCall, _converse
from ._calls import make_call
from ._converse_blocks import CachePoint, _Where
from ._format import Format
from ._logged_usage import langchain_usage
from ._messages import BadRecord, _short, normalise_message, parse_timestamp
from ._transcript import Block, Message

__all__ = ["FORMAT_SPEC", "parse"]

_EMPTY_OUTPUT = {"output": {"message": {"role": "assistant", "content": []}}}


def parse(rec: JSONMapping, lineno: int) -> list[tuple[ParsedCall, str | None]]:
    """The call of one recorded line, with its family (``user:<user>`` when a user was recorded)."""
    call, user = _call(rec, lineno)
    return [(call, f"user:{user}" if user else None)]


def _call(record: JSONMapping, lineno: int) -> tuple[ParsedCall, str | None]:
    if not is_recording(record):
        raise BadRecord((), f'expected a recorded call ("promptcache": "call"), got {_short(record)}')
    if record.get("version") != VERSION:
        raise BadRecord(("version",), f"recording version {_short(record.get('version'))} is not {VERSION}")
    limit = _input_guard.LIMITS.max_line_bytes  # with its texts kept, the call was a line of at least as many bytes
    try:
        rec: JSONMapping = restore(record, max_chars=limit)
    except RedactedTooLong as long:
        raise BadRecord(
            (), f"redacted texts of {long.chars:,} characters, over the line limit ({limit:,}); not a call"
        ) from None
    response = rec.get("response")
    if not isinstance(response, dict) or not isinstance(response.get("message"), dict):
        raise BadRecord(("response",), f"recorded call without a response message: {_short(response)}")
    model = str(rec.get("model") or "")
    stamp = parse_timestamp(rec.get("started"), ("started",))
    reply = normalise_message(response["message"], ("response", "message"))
    reply = Message("assistant", reply.blocks, stamp, langchain_usage(response.get("usage_metadata")), model or None)
    sent = rec.get("sent")
    if isinstance(sent, dict) and isinstance(sent.get("body"), dict):
        system, tools, messages, points, _, _ = _converse(_checked_body(sent["body"]), _EMPTY_OUTPUT)
    else:
        system, tools, messages, points = _langchain_request(rec.get("request"))
    if not messages:
        raise BadRecord(("request", "messages"), "recorded request without messages")
    user = rec.get("user")
    call = make_call(
        request_id=str(rec.get("id") or f"line{lineno}"),
        model=model,
        timestamp=stamp,
        system=system,
        tools=tools,
        messages=messages,
        reply=reply,
        cache_points=points,
        scope=str(rec.get("thread_id") or ""),
        line=lineno,
        operation=str(sent.get("operation") or "") if isinstance(sent, dict) else "",
    )
    return call, str(user) if user is not None else None


def _checked_body(body: JSONMapping) -> JSONMapping:
    if not isinstance(body.get("messages"), list):
        raise BadRecord(("sent", "body", "messages"), f"sent body without a messages list: {_short(body)}")
    return body


def _langchain_request(
    request: object,
) -> tuple[tuple[Block, ...], list[JSONObject], list[Message], list[CachePoint]]:
    if not isinstance(request, dict) or not isinstance(request.get("messages"), list):
        raise BadRecord(("request",), f"recorded call without request.messages: {_short(request)}")
    tools = request.get("tools") or []
    if not isinstance(tools, list) or not all(isinstance(t, dict) for t in tools):
        raise BadRecord(("request", "tools"), f"tools must be a list of tool schemas, got {_short(tools)}")
    system: list[Block] = []
    messages: list[Message] = []
    points: list[CachePoint] = []
    for i, raw in enumerate(request["messages"]):
        message = normalise_message(raw, ("request", "messages", i))
        if message.role == "system" and not messages:
            points.extend(_marks(raw, "system", None, len(system)))
            system.extend(message.blocks)
            continue
        points.extend(_marks(raw, "message", len(messages), 0))
        messages.append(message)
    return tuple(system), list(tools), messages, points


def _marks(raw: object, where: _Where, index: int | None, offset: int) -> list[CachePoint]:
    """Cache points of one recorded message: after each content block carrying ``cache_control``."""
    data = raw.get("data", raw) if isinstance(raw, dict) else {}
    content = data.get("content") if isinstance(data, dict) else None
    if not isinstance(content, list):
        return []
    out: list[CachePoint] = []
    for k, part in enumerate(content):
        if isinstance(part, dict) and isinstance(part.get("cache_control"), dict):
            ttl = part["cache_control"].get("ttl")
            out.append({"where": where, "index": index, "after": offset + k + 1, "ttl": str(ttl) if ttl else None})
    return out


FORMAT_SPEC = Format(
    name="promptcache TrafficRecorder recording",
    key="promptcache-recording",
    signature=("promptcache", "version", "request", "response"),
    matches=is_recording,
    parse=parse,
)

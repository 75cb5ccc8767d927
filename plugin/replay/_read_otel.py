"""Reading OpenTelemetry GenAI spans in OTLP JSON: one model call per inference span.

Layout (OTLP/JSON ``ExportTraceServiceRequest``, as the Collector's file exporter writes it, one per line or one
document): ``resourceSpans[].scopeSpans[].spans[]`` with ``traceId``, ``spanId``, ``parentSpanId``, ``name``,
``startTimeUnixNano``, ``attributes`` (``[{"key", "value": {"stringValue" | "intValue" | "doubleValue" |
"boolValue" | "arrayValue"}}]``) and ``events``.

Attributes read (OpenTelemetry semantic conventions for generative AI):

- a span is a model call when it carries ``gen_ai.request.model`` or a ``gen_ai.usage.*`` count and its
  ``gen_ai.operation.name`` (when set) is ``chat``, ``text_completion`` or ``generate_content``;
  ``gen_ai.provider.name`` (older: ``gen_ai.system``) and ``gen_ai.request.model`` /
  ``gen_ai.response.model`` name the provider and model;
- usage: ``gen_ai.usage.input_tokens`` (which, by the conventions, includes cached tokens),
  ``gen_ai.usage.cache_read.input_tokens``, ``gen_ai.usage.cache_creation.input_tokens``,
  ``gen_ai.usage.output_tokens`` (earlier versions of the conventions named the two ``gen_ai.usage.prompt_tokens`` and
  ``gen_ai.usage.completion_tokens``: read too);
- content, where the instrumentation captured it: ``gen_ai.system_instructions``, ``gen_ai.input.messages``,
  ``gen_ai.output.messages`` (JSON with ``role`` and ``parts`` of type ``text``, ``tool_call``,
  ``tool_call_response``), ``gen_ai.tool.definitions``; or the older span events ``gen_ai.system.message``,
  ``gen_ai.user.message``, ``gen_ai.assistant.message``, ``gen_ai.tool.message`` and ``gen_ai.choice`` with a
  ``content`` (or ``message``) attribute.

A span without captured content replays from its sizes alone (``promptcache.replay._calls.sized_call``).
Conversations are rebuilt per ``gen_ai.conversation.id`` when set, else per ``traceId``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

import orjson

from promptcache._types import JSONMapping

from ._bedrock_bodies import ParsedCall
from ._calls import make_call, prompt_of, sized_call
from ._format import Format
from ._message_shapes import ChatMessage, ContentBlock
from ._messages import BadRecord, _short, normalise_message
from ._transcript import Message, Usage
from ._usage_checks import read_count

__all__ = ["FORMAT_SPEC", "parse"]

_ROLE_EVENTS = {
    "gen_ai.system.message": "system",
    "gen_ai.user.message": "user",
    "gen_ai.assistant.message": "assistant",
    "gen_ai.tool.message": "tool",
}


#: ``gen_ai.operation.name`` values of model inference spans (``invoke_agent``, ``execute_tool``, ``embeddings``...
#: are not calls of a chat model).
_INFERENCE = frozenset({"chat", "text_completion", "generate_content"})


def _is_otlp(rec: object) -> bool:
    return isinstance(rec, dict) and isinstance(rec.get("resourceSpans"), list)


#: OTLP ``AnyValue`` fields (opentelemetry-proto ``common/v1/common.proto``) -> the Python types their JSON
#: encoding holds (``intValue``: a decimal string or a number, read by `_int`).
_SCALARS: dict[str, tuple[type, ...]] = {
    "stringValue": (str,),
    "boolValue": (bool,),
    "doubleValue": (int, float),
    "bytesValue": (str,),
}


class _Odd:
    """An ``AnyValue`` whose JSON is not of its field's type (``{"stringValue": {...}}``): kept to be named."""

    __slots__ = ("raw",)

    def __init__(self, raw: object) -> None:
        self.raw = raw


#: An ``intValue`` string as the protobuf JSON mapping writes a 64-bit integer: ASCII decimal digits with an
#: optional sign, nothing around them (``" 12 "`` or full-width ``"１２"`` are not it, though ``int()`` reads both).
_DECIMAL = re.compile(r"[+-]?[0-9]+")
#: Digits read as a number (more than a 64-bit integer has, so a count past any limit is still shown as a number).
_MOST_DIGITS = 40


def _int(raw: object) -> object:
    if isinstance(raw, str) and len(raw) <= _MOST_DIGITS and _DECIMAL.fullmatch(raw):
        return int(raw)
    return raw if isinstance(raw, int) and not isinstance(raw, bool) else _Odd(raw)


def _value(v: object) -> object:
    """One OTLP ``AnyValue`` as Python: a scalar, a list (``arrayValue``), a dict (``kvlistValue``), ``None``
    (empty or unknown), or `_Odd` for a field holding JSON of another type."""
    if not isinstance(v, dict):
        return None
    for key, types in _SCALARS.items():
        if key in v:
            raw = v[key]
            return raw if isinstance(raw, types) and (key == "boolValue" or not isinstance(raw, bool)) else _Odd(raw)
    if "intValue" in v:  # OTLP/JSON writes 64-bit integers as strings
        return _int(v["intValue"])
    if "arrayValue" in v:
        array = v["arrayValue"]
        values = array.get("values") if isinstance(array, dict) else None
        return [_value(x) for x in values] if isinstance(values, list) else _Odd(array)
    if "kvlistValue" in v:
        kvlist = v["kvlistValue"]
        values = kvlist.get("values") if isinstance(kvlist, dict) else None
        return _attributes(values) if isinstance(values, list) else _Odd(kvlist)
    return None


def _attributes(raw: object) -> dict[str, object]:
    items = raw if isinstance(raw, list) else []
    return {str(a.get("key")): _value(a.get("value")) for a in items if isinstance(a, dict)}


def _shown(value: object) -> str:
    return _short(value.raw if isinstance(value, _Odd) else value)


def _text(attrs: Mapping[str, object], key: str) -> str | None:
    """The string attribute ``key`` (``None``: absent). Raises ``BadRecord`` naming it when it is not a string."""
    value = attrs.get(key)
    if value is None or isinstance(value, str):
        return value
    raise BadRecord(("attributes",), f"attribute {key} must be a string (stringValue), got {_shown(value)}")


def _count(attrs: Mapping[str, object], key: str) -> int:
    value = attrs.get(key)
    return read_count({key: value.raw if isinstance(value, _Odd) else value}, key)


def _list_at(parent: object, key: str) -> list[object]:
    """``parent[key]`` when the parent is an object and the value a list; anything else holds no spans."""
    value = parent.get(key) if isinstance(parent, dict) else None
    return value if isinstance(value, list) else []


def parse(rec: JSONMapping, line: int) -> list[tuple[ParsedCall, str | None]]:
    """The model calls of one OTLP/JSON traces document. Raises ``BadRecord`` naming the span."""
    out: list[tuple[ParsedCall, str | None]] = []
    resources = rec["resourceSpans"]  # a list: ``_is_otlp`` checked it
    for i, resource in enumerate(resources if isinstance(resources, list) else []):
        for j, scope in enumerate(_list_at(resource, "scopeSpans")):
            for k, span in enumerate(_list_at(scope, "spans")):
                where = ("resourceSpans", i, "scopeSpans", j, "spans", k)
                try:
                    call = _span(span, line)
                except BadRecord as bad:
                    raise BadRecord((*where, *bad.where), bad.reason) from None
                if call is not None:
                    out.append((call, None))
    return out


def _span(span: object, line: int) -> ParsedCall | None:
    if not isinstance(span, dict):
        raise BadRecord((), f"a span must be an object, got {_short(span)}")
    attrs = _attributes(span.get("attributes"))
    if "gen_ai.request.model" not in attrs and not any(k.startswith("gen_ai.usage.") for k in attrs):
        return None
    if (_text(attrs, "gen_ai.operation.name") or "chat") not in _INFERENCE:  # agent, tool and embedding spans
        return None
    model = _text(attrs, "gen_ai.response.model") or _text(attrs, "gen_ai.request.model") or ""
    read = _count(attrs, "gen_ai.usage.cache_read.input_tokens")
    write = _count(attrs, "gen_ai.usage.cache_creation.input_tokens")
    total = _count(attrs, "gen_ai.usage.input_tokens") or _count(attrs, "gen_ai.usage.prompt_tokens")
    output = _count(attrs, "gen_ai.usage.output_tokens") or _count(attrs, "gen_ai.usage.completion_tokens")
    usage = Usage(max(total - read - write, 0), read, write, 0, output)
    start = span.get("startTimeUnixNano")
    stamp = int(start) / 1e9 if isinstance(start, (int, str)) and str(start).isdigit() else None
    span_id = str(span.get("spanId") or f"line{line}")
    scope = str(_text(attrs, "gen_ai.conversation.id") or span.get("traceId") or "")
    raw_messages, reply_raw = _content(attrs, span.get("events"))
    if not raw_messages:
        return sized_call(request_id=span_id, model=model, timestamp=stamp, usage=usage, line=line, scope=scope)
    system, messages, _ = prompt_of(raw_messages, ("attributes",))
    if not messages:
        raise BadRecord(("attributes",), "span whose captured prompt has no messages besides the system prompt")
    reply = normalise_message({"role": "assistant", "content": reply_raw}, ("attributes",))
    tools = attrs.get("gen_ai.tool.definitions")
    tool_list = _json(tools) if isinstance(tools, str) else tools
    return make_call(
        request_id=span_id,
        model=model,
        timestamp=stamp,
        system=system,
        tools=tool_list if isinstance(tool_list, list) and all(isinstance(t, dict) for t in tool_list) else [],
        messages=messages,
        reply=Message("assistant", reply.blocks, stamp, usage, model or None),
        scope=scope,
        line=line,
    )


def _json(text: str) -> object:
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        return text


def _parts(parts: object) -> list[ContentBlock]:
    """GenAI message ``parts`` as Anthropic-style content blocks."""
    blocks: list[ContentBlock] = []
    for part in parts if isinstance(parts, list) else [parts]:
        if isinstance(part, str):
            blocks.append({"type": "text", "text": part})
        elif not isinstance(part, dict):
            continue
        elif part.get("type") == "tool_call":
            blocks.append({"type": "tool_use", "id": part.get("id"), "name": part.get("name") or "tool",
                           "input": part.get("arguments") or {}})  # fmt: skip
        elif part.get("type") == "tool_call_response":
            response = part.get("response")
            text = response if isinstance(response, str) else orjson.dumps(response, default=repr).decode()
            blocks.append({"type": "tool_result", "tool_use_id": part.get("id"), "content": text})
        elif isinstance(part.get("content"), str):
            blocks.append({"type": "text", "text": part["content"]})
    return blocks


def _content(attrs: Mapping[str, object], events: object) -> tuple[list[ChatMessage], list[ContentBlock]]:
    """(prompt messages, reply blocks) from the span's attributes or its events; ``([], [])`` when not captured."""
    messages: list[ChatMessage] = []
    reply: list[ContentBlock] = []
    system = attrs.get("gen_ai.system_instructions")
    if isinstance(system, str):
        messages.append({"role": "system", "content": _parts(_json(system))})
    raw_input = attrs.get("gen_ai.input.messages")
    inputs = _json(raw_input) if isinstance(raw_input, str) else None
    if isinstance(inputs, list):
        for m in inputs:
            if isinstance(m, dict):
                role = "user" if m.get("role") == "tool" else str(m.get("role") or "user")
                messages.append({"role": role, "content": _parts(m.get("parts", m.get("content")))})
        raw_output = _json(_text(attrs, "gen_ai.output.messages") or "[]")
        for m in raw_output if isinstance(raw_output, list) else []:
            if isinstance(m, dict):
                reply.extend(_parts(m.get("parts", m.get("content"))))
        return messages, reply
    for event in events if isinstance(events, list) else []:
        if not isinstance(event, dict):
            continue
        raw_name, e_attrs = event.get("name"), _attributes(event.get("attributes"))
        name = raw_name if isinstance(raw_name, str) else None  # (a list or object name: no known event)
        body = e_attrs.get("content", e_attrs.get("message"))
        if isinstance(body, _Odd):
            raise BadRecord(
                ("events",), f"event {_short(raw_name)} content is not of its AnyValue type: {_shown(body)}"
            )
        parsed = _json(body) if isinstance(body, str) else body
        if name in _ROLE_EVENTS and body is not None:
            role = "user" if _ROLE_EVENTS[str(name)] == "tool" else _ROLE_EVENTS[str(name)]
            messages.append({"role": role, "content": _parts(parsed if isinstance(parsed, list) else body)})
        elif name == "gen_ai.choice" and body is not None:
            content = parsed.get("content") if isinstance(parsed, dict) else parsed
            reply.extend(_parts(content if isinstance(content, list) else str(content)))
    return (messages, reply) if any(m["role"] != "system" for m in messages) else ([], [])


FORMAT_SPEC = Format(
    name="OpenTelemetry GenAI spans (OTLP JSON)",
    key="otel-genai",
    signature=("resourceSpans",),
    matches=_is_otlp,
    parse=parse,
)

"""Reading OpenAI request/response pairs as proxies log them (LiteLLM, Helicone, or any logger of both bodies).

Records: ``{"request": <body>, "response": <body>}`` (each may be wrapped as ``{"body": ...}``, as Helicone logs
them), or LiteLLM's ``StandardLoggingPayload`` (``messages``, ``response``, ``model``, ``startTime``,
``model_parameters``), one per line or as a JSON array.

- **Chat Completions** request: ``model``, ``messages`` (``system`` / ``developer`` first: the system prompt),
  ``tools``, ``user``; response ``choices[0].message`` and ``usage``: ``prompt_tokens`` (the whole prompt, cached
  part included), ``prompt_tokens_details.cached_tokens``, ``completion_tokens``.
- **Responses** request: ``model``, ``instructions`` (system prompt), ``input`` (a string, or items: messages with
  ``input_text`` / ``output_text`` parts, ``function_call``, ``function_call_output``), ``tools``; response
  ``output`` items and ``usage``: ``input_tokens`` (cached part included), ``input_tokens_details.cached_tokens``,
  ``output_tokens``.

OpenAI caches prompt prefixes by itself and logs no cache writes; the logged requests carry no cache points, so
``as-logged`` replays them without any. The family is the request's ``user`` when set.
"""

from __future__ import annotations

from promptcache._types import JSONMapping

from ._bedrock_bodies import ParsedCall
from ._calls import make_call, prompt_of, usage_of
from ._format import Format
from ._jsonpos import JSONPath
from ._message_shapes import ChatMessage, ToolCall
from ._messages import BadRecord, _short, normalise_message, parse_timestamp
from ._transcript import Message
from ._usage_checks import openai_usage_problem

__all__ = ["FORMAT_SPEC", "parse", "responses_input"]


def _body(value: object) -> object:
    return value["body"] if isinstance(value, dict) and isinstance(value.get("body"), dict) else value


def _is_pair(rec: object) -> bool:
    if not isinstance(rec, dict) or "response" not in rec:
        return False
    if "request" in rec:
        body = _body(rec["request"])
        return isinstance(body, dict) and ("messages" in body or "input" in body)
    return isinstance(rec.get("messages"), list) and ("call_type" in rec or "model_parameters" in rec)


def responses_input(body: JSONMapping) -> list[ChatMessage]:
    """A Responses request's ``instructions`` and ``input`` as Chat Completions messages."""
    out: list[ChatMessage] = []
    instructions = body.get("instructions")
    if isinstance(instructions, str) and instructions:
        out.append({"role": "system", "content": instructions})
    items = body.get("input")
    if isinstance(items, str):
        return [*out, {"role": "user", "content": items}]
    for item in items if isinstance(items, list) else []:
        if not isinstance(item, dict):
            continue
        kind = item.get("type")
        if kind == "function_call":
            call: ToolCall = {"id": item.get("call_id"), "type": "function",
                    "function": {"name": item.get("name"), "arguments": item.get("arguments") or "{}"}}  # fmt: skip
            if out and out[-1].get("role") == "assistant":
                out[-1].setdefault("tool_calls", []).append(call)
            else:
                out.append({"role": "assistant", "content": None, "tool_calls": [call]})
        elif kind == "function_call_output":
            output = item.get("output")
            out.append({"role": "tool", "tool_call_id": item.get("call_id"), "content": str(output or "")})
        elif "role" in item:
            out.append({"role": item["role"], "content": _text_parts(item.get("content"))})
    return out


def _text_parts(content: object) -> object:
    if not isinstance(content, list):
        return content
    return [
        {"type": "text", "text": str(p.get("text", ""))}
        if isinstance(p, dict) and p.get("type") in ("input_text", "output_text", "text")
        else p
        for p in content
    ]


def _responses_reply(output: list[object]) -> ChatMessage:
    messages = responses_input({"input": [o for o in output if isinstance(o, dict) and o.get("type") != "reasoning"]})
    content: list[object] = []
    calls: list[ToolCall] = []
    for m in messages:
        if m.get("role") == "assistant":
            body = m.get("content")
            content.extend(body if isinstance(body, list) else ([{"type": "text", "text": body}] if body else []))
            calls.extend(m.get("tool_calls") or [])
    return {"role": "assistant", "content": content, "tool_calls": calls}


def _request(rec: JSONMapping) -> tuple[JSONMapping, JSONPath]:
    """The logged request body and its path in the record (a LiteLLM payload: its parameters, model and messages)."""
    if "request" in rec:
        request = _body(rec["request"])
        return (request if isinstance(request, dict) else {}), ("request",)  # a dict: ``_is_pair`` checked it
    params = rec.get("model_parameters")  # LiteLLM StandardLoggingPayload
    return {**(params if isinstance(params, dict) else {}), "model": rec.get("model"), "messages": rec["messages"]}, ()


def parse(rec: JSONMapping, line: int) -> list[tuple[ParsedCall, str | None]]:
    """The call of one logged request/response pair. Raises ``BadRecord``."""
    where: JSONPath
    reply_at: JSONPath
    request, req_at = _request(rec)
    response = _body(rec.get("response"))
    if not isinstance(response, dict):
        raise BadRecord(("response",), f"the logged response must be an object, got {_short(response)}")
    raw_messages: object = request.get("messages")
    if isinstance(raw_messages, list):
        where = (*req_at, "messages")
    else:
        raw_messages, where = responses_input(request), (*req_at, "input")
    system, messages, points = prompt_of(raw_messages, where)
    if not messages:
        raise BadRecord(where, "request without messages besides the system prompt")
    tools = request.get("tools") or []
    if not isinstance(tools, list) or not all(isinstance(t, dict) for t in tools):
        raise BadRecord((*req_at, "tools"), f"tools must be a list of tool schemas, got {_short(tools)}")
    choices, output = response.get("choices"), response.get("output")
    reply_raw: JSONMapping
    if isinstance(choices, list) and choices and isinstance(choices[0], dict):
        message, reply_at = choices[0].get("message") or {}, ("response", "choices", 0, "message")
        if not isinstance(message, dict):
            raise BadRecord(reply_at, f"the reply message must be an object, got {_short(message)}")
        reply_raw = message
    elif isinstance(output, list):
        reply_raw, reply_at = _responses_reply(output), ("response", "output")
    else:
        raise BadRecord(("response",), f"response without choices or output: {_short(response)}")
    reply = normalise_message({**reply_raw, "role": "assistant"}, reply_at)
    model = str(response.get("model") or request.get("model") or "")
    stamp = parse_timestamp(rec.get("startTime", rec.get("created_at", response.get("created"))), ("startTime",))
    usage = usage_of(response.get("usage"))
    call = make_call(
        request_id=str(response.get("id") or rec.get("id") or f"line{line}"),
        model=model,
        timestamp=stamp,
        system=system,
        tools=tools,
        messages=messages,
        reply=Message("assistant", reply.blocks, stamp, usage, model or None),
        cache_points=points,
        line=line,
    )
    user = request.get("user")
    return [(call, f"user:{user}" if user else None)]


def _usage_problem(rec: JSONMapping) -> str | None:
    response = rec.get("response")
    where = "response.body" if _body(response) is not response else "response"
    body = _body(response)
    return openai_usage_problem(body.get("usage"), f"{where}.usage") if isinstance(body, dict) else None


FORMAT_SPEC = Format(
    name="OpenAI request/response logs",
    key="openai-log",
    signature=("request", "response", "request.model", "response.usage"),
    matches=_is_pair,
    parse=parse,
    usage_problem=_usage_problem,
)

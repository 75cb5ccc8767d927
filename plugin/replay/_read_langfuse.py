"""Reading Langfuse observation exports: ``GENERATION`` observations, one model call each.

Fields read (Langfuse public API ``Observation``, as ``GET /api/public/observations`` returns it under ``data`` and
the UI exports it as JSON / JSONL): ``id``, ``traceId``, ``type``, ``startTime``, ``model``, ``input``, ``output``,
``usageDetails`` (else the older ``usage``: ``input``, ``output``), ``parentObservationId``, ``metadata``.

- Only ``type == "GENERATION"`` observations are calls; spans and events are skipped.
- The prompt is ``input``: a list of messages (OpenAI, Anthropic or LangChain form), or an object with
  ``messages`` (and ``tools``); leading system messages are the system prompt. The reply is ``output``: a message,
  an object with ``choices`` / ``content``, or a string.
- Usage: ``usageDetails``, whose usage types Langfuse keeps apart and adds up for ``total``: ``input`` is the
  uncached input, a type whose name holds ``cache_read`` or ``cached`` (``cache_read_input_tokens``,
  ``input_cached_tokens``) was read from the cache, one holding ``cache_creation`` or ``cache_write`` was written,
  ``output`` is the output.
- Conversations are rebuilt per ``metadata`` ``thread_id`` / ``session_id`` when set, else per ``traceId``; the
  family is ``metadata.user_id`` (or ``userId``) when present.
"""

from __future__ import annotations

from typing import Any

from ._bedrock_bodies import ParsedCall
from ._calls import make_call, prompt_of
from ._format import Format
from ._logged_usage import count_of
from ._messages import BadRecord, _short, normalise_message, parse_timestamp
from ._transcript import Block, Message, Usage

__all__ = ["FORMAT_SPEC", "langfuse_usage", "parse"]

_TYPES = frozenset({"GENERATION", "SPAN", "EVENT", "AGENT", "TOOL", "CHAIN", "RETRIEVER", "EMBEDDING"})


def _is_observation(rec: Any) -> bool:
    return isinstance(rec, dict) and rec.get("type") in _TYPES and "traceId" in rec


def langfuse_usage(details: Any) -> Usage | None:
    """``Usage`` from Langfuse ``usageDetails`` (module docstring); ``None`` when it is not an object."""
    if not isinstance(details, dict):
        return None
    read = write = 0
    for key in details:
        name = str(key).lower()
        if "cache_read" in name or "cached" in name:
            read += count_of(details, key)
        elif "cache_creation" in name or "cache_write" in name:
            write += count_of(details, key)
    return Usage(count_of(details, "input"), read, write, 0, count_of(details, "output"))


def parse(rec: Any, line: int) -> list[tuple[ParsedCall, str | None]]:
    """The call of one ``GENERATION`` observation (none for other types). Raises ``BadRecord``."""
    if rec.get("type") != "GENERATION":
        return []
    raw_input = rec.get("input")
    tools: Any = []
    where: tuple[Any, ...] = ("input",)
    if isinstance(raw_input, dict) and isinstance(raw_input.get("messages"), list):
        tools = raw_input.get("tools") or []
        raw_input, where = raw_input["messages"], ("input", "messages")
    if not isinstance(raw_input, list):
        raise BadRecord(("input",), f"a generation's input must be a list of messages, got {_short(raw_input)}")
    system, messages, points = prompt_of(raw_input, where)
    if not messages:
        raise BadRecord(where, "generation whose prompt has no messages besides the system prompt")
    if not isinstance(tools, list) or not all(isinstance(t, dict) for t in tools):
        raise BadRecord(("input", "tools"), f"tools must be a list of tool schemas, got {_short(tools)}")
    stamp = parse_timestamp(rec.get("startTime"), ("startTime",))
    model = str(rec.get("model") or "")
    usage = langfuse_usage(rec.get("usageDetails")) or langfuse_usage(rec.get("usage"))
    reply = Message("assistant", _output_blocks(rec.get("output")), stamp, usage, model or None)
    metadata = rec.get("metadata") if isinstance(rec.get("metadata"), dict) else {}
    scope = metadata.get("thread_id") or metadata.get("session_id") or rec.get("traceId")
    call = make_call(
        request_id=str(rec.get("id") or f"line{line}"),
        model=model,
        timestamp=stamp,
        system=system,
        tools=tools,
        messages=messages,
        reply=reply,
        cache_points=points,
        scope=str(scope or ""),
        line=line,
    )
    user = metadata.get("user_id") or rec.get("userId")
    return [(call, f"user:{user}" if user else None)]


def _output_blocks(output: Any) -> tuple[Block, ...]:
    if output is None:
        return ()
    if isinstance(output, str):
        return (Block("text", output),)
    if isinstance(output, dict) and isinstance(output.get("choices"), list) and output["choices"]:
        output = output["choices"][0].get("message", {}) if isinstance(output["choices"][0], dict) else {}
    if isinstance(output, dict):
        return normalise_message({"role": "assistant", **output}, ("output",)).blocks
    if isinstance(output, list) and output and isinstance(output[0], dict):
        return normalise_message({"role": "assistant", **output[0]}, ("output", 0)).blocks
    raise BadRecord(("output",), f"unsupported generation output {_short(output)}")


FORMAT_SPEC = Format(
    name="Langfuse observations",
    key="langfuse",
    signature=("type", "traceId", "input", "output", "usageDetails"),
    matches=_is_observation,
    parse=parse,
)

"""Reading Langfuse observation exports: ``GENERATION`` observations, one model call each.

Fields read (Langfuse public API ``Observation``, as ``GET /api/public/observations`` returns it under ``data`` and
the UI exports it as JSON / JSONL): ``id``, ``traceId``, ``type``, ``startTime``, ``model``, ``input``, ``output``,
``usageDetails`` (else the older ``usage``: ``input``, ``output``), ``parentObservationId``, ``metadata``.

- Only ``type == "GENERATION"`` observations are calls; spans and events are skipped.
- The prompt is ``input``: a list of messages (OpenAI, Anthropic or LangChain form), or an object with
  ``messages`` (and ``tools``); leading system messages are the system prompt. The reply is ``output``: a message,
  an object with ``choices`` / ``content``, or a string.
- Usage: ``usageDetails``. Its meaning, from Langfuse's own documentation and code (read 2026-12-02):

  * "Model Usage & Cost Tracking", https://langfuse.com/docs/model-usage-and-cost: usage types are arbitrary
    strings kept apart (``input``, ``output``, ``cached_tokens``, ...); the UI adds every type whose name holds
    ``input`` into the input usage, and when no ``total`` is ingested Langfuse sums all types into it. Adding
    ``input`` and ``input_cached_tokens`` is only right if ``input`` leaves the cached tokens out. The page does
    not say it in so many words;
  * what Langfuse stores says it: OpenAI-shaped usage (``prompt_tokens`` with ``prompt_tokens_details``) is turned
    into ``input = prompt_tokens - cached_tokens`` plus ``input_cached_tokens`` (``OpenAICompletionUsageSchema`` in
    https://github.com/langfuse/langfuse/blob/main/packages/shared/src/server/ingestion/types.ts), and the
    LangChain callback subtracts every ``input_token_details`` entry from ``input`` (``_parse_usage_model`` in
    https://github.com/langfuse/langfuse-python/blob/main/langfuse/langchain/CallbackHandler.py).

  So ``input`` is read as the **uncached** input; a type whose name holds ``cache_read`` or ``cached``
  (``cache_read_input_tokens``, ``input_cached_tokens``) was read from the cache, one holding ``cache_creation``
  or ``cache_write`` was written, ``output`` is the output. A record sent by hand may still hold the whole prompt
  in ``input``; that shape is told apart by content: when an ingested ``total`` equals ``input + output`` (the
  cache types left out of it) while cache tokens are present and ``input`` is at least their sum, ``input``
  included them and they are taken out. Usage still in OpenAI's shape (``prompt_tokens``, ``input_tokens`` with
  ``*_tokens_details``) is read as Langfuse converts it.
- Conversations are rebuilt per ``metadata`` ``thread_id`` / ``session_id`` when set, else per ``traceId``; the
  family is ``metadata.user_id`` (or ``userId``) when present.
"""

from __future__ import annotations

from promptcache._types import JSONMapping

from ._bedrock_bodies import ParsedCall
from ._calls import make_call, prompt_of
from ._format import Format
from ._jsonpos import JSONPath
from ._logged_usage import count_of
from ._messages import BadRecord, _short, normalise_message, parse_timestamp
from ._transcript import Block, Message, Usage
from ._usage_checks import langfuse_usage_problem

__all__ = ["FORMAT_SPEC", "langfuse_usage", "parse"]

_TYPES = frozenset({"GENERATION", "SPAN", "EVENT", "AGENT", "TOOL", "CHAIN", "RETRIEVER", "EMBEDDING"})


def _is_observation(rec: object) -> bool:
    if not isinstance(rec, dict):
        return False
    kind = rec.get("type")
    return isinstance(kind, str) and kind in _TYPES and "traceId" in rec  # (a list or dict type: not hashable)


def _openai_shaped(details: JSONMapping) -> Usage | None:
    """Usage still in OpenAI's Chat Completions or Responses shape, as Langfuse converts it (module docstring)."""
    for prompt_key, output_key, details_key in (
        ("prompt_tokens", "completion_tokens", "prompt_tokens_details"),
        ("input_tokens", "output_tokens", "input_tokens_details"),
    ):
        if prompt_key in details and "input" not in details:
            cached = count_of(details.get(details_key), "cached_tokens")
            prompt = count_of(details, prompt_key)
            return Usage(max(prompt - cached, 0), min(cached, prompt), 0, 0, count_of(details, output_key))
    return None


def langfuse_usage(details: object) -> Usage | None:
    """``Usage`` from Langfuse ``usageDetails`` (module docstring: ``input`` is the uncached input, as Langfuse
    stores it; a hand-sent ``input`` that held the whole prompt is told apart by ``total``); ``None`` when it is
    not an object."""
    if not isinstance(details, dict):
        return None
    shaped = _openai_shaped(details)
    if shaped is not None:
        return shaped
    read = write = 0
    for key in details:
        name = str(key).lower()
        if "cache_read" in name or "cached" in name:
            read += count_of(details, key)
        elif "cache_creation" in name or "cache_write" in name:
            write += count_of(details, key)
    given, output = count_of(details, "input"), count_of(details, "output")
    total = details.get("total")
    # the cache types are not in the total: they were counted inside ``input``
    whole_prompt = bool(read or write) and isinstance(total, int) and total == given + output >= read + write + output
    return Usage(given - read - write if whole_prompt else given, read, write, 0, output)


def parse(rec: JSONMapping, line: int) -> list[tuple[ParsedCall, str | None]]:
    """The call of one ``GENERATION`` observation (none for other types). Raises ``BadRecord``."""
    if rec.get("type") != "GENERATION":
        return []
    raw_input = rec.get("input")
    tools: object = []
    where: JSONPath = ("input",)
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
    raw_metadata = rec.get("metadata")
    metadata = raw_metadata if isinstance(raw_metadata, dict) else {}
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


def _output_blocks(output: object) -> tuple[Block, ...]:
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


def _usage_problem(rec: JSONMapping) -> str | None:
    """The problem of the usage object ``parse`` reads (``usageDetails``, else ``usage``) of a generation."""
    if rec.get("type") != "GENERATION":
        return None
    key = "usageDetails" if isinstance(rec.get("usageDetails"), dict) else "usage"
    return langfuse_usage_problem(rec.get(key), key)


FORMAT_SPEC = Format(
    name="Langfuse observations",
    key="langfuse",
    signature=("type", "traceId", "input", "output", "usageDetails"),
    matches=_is_observation,
    parse=parse,
    usage_problem=_usage_problem,
)

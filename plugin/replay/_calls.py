"""One logged model call per record -> conversations: the grouping every call-log reader shares.

LangSmith runs, Langfuse generations, OpenTelemetry GenAI spans, proxy request/response logs, Anthropic Message
Batches and ``TrafficRecorder`` recordings all log one record per model call holding that call's whole prompt. A
reader turns each record into a ``ParsedCall`` (``make_call``) and ``conversations`` groups them exactly as the
Bedrock invocation-log reader does (``promptcache.replay._bedrock_logs``): in time order, a call whose prompt (same
scope, system prompt and tools) starts with an earlier call's whole prompt followed by an assistant message
continues that call's conversation; any other call starts a new one. The ``scope`` of a call (a thread or trace
id) keeps calls of different threads apart even when their prompts are equal.

A call whose format logged only sizes (no message content: an OpenTelemetry span without captured content, a batch
result without its request) is ``sized_call``: one opaque user block per call, keyed by the call's id, so nothing is
shared across calls; its size comes from the logged usage (``promptcache.replay._sizes``).

``Conversation.meta``: ``format`` (the reader's name), ``hidden_prefix=False``, ``request_ids``, ``cache_points``
(per request, as ``promptcache.replay._as_logged`` reads them), ``shared_messages``, ``sizes_only`` (True when
the log held no content for the conversation's calls), ``layout="from-usage"`` when no call logged a cache point
but some logged cache reads or writes (the ``as-logged`` strategy then infers the points from the usage), and
``edited=True`` when the log names the calls' thread and the conversation's first prompt repeats the start of an
earlier prompt of that thread, then differs: an earlier message, or what follows it, was edited (or the thread was
rewound), so what the cache held after the first changed message is written again (``prefix-changed``).
"""

from __future__ import annotations

import hashlib
from typing import Any

import orjson

from promptcache._types import JSONObject

from ._bedrock_bodies import CachePoint, ParsedCall
from ._bedrock_logs import _conversations
from ._jsonpos import JSONPath
from ._messages import BadRecord, _short
from ._transcript import Block, Conversation, Message, TranscriptError, Usage

__all__ = ["SIZES_ONLY", "conversations", "make_call", "plain_message", "prompt_of", "sized_call", "usage_of"]

#: ``ParsedCall.operation`` of a call made by ``sized_call``.
SIZES_ONLY = "sizes-only"


def _key(message: Message) -> bytes:
    return orjson.dumps([message.role, [[b.kind, b.text, b.name, b.id, b.is_error] for b in message.blocks]])


def make_call(
    *,
    request_id: str,
    model: str,
    timestamp: float | None,
    system: tuple[Block, ...],
    tools: list[JSONObject],
    messages: list[Message],
    reply: Message,
    cache_points: list[CachePoint] | None = None,
    scope: str = "",
    line: int = 0,
    operation: str = "",
) -> ParsedCall:
    """A ``ParsedCall`` with its prefix digests (the scope, system prompt and tools, then one per message).

    Args:
        request_id: the call's id in the log (a run, span or request id); names the conversation it starts.
        model: the model id the log names ("" when unknown).
        timestamp: epoch seconds the call was made (``None`` when not logged).
        system / tools / messages: the prompt; ``messages`` have no system messages.
        reply: the assistant message the call returned, with its logged ``usage`` and ``model``.
        cache_points: the cache points the request carried (``promptcache.replay._as_logged`` layout).
        scope: keeps calls apart (thread or trace id); calls with different scopes never share a conversation.
        line: 1-based line of the record in its file (0 when unknown).
        operation: the logged API operation, when the format names one.
    """
    digest = hashlib.blake2b(
        scope.encode()
        + b"\x00"
        + orjson.dumps([[b.kind, b.text] for b in system])
        + orjson.dumps(tools, option=orjson.OPT_SORT_KEYS, default=repr),
        digest_size=16,
    ).digest()
    prefix = [digest]
    for message in messages:
        digest = hashlib.blake2b(digest + _key(message), digest_size=16).digest()
        prefix.append(digest)
    for message in messages:
        if message.timestamp is None:
            message.timestamp = timestamp
    if reply.timestamp is None:
        reply.timestamp = timestamp
    return ParsedCall(
        request_id=request_id,
        operation=operation,
        model=model,
        timestamp=timestamp,
        system=system,
        tools=tools,
        messages=messages,
        prefix=prefix,
        reply=reply,
        cache_points=list(cache_points or []),
        line=line,
        scoped=bool(scope),
    )


def sized_call(
    *, request_id: str, model: str, timestamp: float | None, usage: Usage, line: int = 0, scope: str = ""
) -> ParsedCall:
    """A call whose log carries its usage but not its content: one opaque prompt block unique to ``request_id``
    (sized from ``usage`` when replayed) and an empty reply."""
    prompt = Message("user", (Block("text", f"[prompt of {request_id}: content not logged]"),))
    reply = Message("assistant", (), timestamp, usage, model or None)
    return make_call(
        request_id=request_id,
        model=model,
        timestamp=timestamp,
        system=(),
        tools=[],
        messages=[prompt],
        reply=reply,
        scope=f"{scope}\x00{request_id}",
        line=line,
        operation=SIZES_ONLY,
    )


def _caches(usage: Usage | None) -> bool:
    return usage is not None and (usage.cache_read_tokens > 0 or usage.cache_write_tokens > 0)


def conversations(
    name: str, calls: list[ParsedCall], fmt: str, families: dict[str, str] | None = None
) -> list[Conversation]:
    """Group ``calls`` into conversations (module docstring).

    Args:
        name: the file name, for sources and errors.
        calls: the file's calls in file order.
        fmt: ``Conversation.meta["format"]`` of every conversation.
        families: request id of a conversation's first call -> its intention-cache family (a user id).

    Raises:
        TranscriptError: ``calls`` is empty (``FILE: no model call ... in the file``).
    """
    if not calls:
        raise TranscriptError(name, 1, f"no model call with a prompt and a reply in the file (read as {fmt})")
    scoped = {c.request_id for c in calls if c.scoped}
    out = _conversations(name, calls)
    for conv in out:
        first = conv.meta["request_ids"][0]
        if conv.meta.get("shared_messages") and first in scoped:
            conv.meta["edited"] = True  # a thread's prompt that repeats an earlier one's start, then differs
        conv.meta["format"] = fmt
        conv.meta["sizes_only"] = all(op == SIZES_ONLY for op in conv.meta["operations"])
        if not any(conv.meta["cache_points"]) and any(_caches(conv.messages[i].usage) for i in conv.request_ends()):
            conv.meta["layout"] = "from-usage"  # cache usage logged, cache points not: as-logged infers them
        if families and families.get(first):
            conv.family = families[first]
    return out


_LC_ROLES = {
    "HumanMessage": "user",
    "AIMessage": "assistant",
    "SystemMessage": "system",
    "ToolMessage": "tool",
    "FunctionMessage": "tool",
    "ChatMessage": "user",
    "HumanMessageChunk": "user",
    "AIMessageChunk": "assistant",
}


def plain_message(raw: object) -> Any:
    """A LangChain-serialised message (``{"lc": 1, "type": "constructor", "id": [..., "AIMessage"], "kwargs":
    {...}}``, as LangSmith stores chat-model inputs and outputs) as a role message; anything else unchanged."""
    if isinstance(raw, dict) and raw.get("lc") is not None and isinstance(raw.get("kwargs"), dict):
        ids = raw.get("id")
        kind = ids[-1] if isinstance(ids, list) and ids else ""
        kwargs = raw["kwargs"]
        return {**kwargs, "role": kwargs.get("role") or _LC_ROLES.get(str(kind), "user")}
    return raw


def prompt_of(raw: object, where: JSONPath) -> tuple[tuple[Block, ...], list[Message], list[CachePoint]]:
    """System blocks, messages and ``cache_control`` cache points of a logged message list (OpenAI, Anthropic or
    LangChain messages; leading system messages are the system prompt).

    Raises:
        BadRecord: ``raw`` is not a list, or one of its messages is malformed (names its index).
    """
    from ._messages import normalise_message

    if not isinstance(raw, list):
        raise BadRecord(where, f"expected a list of messages, got {_short(raw)}")
    system: list[Block] = []
    messages: list[Message] = []
    points: list[CachePoint] = []
    for i, item in enumerate(raw):
        item = plain_message(item)
        message = normalise_message(item, (*where, i))
        content = item.get("content") if isinstance(item, dict) else None
        marks = (
            [k + 1 for k, p in enumerate(content) if isinstance(p, dict) and "cache_control" in p]
            if isinstance(content, list)
            else []
        )
        if message.role == "system" and not messages:
            points.extend({"where": "system", "index": None, "after": len(system) + k, "ttl": None} for k in marks)
            system.extend(message.blocks)
            continue
        points.extend({"where": "message", "index": len(messages), "after": k, "ttl": None} for k in marks)
        messages.append(message)
    return tuple(system), messages, points


def usage_of(raw: object) -> Usage | None:
    """``Usage`` from a logged usage object of any provider shape (``None`` when ``raw`` is none of them):

    - OpenAI Chat Completions (``prompt_tokens``, ``prompt_tokens_details.cached_tokens``): the prompt includes the
      cached part;
    - OpenAI Responses (``input_tokens`` with ``input_tokens_details.cached_tokens``): likewise;
    - LangChain ``usage_metadata`` (``input_tokens`` with ``input_token_details.cache_read`` / ``cache_creation``):
      likewise;
    - Anthropic (``input_tokens``, ``cache_read_input_tokens``, ``cache_creation_input_tokens``): ``input_tokens``
      is the uncached part;
    - Bedrock Converse (``inputTokens``, ``cacheReadInputTokens``, ``cacheWriteInputTokens``).
    """
    from ._logged_usage import anthropic_usage, converse_usage, count_of, langchain_usage, openai_usage

    if not isinstance(raw, dict):
        return None
    if "prompt_tokens" in raw:
        return openai_usage(raw)
    if "inputTokens" in raw:
        return converse_usage(raw)
    if isinstance(raw.get("input_tokens_details"), dict):
        cached = count_of(raw["input_tokens_details"], "cached_tokens")
        total = count_of(raw, "input_tokens")
        return Usage(max(total - cached, 0), cached, 0, 0, count_of(raw, "output_tokens"))
    if isinstance(raw.get("input_token_details"), dict):
        return langchain_usage(raw)
    if "input_tokens" in raw:
        return anthropic_usage(raw)
    return None

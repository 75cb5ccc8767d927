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
(per request, as ``promptcache.replay._as_logged`` reads them), ``shared_messages``, and ``sizes_only`` (True when
the log held no content for the conversation's calls).
"""

from __future__ import annotations

import hashlib
from typing import Any

import orjson

from ._bedrock_bodies import ParsedCall
from ._bedrock_logs import _conversations
from ._transcript import Block, Conversation, Message, TranscriptError, Usage

__all__ = ["SIZES_ONLY", "conversations", "make_call", "sized_call"]

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
    tools: list[dict[str, Any]],
    messages: list[Message],
    reply: Message,
    cache_points: list[dict[str, Any]] | None = None,
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


def conversations(
    name: str, calls: list[ParsedCall], fmt: str, families: dict[str, str] | None = None, sizes_only: bool = False
) -> list[Conversation]:
    """Group ``calls`` into conversations (module docstring).

    Args:
        name: the file name, for sources and errors.
        calls: the file's calls in file order.
        fmt: ``Conversation.meta["format"]`` of every conversation.
        families: request id of a conversation's first call -> its intention-cache family (a user id).
        sizes_only: the calls hold no content (``sized_call``).

    Raises:
        TranscriptError: ``calls`` is empty (``FILE: no model call ... in the file``).
    """
    if not calls:
        raise TranscriptError(name, 1, f"no model call with a prompt and a reply in the file (read as {fmt})")
    out = _conversations(name, calls)
    for conv in out:
        first = conv.meta["request_ids"][0]
        conv.meta["format"] = fmt
        conv.meta["sizes_only"] = sizes_only
        if families and families.get(first):
            conv.family = families[first]
    return out

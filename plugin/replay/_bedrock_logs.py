"""Reading Amazon Bedrock model invocation logs: one record per API call, with its whole prompt and its usage.

Bedrock's model invocation logging (CloudWatch Logs or S3) writes one JSON record per call, documented by AWS in
"Monitor model invocation using CloudWatch Logs and Amazon S3" (Bedrock user guide): ``schemaType:
"ModelInvocationLog"``, ``schemaVersion``, ``timestamp``, ``accountId``, ``identity.arn``, ``region``,
``requestId``, ``operation``, ``modelId``, ``input`` (``inputContentType``, ``inputBodyJson``, ``inputTokenCount``,
``cacheReadInputTokenCount``, ``cacheWriteInputTokenCount``) and ``output`` (``outputContentType``,
``outputBodyJson``, ``outputTokenCount``). A file holds one record per line (JSONL) or a JSON array of records.

Bodies read (``bedrock_bodies`` converts them):

- ``Converse`` / ``ConverseStream``: the request (``system``, ``messages``, ``toolConfig.tools``, with ``cachePoint``
  blocks) is ``input.inputBodyJson``; the reply (``output.message``) and ``usage`` (``inputTokens``,
  ``outputTokens``, ``cacheReadInputTokens``, ``cacheWriteInputTokens``, ``cacheDetails`` per TTL) are
  ``output.outputBodyJson``; a streamed reply logged as a list of stream events is put back together.
- ``InvokeModel`` / ``InvokeModelWithResponseStream`` with an Anthropic Messages body (``anthropic_version``,
  ``system``, ``messages``, ``tools``; ``cache_control`` on blocks): reply ``content`` and ``usage`` in the output.
  An Amazon Nova InvokeModel body has the Converse shape (``{"text": ...}`` blocks, ``cachePoint``) and is read as
  one; its usage may name the cache counts ``cacheReadInputTokenCount`` / ``cacheWriteInputTokenCount``.

Other bodies (Titan, Llama, ...), records without an output (failed calls) and a record logged twice (the same
record again, as a re-delivered log file holds it: one call is one request) are skipped with one
``TranscriptWarning`` per file and kind. Without usage in the body, the record's own counts are used.

**Conversations.** Records are taken in time order. A record whose prompt (same system prompt and tools) starts with
an earlier record's whole prompt followed by an assistant message continues that record's conversation: the
assistant message, as the next prompt carries it, is that record's reply. Any other record starts a new
conversation (``shared_messages`` says how many leading messages repeat an earlier prompt). Each conversation's
``replies`` lists exactly its own records, so every record is one request.

``Conversation.meta``: ``format="bedrock-invocation-log"``, ``hidden_prefix=False`` (system prompt and tools are in
the log), ``request_ids`` (each reply's record ``requestId``), ``operations``, ``shared_messages``, and
``cache_points``: per request (same order as ``replies``) the list of cache points the caller placed, each a dict
``{"where": "tools" | "system" | "message", "index": i, "after": k, "ttl": "5m" | "1h" | None}``: after the first
``k`` tool schemas (``where="tools"``), system blocks (``"system"``) or blocks of ``messages[i]`` (``"message"``;
``index`` is ``None`` for the other two). ``ttl`` is the logged TTL (``None``: the default, 5 minutes).
"""

from __future__ import annotations

import hashlib
import warnings
from dataclasses import dataclass, field
from typing import TypeGuard

import orjson

from promptcache._types import JSONMapping

from ._bedrock_bodies import ParsedCall, UnsupportedBody, parse_record
from ._jsonpos import JSONPath, first_record, iter_lines, jsonl_records, line_of
from ._messages import BadRecord, _short
from ._transcript import Conversation, Message, TranscriptError, TranscriptWarning
from ._usage_checks import huge_usage, report_usage, watching_counts

__all__ = ["SCHEMA_TYPE", "is_invocation_log", "read_invocation_log"]

#: ``schemaType`` of every model invocation log record (AWS Bedrock user guide, model invocation logging).
SCHEMA_TYPE = "ModelInvocationLog"


def _is_record(value: object) -> TypeGuard[JSONMapping]:
    return isinstance(value, dict) and value.get("schemaType") == SCHEMA_TYPE


def is_invocation_log(doc: object = None, data: bytes | None = None) -> bool:
    """True for a parsed JSON document that is a record or a list of records (``doc``), or JSONL ``data`` whose
    first parseable line is a record."""
    if data is not None:
        if SCHEMA_TYPE.encode() not in data:
            return False
        found, rec = first_record(data)  # read as the records are (``NaN`` as text)
        return found and _is_record(rec)
    if isinstance(doc, list):
        return bool(doc) and _is_record(doc[0])
    return _is_record(doc)


def read_invocation_log(name: str, data: bytes, doc: object = None) -> list[Conversation]:
    """The conversations of one invocation-log file: ``doc`` when the file is one JSON document (a record or a list
    of records), else ``data`` as JSONL. Raises ``TranscriptError`` (``FILE:LINE: reason``)."""
    calls: list[ParsedCall] = []
    skipped: set[str] = set()
    logged: set[bytes] = set()  # digest of every record taken, to skip a record logged twice
    if doc is not None:
        records = doc if isinstance(doc, list) else [doc]
        for i, rec in enumerate(records):
            where = (i,) if isinstance(doc, list) else ()
            try:
                _take(calls, rec, where, name, 0 if isinstance(doc, list) else 1, skipped, logged)
            except BadRecord as bad:
                text = data.decode("utf-8", errors="replace")
                raise TranscriptError(name, line_of(text, (*where, *bad.where)), bad.reason) from None
    else:
        for lineno, rec in jsonl_records(name, iter_lines(data)):
            try:
                _take(calls, rec, (), name, lineno, skipped, logged)
            except BadRecord as bad:
                raise TranscriptError(name, lineno, bad.reason) from None
    if not calls:
        raise TranscriptError(name, 1, "no model invocation with a prompt and a reply in the file")
    return _conversations(name, calls)


def _take(
    calls: list[ParsedCall],
    rec: object,
    where: JSONPath,
    name: str,
    line: int,
    skipped: set[str],
    logged: set[bytes],
) -> None:
    if not _is_record(rec):
        raise BadRecord(where, f"expected a {SCHEMA_TYPE} record, got {_short(rec)}")
    try:
        digest = hashlib.blake2b(orjson.dumps(rec, option=orjson.OPT_SORT_KEYS), digest_size=16).digest()
    except TypeError:  # nested past orjson's writer: cannot be compared cheaply, so it is not deduplicated
        digest = b""
    try:
        if digest and digest in logged:
            raise UnsupportedBody("repeat", "records logged twice (the same record again)")
        with watching_counts() as seen:
            call = parse_record(rec)
    except UnsupportedBody as skip:
        if skip.kind not in skipped:
            skipped.add(skip.kind)
            at = f"{name}:{line}" if line else name
            warnings.warn(f"{at}: skipped {skip.reason} (first here)", TranscriptWarning, stacklevel=3)
        return
    if seen:  # the record is read, its usage is not (--strict: the error)
        report_usage(name, line, seen[0])
        call.reply.usage = None
    elif (huge := huge_usage(call.reply.usage)) is not None:
        raise BadRecord(where, huge)
    logged.add(digest)
    call.line = line
    calls.append(call)


@dataclass(slots=True)
class _Open:
    size: int  # messages in the prompt of the conversation's latest call
    messages: list[Message]
    calls: list[ParsedCall] = field(default_factory=list)
    replies: list[int] = field(default_factory=list)
    shared: int = 0


def _conversations(name: str, calls: list[ParsedCall]) -> list[Conversation]:
    """Group ``calls`` (module docstring). Prompts are compared by prefix digests (``ParsedCall.prefix``), so the
    work and memory are linear in the number of logged messages."""
    order = sorted(range(len(calls)), key=lambda i: (calls[i].timestamp is None, calls[i].timestamp or 0.0, i))
    latest: dict[bytes, _Open] = {}  # digest of a conversation's latest prompt -> the conversation
    seen: set[bytes] = set()  # digest of every prompt prefix logged so far
    convs: list[_Open] = []
    for i in order:
        call = calls[i]
        prefix, size = call.prefix, len(call.messages)
        target: _Open | None = None
        for n in range(size - 1, 0, -1):  # the longest earlier prompt this one extends with its reply
            if call.messages[n].role == "assistant" and prefix[n] in latest:
                target = latest.pop(prefix[n])
                break
        if target is None:
            shared = next((n for n in range(size, 0, -1) if prefix[n] in seen), 0)
            target = _Open(0, [], shared=shared)
            convs.append(target)
            start = 0
        else:
            last, reply_at = target.calls[-1], target.replies[-1]
            sent = call.messages[target.size]  # the previous reply as this prompt sends it back
            target.messages[reply_at] = Message(
                "assistant", sent.blocks, last.reply.timestamp, last.reply.usage, last.reply.model
            )
            start = target.size + 1
        target.messages.extend(call.messages[start:])
        target.size = size
        target.replies.append(len(target.messages))
        target.messages.append(call.reply)
        target.calls.append(call)
        latest[prefix[size]] = target
        seen.update(prefix[1:])
        call.messages, call.prefix = [], []  # now held by the conversation
    return [_finish(name, n, conv) for n, conv in enumerate(convs)]


def _finish(name: str, n: int, conv: _Open) -> Conversation:
    first = conv.calls[0]
    return Conversation(
        id=first.request_id or f"{name}#{n}",
        family=first.request_id or f"{name}#{n}",
        system=first.system,
        messages=conv.messages,
        tools=list(first.tools),
        source=f"{name}:{first.line or '?'}",
        meta={
            "format": "bedrock-invocation-log",
            "hidden_prefix": False,
            "request_ids": [c.request_id for c in conv.calls],
            "operations": [c.operation for c in conv.calls],
            "shared_messages": conv.shared,
            "cache_points": [c.cache_points for c in conv.calls],
        },
        replies=conv.replies,
    )

"""Reading Claude Code's headless output, ``claude -p "..." --output-format stream-json --verbose``: one JSON
message per line.

Lines read (Claude Code headless mode / Agent SDK message types): ``{"type": "system", "subtype": "init",
"session_id", "model", "tools"}``; ``{"type": "assistant", "message": <Anthropic Message with id, model, content,
usage>, "session_id", "parent_tool_use_id"}``; ``{"type": "user", "message": {"role": "user", "content": [...]},
...}`` (tool results; the prompt too when it was given with ``--input-format stream-json``); ``{"type": "result",
...}`` (the run's totals, not a call). ``stream_event`` lines (``--include-partial-messages``) are skipped.

- One API call per assistant ``message.id``: consecutive lines of one id are one reply (one line per content block);
  its usage is the line's ``usage`` with the most output tokens.
- Messages of a Task sub-agent carry the ``parent_tool_use_id`` of the Task call: each sub-agent is its own
  conversation, apart from the main one.
- The system prompt and tool schemas are sent but not shown, and the prompt given on the command line is not in the
  stream: the conversation is read as a Claude Code one (``meta["format"] = "claude-code"``,
  ``hidden_prefix=True``; the unshown part is sized from the first call's usage, ``promptcache.replay._sizes``), with
  a placeholder first user message when the stream opens with an assistant reply. ``as-logged`` then replays Claude
  Code's own cache layout.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TypeGuard

from promptcache._types import JSONMapping

from ._bedrock_bodies import ParsedCall
from ._format import Format
from ._jsonpos import iter_lines, jsonl_records
from ._logged_usage import anthropic_usage
from ._messages import BadRecord, _content_blocks, _short, parse_timestamp
from ._transcript import Block, Conversation, Message, TranscriptError
from ._usage_checks import usage_read

__all__ = ["FORMAT_SPEC", "read_stream_json"]

_KINDS = frozenset({"system", "assistant", "user", "result", "stream_event"})
_PROMPT = Block("text", "")  # the command-line prompt: not in the stream, sized with the hidden prefix


def _is_stream_json(rec: object) -> TypeGuard[JSONMapping]:
    if not isinstance(rec, dict):
        return False
    kind = rec.get("type")
    if not isinstance(kind, str) or kind not in _KINDS or "session_id" not in rec or "parentUuid" in rec:
        return False  # (a Claude Code session log has parentUuid and sessionId)
    # messages always carry parent_tool_use_id (null outside a sub-agent), which other agent logs do not
    return rec["type"] not in ("assistant", "user") or "parent_tool_use_id" in rec


@dataclass
class _Thread:
    line: int
    session: str
    agent: str
    messages: list[Message] = field(default_factory=list)
    replies: list[int] = field(default_factory=list)
    ids: list[str] = field(default_factory=list)
    last_id: str = ""


def read_stream_json(name: str, data: bytes) -> list[Conversation]:
    """The conversations of one stream-json file. Raises ``TranscriptError`` (``FILE:LINE: reason``)."""
    threads: dict[tuple[str, str], _Thread] = {}
    for lineno, rec in jsonl_records(name, iter_lines(data)):
        try:
            _take(threads, rec, lineno, name)
        except BadRecord as bad:
            raise TranscriptError(name, lineno, f"Claude Code stream-json: {bad.reason}") from None
    out = [_finish(name, t) for t in threads.values() if t.replies]
    if not out:
        raise TranscriptError(name, 1, "no assistant reply in the file (read as Claude Code stream-json)")
    return out


def _take(threads: dict[tuple[str, str], _Thread], rec: object, lineno: int, name: str) -> None:
    if not _is_stream_json(rec):
        raise BadRecord((), f"expected a stream-json message (type, session_id, parent_tool_use_id), got {_short(rec)}")
    kind = rec["type"]
    if kind not in ("assistant", "user"):
        return
    message = rec.get("message")
    if not isinstance(message, dict):
        raise BadRecord(("message",), f"{kind} line without a message object: {_short(message)}")
    key = (str(rec.get("session_id")), str(rec.get("parent_tool_use_id") or ""))
    thread = threads.setdefault(key, _Thread(lineno, *key))
    blocks = tuple(b for b in _content_blocks(message.get("content"), ("message", "content")) if b.text.strip() or
                   b.kind != "text")  # fmt: skip
    stamp = parse_timestamp(rec.get("timestamp"), ("timestamp",))
    if kind == "user":
        thread.messages.append(Message("user", blocks, stamp))
        thread.last_id = ""
        return
    msg_id = str(message.get("id") or f"line{lineno}")
    usage = usage_read(lambda: anthropic_usage(message.get("usage")), name, lineno)  # (bad counts: no usage)
    model = message.get("model") if isinstance(message.get("model"), str) else None
    if not thread.messages:
        thread.messages.append(Message("user", (_PROMPT,), stamp))
    if msg_id == thread.last_id:  # one more content block of the same reply
        prev = thread.messages[-1]
        best = usage if usage and (not prev.usage or usage.output_tokens >= prev.usage.output_tokens) else prev.usage
        thread.messages[-1] = Message("assistant", prev.blocks + blocks, prev.timestamp, best, prev.model or model)
        return
    thread.replies.append(len(thread.messages))
    thread.ids.append(msg_id)
    thread.messages.append(Message("assistant", blocks, stamp, usage, model))
    thread.last_id = msg_id


def _finish(name: str, thread: _Thread) -> Conversation:
    cid = thread.session + (f"/{thread.agent}" if thread.agent else "")
    return Conversation(
        id=cid,
        family=thread.session,
        system=(),
        messages=thread.messages,
        source=f"{name}:{thread.line}",
        meta={
            "format": "claude-code",
            "hidden_prefix": True,
            "session_id": thread.session,
            "agent": thread.agent,
            "context_start": "session",
            "shared_messages": 0,
            "request_ids": thread.ids,
            "call_sources": [],
            "stream_json": True,
        },
        replies=thread.replies,
    )


def _unused(rec: object, line: int) -> list[tuple[ParsedCall, str | None]]:
    raise AssertionError("stream-json is read whole by read_stream_json")  # pragma: no cover


FORMAT_SPEC = Format(
    name="Claude Code stream-json",
    key="claude-code-stream-json",
    signature=("type", "session_id", "message"),
    matches=_is_stream_json,
    parse=_unused,
    read_file=read_stream_json,
)

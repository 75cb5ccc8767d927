"""Readers for recorded conversations: JSON and JSONL files of OpenAI, Anthropic or LangChain messages, Claude Code
session logs and Bedrock model invocation logs.

Accepted layouts (``read_conversations`` decides per file, the message format per message — see ``messages``):

- JSON: one conversation as a list of messages; a list of conversations; ``{"conversations": [...]}``. A
  conversation is a list of messages or an object with ``messages`` (or ``traj``/``trajectory``, as tau-bench
  writes) plus optional ``system`` (Anthropic: string or blocks), ``tools``, ``id``/``conversation_id``/
  ``session_id``/``thread_id``/``task_id``+``trial``, ``user_id`` (the intention-cache family).
- JSONL (``.jsonl``/``.ndjson``, or any file that is not one JSON document): one record per line; a line is either
  a whole conversation (as above) or one event — a message, or ``{"message": {...}, "sessionId"|"session_id"|
  "conversation_id"|"thread_id": ..., "timestamp": ...}`` as Anthropic-style agent logs write it. Events are grouped
  by their session id in file order (no id: one conversation per file). Lines that are ``{"type": "summary"}``
  records are skipped.

Two log formats are recognised by their records and read by their own modules: Claude Code session logs
(``claude_code``; a session folder ``<session>/`` with its sub-agent logs too) and Bedrock model invocation logs
(``bedrock_logs``, records with ``schemaType: "ModelInvocationLog"``, JSONL or a JSON array).

A gzip-compressed file (e.g. ``.json.gz``, as Bedrock writes invocation logs to S3) is read as what it holds.

Every error is a ``TranscriptError`` whose message is one line, ``FILE:LINE: reason``.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import orjson

from promptcache._types import JSONMapping

from ._bedrock_logs import is_invocation_log, read_invocation_log
from ._claude_code import is_claude_code_log, is_session_folder, read_claude_code, read_session_folder
from ._far_timestamps import drop_far_timestamps
from ._formats import detect_document, detect_jsonl, no_format_hint, read_with
from ._input_guard import check_input_file, read_input
from ._jsonpos import JSONPath, first_record, iter_lines, jsonl_records, line_at, line_of
from ._messages import BadRecord, _short, is_message_like, normalise_message, parse_timestamp
from ._transcript import Block, Conversation, Message, TranscriptError

__all__ = ["REPLAY_REPORT", "read_conversations", "read_file"]

#: How the error of a file that is this command's own report (``replay.json``) begins.
REPLAY_REPORT = "the report of an earlier promptcache replay"
#: Top-level keys every ``replay.json`` has (``promptcache.replay._report_json.to_json``) and no log has together.
_REPORT_KEYS = frozenset({"strategies", "best_strategy", "miss_causes", "variants", "cache_rules"})

_MESSAGE_KEYS = ("messages", "traj", "trajectory", "conversation")
_SESSION_KEYS = ("sessionId", "session_id", "conversation_id", "thread_id")
_SKIPPED_EVENT_TYPES = frozenset({"summary"})
_HEAD_BYTES = 1 << 16  # what is read to recognise a Claude Code log before streaming it


def read_conversations(paths: Iterable[str | Path]) -> list[Conversation]:
    """All conversations of all ``paths``, in order. Conversation ids are made unique across the replay (a repeated
    id gets ``#2``, ``#3``, ... in reading order), so two files of the same name or two records with one id replay
    as the separate conversations they are.

    Raises:
        TranscriptError: a file that does not exist, is not JSON/JSONL, or holds a malformed record.
    """
    out: list[Conversation] = []
    seen: dict[str, int] = {}
    for path in paths:
        for conv in read_file(path):
            count = seen.get(conv.id, 0) + 1
            seen[conv.id] = count
            if count > 1:
                conv.id = f"{conv.id}#{count}"
                while conv.id in seen:  # "x#2" itself recorded earlier
                    count += 1
                    conv.id = f"{conv.id.rsplit('#', 1)[0]}#{count}"
                seen[conv.id] = 1
            out.append(conv)
    return out


def read_file(path: str | Path) -> list[Conversation]:
    """The conversations in one file (see the module docstring), without timestamps far outside the rest of the
    file (``promptcache.replay._far_timestamps``). Raises ``TranscriptError``."""
    conversations = _read_file(path)
    drop_far_timestamps(str(path), conversations)
    return conversations


def _read_file(path: str | Path) -> list[Conversation]:
    name = str(path)
    if not name:
        raise TranscriptError(repr(name), 0, "an empty string is not a file name")
    try:
        if Path(path).is_dir():
            if is_session_folder(path):
                return read_session_folder(path)
            raise TranscriptError(
                name, 0, f"is a directory; give the transcript files in it (e.g. {name.rstrip('/')}/*.json)"
            )
        check_input_file(path)  # regular files only, within the size limit, before anything is opened
        with Path(path).open("rb") as handle:
            head = handle.read(_HEAD_BYTES)
            if Path(path).suffix.lower() != ".json" and head[:2] != b"\x1f\x8b" and _head_is_claude_code(head):
                handle.seek(0)
                return read_claude_code(name, handle)  # read as a stream: the tree keeps what it needs
        data, gzipped = read_input(path)  # within the size, line and gzip limits
    except OSError as exc:
        raise TranscriptError(name, 0, f"cannot read file: {exc.strerror or exc}") from None
    suffix = Path(path).suffix.lower()
    if gzipped:  # gzip (Bedrock delivers invocation logs to S3 as .json.gz): read what it holds
        inner = Path(Path(path).stem).suffix.lower()
        suffix = inner if inner in (".jsonl", ".ndjson") else ""  # S3's .json.gz hold one record per line
    if not data or data.isspace():  # (strip() would copy the whole file)
        raise TranscriptError(name, 1, "empty file: no conversations")
    if suffix not in (".jsonl", ".ndjson"):
        try:
            doc = orjson.loads(data)
        except orjson.JSONDecodeError as exc:
            if suffix == ".json":
                raise TranscriptError(name, _error_line(data, exc), f"invalid JSON: {exc.msg}") from None
            if not _first_line_is_json(data):  # not JSONL either: the document's own error says where
                raise TranscriptError(
                    name, _error_line(data, exc), f"not a JSON or JSONL transcript (invalid JSON: {exc.msg})"
                ) from None
        else:
            return _read_json_document(name, data, doc)
    return _read_jsonl(name, data)


def _head_is_claude_code(head: bytes) -> bool:
    """``is_claude_code_log`` on the first bytes of a file (a line cut by the end of ``head`` left out)."""
    return is_claude_code_log(head.rsplit(b"\n", 1)[0] if len(head) == _HEAD_BYTES else head)


def _error_line(data: bytes, exc: orjson.JSONDecodeError) -> int:
    """The line of a JSON parse error: of the first byte that is not UTF-8, else of the parser's position (a
    character offset), with ``\r``, ``\n`` and ``\r\n`` all counted as line breaks."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as bad:
        return line_at(data, bad.start)
    return line_at(text, exc.pos)


def _first_line_is_json(data: bytes) -> bool:
    return first_record(data)[0]


def _read_json_document(name: str, data: bytes, doc: object) -> list[Conversation]:
    if isinstance(doc, dict) and _REPORT_KEYS <= doc.keys():
        raise TranscriptError(name, 0, f"{REPLAY_REPORT} (a replay.json), not a log")
    if is_invocation_log(doc):
        return read_invocation_log(name, data, doc)
    fmt = detect_document(doc)
    if fmt is not None:
        return read_with(fmt, name, data, doc)
    try:
        return _conversations_from_document(name, doc)
    except BadRecord as bad:
        text = data.decode("utf-8", errors="replace")
        reason = bad.reason
        if len(bad.where) <= 1 and not _has_messages(doc):  # the records themselves are of no known shape
            reason = f"{reason}; {no_format_hint(doc if isinstance(doc, list) else [doc])}"
        raise TranscriptError(name, line_of(text, bad.where), reason) from None


def _conversations_from_document(name: str, doc: object) -> list[Conversation]:
    base: tuple[str, ...]
    if isinstance(doc, dict) and isinstance(doc.get("conversations"), list):
        items, base = doc["conversations"], ("conversations",)
    elif isinstance(doc, dict):
        return [_conversation(name, doc, (), 0, line=1)]
    elif isinstance(doc, list) and any(map(is_message_like, doc)) and not any(map(_is_conversation, doc)):
        return [_conversation(name, doc, (), 0, line=1)]  # one conversation; a bad message in it is named
    elif isinstance(doc, list):
        items, base = doc, ()
    else:
        raise BadRecord((), f"expected conversations (a JSON list or object), got {_short(doc)}")
    if not items:
        raise BadRecord(base, "no conversations in the file")
    return [_conversation(name, item, (*base, i), i) for i, item in enumerate(items)]


def _has_messages(doc: object) -> bool:
    """Whether ``doc`` (or its first element) holds a message or a message list: a transcript with a bad part."""
    first = doc[0] if isinstance(doc, list) and doc else doc
    return is_message_like(first) or (
        isinstance(first, dict) and any(isinstance(first.get(k), list) for k in (*_MESSAGE_KEYS, "conversations"))
    )


def _is_conversation(value: object) -> bool:
    return isinstance(value, list) or (
        isinstance(value, dict)
        and not is_message_like(value)
        and any(isinstance(value.get(k), list) for k in _MESSAGE_KEYS)
    )


def _conversation(name: str, rec: object, where: JSONPath, index: int, line: int | None = None) -> Conversation:
    """One conversation from a list of messages or a container object (see the module docstring)."""
    meta: dict[str, object] = {}
    if isinstance(rec, list):
        raw_messages, msg_at, rec_obj = rec, where, {}
    elif isinstance(rec, dict):
        key = next((k for k in _MESSAGE_KEYS if isinstance(rec.get(k), list)), None)
        if key is None:
            raise BadRecord(where, f"conversation has no message list ({'/'.join(_MESSAGE_KEYS)}): {_short(rec)}")
        raw_messages, msg_at, rec_obj = rec[key], (*where, key), rec
    else:
        raise BadRecord(where, f"a conversation must be a list of messages or an object, got {_short(rec)}")
    messages = [normalise_message(m, (*msg_at, i)) for i, m in enumerate(raw_messages)]
    return _assemble(name, rec_obj, messages, where, index, meta, line)


def _assemble(
    name: str,
    rec: JSONMapping,
    messages: list[Message],
    where: JSONPath,
    index: int,
    meta: dict[str, object],
    line: int | None,
) -> Conversation:
    system: list[Block] = []
    raw_system = rec.get("system")
    if raw_system is not None:
        if isinstance(raw_system, str):
            system.append(Block("text", raw_system))
        else:
            system.extend(normalise_message({"role": "system", "content": raw_system}, (*where, "system")).blocks)
    while messages and messages[0].role == "system":  # leading system messages form the system prompt
        system.extend(messages.pop(0).blocks)
    messages = [Message("user", m.blocks, m.timestamp) if m.role == "system" else m for m in messages]
    if not messages:
        raise BadRecord(where, "conversation has no messages besides the system prompt")
    tools = rec.get("tools") or []
    if not isinstance(tools, list) or not all(isinstance(t, dict) for t in tools):
        raise BadRecord((*where, "tools"), f"tools must be a list of tool schemas, got {_short(tools)}")
    for i, tool in enumerate(tools):
        try:
            orjson.dumps(tool)
        except TypeError:  # orjson writes at most 255 levels; no real schema comes near
            raise BadRecord(
                (*where, "tools", i), f"tool schema {_short(tool)} is nested deeper than 255 levels"
            ) from None
    conv_id = next((str(rec[k]) for k in ("id", *_SESSION_KEYS) if rec.get(k) is not None), None)
    if conv_id is None and rec.get("task_id") is not None:
        conv_id = f"task{rec['task_id']}" + (f"-trial{rec['trial']}" if rec.get("trial") is not None else "")
    family = _family(rec)
    for key in ("task_id", "trial", "reward"):
        if key in rec:
            meta[key] = rec[key]
    conv_id = conv_id or f"{Path(name).name}#{index}"
    return Conversation(
        id=conv_id,
        family=family or conv_id,
        system=tuple(system),
        messages=messages,
        tools=list(tools),
        source=f"{name}:{line if line is not None else '?'}",
        meta=meta,
    )


def _family(rec: JSONMapping) -> str | None:
    """The intention-cache family: a user id when recorded (also tau-bench's ``info.task.user_id``), else task id."""
    for key in ("user_id", "family"):
        if rec.get(key) is not None:
            return f"user:{rec[key]}"
    info = rec.get("info")
    task = info.get("task") if isinstance(info, dict) else None
    if isinstance(task, dict) and task.get("user_id") is not None:
        return f"user:{task['user_id']}"
    if rec.get("task_id") is not None:
        return f"task:{rec['task_id']}"
    return None


def _read_jsonl(name: str, data: bytes) -> list[Conversation]:
    if is_claude_code_log(data):
        return read_claude_code(name, data)
    if is_invocation_log(data=data):
        return read_invocation_log(name, data)
    fmt = detect_jsonl(data)
    if fmt is not None:
        return read_with(fmt, name, data)
    conversations: list[Conversation] = []
    sessions: dict[str, tuple[int, list[Message], JSONMapping]] = {}
    order: list[tuple[str, str | None]] = []  # ("conv", None) placeholders keep file order between kinds
    records = jsonl_records(name, iter_lines(data))
    while True:
        try:
            lineno, rec = next(records)
        except StopIteration:
            break
        except TranscriptError as exc:
            if not order:  # the first record already fails: probably not a transcript at all
                raise TranscriptError(
                    name, exc.line, f"not a JSON or JSONL transcript ({exc.reason.replace(' on this line', '')})"
                ) from None
            raise
        try:
            if isinstance(rec, dict) and str(rec.get("type")) in _SKIPPED_EVENT_TYPES and "message" not in rec:
                continue
            if isinstance(rec, dict) and isinstance(rec.get("message"), dict):  # agent-log event
                msg = normalise_message(rec["message"], ("message",))
                if msg.timestamp is None and rec.get("timestamp") is not None:
                    msg.timestamp = parse_timestamp(rec["timestamp"], ("timestamp",))
                session = next((str(rec[k]) for k in _SESSION_KEYS if rec.get(k) is not None), "")
                _add_event(sessions, order, session, lineno, msg, rec)
            elif isinstance(rec, dict) and is_message_like(rec):
                session = next((str(rec[k]) for k in _SESSION_KEYS if rec.get(k) is not None), "")
                _add_event(sessions, order, session, lineno, normalise_message(rec), rec)
            elif isinstance(rec, (dict, list)):
                conversations.append(_conversation(name, rec, (), len(conversations), line=lineno))
                order.append(("conv", None))
            else:
                raise BadRecord((), f"expected a message, an event or a conversation, got {_short(rec)}")
        except BadRecord as bad:
            hint = f"; {no_format_hint([rec])}" if not order and not bad.where and not _has_messages(rec) else ""
            raise TranscriptError(name, lineno, bad.reason + hint) from None
    # Events become conversations; keep whole-conversation lines and sessions in first-seen order.
    out: list[Conversation] = []
    whole = iter(conversations)
    for _, key in order:
        if key is None:  # ("conv", None): a whole-conversation line
            out.append(next(whole))
            continue
        first_line, messages, first = sessions[key]
        try:
            conv = _assemble(
                name,
                {"id": key or None, **{k: first[k] for k in ("user_id",) if k in first}},
                messages,
                (),
                len(out),
                {},
                first_line,
            )
        except BadRecord as bad:
            raise TranscriptError(name, first_line, bad.reason) from None
        out.append(conv)
    if not out:
        raise TranscriptError(name, 1, "no conversations in the file")
    return out


def _add_event(
    sessions: dict[str, tuple[int, list[Message], JSONMapping]],
    order: list[tuple[str, str | None]],
    session: str,
    lineno: int,
    msg: Message,
    rec: JSONMapping,
) -> None:
    if session not in sessions:
        sessions[session] = (lineno, [], rec)
        order.append(("session", session))
    sessions[session][1].append(msg)

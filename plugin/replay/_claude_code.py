"""Reading Claude Code session logs (``~/.claude/projects/<project>/<session>.jsonl``) into the API calls they record.

A session log is one JSON record per line. Records of type ``user`` and ``assistant`` are the messages of the
conversation sent to the model; ``progress``, ``file-history-snapshot``, ``queue-operation``, ``summary`` and
``system`` records are the tool's own bookkeeping and never reach the model, except that a ``system`` record of
subtype ``compact_boundary`` starts a new context (the conversation was compacted). Every record with a ``uuid``
names its ``parentUuid``, so the log is a tree; bookkeeping records are links of that tree too. A record type never
seen before is skipped with one ``TranscriptWarning`` per file and type.

How the API calls are recovered (``claude_code_calls`` builds the prompts and the conversations):

- **Synthetic replies** (``message.model == "<synthetic>"`` or ``isApiErrorMessage``: an API error or an interrupt
  notice Claude Code writes itself) are not API calls and are not sent; they are links of the chain only.
- **One API call per ``requestId``** (else ``message.id``): the reply is logged as one ``assistant`` line per content
  block, all with the same id; they are merged, in line order. Its ``Usage`` is the logged ``message.usage`` of the
  line with the largest ``output_tokens`` (earlier lines of one reply are written while it streams and carry partial
  output counts); ``Message.model`` is ``message.model``. Lines that reuse an id with another model are another
  call (keyed ``"<id>@<model>"``): one reply never comes from two models.
- **The prompt of a call** is the chain of records from the parent of its first line back to the root (or to a
  ``compact_boundary``; a cycle in ``parentUuid`` ends the chain where it closes, before any line of the call
  itself): walking up the tree follows rewinds and branches to what was really sent. Parallel tool
  calls are logged as a chain of ``tool_use`` lines whose ``tool_result`` lines hang off their own ``tool_use`` line,
  so most results are not on the chain: every result answering a ``tool_use`` of the prompt and logged before the
  call is regrouped into one user message right after the assistant message that made the calls, in call order
  (the API requires results first in that message). Other user content on the chain follows it. ``isMeta`` user
  lines (skill text, command caveats, hook context) are sent and kept; an ``isMeta`` line with no children whose
  parent is on the chain (hook context attached after a tool result, as the compaction sub-agent's log records it)
  is placed right after its parent. Whitespace-only text blocks, which the API rejects, are dropped.
- **Conversations**: calls are taken in log order; a call whose prompt extends a conversation of the same log file
  (same messages, same order) continues it; any other call starts a new ``Conversation`` holding its whole prompt
  (after a compaction the prompt is new; after a rewind, or in the compaction sub-agent's log, it repeats part of an
  earlier conversation's history). Each conversation's ``replies`` lists only its own calls, so every API call is
  exactly one request and repeated history is never counted twice; repeated history still has the same prefix
  hashes, so the cache simulation sees it.
- **A session folder** (``<session>/`` with ``subagents/agent-*.jsonl``, the session log ``<session>.jsonl`` beside
  it) is read as one tree: Task sub-agents become their own conversations, and the compaction call (whose log
  ``agent-acompact-*.jsonl`` points into the main log) becomes a conversation of one request whose prompt is the main
  conversation up to the compaction plus the summary request. The hook-context lines that only the compaction log
  records (``isMeta`` leaves whose parent is in the main log) were sent with the main conversation's later calls
  too (the compaction call reads the main conversation's whole cached prefix), so they join every prompt logged
  after them (across files, "after" is by timestamp). Each reply carries its own ``model``. A sub-agent log
  read on its own (not through its folder) is read the same way, without the main log's history.

``Conversation.meta`` of every conversation: ``format="claude-code"``, ``hidden_prefix=True`` (the system prompt and
the tool schemas were sent but are not in the log), ``session_id``, ``agent`` (``""`` for the main session, else
the sub-agent file's stem, e.g. ``"agent-a881341"``), ``context_start`` (``"session"``: the prompt starts at the
session's first message; ``"compact_boundary"``: it starts after a compaction; ``"missing_parent"``: the chain
leaves this log, e.g. a compaction sub-agent log read without its session), ``shared_messages`` (how many leading
messages repeat an earlier conversation's history, 0 if none), ``request_ids`` (the call key of each reply in
``replies``, in order), ``call_sources`` (``"FILE:LINE"`` of each call's first line) and ``reply_done_s`` (reply
message index -> epoch seconds of the call's last logged line: when the reply was done).
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

import orjson

from ._claude_code_checks import check_usage, cut_cycles
from ._input_guard import check_input_file
from ._jsonpos import jsonl_records
from ._logged_usage import anthropic_usage
from ._messages import BadRecord, _content_blocks, _short, parse_timestamp
from ._transcript import Block, Conversation, Message, TranscriptError, TranscriptWarning, Usage

__all__ = [
    "is_claude_code_log",
    "is_session_folder",
    "read_claude_code",
    "read_claude_code_file",
    "read_session_folder",
    "session_files",
]

#: Record types Claude Code writes that are not messages to the model (observed in Claude Code 2.1 session logs).
BOOKKEEPING_TYPES = frozenset({"file-history-snapshot", "progress", "queue-operation", "summary", "system"})
MESSAGE_TYPES = frozenset({"user", "assistant"})
#: ``message.model`` of assistant lines Claude Code writes itself (API errors, "No response requested.").
SYNTHETIC_MODEL = "<synthetic>"
_SIGNATURE_TYPES = frozenset({"file-history-snapshot", "queue-operation", "progress"})


@dataclass(slots=True)
class Line:
    """One record of a session log that takes part in the tree.

    Attributes:
        file: index of its file in the session (0 = the first file read).
        line: 1-based line number in that file.
        uuid / parent: the record's ``uuid`` and ``parentUuid`` (``None`` for a root).
        kind: ``"user"``, ``"assistant"``, ``"boundary"`` (a ``compact_boundary``) or ``"other"`` (bookkeeping).
        ts: epoch seconds of ``timestamp`` (``None`` when absent).
        blocks: content blocks (whitespace-only text dropped); empty for non-messages.
        call: for an assistant line, the API call key (``requestId``, else ``message.id``).
        is_meta: the record's ``isMeta`` flag.
        usage / model: an assistant line's logged usage and model.
        children: records whose parent this is, in reading order.
    """

    file: int
    line: int
    uuid: str
    parent: str | None
    kind: str
    ts: float | None = None
    blocks: tuple[Block, ...] = ()
    call: str = ""
    is_meta: bool = False
    usage: Usage | None = None
    model: str | None = None
    children: list[Line] = field(default_factory=list)


@dataclass(slots=True)
class Session:
    """The tree of one session: every file's lines, indexed by uuid, and the API calls in reading order."""

    names: list[str] = field(default_factory=list)  # file names, by file index
    agents: list[str] = field(default_factory=list)  # "" for the main log, else the sub-agent file's stem
    by_uuid: dict[str, Line] = field(default_factory=dict)
    calls: dict[str, list[Line]] = field(default_factory=dict)  # call key -> its assistant lines, in order
    results: dict[str, list[Line]] = field(default_factory=dict)  # tool_use id -> user lines answering it
    session_id: str = ""


def is_claude_code_log(data: bytes, limit: int = 50) -> bool:
    """True when the JSONL ``data`` looks like a Claude Code session log: among its first ``limit`` parseable lines,
    a record with both ``uuid`` and ``parentUuid`` keys, of a type only Claude Code writes
    (``file-history-snapshot``, ``queue-operation``, ``progress``), or a ``summary`` record with a ``leafUuid``
    (what a resumed session's log opens with)."""
    if b"parentUuid" not in data and b"leafUuid" not in data and not any(t.encode() in data for t in _SIGNATURE_TYPES):
        return False
    seen = 0
    for raw in data.splitlines():
        if not raw.strip():
            continue
        try:
            rec = orjson.loads(raw)
        except orjson.JSONDecodeError:
            continue
        kind = rec.get("type") if isinstance(rec, dict) else None
        if isinstance(rec, dict) and (("uuid" in rec and "parentUuid" in rec) or str(kind) in _SIGNATURE_TYPES):
            return True
        if kind == "summary" and "leafUuid" in rec:
            return True  # a resumed session's log opens with one of these per earlier part, however many
        seen += 1
        if seen >= limit:
            break
    return False


def session_files(folder: str | Path) -> list[Path]:
    """The logs of a session folder: the session log ``<folder>.jsonl`` beside it (or inside it), when it is a
    Claude Code log, then ``subagents/agent-*.jsonl`` sorted by name. Empty when ``folder`` is not a session
    folder."""
    path = Path(folder)
    agents = sorted((path / "subagents").glob("agent-*.jsonl")) if (path / "subagents").is_dir() else []
    for main in (path.parent / f"{path.name}.jsonl", path / f"{path.name}.jsonl"):
        if main.is_file() and _head_is_claude_code(main):
            return [main, *agents]
    return agents


def _head_is_claude_code(path: Path, size: int = 1 << 16) -> bool:
    try:
        with path.open("rb") as handle:
            head = handle.read(size)
    except OSError:
        return False
    return is_claude_code_log(head.rsplit(b"\n", 1)[0] if len(head) == size else head)


def is_session_folder(folder: str | Path) -> bool:
    """True for a Claude Code session folder: a directory with ``subagents/agent-*.jsonl`` files or a Claude Code
    session log ``<folder>.jsonl`` beside it."""
    return Path(folder).is_dir() and bool(session_files(folder))


def read_claude_code(name: str, data: bytes | Iterable[bytes]) -> list[Conversation]:
    """The conversations of one Claude Code session log (module docstring): its bytes, or its lines as an open
    binary file yields them (read as a stream, never whole). Raises ``TranscriptError``."""
    session = Session()
    path = Path(name)
    lines = data.splitlines() if isinstance(data, bytes) else data
    _add_file(session, name, lines, path.stem if path.parent.name == "subagents" else "")
    return _conversations(session, name)


def read_claude_code_file(path: str | Path) -> list[Conversation]:
    """``read_claude_code`` on the file at ``path``, read line by line. Raises ``TranscriptError``."""
    try:
        with Path(path).open("rb") as handle:
            return read_claude_code(str(path), handle)
    except OSError as exc:
        raise TranscriptError(str(path), 0, f"cannot read file: {exc.strerror or exc}") from None


def read_session_folder(folder: str | Path) -> list[Conversation]:
    """The conversations of a session folder and the log beside it (``session_files``), read as one tree.

    An empty sub-agent log (a sub-agent that stopped before writing a line) is skipped with one
    ``TranscriptWarning``; the folder's other logs are read.

    Raises:
        TranscriptError: no session log in the folder, a file that is unreadable or malformed, or no API call in
            any of its logs.
    """
    files = session_files(folder)
    if not files:
        raise TranscriptError(str(folder), 0, "is a directory but not a Claude Code session folder")
    session = Session()
    for path in files:
        agent = path.stem if path.parent.name == "subagents" else ""
        try:
            check_input_file(path)  # regular files only, within the size limit
            with path.open("rb") as handle:
                if agent and not _has_content(handle):
                    warnings.warn(f"{path}: skipped an empty sub-agent log", TranscriptWarning, stacklevel=2)
                    continue
                _add_file(session, str(path), handle, agent)
        except OSError as exc:
            raise TranscriptError(str(path), 0, f"cannot read file: {exc.strerror or exc}") from None
    return _conversations(session, str(folder))


def _has_content(handle: BinaryIO) -> bool:
    """Whether an open file holds anything but whitespace (it is left at its start)."""
    while chunk := handle.read(1 << 16):
        if chunk.strip():
            handle.seek(0)
            return True
    handle.seek(0)
    return False


def _conversations(session: Session, name: str) -> list[Conversation]:
    """The conversations of ``session``; a log with no API call in it (only bookkeeping records, or only lines
    Claude Code wrote itself) raises ``TranscriptError`` naming ``name``, as an empty file does."""
    from ._claude_code_calls import build_conversations  # the second half of this reader

    if not session.calls:
        raise TranscriptError(name, 0, "no API calls (assistant records) in the log")
    return build_conversations(session)


def _add_file(session: Session, name: str, lines: Iterable[bytes], agent: str) -> None:
    file = len(session.names)
    session.names.append(name)
    session.agents.append(agent)
    warned: set[str] = set()
    records = 0
    in_order: list[Line] = []  # this file's tree nodes (and broken lines), in line order
    broken: list[Line] = []

    def on_skip(lineno: int, raw: bytes) -> None:
        found = _PARENT.search(raw)
        parent = found.group(2).decode("utf-8", "replace") if found and found.group(2) else None
        node = Line(file, lineno, "", parent, "other")
        broken.append(node)
        in_order.append(node)

    for lineno, rec in jsonl_records(name, lines, on_skip):
        if not isinstance(rec, dict):
            raise TranscriptError(name, lineno, f"expected a Claude Code record (a JSON object), got {_short(rec)}")
        records += 1
        kind = rec.get("type")
        if not isinstance(kind, str) or (kind not in MESSAGE_TYPES and kind not in BOOKKEEPING_TYPES):
            if str(kind) not in warned:
                warned.add(str(kind))
                warnings.warn(
                    f"{name}:{lineno}: skipped records of unknown type {_short(kind)} (first on this line)",
                    TranscriptWarning,
                    stacklevel=2,
                )
            continue
        if not session.session_id and isinstance(rec.get("sessionId"), str):
            session.session_id = rec["sessionId"]
        try:
            line = _line(rec, file, lineno, name)
        except BadRecord as bad:
            raise TranscriptError(name, lineno, bad.reason) from None
        if line is None:
            continue
        if line.uuid in session.by_uuid:  # the same record logged twice (a resumed session re-writes history)
            continue
        session.by_uuid[line.uuid] = line
        if broken:
            in_order.append(line)
        if line.kind == "assistant":
            same = session.calls.get(line.call)
            if same and same[0].model and line.model and same[0].model != line.model:
                line.call = f"{line.call}@{line.model}"  # one id, two models: two calls, not one merged reply
            session.calls.setdefault(line.call, []).append(line)
        elif line.kind == "user":
            for block in line.blocks:
                if block.kind == "tool_result" and block.id:
                    session.results.setdefault(block.id, []).append(line)
    if broken:
        _relink_broken(session, in_order)
    if not records:
        raise TranscriptError(name, 1, "empty file: no records")
    cut_cycles(session)
    for line in session.by_uuid.values():  # children, once every file so far is indexed
        line.children.clear()
    for line in session.by_uuid.values():
        parent = session.by_uuid.get(line.parent) if line.parent else None
        if parent is not None:
            parent.children.append(line)


#: The ``parentUuid`` a broken record still shows: Claude Code writes it first, so a cut line keeps it.
_PARENT = re.compile(rb'"parentUuid"\s*:\s*(null|"([^"\\]+)")')


def _relink_broken(session: Session, in_order: list[Line]) -> None:
    """Give each broken line of one file (``Line.uuid == ""``, ``parent`` read from its text when it survived)
    the uuid that a later record of the file names as its parent but no record defines: the nearest broken line
    before that record takes it. The tree then runs through the broken line (a link of the chain, its content
    lost) instead of ending there; a broken line no record names stays out of the tree."""
    pending: list[Line] = []
    for node in in_order:
        parent = node.parent
        if parent and parent not in session.by_uuid and pending:
            taken = pending.pop()
            taken.uuid = parent
            session.by_uuid[parent] = taken
        if not node.uuid:
            pending.append(node)


def _line(rec: dict[str, Any], file: int, lineno: int, name: str) -> Line | None:
    """The tree node of one record, or ``None`` for a record outside the tree (no ``uuid``). An assistant line whose
    ``usage`` holds a bad count keeps no usage (`promptcache.replay._claude_code_checks.check_usage`)."""
    uuid = rec.get("uuid")
    kind = rec["type"]
    if not isinstance(uuid, str) or not uuid:
        if kind in MESSAGE_TYPES:
            what = "without a uuid" if uuid is None else f"whose uuid is not a non-empty string: {_short(uuid)}"
            raise BadRecord(("uuid",), f"{kind} record {what}")
        return None
    parent = rec.get("parentUuid")
    if parent is not None and not isinstance(parent, str):
        raise BadRecord(("parentUuid",), f"parentUuid must be a string or null, got {_short(parent)}")
    ts = parse_timestamp(rec.get("timestamp"), ("timestamp",))
    if kind not in MESSAGE_TYPES:
        node_kind = "boundary" if kind == "system" and rec.get("subtype") == "compact_boundary" else "other"
        return Line(file, lineno, uuid, parent, node_kind, ts)
    message = rec.get("message")
    if not isinstance(message, dict):
        raise BadRecord(("message",), f"{kind} record without a message object: {_short(rec)}")
    if kind == "assistant" and (message.get("model") == SYNTHETIC_MODEL or rec.get("isApiErrorMessage")):
        return Line(file, lineno, uuid, parent, "other", ts)  # written by Claude Code itself, not by a model call
    content = message.get("content")
    blocks = tuple(b for b in _content_blocks(content, ("message", "content")) if b.kind != "text" or b.text.strip())
    line = Line(file, lineno, uuid, parent, kind, ts, blocks, is_meta=bool(rec.get("isMeta")))
    if kind == "assistant":
        call = rec.get("requestId") or message.get("id")
        if not isinstance(call, str) or not call:
            call = f"line:{file}:{lineno}"  # no id at all: a call of its own
        line.call = call
        model = message.get("model")
        line.model = model if isinstance(model, str) and model else None
        usage = message.get("usage")
        line.usage = anthropic_usage(usage) if check_usage(usage, name, lineno) else None
    return line


def reply_message(lines: list[Line]) -> Message:
    """The merged reply of one API call from its assistant lines (in order): every block once, the usage of the
    line with the most output tokens, the first line's timestamp and the first model named."""
    blocks: list[Block] = []
    for line in lines:
        blocks.extend(line.blocks)
    usages = [line.usage for line in lines if line.usage is not None]
    usage = max(usages, key=lambda u: u.output_tokens) if usages else None
    model = next((line.model for line in lines if line.model), None)
    return Message("assistant", tuple(blocks), lines[0].ts, usage, model)

"""Reading Claude Code session logs (``~/.claude/projects/<project>/<session>.jsonl``) into the API calls they record.

A session log is one JSON record per line. Records of type ``user`` and ``assistant`` are the messages of the
conversation sent to the model; ``progress``, ``file-history-snapshot``, ``queue-operation``, ``summary`` and
``system`` records are the tool's own bookkeeping and never reach the model, except that a ``system`` record of
subtype ``compact_boundary`` starts a new context (the conversation was compacted). Every record with a ``uuid``
names its ``parentUuid``, so the log is a tree; bookkeeping records are links of that tree too. A record type never
seen before is skipped with one ``TranscriptWarning`` per file and type.

How the API calls are recovered (``promptcache.replay._claude_code_tree`` holds the tree,
``promptcache.replay._claude_code_calls`` builds the prompts and the conversations):

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

import warnings
from collections.abc import Iterable
from pathlib import Path
from typing import BinaryIO

import orjson

from ._claude_code_calls import build_conversations
from ._claude_code_checks import cut_cycles
from ._claude_code_tree import (
    BOOKKEEPING_TYPES,
    MESSAGE_TYPES,
    Line,
    Session,
    broken_line,
    relink_broken,
    tree_node,
)
from ._input_guard import check_input_file, is_special_file, skipped_not_regular
from ._jsonpos import iter_lines, jsonl_records, loads_line
from ._messages import BadRecord, _short
from ._transcript import Conversation, TranscriptError, TranscriptWarning

__all__ = [
    "file_is_claude_code_log",
    "is_claude_code_log",
    "is_session_folder",
    "read_claude_code",
    "read_claude_code_file",
    "read_session_folder",
    "session_files",
]

_SIGNATURE_TYPES = frozenset({"file-history-snapshot", "queue-operation", "progress"})


def is_claude_code_log(data: bytes, limit: int = 50) -> bool:
    """True when the JSONL ``data`` looks like a Claude Code session log: among its first ``limit`` parseable lines,
    a record with both ``uuid`` and ``parentUuid`` keys, of a type only Claude Code writes
    (``file-history-snapshot``, ``queue-operation``, ``progress``), or a ``summary`` record with a ``leafUuid``
    (what a resumed session's log opens with)."""
    if b"parentUuid" not in data and b"leafUuid" not in data and not any(t.encode() in data for t in _SIGNATURE_TYPES):
        return False
    seen = 0
    for raw in iter_lines(data):
        if not raw.strip():
            continue
        try:
            rec = loads_line(raw)  # as the reader parses it (``NaN`` as text)
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
        if main.is_file() and file_is_claude_code_log(main):
            return [main, *agents]
    return agents


def file_is_claude_code_log(path: Path, size: int = 1 << 16) -> bool:
    """Whether the first ``size`` bytes of ``path`` (a cut last line dropped) read as a Claude Code log; ``False``
    when the file cannot be read."""
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
    lines = iter_lines(data) if isinstance(data, bytes) else data
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
    ``TranscriptWarning``, and so are sub-agent entries that are named pipes, devices or sockets (one warning naming
    them, as a project folder's are) while the folder has another log to read; the folder's other logs are read.

    Raises:
        TranscriptError: no session log in the folder, a file that is unreadable or malformed, or no API call in
            any of its logs.
    """
    files = session_files(folder)
    if not files:
        raise TranscriptError(str(folder), 0, "is a directory but not a Claude Code session folder")
    special = [p for p in files if is_special_file(p)]
    if special and len(special) < len(files):  # with nothing else to read, the first one is the error below
        warnings.warn(
            skipped_not_regular(Path(folder) / "subagents", [p.name for p in special], "a sub-agent log"),
            TranscriptWarning,
            stacklevel=2,
        )
        files = [p for p in files if p not in special]
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
    if not session.calls:
        raise TranscriptError(name, 0, "no API calls (assistant records) in the log")
    return build_conversations(session)


def _add_file(session: Session, name: str, lines: Iterable[bytes], agent: str) -> None:
    """Read one log's records into ``session`` (lines of an unknown record type skipped with one warning per
    type; broken lines kept as links where a later record names them). Raises ``TranscriptError``."""
    file = len(session.names)
    session.names.append(name)
    session.agents.append(agent)
    warned: set[str] = set()
    records = 0
    in_order: list[Line] = []  # this file's tree nodes (and broken lines), in line order
    broken: list[Line] = []

    def on_skip(lineno: int, raw: bytes) -> None:
        node = broken_line(file, lineno, raw)
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
            line = tree_node(rec, file, lineno, name)
        except BadRecord as bad:
            raise TranscriptError(name, lineno, bad.reason) from None
        if line is not None and session.add(line) and broken:
            in_order.append(line)
    if broken:
        relink_broken(session, in_order)
    if not records:
        raise TranscriptError(name, 1, "empty file: no records")
    cut_cycles(session)
    session.link_children()

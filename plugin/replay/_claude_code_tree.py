"""The tree of a Claude Code session (``Session``, ``Line``): one node per record with a ``uuid``, linked by
``parentUuid``, with the API calls and the tool results indexed; and the merged reply of one call
(``reply_message``). ``promptcache.replay._claude_code`` reads logs into it; ``promptcache.replay._claude_code_calls``
and ``promptcache.replay._claude_code_walk`` turn it into prompts and conversations (rules in the reader's
docstring)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from promptcache._types import JSONMapping

from ._claude_code_checks import check_usage
from ._logged_usage import anthropic_usage
from ._messages import BadRecord, _content_blocks, _short, parse_timestamp
from ._transcript import Block, Message, Usage

__all__ = [
    "BOOKKEEPING_TYPES",
    "MESSAGE_TYPES",
    "PARENT_FIELD",
    "SYNTHETIC_MODEL",
    "Line",
    "Session",
    "broken_line",
    "relink_broken",
    "reply_message",
    "tree_node",
]

#: Record types Claude Code writes that are not messages to the model (observed in Claude Code 2.1 session logs).
BOOKKEEPING_TYPES = frozenset({"file-history-snapshot", "progress", "queue-operation", "summary", "system"})
MESSAGE_TYPES = frozenset({"user", "assistant"})
#: ``message.model`` of assistant lines Claude Code writes itself (API errors, "No response requested.").
SYNTHETIC_MODEL = "<synthetic>"


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
        context_tokens: a ``compact_boundary``'s ``compactMetadata.preTokens``: the tokens Claude Code counted in
            the context it compacted (the last call's prompt and reply; ``None`` when absent or not a positive int).
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
    context_tokens: int | None = None
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

    def add(self, line: Line) -> bool:
        """Index a new node (its call, the tool results it holds); ``False`` for a uuid already in the tree (the
        same record logged twice: a resumed session re-writes history), which is left out."""
        if line.uuid in self.by_uuid:
            return False
        self.by_uuid[line.uuid] = line
        if line.kind == "assistant":
            same = self.calls.get(line.call)
            if same and same[0].model and line.model and same[0].model != line.model:
                line.call = f"{line.call}@{line.model}"  # one id, two models: two calls, not one merged reply
            self.calls.setdefault(line.call, []).append(line)
        elif line.kind == "user":
            for block in line.blocks:
                if block.kind == "tool_result" and block.id:
                    self.results.setdefault(block.id, []).append(line)
        return True

    def link_children(self) -> None:
        """Set every node's ``children`` (again, once every file read so far is indexed)."""
        for line in self.by_uuid.values():
            line.children.clear()
        for line in self.by_uuid.values():
            parent = self.by_uuid.get(line.parent) if line.parent else None
            if parent is not None:
                parent.children.append(line)


#: The ``parentUuid`` a broken record still shows: Claude Code writes it first, so a cut line keeps it.
PARENT_FIELD = re.compile(rb'"parentUuid"\s*:\s*(null|"([^"\\]+)")')


_RECORD_TYPE = re.compile(rb'"type"\s*:\s*"(\w+)"')
_TOOL_USE_ID = re.compile(rb'"tool_use_id"\s*:\s*"([^"\\]+)"')
_UNESCAPE = {"\\n": "\n", '\\"': '"', "\\t": "\t", "\\\\": "\\"}
_ESCAPES = re.compile(r'\\[nt"\\]')


def broken_line(file: int, lineno: int, raw: bytes) -> Line:
    """The tree node of a line that is not valid JSON (its ``uuid`` empty until ``relink_broken`` gives it one).

    Its ``parentUuid`` is read from its text (Claude Code writes it first). A ``user`` record (its first
    ``"type"`` field, which Claude Code writes before the message) keeps what survives of its message as one block
    of text (a ``tool_result`` where the text names a ``tool_use_id``): the bytes from ``"message":`` to the
    record's top-level ``"uuid"`` field (so the copy of a tool's output in ``toolUseResult`` is left out), JSON
    escapes of newlines, tabs, quotes and backslashes undone. A prompt estimated without logged usage then still
    holds what survives of the lost record (often a tool result); where usage is logged, the sizes are fitted to
    it anyway. Any other record stays a bookkeeping link without content.
    """
    found = PARENT_FIELD.search(raw)
    parent = found.group(2).decode("utf-8", "replace") if found and found.group(2) else None
    kind = _RECORD_TYPE.search(raw)
    start = raw.find(b'"message"')
    if kind is None or kind.group(1) != b"user" or start < kind.start():
        return Line(file, lineno, "", parent, "other")
    end = raw.rfind(b',"uuid":"')
    body = raw[start : end if end > start else len(raw)]
    text = _ESCAPES.sub(lambda m: _UNESCAPE[m.group(0)], body.decode("utf-8", "replace"))
    tool = _TOOL_USE_ID.search(body)
    if tool is not None:
        block = Block("tool_result", text, id=tool.group(1).decode("utf-8", "replace"))
    else:
        block = Block("text", text)
    return Line(file, lineno, "", parent, "user", blocks=(block,))


def relink_broken(session: Session, in_order: list[Line]) -> None:
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


def tree_node(rec: JSONMapping, file: int, lineno: int, name: str) -> Line | None:
    """The tree node of one record of file ``name`` (``lineno`` 1-based), or ``None`` for a record outside the tree
    (no ``uuid``). An assistant line whose ``usage`` holds a bad count keeps no usage
    (`promptcache.replay._claude_code_checks.check_usage`)."""
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
        if kind == "system" and rec.get("subtype") == "compact_boundary":
            meta = rec.get("compactMetadata")
            pre = meta.get("preTokens") if isinstance(meta, dict) else None
            known = pre if isinstance(pre, int) and not isinstance(pre, bool) and pre > 0 else None
            return Line(file, lineno, uuid, parent, "boundary", ts, context_tokens=known)
        return Line(file, lineno, uuid, parent, "other", ts)
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

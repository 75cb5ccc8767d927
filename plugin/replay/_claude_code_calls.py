"""The API calls of a Claude Code session tree: each call's prompt, and the conversations they form.

The rules (which records are sent, how parallel tool results are regrouped, how rewinds, compactions and sub-agents
become conversations) are stated in ``promptcache.replay._claude_code``, the reader this module completes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ._claude_code_tree import Line, Session, reply_message
from ._claude_code_walk import PromptWalker
from ._transcript import Block, Conversation, Message

__all__ = ["build_conversations", "prompt_of"]

#: A message's identity across prompts: ("a", call) an assistant reply, ("r", call, ids) the regrouped results
#: of that call's tool uses, ("u", uuid) a user line's other content, ("m", uuid) an attached isMeta line.
Key = tuple[Any, ...]


@dataclass(slots=True)
class _Open:
    """A conversation being built: its messages, their keys, and the indices of its own calls' replies."""

    file: int
    keys: list[Key]
    messages: list[Message]
    replies: list[int] = field(default_factory=list)
    start: str = "session"
    shared: int = 0
    line: int = 0
    calls: list[str] = field(default_factory=list)
    sources: list[str] = field(default_factory=list)
    done: dict[int, float] = field(default_factory=dict)  # reply index -> time its last line was logged


def _before(line: Line, first: Line) -> bool:
    """``line`` was logged before the call whose first line is ``first``: by line order in one file, by timestamp
    across files (never, without timestamps)."""
    if line.file == first.file:
        return line.line < first.line
    return line.ts is not None and first.ts is not None and line.ts < first.ts


def prompt_of(session: Session, first: Line, replies: dict[str, Message]) -> tuple[list[Key], list[Message], str]:
    """The messages sent by the call whose first assistant line is ``first``.

    Args:
        session: the tree.
        first: the call's first line.
        replies: merged reply per call key (filled on demand).

    Returns:
        ``(keys, messages, start)``; ``start`` is where the chain began: ``"session"``, ``"compact_boundary"`` or
        ``"missing_parent"`` (see the reader's docstring).
    """
    chain: list[Line] = []
    seen: set[str] = set()
    own = {line.uuid for line in session.calls[first.call]}
    start = "session"
    uuid = first.parent
    while uuid is not None:
        node = session.by_uuid.get(uuid)
        if node is None:
            start = "missing_parent"
            break
        if node.kind == "boundary":
            start = "compact_boundary"
            break
        if node.uuid in seen or node.uuid in own:  # a cycle in parentUuid: stop where it closes
            break
        seen.add(node.uuid)
        chain.append(node)
        uuid = node.parent
    chain.reverse()

    keys: list[Key] = []
    messages: list[Message] = []
    answered: set[str] = set()
    emitted_calls: set[str] = set()

    def attach_metas(node: Line) -> None:
        for child in node.children:
            if (
                child.kind == "user"
                and child.is_meta
                and not child.children
                and child.uuid not in seen
                and _before(child, first)
                and child.blocks
            ):
                keys.append(("m", child.uuid))
                messages.append(Message("user", child.blocks, child.ts))

    for node in chain:
        if node.kind == "assistant":
            if node.call not in emitted_calls:
                emitted_calls.add(node.call)
                reply = replies.get(node.call)
                if reply is None:
                    reply = replies[node.call] = reply_message(session.calls[node.call])
                if reply.blocks:
                    keys.append(("a", node.call))
                    messages.append(reply)
                _results(session, node.call, reply, first, seen, keys, messages, answered)
        elif node.kind == "user":
            blocks = tuple(b for b in node.blocks if not (b.kind == "tool_result" and b.id in answered))
            if blocks:
                keys.append(("u", node.uuid))
                messages.append(Message("user", blocks, node.ts))
        attach_metas(node)
    return keys, messages, start


def _results(
    session: Session,
    call: str,
    reply: Message,
    first: Line,
    on_chain: set[str],
    keys: list[Key],
    messages: list[Message],
    answered: set[str],
) -> None:
    """Append the user message of every logged result answering ``reply``'s tool uses, in call order."""
    blocks: list[Block] = []
    stamps: list[float] = []
    ids: list[str] = []
    for use in reply.blocks:
        if use.kind != "tool_use" or not use.id or use.id in answered:
            continue
        lines = [ln for ln in session.results.get(use.id, ()) if _before(ln, first)]
        if not lines:
            continue
        line = next((ln for ln in lines if ln.uuid in on_chain), lines[0])
        result = next(b for b in line.blocks if b.kind == "tool_result" and b.id == use.id)
        blocks.append(result)
        answered.add(use.id)
        ids.append(use.id)
        if line.ts is not None:
            stamps.append(line.ts)
    if blocks:
        keys.append(("r", call, tuple(ids)))
        messages.append(Message("user", tuple(blocks), max(stamps) if stamps else None))


def build_conversations(session: Session) -> list[Conversation]:
    """Every API call of ``session`` as exactly one request of one conversation (rules in the reader's docstring).
    Conversations come in the order of their first call."""
    replies: dict[str, Message] = {}
    convs: list[_Open] = []
    calls = sorted(session.calls.values(), key=lambda lines: (lines[0].file, lines[0].line))
    walker = PromptWalker(session, replies)
    for lines in calls:
        first = lines[0]
        keys, messages, start = walker.prompt(first)
        reply = replies.get(first.call)
        if reply is None:
            reply = replies[first.call] = reply_message(lines)
        target = _extended(convs, keys, first.file)
        if target is None:
            shared = _shared(convs, keys)
            target = _Open(first.file, [], [], start=start, shared=shared, line=first.line)
            convs.append(target)
        target.messages.extend(messages[len(target.keys) :])
        target.keys.extend(keys[len(target.keys) :])
        target.replies.append(len(target.messages))
        target.calls.append(first.call)
        target.sources.append(f"{session.names[first.file]}:{first.line}")
        stamps = [line.ts for line in lines if line.ts is not None]
        if stamps:
            target.done[len(target.messages)] = max(stamps)
        target.messages.append(reply)
        target.keys.append(("a", first.call))
    return [_finish(session, conv) for conv in convs]


def _extended(convs: list[_Open], keys: list[Key], file: int) -> _Open | None:
    """The latest conversation of log ``file`` whose messages the prompt ``keys`` starts with (``None`` if none
    does). Calls of another log (a sub-agent's) never continue it, so each log's calls stay its own."""
    for conv in reversed(convs):
        if conv.file != file:
            continue
        n = len(conv.keys)
        if n <= len(keys) and conv.keys[-1] == keys[n - 1] and conv.keys == keys[:n]:
            return conv
    return None


def _shared(convs: list[_Open], keys: list[Key]) -> int:
    """How many leading messages of the prompt ``keys`` repeat an earlier conversation's history."""
    best = 0
    for conv in convs:
        n = 0
        for a, b in zip(conv.keys, keys):
            if a != b:
                break
            n += 1
        best = max(best, n)
    return best


def _finish(session: Session, conv: _Open) -> Conversation:
    sid = session.session_id or Path(session.names[conv.file]).stem
    agent = session.agents[conv.file]
    base = f"{sid}/{agent}" if agent else sid
    conv_id = base if conv.start == "session" and not conv.shared else f"{base}@{conv.line}"
    return Conversation(
        id=conv_id,
        family=sid,
        system=(),
        messages=conv.messages,
        tools=[],
        source=f"{session.names[conv.file]}:{conv.line}",
        meta={
            "format": "claude-code",
            "hidden_prefix": True,
            "session_id": sid,
            "agent": agent,
            "context_start": conv.start,
            "shared_messages": conv.shared,
            "request_ids": conv.calls,
            "call_sources": conv.sources,
            "reply_done_s": conv.done,
        },
        replies=conv.replies,
    )

"""The API calls of a Claude Code session tree: each call's prompt, and the conversations they form.

The rules (which records are sent, how parallel tool results are regrouped, how rewinds, compactions and sub-agents
become conversations) are stated in ``promptcache.replay._claude_code``, the reader this module completes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ._claude_code_prefixes import PrefixIndex
from ._claude_code_tree import Line, Session, reply_message
from ._claude_code_walk import Key, PromptWalker
from ._transcript import Conversation, Message

__all__ = ["build_conversations", "prompt_of"]


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
    context_tokens: int | None = None  # tokens Claude Code counted when it compacted this conversation (its end)


def prompt_of(session: Session, first: Line, replies: dict[str, Message]) -> tuple[list[Key], list[Message], str]:
    """The messages sent by the call whose first assistant line is ``first``, built from scratch: a new
    ``PromptWalker`` walks the call's whole chain (what ``build_conversations`` gets from one walker for every call
    in log order, walking only what changed since the previous call).

    Args:
        session: the tree.
        first: the call's first line.
        replies: merged reply per call key (filled on demand).

    Returns:
        ``(keys, messages, start)``; ``start`` is where the chain began: ``"session"``, ``"compact_boundary"`` or
        ``"missing_parent"`` (see the reader's docstring).
    """
    keys, messages, start = PromptWalker(session, replies).prompt(first)
    return list(keys), list(messages), start


def build_conversations(session: Session) -> list[Conversation]:
    """Every API call of ``session`` as exactly one request of one conversation (rules in the reader's docstring).
    Conversations come in the order of their first call."""
    replies: dict[str, Message] = {}
    convs: list[_Open] = []
    index = PrefixIndex()
    calls = sorted(session.calls.values(), key=lambda lines: (lines[0].file, lines[0].line))
    walker = PromptWalker(session, replies)
    for lines in calls:
        first = lines[0]
        keys, messages, start = walker.prompt(first)
        reply = replies.get(first.call)
        if reply is None:
            reply = replies[first.call] = reply_message(lines)
        shared, found = index.match(keys, first.file)
        if found is None:
            found = len(convs)
            convs.append(_Open(first.file, [], [], start=start, shared=shared, line=first.line))
        target = convs[found]
        old = len(target.keys)
        target.messages.extend(messages[old:])
        target.keys.extend(keys[old:])
        target.replies.append(len(target.messages))
        target.calls.append(first.call)
        target.sources.append(f"{session.names[first.file]}:{first.line}")
        stamps = [line.ts for line in lines if line.ts is not None]
        if stamps:
            target.done[len(target.messages)] = max(stamps)
        target.messages.append(reply)
        target.keys.append(("a", first.call))
        index.extend(found, first.file, target.keys, old)
    _compacted_sizes(session, convs)
    return [_finish(session, conv) for conv in convs]


def _compacted_sizes(session: Session, convs: list[_Open]) -> None:
    """Give the conversation a ``compact_boundary`` ended the size Claude Code logged for it (``preTokens``): the
    conversation of the boundary's file whose latest call starts on the line nearest before the boundary."""
    for node in session.by_uuid.values():
        if node.kind != "boundary" or node.context_tokens is None:
            continue
        best, best_line = None, 0
        for conv in convs:
            if conv.file != node.file or not conv.calls:
                continue
            line = max(
                (session.calls[c][0].line for c in conv.calls if session.calls[c][0].line < node.line), default=0
            )
            if line > best_line:
                best, best_line = conv, line
        if best is not None and best.calls and session.calls[best.calls[-1]][0].line == best_line:
            best.context_tokens = node.context_tokens


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
            **({"compacted_tokens": conv.context_tokens} if conv.context_tokens is not None else {}),
        },
        replies=conv.replies,
    )

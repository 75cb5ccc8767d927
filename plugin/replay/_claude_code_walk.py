"""The prompts of a Claude Code session's calls, each built from the previous one: linear in the session's length.

A call's prompt (rules in ``promptcache.replay._claude_code``) is what the chain of records from the call back to
the root contributes, record by record (``PromptWalker._contribute``). Built from scratch for every call, that walk
costs n² steps over a session of n calls; ``PromptWalker`` gives the same prompts (same keys, same messages) for
calls taken in log order, walking only what changed (a new walker builds one from scratch:
``promptcache.replay._claude_code_calls.prompt_of``):

1. **The chain.** Walking up from the call stops at the first record on the previous call's chain (the junction):
   below it the chain is the previous one's, since every record names one parent.
2. **The messages.** What a record of the chain contributes depends on the records before it, on which records
   are on the chain, and on which tool results and ``isMeta`` lines were logged before the call. So the previous
   prompt is kept up to the first record whose contribution can differ: the junction, or an earlier record that a
   tool result or ``isMeta`` line answers when that line was logged since the previous call (in the same log, the
   lines between the two calls; in another log, the lines timestamped between them), or joined or left the chain.
   From there on, records are processed as for a prompt built from scratch.

A call in another log than the previous call is built from scratch.
"""

from __future__ import annotations

import bisect
from typing import Any

from ._claude_code_tree import Line, Session, reply_message
from ._transcript import Block, Message

__all__ = ["Key", "PromptWalker"]

#: A message's identity across prompts: ("a", call) an assistant reply, ("r", call, ids) the regrouped results
#: of that call's tool uses, ("u", uuid) a user line's other content, ("m", uuid) an attached isMeta line.
Key = tuple[Any, ...]


def _before(line: Line, first: Line) -> bool:
    if line.file == first.file:
        return line.line < first.line
    return line.ts is not None and first.ts is not None and line.ts < first.ts


class PromptWalker:
    """``prompt(first)`` for each call of ``session``, in log order (module docstring).

    Args:
        session: the tree.
        replies: merged reply per call key, shared with the caller (filled on demand).
    """

    def __init__(self, session: Session, replies: dict[str, Message]) -> None:
        self.session, self.replies = session, replies
        self.tool_call: dict[str, str] = {}  # tool_use id -> call key
        for key, lines in session.calls.items():
            for line in lines:
                for block in line.blocks:
                    if block.kind == "tool_use" and block.id:
                        self.tool_call.setdefault(block.id, key)
        related: dict[int, list[Line]] = {}  # file -> its result and isMeta lines, in line order
        for line in session.by_uuid.values():
            if line.kind == "user" and (line.is_meta or any(b.kind == "tool_result" for b in line.blocks)):
                related.setdefault(line.file, []).append(line)
        self.related = {f: sorted(lines, key=lambda ln: ln.line) for f, lines in related.items()}
        self.related_lines = {f: [ln.line for ln in lines] for f, lines in self.related.items()}
        stamped = sorted(
            ((ln.ts, ln) for lines in self.related.values() for ln in lines if ln.ts is not None),
            key=lambda item: item[0],
        )
        self.by_time = [ln for _, ln in stamped]
        self.times = [t for t, _ in stamped]
        self.chain: list[Line] = []
        self.pos: dict[str, int] = {}
        self.marks: list[int] = []  # len(keys) before each chain record's contribution
        self.undo: list[tuple[str | None, list[str]]] = []  # per record: the call it emitted, tool ids it answered
        self.keys: list[Key] = []
        self.messages: list[Message] = []
        self.emitted: dict[str, int] = {}  # call key -> chain position where its reply was emitted
        self.answered: dict[str, int] = {}  # tool_use id -> chain position that answered it
        self.start = "session"
        self.prev: Line | None = None

    def prompt(self, first: Line) -> tuple[list[Key], list[Message], str]:
        """``(keys, messages, start)`` of the call whose first line is ``first``, as ``prompt_of`` returns them.
        The lists are the walker's own: read them before the next call."""
        session = self.session
        own = {line.uuid for line in session.calls[first.call]}
        new: list[Line] = []
        walked: set[str] = set()
        start, junction = "session", -1
        uuid = first.parent
        prev = self.prev
        reuse = prev is not None and prev.file == first.file
        while uuid is not None:
            at = self.pos.get(uuid) if reuse else None
            if at is not None:
                junction, start = at, self.start
                break
            node = session.by_uuid.get(uuid)
            if node is None:
                start = "missing_parent"
                break
            if node.kind == "boundary":
                start = "compact_boundary"
                break
            if node.uuid in walked or node.uuid in own:  # a cycle in parentUuid: stop where it closes
                break
            walked.add(node.uuid)
            new.append(node)
            uuid = node.parent
        new.reverse()
        if junction >= 0 and any(self.pos.get(u, junction + 1) <= junction for u in own):
            return self._rebuild(first)  # the call's own line is below the junction: its cycle closes there
        keep = junction + 1
        if junction >= 0 and prev is not None:
            keep = self._first_changed(first, prev, self.chain[keep:], new, keep)
        self.start = start
        return self._process(first, junction + 1, new, keep)

    def _rebuild(self, first: Line) -> tuple[list[Key], list[Message], str]:
        self.prev = None
        self.pos.clear()
        return self.prompt(first)

    def _related_position(self, line: Line, limit: int) -> int:
        """The earliest chain position below ``limit`` whose contribution ``line`` can change (``limit``: none)."""
        best = limit
        if line.kind != "user":
            return best
        for block in line.blocks:
            if block.kind == "tool_result" and block.id:
                call = self.tool_call.get(block.id)
                at = self.emitted.get(call, limit) if call is not None else limit
                best = min(best, at)
        if line.is_meta and line.parent is not None:
            best = min(best, self.pos.get(line.parent, limit))
        return best

    def _first_changed(self, first: Line, prev: Line, removed: list[Line], added: list[Line], keep: int) -> int:
        for line in (*removed, *added):
            keep = self._related_position(line, keep)
        lines, numbers = self.related.get(first.file, []), self.related_lines.get(first.file, [])
        for line in lines[bisect.bisect_left(numbers, prev.line) : bisect.bisect_left(numbers, first.line)]:
            keep = self._related_position(line, keep)
        if len(self.session.names) > 1 and (first.ts is not None or prev.ts is not None):
            if first.ts is None or prev.ts is None:
                return 0  # lines of other logs were before one call and cannot be before the other
            low, high = sorted((prev.ts, first.ts))
            for line in self.by_time[bisect.bisect_left(self.times, low) : bisect.bisect_left(self.times, high)]:
                if line.file != first.file:
                    keep = self._related_position(line, keep)
        return keep

    def _process(
        self, first: Line, junction_end: int, new: list[Line], keep: int
    ) -> tuple[list[Key], list[Message], str]:
        """The chain becomes its first ``junction_end`` records followed by ``new`` (in place: the records kept are
        not copied), and the records from ``keep`` (<= ``junction_end``) on contribute again."""
        for i in range(len(self.marks) - 1, keep - 1, -1):  # roll back what the records from ``keep`` on added
            call, ids = self.undo[i]
            if call is not None:
                self.emitted.pop(call, None)
            for tool_id in ids:
                self.answered.pop(tool_id, None)
        if keep < len(self.marks):
            del self.keys[self.marks[keep] :], self.messages[self.marks[keep] :]
        del self.marks[keep:], self.undo[keep:]
        chain = self.chain
        for i in range(keep, len(chain)):
            self.pos.pop(chain[i].uuid, None)
        del chain[junction_end:]
        chain.extend(new)
        for i in range(keep, len(chain)):
            self.pos[chain[i].uuid] = i
        for i in range(keep, len(chain)):
            self._contribute(first, i, chain[i])
        self.prev = first
        return self.keys, self.messages, self.start

    def _contribute(self, first: Line, i: int, node: Line) -> None:
        keys, messages = self.keys, self.messages
        self.marks.append(len(keys))
        emitted: str | None = None
        ids: list[str] = []
        if node.kind == "assistant":
            if node.call not in self.emitted:
                self.emitted[node.call] = i
                emitted = node.call
                reply = self.replies.get(node.call)
                if reply is None:
                    reply = self.replies[node.call] = reply_message(self.session.calls[node.call])
                if reply.blocks:
                    keys.append(("a", node.call))
                    messages.append(reply)
                self._results(node.call, reply, first, i, ids)
        elif node.kind == "user":
            blocks = tuple(b for b in node.blocks if not (b.kind == "tool_result" and b.id in self.answered))
            if blocks:
                keys.append(("u", node.uuid))
                messages.append(Message("user", blocks, node.ts))
        for child in node.children:
            if (
                child.kind == "user"
                and child.is_meta
                and not child.children
                and child.uuid not in self.pos
                and _before(child, first)
                and child.blocks
            ):
                keys.append(("m", child.uuid))
                messages.append(Message("user", child.blocks, child.ts))
        self.undo.append((emitted, ids))

    def _results(self, call: str, reply: Message, first: Line, at: int, ids: list[str]) -> None:
        blocks: list[Block] = []
        stamps: list[float] = []
        for use in reply.blocks:
            if use.kind != "tool_use" or not use.id or use.id in self.answered:
                continue
            lines = [ln for ln in self.session.results.get(use.id, ()) if _before(ln, first)]
            if not lines:
                continue
            line = next((ln for ln in lines if ln.uuid in self.pos), lines[0])
            result = next(b for b in line.blocks if b.kind == "tool_result" and b.id == use.id)
            blocks.append(result)
            self.answered[use.id] = at
            ids.append(use.id)
            if line.ts is not None:
                stamps.append(line.ts)
        if blocks:
            self.keys.append(("r", call, tuple(ids)))
            self.messages.append(Message("user", tuple(blocks), max(stamps) if stamps else None))

"""The conversations of a Claude Code session built so far, as one trie of their message keys.

``promptcache.replay._claude_code_calls.build_conversations`` asks two things of every call's prompt: the latest
conversation of the call's log that the prompt continues (whose keys the prompt's keys start with), and how many
leading messages the prompt shares with any conversation (``meta["shared_messages"]`` of the conversation it starts
when none continues). Comparing the prompt with every conversation costs (conversations x shared messages) per
call: cubic in the session's length on a log whose records are in reverse order, where every call starts a
conversation repeating the earlier ones. ``PrefixIndex.match`` first compares the prompt with the log's latest
conversation alone (one list comparison: the call that continues the previous one, as almost every call does), and
otherwise walks a trie of every conversation's keys down the prompt's keys, which gives both answers in one step per
shared message (at most ``len(keys)``, whatever the number of conversations). ``PrefixIndex.extend`` takes one step
per message added to a conversation.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import islice

from ._claude_code_walk import Key

__all__ = ["PrefixIndex"]


class _Node:
    """One prefix of some conversation's keys: the next keys, and the conversation whose keys end here (as
    ``(file, index)``). At most one ends here: a conversation's keys end with its latest call's reply, and every
    call is in exactly one conversation."""

    __slots__ = ("children", "end")

    def __init__(self) -> None:
        self.children: dict[Key, _Node] = {}
        self.end: tuple[int, int] | None = None


class PrefixIndex:
    """Every conversation's keys (conversations numbered 0, 1, ... in the order they were started).

    ``steps`` counts the work of ``match`` (each trie node visited, each whole comparison with the latest
    conversation), for tests that bound the work per call.
    """

    def __init__(self) -> None:
        self.root = _Node()
        self.ends: dict[int, _Node] = {}
        self.keys: dict[int, Sequence[Key]] = {}  # conversation -> its keys (the caller's list, kept up to date)
        self.latest: dict[int, int] = {}  # file -> its latest conversation
        self.steps = 0

    def match(self, keys: Sequence[Key], file: int) -> tuple[int, int | None]:
        """``(shared, conversation)`` for a prompt of log ``file``.

        Args:
            keys: the prompt's message keys.
            file: the index of the log the call is in.

        Returns:
            ``conversation``: the latest conversation of log ``file`` whose keys ``keys`` starts with (``None`` if
            none does; a sub-agent's log never continues another log's conversation); ``shared``, when
            ``conversation`` is ``None``: the most leading keys ``keys`` has in common with any conversation (0 when
            none; otherwise at least the length of the conversation continued).
        """
        last = self.latest.get(file)
        if last is not None:
            conv = self.keys[last]
            n = len(conv)
            if n <= len(keys) and conv[-1] == keys[n - 1]:
                self.steps += 1
                if conv == keys[:n]:
                    return n, last
        node, depth, found = self.root, 0, None
        for key in keys:
            child = node.children.get(key)
            if child is None:
                break
            node, depth = child, depth + 1
            end = node.end
            if end is not None and end[0] == file and (found is None or end[1] > found):
                found = end[1]
        self.steps += depth
        return depth, found

    def extend(self, conversation: int, file: int, keys: Sequence[Key], start: int) -> None:
        """Record that ``conversation`` (of log ``file``) now has the keys ``keys``, of which it had the first
        ``start`` already (0 for a new conversation, which must take the next number). ``keys`` is kept, not
        copied: the caller's list of the conversation's keys, extended in place."""
        node = self.ends.pop(conversation, None)
        if node is None:
            node = self.root
        else:
            node.end = None
        for key in islice(keys, start, None):
            child = node.children.get(key)
            if child is None:
                child = node.children[key] = _Node()
            node = child
        node.end = (file, conversation)
        self.ends[conversation] = node
        self.keys[conversation] = keys
        self.latest[file] = max(conversation, self.latest.get(file, conversation))

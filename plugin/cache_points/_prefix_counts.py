"""Counting only what a request adds: a conversation's previous request, as JSON, with its messages' token counts.

An agent conversation sends every earlier message again on each request, plus the model's reply and a tool result
or a user turn. Counting every message again costs a memo lookup per text and a JSON serialisation per ``toolUse``
input, per request; `CountedMessages` keeps what the previous request of the conversation found:

- ``raw``: its messages serialised by orjson in one call (insertion order, compact; ``bytes`` values as their
  length, see `serialise`), so ``raw`` is ``b"[" + b",".join(<each message>) + b"]"``;
- ``ends``: where each message's JSON ends in ``raw``; ``tokens``: each message's count.

The next request is serialised the same way; the messages whose JSON is a byte-identical prefix of the previous
``raw`` take the stored counts (one ``startswith``, a binary search when an earlier message changed), and only the
rest are counted. JSON is self-delimiting, so an identical byte prefix through a message's end means identical
messages up to it. The counters read nothing the JSON does not hold (a ``toolUse`` input is counted from its orjson
JSON too, so a NaN, written as ``null``, counts as ``null`` either way), with one exception the caller checks
itself: a ``content`` tuple serialises like a list but is counted differently (``scan_request`` takes this path
only when every message is a dict with a ``content`` list or str). Subclasses of dict, list and str, dataclass
instances, and anything else orjson does not write natively, end the reuse: such a request is counted whole. Only the default counter's
counts are reused.

`RecentCounts` keeps the last `CountedMessages` per conversation, bounded in entries and in bytes held;
`RECENT_COUNTS` is the one every Bedrock model of the process shares, so the bounds hold for the process. Two models
that see the same conversation id with different histories only miss each other's prefix (the bytes are compared).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass

import orjson

__all__ = ["MAX_CONVERSATIONS", "MAX_HELD_BYTES", "RECENT_COUNTS", "CountedMessages", "RecentCounts", "serialise"]

#: Conversations whose previous request `RecentCounts` keeps (the least recently used is dropped first).
MAX_CONVERSATIONS = 1_024
#: Bytes of JSON `RecentCounts` holds at most over all conversations (a capacity, not measured: a request's JSON is
#: about the size of its text).
MAX_HELD_BYTES = 64 << 20


def _bytes_as_length(value: object) -> dict[str, int]:
    """orjson's ``default``: binary values stand for their length, all the counters read of them where Converse
    allows them (image, document and video sources, a tool input's values). A ``bytes`` where Converse wants a str
    (a text) is counted from its repr, so its content would count; botocore refuses such a request anyway."""
    if isinstance(value, (bytes, bytearray, memoryview)):
        return {"\x00bytes": len(value)}
    raise TypeError


_OPTIONS = orjson.OPT_PASSTHROUGH_SUBCLASS | orjson.OPT_PASSTHROUGH_DATACLASS


def serialise(value: object) -> bytes | None:
    """``value`` as orjson JSON (binary values as their length), ``None`` when it holds a subclass of dict, list or
    str, a dataclass instance, or anything else orjson writes only through ``default`` (then nothing is reused)."""
    try:
        return orjson.dumps(value, default=_bytes_as_length, option=_OPTIONS)
    except TypeError:  # orjson.JSONEncodeError is a TypeError
        return None


@dataclass(frozen=True)
class CountedMessages:
    """One request's messages as JSON (``raw``), the end of each message's JSON in it, and each message's count.

    Attributes:
        raw: ``serialise(messages)``.
        ends: ``raw[ends[i]]`` is the ``,`` or ``]`` after message ``i``.
        tokens: ``default_count_tokens(messages[i])`` for each message.
    """

    raw: bytes
    ends: list[int]
    tokens: list[int]

    def reusable(self, raw: bytes) -> int:
        """How many leading messages of the request serialised as ``raw`` are byte-identical to this request's."""
        ends, mine = self.ends, memoryview(self.raw)  # slices of a memoryview copy nothing
        if not ends:
            return 0
        if raw.startswith(mine[: ends[-1]]):  # the common case: the whole previous request, then new messages
            return len(ends)
        lo, hi = 0, len(ends) - 1  # an earlier message changed: messages [0, lo) match, [hi, ...) do not
        while lo < hi:
            mid = (lo + hi) // 2
            if raw.startswith(mine[: ends[mid]]):
                lo = mid + 1
            else:
                hi = mid
        return lo


class RecentCounts:
    """The last `CountedMessages` of each conversation, bounded (thread-safe).

    Args:
        max_conversations: entries kept (default `MAX_CONVERSATIONS`); the least recently used goes first.
        max_bytes: JSON bytes kept over all entries (default `MAX_HELD_BYTES`); a request larger than this alone is
            not kept.
    """

    def __init__(self, max_conversations: int = MAX_CONVERSATIONS, max_bytes: int = MAX_HELD_BYTES) -> None:
        self.max_conversations = max_conversations
        self.max_bytes = max_bytes
        self._entries: OrderedDict[str, CountedMessages] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()

    def get(self, conversation: str) -> CountedMessages | None:
        """The conversation's last counts, or ``None``."""
        with self._lock:
            found = self._entries.get(conversation)
            if found is not None:
                self._entries.move_to_end(conversation)
            return found

    def put(self, conversation: str, counted: CountedMessages | None) -> None:
        """Keep ``counted`` for the conversation (``None`` forgets it)."""
        with self._lock:
            old = self._entries.pop(conversation, None)
            if old is not None:
                self._bytes -= len(old.raw)
            if counted is None or len(counted.raw) > self.max_bytes:
                return
            self._entries[conversation] = counted
            self._bytes += len(counted.raw)
            while self._entries and (len(self._entries) > self.max_conversations or self._bytes > self.max_bytes):
                _, dropped = self._entries.popitem(last=False)
                self._bytes -= len(dropped.raw)

    def clear(self) -> None:
        """Forget every conversation."""
        with self._lock:
            self._entries.clear()
            self._bytes = 0


#: The process-wide `RecentCounts` of the Bedrock wrappers.
RECENT_COUNTS = RecentCounts()

"""Counting only what a request adds: a conversation's previous request, as JSON, with its messages' token counts.

An agent conversation sends every earlier message again on each request, plus the model's reply and a tool result
or a user turn. Counting every message again costs a memo lookup per text and a JSON serialisation per ``toolUse``
input, per request; `CountedMessages` keeps what the previous request of the conversation found:

- ``chunks``: its messages serialised by orjson (insertion order, compact; ``bytes`` values as their length, see
  `serialise`), `CHUNK_MESSAGES` messages per chunk, each chunk a JSON array of its messages;
- ``ends``: where each message's JSON ends in its chunk; ``tokens``: each message's count.

The next request is serialised the same way, chunk by chunk (`read_prefix`): a chunk byte-identical to the stored one
(one ``memcmp``) takes its counts and keeps the stored bytes, and in the first chunk that differs the messages whose
JSON is a byte-identical prefix of the stored chunk take theirs (one ``startswith``, a binary search when an earlier
message changed); only the rest are counted. JSON is self-delimiting, so an identical byte prefix through a
message's end means identical messages up to it. Chunks keep the memory a request is read with small and reused: one
serialisation of a 10,000-message request is several MiB of fresh memory per request, whose page faults cost more
than the serialisation itself. The counters read nothing the JSON does not hold (a ``toolUse`` input is counted from
its orjson JSON too, so a NaN, written as ``null``, counts as ``null`` either way), with one exception the caller
checks itself: a ``content`` tuple serialises like a list but is counted differently (``scan_request`` takes this
path only when every message is a dict with a ``content`` list or str). Subclasses of dict, list and str, and
anything else orjson does not write natively, end the reuse: such a request is counted whole. Only the default
counter's counts are reused.

`RecentCounts` keeps the last `CountedMessages` per conversation, bounded in entries and in bytes held;
`RECENT_COUNTS` is the one every Bedrock model of the process shares, so the bounds hold for the process. Two models
that see the same conversation id with different histories only miss each other's prefix (the bytes are compared).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

import orjson

__all__ = [
    "CHUNK_MESSAGES",
    "MAX_CONVERSATIONS",
    "MAX_HELD_BYTES",
    "RECENT_COUNTS",
    "CountedMessages",
    "RecentCounts",
    "read_prefix",
    "serialise",
]

#: Conversations whose previous request `RecentCounts` keeps (the least recently used is dropped first).
MAX_CONVERSATIONS = 1_024
#: Bytes of JSON `RecentCounts` holds at most over all conversations (a capacity, not measured: a request's JSON is
#: about the size of its text).
MAX_HELD_BYTES = 64 << 20
#: Messages per chunk of a request's JSON: small enough that a chunk (tens of KiB for agent messages) is serialised
#: into memory freed by the chunk before it, large enough that the calls per chunk stay a small share of a request.
CHUNK_MESSAGES = 64


def _bytes_as_length(value: Any) -> Any:
    """orjson's ``default``: binary values stand for their length, all the counters read of them where Converse
    allows them (image, document and video sources, a tool input's values). A ``bytes`` where Converse wants a str
    (a text) is counted from its repr, so its content would count; botocore refuses such a request anyway."""
    if isinstance(value, (bytes, bytearray, memoryview)):
        return {"\x00bytes": len(value)}
    raise TypeError


def serialise(value: object) -> bytes | None:
    """``value`` as orjson JSON (binary values as their length), ``None`` when it holds a subclass of dict, list or
    str, or anything else orjson does not write natively (then nothing is reused)."""
    try:
        return orjson.dumps(value, default=_bytes_as_length, option=orjson.OPT_PASSTHROUGH_SUBCLASS)
    except TypeError:  # orjson.JSONEncodeError is a TypeError
        return None


class CountedMessages:
    """One request's messages as JSON chunks, the end of each message's JSON in its chunk, and each message's count.

    Args:
        chunks: ``serialise(messages[k * chunk_messages : (k + 1) * chunk_messages])`` for each ``k``; a single
            ``bytes`` is the JSON of all the messages as one chunk.
        ends: ``chunk[ends[i]]`` is the ``,`` or ``]`` after message ``i`` in its chunk.
        tokens: ``default_count_tokens(messages[i])`` for each message.
        chunk_messages: messages per chunk (default: all of them in one chunk when ``chunks`` is one ``bytes``,
            else `CHUNK_MESSAGES`).

    Attributes:
        chunks / ends / tokens / chunk_messages: as given. size: bytes held (all chunks).
    """

    __slots__ = ("chunk_messages", "chunks", "ends", "size", "tokens")

    def __init__(
        self, chunks: bytes | Sequence[bytes], ends: list[int], tokens: list[int], chunk_messages: int | None = None
    ) -> None:
        single = isinstance(chunks, bytes)
        self.chunks: tuple[bytes, ...] = (chunks,) if isinstance(chunks, bytes) else tuple(chunks)
        self.ends, self.tokens = ends, tokens
        default = max(len(tokens), 1) if single else CHUNK_MESSAGES
        self.chunk_messages = chunk_messages if chunk_messages is not None else default
        self.size = sum(map(len, self.chunks))

    @property
    def raw(self) -> bytes:
        """``serialise(messages)``: the chunks joined into one JSON array."""
        if len(self.chunks) == 1:
            return self.chunks[0]
        return b"[" + b",".join(chunk[1:-1] for chunk in self.chunks) + b"]"

    def _global_ends(self) -> list[int]:
        """`ends` as offsets in `raw`."""
        out, start, size = [], 1, self.chunk_messages  # start: where chunk k's first message begins in ``raw``
        for k, chunk in enumerate(self.chunks):
            out.extend(start + end - 1 for end in self.ends[k * size : (k + 1) * size])
            start += len(chunk) - 1
        return out

    def reusable(self, raw: bytes) -> int:
        """How many leading messages of the request serialised as ``raw`` (one JSON array) are byte-identical to this
        request's."""
        return _matching(raw, self.raw, self._global_ends())


def _matching(raw: bytes, old: bytes, ends: Sequence[int]) -> int:
    """How many leading messages of the JSON array ``raw`` are those of ``old``, whose messages end at ``ends``."""
    if not ends:
        return 0
    mine = memoryview(old)  # slices of a memoryview copy nothing
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


def read_prefix(messages: list[object], previous: CountedMessages | None) -> tuple[int, list[bytes], int] | None:
    """Serialise ``messages`` in chunks against the conversation's previous request.

    Returns:
        ``(reused, chunks, chunk_messages)``: how many leading messages are byte-identical to ``previous``'s, the
        request's chunks (the stored ``bytes`` objects where a whole chunk is unchanged), and the messages per chunk
        (``previous``'s, else `CHUNK_MESSAGES`); ``None`` when `serialise` refuses a chunk.
    """
    size = previous.chunk_messages if previous is not None else CHUNK_MESSAGES
    n, reused, chunks = len(messages), 0, []
    if previous is not None:
        old_ends = previous.ends
        for k, old in enumerate(previous.chunks):
            lo = k * size
            if lo >= n:
                break
            raw = serialise(messages[lo : lo + size])
            if raw is None:
                return None
            if raw == old:  # a whole chunk unchanged: its messages, and the stored bytes
                chunks.append(old)
                reused = min(lo + size, n)
                continue
            reused = lo + _matching(raw, old, old_ends[lo : lo + size])
            chunks.append(raw)
            break
    for lo in range(len(chunks) * size, n, size):
        raw = serialise(messages[lo : lo + size])
        if raw is None:
            return None
        chunks.append(raw)
    return reused, chunks, size


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
                self._bytes -= old.size
            if counted is None or counted.size > self.max_bytes:
                return
            self._entries[conversation] = counted
            self._bytes += counted.size
            while self._entries and (len(self._entries) > self.max_conversations or self._bytes > self.max_bytes):
                _, dropped = self._entries.popitem(last=False)
                self._bytes -= dropped.size

    def clear(self) -> None:
        """Forget every conversation."""
        with self._lock:
            self._entries.clear()
            self._bytes = 0


#: The process-wide `RecentCounts` of the Bedrock wrappers.
RECENT_COUNTS = RecentCounts()

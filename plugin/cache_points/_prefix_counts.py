"""Counting only what a request adds: a conversation's previous request, kept as a copy, with its messages' counts.

An agent conversation sends every earlier message again on each request, plus the model's reply and a tool result
or a user turn. Counting every message again costs a memo lookup per text and a JSON serialisation per ``toolUse``
input, per request; `CountedMessages` keeps what the previous request of the conversation found:

- ``kept``: a copy of each message that this module owns (`freeze`): dicts, lists and tuples copied, every ``str``
  and ``None`` the caller's own (immutable) object, every other scalar (``int``, ``float``, ``bool``, binary values)
  wrapped so that it equals only a value of exactly its type that serialises the same (`_Strict`);
- ``tokens``: each message's count; ``ends``: where each message's JSON ends in ``raw``, the messages serialised by
  orjson in one call (`serialise`; ``raw`` itself is rebuilt from ``kept`` only when asked for).

The next request's messages are compared with ``kept`` by Python's own ``==`` (one C-level comparison per message,
the kept copy on the left): identical objects compare equal at once, and the strings of a request that
langchain-aws builds from the same message history are the history's own objects, so most comparisons are pointer
checks. The leading messages that compare equal take the stored counts; only the rest are counted. ``==`` is made
as strict as the counters: a ``tuple`` never equals a ``list`` (a tuple ``content`` is counted differently), and a
wrapped scalar equals only the same type and value (``1``, ``1.0`` and ``True`` are told apart; ``-0.0`` is not
``0.0``; a NaN equals nothing, so it is counted again); key order is not compared, and the counters read none (a
``toolUse`` input is counted from sorted-key JSON). A caller that changes its dicts after the call changes its own
objects, not ``kept``, so the next comparison sees the change. What ``==`` cannot tell apart is an object whose own
``__eq__`` claims equality (a subclass of dict, list or str equal to the kept value, ``unittest.mock.ANY``): a
request built by langchain-aws holds none in its messages (its blocks are plain dicts and lists of the message
history's strings), and such a value in a new message is never kept (the new messages are serialised one by one,
and orjson refuses subclasses here). Only the default counter's counts are reused.

`RecentCounts` keeps the last `CountedMessages` per conversation, bounded in entries and in the bytes of JSON the
kept messages stand for; `RECENT_COUNTS` is the one every Bedrock model of the process shares, so the bounds hold
for the process. Two models that see the same conversation id with different histories only miss each other's
prefix (the messages are compared).
"""

from __future__ import annotations

import math
import operator
import threading
from collections import OrderedDict

import orjson

from promptcache._errors import PromptCacheError

__all__ = [
    "MAX_CONVERSATIONS",
    "MAX_HELD_BYTES",
    "RECENT_COUNTS",
    "CountedMessages",
    "RecentCounts",
    "Unkept",
    "freeze",
    "serialise",
]

#: Conversations whose previous request `RecentCounts` keeps (the least recently used is dropped first).
MAX_CONVERSATIONS = 1_024
#: Bytes of JSON the kept requests of `RecentCounts` stand for at most over all conversations (a capacity, not
#: measured: a request's JSON is about the size of its text, and the copies share the caller's strings).
MAX_HELD_BYTES = 64 << 20

_BINARY = (bytes, bytearray, memoryview)


def _bytes_as_length(value: object) -> dict[str, int]:
    """orjson's ``default``: binary values stand for their length, all the counters read of them where Converse
    allows them (image, document and video sources, a tool input's values). A ``bytes`` where Converse wants a str
    (a text) is counted from its repr, so its content would count; botocore refuses such a request anyway."""
    if isinstance(value, _BINARY):
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


class _Strict:
    """A kept scalar: equal only to a value of exactly ``kind`` that the counters read the same (module docstring).

    Binary values compare by length, all the counters read of them (``value`` holds the length).
    """

    __slots__ = ("kind", "value")

    def __init__(self, value: object, kind: type) -> None:
        self.value, self.kind = value, kind

    def __eq__(self, other: object) -> bool:
        kind = self.kind
        if type(other) is not kind:
            return False
        if kind is float:  # NaN equals nothing; -0.0 serialises apart from 0.0
            return bool(other == self.value) and math.copysign(1.0, other) == math.copysign(1.0, self.value)  # type: ignore[arg-type]
        if kind in _BINARY:
            return len(other) == self.value  # type: ignore[arg-type]
        return bool(other == self.value)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"_Strict({self.value!r}, {self.kind.__name__})"


class Unkept(PromptCacheError):
    """`freeze` met a value it does not copy (a subclass, a dataclass, any type orjson does not write natively); an
    internal signal, never raised to a caller (the request is counted, and kept up to that message)."""


def freeze(value: object) -> object:
    """A copy of a message (or any part of one) that this module owns and compares strictly (module docstring).

    Raises:
        Unkept: ``value`` holds something other than exact dicts (str keys), lists, tuples, strs, ints, floats,
            bools, ``None`` and binary values.
    """
    kind = type(value)
    if kind is str or value is None:
        return value
    if kind is dict:
        out = {}
        for key, item in value.items():  # type: ignore[attr-defined]
            if type(key) is not str:
                raise Unkept
            out[key] = item if type(item) is str else freeze(item)  # a str inline: most leaves are
        return out
    if kind is list:
        return [item if type(item) is str else freeze(item) for item in value]  # type: ignore[attr-defined]
    if kind is tuple:
        return tuple(freeze(item) for item in value)  # type: ignore[attr-defined]
    if kind is int or kind is float or kind is bool:
        return _Strict(value, kind)
    if kind in _BINARY:
        return _Strict(len(value), kind)  # type: ignore[arg-type]
    raise Unkept


def _thawed(value: object) -> object:
    """orjson's ``default`` for kept messages: a `_Strict` as the value it stands for."""
    if isinstance(value, _Strict):
        return {"\x00bytes": value.value} if value.kind in _BINARY else value.value
    raise TypeError


class CountedMessages:
    """One request's messages: a kept copy (`freeze`), each message's count, and the end of each message's JSON.

    The next request of the conversation appends its messages to these lists instead of copying them, when all of
    them compared equal to its leading messages and no other request has appended to them (`take`); this object
    keeps seeing only its own first ``len(tokens)`` entries (``kept``, ``tokens`` and ``ends`` read them).

    Args:
        raw: the messages' JSON when known (``serialise(messages)``), else ``None`` (rebuilt from ``kept`` on demand).
        ends: ``raw[ends[i]]`` is the ``,`` or ``]`` after message ``i``.
        tokens: ``default_count_tokens(messages[i])`` for each message.
        kept: the frozen messages (``None``: nothing to compare, so nothing is reused).
        first_str: the index of the first kept message whose ``content`` is a str (``len(kept)`` when none).

    Attributes:
        size: the bytes of JSON the messages stand for (``ends[-1] + 1``), what `RecentCounts` bounds.
        fingerprints: message index -> the placement fingerprint taken of that kept message in its request
            (``CacheStrategy.fingerprint``; filled while the request is placed), so the next request takes it for a
            message that compares equal instead of serialising and hashing it again.
    """

    __slots__ = ("_ends", "_kept", "_n", "_raw", "_taken", "_tokens", "fingerprints", "first_str", "size")

    def __init__(
        self,
        raw: bytes | None,
        ends: list[int],
        tokens: list[int],
        kept: list[object] | None = None,
        first_str: int = 0,
    ) -> None:
        self._raw, self._ends, self._tokens, self._kept, self.first_str = raw, ends, tokens, kept, first_str
        self._n = len(tokens)  # this object's entries: a later request may append to the lists (`take`)
        self._taken = threading.Lock()  # held by the one request that appends to the lists
        self.size = len(raw) if raw is not None else (ends[self._n - 1] + 1 if ends and self._n else 2)
        self.fingerprints: dict[int, str] = {}

    @property
    def kept(self) -> list[object] | None:
        """The frozen messages (``None``: nothing to compare); this object's own entries."""
        kept, n = self._kept, self._n
        return kept if kept is None or len(kept) == n else kept[:n]

    @property
    def tokens(self) -> list[int]:
        """``default_count_tokens(messages[i])`` for each message; this object's own entries."""
        tokens, n = self._tokens, self._n
        return tokens if len(tokens) == n else tokens[:n]

    @property
    def ends(self) -> list[int]:
        """``raw[ends[i]]`` is the ``,`` or ``]`` after message ``i``; this object's own entries."""
        ends, n = self._ends, self._n
        return ends if len(ends) <= n else ends[:n]

    def take(self, reused: int) -> tuple[list[object], list[int], list[int]] | None:
        """``(kept, tokens, ends)`` themselves, for the next request to append its own messages to, when that request
        reuses all ``reused`` of them (every kept message compared equal) and no request has taken them before;
        ``None`` otherwise (then the caller copies the ``reused`` leading entries). Taken at most once
        (thread-safe): the lists grow past this object's entries, which it keeps reading alone."""
        kept, tokens, ends, n = self._kept, self._tokens, self._ends, self._n
        if kept is None or reused != n or len(kept) != n or len(tokens) != n or len(ends) != n:
            return None
        if not self._taken.acquire(blocking=False):
            return None
        return kept, tokens, ends

    @property
    def raw(self) -> bytes:
        """``serialise(messages)`` (rebuilt from ``kept`` when not given)."""
        if self._raw is None:
            self._raw = orjson.dumps(self.kept, default=_thawed)
        return self._raw

    def reusable(self, messages: object) -> int:
        """How many leading messages of ``messages`` (a list of message dicts) equal the kept ones (module
        docstring); given ``bytes`` (a request's ``serialise`` JSON), how many are a byte-identical prefix of
        ``raw``."""
        if isinstance(messages, bytes):
            return self._reusable_raw(messages)
        kept, n = self._kept, self._n  # entries past n (a later request's, `take`) are not this request's
        if not kept or not n or type(messages) is not list:
            return 0
        try:  # a value whose own __eq__ raises (an array's truth value) ends the reuse
            # the kept copy on the left (`_Strict`); a list that grows meanwhile compares unequal (its length)
            if n <= len(messages) and (kept if len(kept) == n else kept[:n]) == messages[:n]:
                return n  # the common case: the whole previous request, then new messages
            same = [bool(x) for x in map(operator.eq, kept, messages[:n])]  # an earlier message changed: where
        except Exception:  # noqa: BLE001
            return 0
        return same.index(False) if False in same else len(same)

    def _reusable_raw(self, raw: bytes) -> int:
        ends, mine = self.ends, memoryview(self.raw)  # slices of a memoryview copy nothing
        if not ends:
            return 0
        if raw.startswith(mine[: ends[-1]]):
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

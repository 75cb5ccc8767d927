"""The prefix memo's snapshot of a conversation's last prompt (`promptcache._message_digests`, "By prefix"): the
message objects and, per message, what the next call's check compares, read in a few C-level passes."""

from __future__ import annotations

import operator
from collections.abc import Callable
from operator import attrgetter, is_, itemgetter
from typing import Final, cast

import orjson

__all__ = ["Prefix", "field_getter", "prefix_json"]

_ABSENT: Final = object()  # no getter chosen yet for a layout


_READ: Final = (
    "type",
    "name",
    "tool_call_id",
    "status",
    "role",
    "tool_calls",
    "invalid_tool_calls",
    "additional_kwargs",
)
_CONTENT: Final = itemgetter("content")
# (a message's __dict__ keys, content is an exact str) -> the getter of the fields `_message` reads, but a text
# content (compared by identity, never written as JSON); None: the message cannot join a prefix
_GETTERS: dict[tuple[tuple[object, ...], bool], itemgetter[tuple[object, ...]] | None] = {}
_GETTERS_MAX: Final = 1024  # field layouts; cleared past it (a few per message class)


def field_getter(keys: tuple[object, ...], text: bool) -> itemgetter[tuple[object, ...]] | None:
    found = _GETTERS.get((keys, text), _ABSENT)
    if found is _ABSENT:
        names: list[str] = [name for name in _READ if name in keys]
        if not text:
            names.append("content")
        found = itemgetter(*names) if len(names) > 1 and "content" in keys else None  # one name: not a tuple
        if len(_GETTERS) >= _GETTERS_MAX:
            _GETTERS.clear()
        _GETTERS[(keys, text)] = found
    return cast("itemgetter[tuple[object, ...]] | None", found)


# getter(fields), one C call: operator.call (Python 3.11+; measured: bench/README.md), else the getter's own slot
_apply: Final[Callable[[itemgetter[tuple[object, ...]], dict[str, object]], tuple[object, ...]]] = getattr(
    operator, "call", itemgetter.__call__
)
_FIELDS: Final = attrgetter("__dict__")  # cheaper than vars() on a pydantic model (measured: bench/README.md)
_PREFIX_JSON: Final = (
    orjson.OPT_PASSTHROUGH_SUBCLASS | orjson.OPT_PASSTHROUGH_DATACLASS | orjson.OPT_PASSTHROUGH_DATETIME
)


def prefix_json(rests: object) -> bytes | None:
    """``_message_digests._containers_json`` without sorted keys or non-string keys: compared only with the same objects' own earlier
    JSON (a key order changed in place at worst recomputes a digest)."""
    try:
        return orjson.dumps(rests, option=_PREFIX_JSON)
    except (TypeError, orjson.JSONEncodeError):
        return None


class Prefix:
    """The last prompt seen for a conversation: its message objects and, per message, what the check compares."""

    __slots__ = (
        "messages",
        "sizes",
        "contents",
        "getters",
        "rests",
        "joined",
        "ends",
        "digests",
        "counts",
        "numbering",
    )

    def __init__(
        self,
        messages: tuple[object, ...],
        sizes: list[int],
        contents: list[object],
        getters: list[itemgetter[tuple[object, ...]]],
        rests: list[tuple[object, ...]],
        joined: bytes,
        ends: list[int],
        digests: list[bytes],
        counts: list[int],
        numbering: dict[object, str],
    ) -> None:
        self.messages = messages  # the objects (held, so their ids stay theirs)
        self.sizes = sizes  # len(message.__dict__) per message
        self.contents = contents  # each message's content (held: compared by identity)
        self.getters = getters  # per message, `field_getter` of its layout
        self.rests = rests  # what each getter read, before the digest was computed (held, likewise)
        self.joined = joined  # `prefix_json` of the rests as one list, without its closing bracket
        self.ends = ends  # len(joined) after each message's rest
        self.digests = digests
        self.counts = counts  # tool ids numbered after each message
        self.numbering = numbering  # raw tool-call id -> ordinal, after the last message (never changed)

    def holds(self, messages: list[object]) -> int:
        """How many leading messages are this prefix's very objects, unchanged since (module docstring); 0: none."""
        same = list(map(is_, self.messages, messages))
        try:
            count = same.index(False)
        except ValueError:
            count = len(same)
        if not count:
            return 0
        fields: list[dict[str, object]] = list(map(_FIELDS, self.messages[:count]))
        if list(map(len, fields)) != self.sizes[:count]:  # a field added or removed
            return 0
        try:
            if not all(map(is_, map(_CONTENT, fields), self.contents[:count])):
                return 0  # a text is compared by identity: never hashed, written or walked again
            rests = list(map(_apply, self.getters[:count], fields))
        except KeyError:  # a field removed (and another added)
            return 0
        # the same JSON (strict: only plain JSON values, so an edit in place or an equal value of another type shows),
        # then equal values (NaN and None both write null); JSON first, so == meets plain values only
        data = prefix_json(rests)
        if data is None or data != self.joined[: self.ends[count - 1]] + b"]" or rests != self.rests[:count]:
            return 0
        return count

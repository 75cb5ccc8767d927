"""Per-message digests of a prompt, remembered by value and by conversation prefix: what a response-cache key hashes.

A conversation resends the same messages on every model call, each call one or two messages longer. Hashing the
whole prompt's canonical JSON every time costs time in proportion to the conversation (escaping a long tool
result, then SHA-256 over tens of kilobytes); here each message is canonicalised and hashed once, and a prompt is
the list of its messages' digests (128 bits each), so a call costs a check of what was seen plus the work for what
is new. Two memos, neither of which can serve a digest for a value it was not computed from:

- **By value** (`_MEMO`): keyed by what ``_message`` reads of a message: its string fields (type, content,
  name, tool-call id, status, role; absent fields apart from ``None`` ones) as they are, its containers (block
  content, tool calls, additional kwargs) as JSON bytes written by orjson with no ``default`` (so ``1``, ``1.0``
  and ``True`` differ, and any value orjson would write through ``repr``, a set, bytes, a subclass or a numpy value
  keeps the message out of the memo: two such values can share JSON). Tool-call ids are numbered by order of first
  appearance across the prompt (`promptcache._keys.canonical_messages`), so an entry records the raw ids the
  message holds (only ``str`` ids: ``None`` and NaN both write ``null``) and keeps a digest per tuple of ordinals
  those ids get. An entry is stored only if the key read again after the digest is unchanged (another thread).
  This memo serves messages rebuilt as new objects (a checkpoint read back) and costs a key per message. A text
  content longer than 1,024 characters enters the key as its length and first and last 64 characters, the entry
  holding the text itself, compared in full on a hit: a new 30 KB string is then not hashed by SipHash (as
  costly as a third of its SHA-256) on every call that rebuilds it, nor on its first sight.
- **By prefix** (`_PREFIXES`): LangGraph hands the same message objects to every call of a thread, the
  previous call's list being a prefix of this one (or sharing its start, for a fork or a retry). The last prompt
  seen per conversation (keyed by the identity of its first two messages) keeps the message objects and, per
  message, taken before its digest: its number of fields, its content, the other fields ``_message`` reads (the
  string fields and containers present) and their JSON, the digest and the tool-id numbering. The leading
  messages of a call that are those very objects, with as many fields, the very same content object (a text is
  never hashed or written again), and the other read fields giving the same strict JSON (orjson with no
  ``default``: plain JSON values only, so an edit in place or a value of another type shows) and comparing equal
  (NaN and ``None`` both write ``null``) take their digests as they are: a few C-level passes over the list
  instead of Python work per message. The rest go through the value memo, and the new snapshot is the kept one
  plus the new messages' parts. A prompt holding a message the value memo refuses is not remembered as a prefix.

Known gaps, both outside what pydantic lets a message hold: a tool-call id that is an ``Enum`` member writes its
value's JSON (an enum id and a string id equal to its value could share a value-memo entry; LangChain types ids
as strings), and a field the digest does not read (``id``, ``response_metadata``, ...) removed from
``message.__dict__`` and one it reads added in its place, by writing to ``__dict__`` directly, bypassing pydantic,
passes the prefix check (the number of fields is the same; checking every field name costs as much again).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from itertools import islice
from operator import is_
from typing import Final

import orjson

from promptcache._keys import _is_mapping, _message, _ToolIds, canonical_json
from promptcache._message_prefix import Prefix, field_getter, prefix_json

__all__ = ["forget_prefix", "message_digests", "prompt_digest_json"]

# (raw tool-call ids, {ordinals: hex digest}, the text content or None)
_Entry = tuple[tuple[object, ...], dict[tuple[object, ...], bytes], "str | None"]
# (class, content or its fingerprint or its type, type, name, tool-call id, status, role, containers' JSON): see
# `_value_key`
_ValueKey = tuple[type, object, object, object, object, object, object, "bytes | None"]
_MEMO: dict[_ValueKey, _Entry] = {}  # value key -> entry
_MEMO_LIMIT: Final = 32 * 1024 * 1024  # characters of content + JSON bytes held by value keys; cleared past it
_MEMO_MAX_ENTRIES: Final = 200_000  # messages; cleared past it too
_memo_size = 0

# (id of message 0, id of message 1) -> the last prompt seen that starts with them
_PREFIXES: dict[tuple[int, ...], Prefix] = {}
_PREFIXES_MAX: Final = 4096  # conversations; cleared past it
_STRING_FIELDS: Final = ("type", "name", "tool_call_id", "status", "role")
_DIGEST_HEX: Final = 32  # hex digits of SHA-256 per message (128 bits)
_LONG_TEXT: Final = 1024  # characters: longer text content enters the value key by its fingerprint
_EDGE: Final = 64  # characters of each end of such a text in its fingerprint


class _RecordingIds:
    """Wraps the prompt's `_ToolIds`, recording the raw ids a message hands it, in order."""

    __slots__ = ("ids", "seen", "ordinals")

    def __init__(self, ids: _ToolIds) -> None:
        self.ids = ids
        self.seen: list[object] = []
        self.ordinals: list[object] = []

    def __call__(self, value: object) -> object:
        ordinal = self.ids(value)
        self.seen.append(value)
        self.ordinals.append(ordinal)
        return ordinal


def _hex_digest(out: dict[str, object]) -> bytes:
    """First 32 hex digits (ASCII bytes) of SHA-256 over one canonical message's JSON (``exact_floats=False``)."""
    return hashlib.sha256(canonical_json(out, exact_floats=False)).hexdigest()[:_DIGEST_HEX].encode()


_dumps: Final = orjson.dumps
_STRICT: Final = (
    orjson.OPT_SORT_KEYS
    | orjson.OPT_NON_STR_KEYS
    | orjson.OPT_PASSTHROUGH_SUBCLASS
    | orjson.OPT_PASSTHROUGH_DATACLASS
    | orjson.OPT_PASSTHROUGH_DATETIME
)


def _containers_json(containers: object) -> bytes | None:
    """Containers as JSON bytes when they hold plain JSON values only, else ``None`` (no memo for the message).

    No ``default``: an object orjson would write through ``repr`` (two objects can share one), a set, bytes, a
    ``str``/``dict``/``list`` subclass, a dataclass or a numpy value makes the message go without the memos, so
    equal bytes mean values whose canonical JSON is equal too (the canonical form writes them the same way).
    """
    try:
        return orjson.dumps(containers, option=_STRICT)
    except (TypeError, orjson.JSONEncodeError):
        return None


def _remember(
    key: _ValueKey, text: str | None, seen: list[object], ordinals: tuple[object, ...], digest: bytes
) -> _Entry:
    global _memo_size
    data = key[7]
    size = len(text) if text is not None else 0  # an exact str
    size += len(data) if data is not None else 0
    if _memo_size + size > _MEMO_LIMIT or len(_MEMO) >= _MEMO_MAX_ENTRIES:
        _MEMO.clear()
        _memo_size = 0
    entry = _MEMO[key] = (tuple(seen), {ordinals: digest}, text)
    _memo_size += size
    return entry


def _entry_digest(entry: _Entry, message: object, ids: _ToolIds) -> bytes:
    """The digest of a memoised message at this position: its raw ids are numbered as ``_message`` would."""
    raw_ids, by_ordinals, _ = entry
    if not raw_ids:
        ordinals: tuple[object, ...] = ()
    else:
        numbered = ids.ids.get  # ids(raw), skipping the call for ids already numbered (a result's id was its call's)
        ordinals = tuple([numbered(raw) or ids(raw) for raw in raw_ids])
    digest = by_ordinals.get(ordinals)
    if digest is None:  # the same message at another position: the ids above already numbered its ids
        digest = by_ordinals[ordinals] = _hex_digest(_message(message, ids))
    return digest


_ABSENT: Final = object()  # a field missing from ``__dict__`` (``_message`` then uses its own default)


def _digest_by_value(message: object, ids: _ToolIds, before: tuple[object, ...] | None = None) -> tuple[bytes, bool]:
    """One message's digest through the value memo, and whether the memo could take it (else it cannot join a
    prefix either). ``before``: the message's field values, when the caller took them just now (else taken here)."""
    fields: dict[str, object] | None = getattr(message, "__dict__", None)
    found = None
    if fields is not None and not _is_mapping(type(message)):  # dict messages (and objects without fields): no memo
        if before is None:
            before = tuple(fields.values())  # taken before the key: a change from here on fails the check below
        found = _value_key(type(message), fields)
    if found is None or fields is None or before is None:
        return _hex_digest(_message(message, ids)), False
    key, containers = found
    content = fields.get("content")
    text = content if type(content) is str else None
    entry = _MEMO.get(key)
    if entry is not None and (entry[2] is text or entry[2] == text):  # a fingerprint's text compared in full
        return _entry_digest(entry, message, ids), True
    if key[7] is None and text is not None:  # text without containers: its canonical JSON written directly
        call_id = key[4]
        ordinal = ids(call_id) if call_id is not None else None
        data = _plain_json(key, text, ordinal)
        if data is not None:
            digest = hashlib.sha256(data).hexdigest()[:_DIGEST_HEX].encode()
            if _still(fields, before, containers, None):  # an id, if any, is an exact str (`_value_key`)
                _remember(key, text, [call_id] if ordinal else [], (ordinal,) if ordinal else (), digest)
                return digest, True
            return digest, False
    recorder = _RecordingIds(ids)
    digest = _hex_digest(_message(message, recorder))
    # Remembered only when every raw tool-call id is a str (the key's JSON then pins which ids are equal; None and
    # NaN ids both write null) and the fields did not change while the digest was computed (another thread).
    if all(type(raw) is str for raw in recorder.seen) and _still(fields, before, containers, key[7]):
        _remember(key, text, recorder.seen, tuple(recorder.ordinals), digest)
        return digest, True
    return digest, False


def _plain_json(key: _ValueKey, text: str, ordinal: object) -> bytes | None:
    """``canonical_json(_message(message, ids), exact_floats=False)`` for a message whose value key holds no
    containers (text content, empty tool calls and kwargs; every string field an exact ``str`` or ``None``), from
    the key's fields, ``ordinal`` being its tool-call id numbered: the keys ``_message`` writes, in sorted order,
    each value written by orjson as it would be inside the dict. ``None`` when orjson refuses a string (a lone
    surrogate: the general path writes it in its own way)."""
    cls, _, kind, name, call_id, status, role, _ = key
    try:
        parts = [b'{"chat_role":' + _dumps(role) + b',"content":' if role is not None else b'{"content":', _dumps(text)]
        if name is not None:
            parts.append(b',"name":' + _dumps(name))
        parts.append(b',"role":' + _dumps(cls.__name__ if kind is _ABSENT else kind))
        if call_id is not None:
            if status is not _ABSENT and status != "success":
                parts.append(b',"status":' + _dumps(status))
            parts.append(b',"tool_call_id":' + _dumps(ordinal))
    except orjson.JSONEncodeError:
        return None
    parts.append(b"}")
    return b"".join(parts)


def _still(
    fields: dict[str, object], before: tuple[object, ...], containers: tuple[object, ...], data: bytes | None
) -> bool:
    """Whether a message's fields still give the value key they gave when ``before`` was taken: the very same
    field objects (identity: strings and numbers are then equal too), and containers still empty when the key held
    none (``data`` is ``None``) or still writing ``data``. Cheaper than building the key again."""
    after = tuple(fields.values())
    if len(after) != len(before) or not all(map(is_, after, before)):
        return False
    if data is None:
        return not any(containers)
    return _containers_json(containers) == data


def _value_key(cls: type, fields: dict[str, object]) -> tuple[_ValueKey, tuple[object, ...]] | None:
    """``(key, containers)``: what ``_message`` reads of a message as an exact hashable value (module docstring),
    and the container objects (for the prefix memo); ``None`` when there is no exact key."""
    get = fields.get
    content = get("content")
    text = type(content) is str
    containers = (
        (get("tool_calls"), get("invalid_tool_calls"), get("additional_kwargs"))
        if text
        else (get("tool_calls"), get("invalid_tool_calls"), get("additional_kwargs"), content)
    )
    mutable = None
    if not text or containers[0] or containers[1] or containers[2]:
        mutable = _containers_json(containers)
        if mutable is None:
            return None
    for name in _STRING_FIELDS:  # keys compare by ==, exact only for strings (1 == True == 1.0 as keys)
        value = get(name)
        if value is not None and type(value) is not str:
            return None
    held: object = type(content)
    if text and isinstance(content, str):  # an exact str: the content itself, or a long one's fingerprint
        held = content if len(content) <= _LONG_TEXT else (len(content), content[:_EDGE], content[-_EDGE:])
    return (
        cls,
        held,
        get("type", _ABSENT),
        get("name"),
        get("tool_call_id"),
        get("status", _ABSENT),
        get("role"),
        mutable,
    ), containers


def message_digests(messages: Iterable[object]) -> list[bytes]:
    """The first 32 hex digits (ASCII bytes) of SHA-256 over each message's canonical JSON, in order.

    The canonical form is `promptcache._keys.canonical_messages` of the whole list (tool-call ids numbered
    across it), each message then written with `promptcache._keys.canonical_json` (``exact_floats=False``):
    ``message_digests(m)[i] == sha256(canonical_json(canonical_messages(m)[i])).hexdigest()[:32].encode()``.

    Args:
        messages: LangChain ``BaseMessage`` objects (or OpenAI-style dicts, digested without the memos).

    Returns:
        One 32-character hex digest (``bytes``) per message.
    """
    messages = messages if type(messages) is list else list(messages)
    ids = _ToolIds()
    prefix_key = tuple(map(id, messages[:2]))
    prefix = _PREFIXES.get(prefix_key)
    start = prefix.holds(messages) if prefix is not None else 0
    numbering: dict[object, str] | None = None  # the prefix's, when no new id is numbered
    if start and prefix is not None:
        if start == len(messages) == len(prefix.messages):  # the same prompt again (a retry, another processor)
            return list(prefix.digests)
        digests, sizes, contents = prefix.digests[:start], prefix.sizes[:start], prefix.contents[:start]
        getters, rests, ends, counts = (
            prefix.getters[:start],
            prefix.rests[:start],
            prefix.ends[:start],
            prefix.counts[:start],
        )
        parts = [prefix.joined[: ends[-1]]]
        size = ends[-1]
        numbered = counts[-1]
        if numbered == len(prefix.numbering):
            ids.ids.update(prefix.numbering)
            numbering = prefix.numbering
        else:
            ids.ids.update(islice(prefix.numbering.items(), numbered))
    else:
        digests, sizes, contents, getters, rests, ends, counts, parts, size = [], [], [], [], [], [], [], [], 0
    keep = True  # every message can join a prefix
    for message in messages[start:] if start else messages:
        fields: dict[str, object] | None = getattr(message, "__dict__", None)
        values = None
        if keep and type(fields) is dict:
            # the snapshot comes first: a change made while the digest is computed (another thread) fails the
            # next check
            layout = tuple(fields)
            content = fields.get("content")
            getter = field_getter(layout, type(content) is str)
            try:
                rest = getter(fields) if getter is not None else None
            except KeyError:  # a field removed since (another thread)
                rest = None
            piece = prefix_json(rest) if rest is not None else None
            if piece is not None:
                values = tuple(fields.values())
        digest, memoised = _digest_by_value(message, ids, values)
        digests.append(digest)
        if keep:
            if not memoised or values is None or piece is None or getter is None or rest is None:
                keep = False
            else:
                sizes.append(len(layout))
                contents.append(content)
                getters.append(getter)
                rests.append(rest)
                piece = (b"," if size else b"[") + piece
                parts.append(piece)
                size += len(piece)
                ends.append(size)
                counts.append(len(ids.ids))
    if keep and messages:
        if len(_PREFIXES) >= _PREFIXES_MAX and prefix_key not in _PREFIXES:
            _PREFIXES.clear()
        if numbering is None or len(ids.ids) != len(numbering):
            numbering = dict(ids.ids)
        _PREFIXES[prefix_key] = Prefix(
            tuple(messages), sizes, contents, getters, rests, b"".join(parts), ends, list(digests), counts, numbering
        )
    return digests


def forget_prefix(messages: Sequence[object]) -> None:
    """Drop the prefix memo of the conversation whose prompts start with these message objects (a caller that knows
    the conversation is over, such as the replay, releases what the memo holds for it at once instead of at the
    ``_PREFIXES_MAX`` clear). Digests are unaffected: the next call with those messages computes them again."""
    _PREFIXES.pop(tuple(map(id, messages[:2])), None)


def prompt_digest_json(messages: Iterable[object]) -> bytes:
    """``canonical_json([d.decode() for d in message_digests(messages)])``, written without a JSON encoder."""
    digests = message_digests(messages)
    if not digests:
        return b"[]"
    return b'["' + b'","'.join(digests) + b'"]'

"""Per-message digests of a prompt, remembered by value: what a response-cache key hashes instead of the prompt.

A conversation resends the same messages on every model call, each call one or two messages longer. Hashing the
whole prompt's canonical JSON every time costs time in proportion to the conversation (escaping a long tool
result, then SHA-256 over tens of kilobytes); here each message is canonicalised and hashed once, and a prompt is
the list of its messages' digests (32 bytes each), so a call costs a lookup per message plus the work for what is
new.

The memo is keyed by the message's value, never by the object: the string fields ``_message`` reads (type,
content, name, tool-call id, status, role) as they are, and the mutable ones (block content, tool calls,
additional kwargs) as their JSON bytes. An edited message (even in place, even ``1`` -> ``True`` in a tool
argument) has another key, so an entry can never be served for a value it was not computed from. Tool-call ids
are numbered by order of first appearance across the prompt (:func:`promptcache.keys.canonical_messages`), so the
same message can canonicalise differently at another position; an entry records the raw ids the message holds,
and its digests are kept per tuple of ordinals those ids get.

In front of it sits a memo per message object (LangGraph hands the same objects to every call of a thread): it
keeps a snapshot of the object's fields, and serves the object's value entry only while every field is still the
very value seen (one tuple comparison in C; the strings the key holds compared by value, the containers checked
for in-place edits: empty ones must still be empty, others must still give the same JSON bytes). Any difference
goes back to the value memo, so it cannot go stale either; it only skips building and hashing the value key.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from typing import Any, Final

import orjson

from promptcache.keys import _OPTS, _default, _is_mapping, _message, _ToolIds, canonical_json

__all__ = ["message_digests", "prompt_digest_json"]

_Entry = tuple[tuple[Any, ...], dict[tuple[Any, ...], bytes]]  # (raw tool-call ids, {ordinals: hex digest})
_MEMO: dict[tuple[Any, ...], _Entry] = {}  # value key -> entry
_SEEN: dict[int, tuple[Any, ...]] = {}  # id(message) -> (message, field snapshot, containers, their JSON, entry)
_MEMO_LIMIT: Final = 32 * 1024 * 1024  # characters of content (+ JSON bytes) in value keys; both memos clear past it
_MEMO_MAX_ENTRIES: Final = 200_000  # messages (each memo); cleared past it too
_memo_size = 0


class _RecordingIds:
    """Wraps the prompt's :class:`~promptcache.keys._ToolIds`, recording the raw ids a message hands it, in order."""

    __slots__ = ("ids", "seen", "ordinals")

    def __init__(self, ids: _ToolIds) -> None:
        self.ids = ids
        self.seen: list[Any] = []
        self.ordinals: list[Any] = []

    def __call__(self, value: Any) -> Any:
        ordinal = self.ids(value)
        self.seen.append(value)
        self.ordinals.append(ordinal)
        return ordinal


def _hex_digest(out: dict[str, Any]) -> bytes:
    """Hex SHA-256 (ASCII bytes) of one canonical message's JSON (``exact_floats=False``, as for message lists)."""
    return hashlib.sha256(canonical_json(out, exact_floats=False)).hexdigest().encode()


_PLAIN: dict[type, bool] = {}  # message class -> digested through the memo (not a Mapping)


def _mutable_json(content: Any, containers: tuple[Any, ...]) -> bytes | None:
    """Block content and the containers ``_message`` reads (tool calls, invalid tool calls, additional kwargs) as
    JSON bytes, with the canonical form's conversions (so ``1``, ``1.0`` and ``True`` differ); ``None`` when orjson
    cannot write them exactly (the message is then digested without the memo)."""
    try:
        return orjson.dumps((content, containers), default=_default, option=_OPTS)
    except (TypeError, orjson.JSONEncodeError):
        return None


def _remember(key: tuple[Any, ...], seen: list[Any], ordinals: tuple[Any, ...], digest: bytes) -> _Entry:
    global _memo_size
    size = len(key[1]) if type(key[1]) is str else 0
    size += len(key[7]) if key[7] is not None else 0
    _make_room(size)
    entry = _MEMO[key] = (tuple(seen), {ordinals: digest})
    _memo_size += size
    return entry


def _make_room(size: int) -> None:
    global _memo_size
    if _memo_size + size > _MEMO_LIMIT or len(_MEMO) >= _MEMO_MAX_ENTRIES or len(_SEEN) >= _MEMO_MAX_ENTRIES:
        _MEMO.clear()
        _SEEN.clear()
        _memo_size = 0


def _see(message: Any, fields: dict[str, Any], containers: tuple[Any, Any], mutable: bytes | None,
         entry: _Entry) -> None:
    """Put ``message`` in the object memo (only when every string field the key holds is a ``str`` or ``None``).

    Its strings are the value memo's own objects, already counted there; this memo is bounded by its entries.
    """
    get = fields.get
    for name in ("type", "name", "tool_call_id", "status"):
        value = get(name)
        if value is not None and type(value) is not str:
            return
    _make_room(0)
    _SEEN[id(message)] = (message, tuple(fields.values()), containers, mutable, entry)


def _unchanged(seen: tuple[Any, ...], fields: dict[str, Any]) -> bool:
    """Whether an object-memo snapshot still describes the message (see the module docstring)."""
    try:
        if tuple(fields.values()) != seen[1]:
            return False
        containers = seen[2]
        if seen[3] is None:
            return not any(containers[1])
        return _mutable_json(*containers) == seen[3]
    except Exception:  # noqa: BLE001 - a field whose == raises (e.g. an array): not the same, go by value
        return False


def message_digests(messages: Iterable[Any]) -> list[bytes]:
    """Hex SHA-256 (ASCII bytes) of each message's canonical JSON, in order.

    The canonical form is :func:`promptcache.keys.canonical_messages` of the whole list (tool-call ids numbered
    across it), each message then written with :func:`promptcache.keys.canonical_json` (``exact_floats=False``):
    ``message_digests(m)[i] == sha256(canonical_json(canonical_messages(m)[i])).hexdigest().encode()``.

    Args:
        messages: LangChain ``BaseMessage`` objects (or OpenAI-style dicts, digested without the memo).

    Returns:
        One 64-character hex digest (``bytes``) per message.
    """
    ids = _ToolIds()
    out: list[bytes] = []
    append, memo_get, seen_get, plain = out.append, _MEMO.get, _SEEN.get, _PLAIN.get
    for message in messages:
        seen = seen_get(id(message))
        if seen is not None and seen[0] is message and _unchanged(seen, message.__dict__):
            append(_entry_digest(seen[4], message, ids))
            continue
        # the value key (what _message reads), inline: this loop runs over every message of every model call
        cls = type(message)
        fields = getattr(message, "__dict__", None)
        is_plain = plain(cls)
        if is_plain is None:
            is_plain = _PLAIN[cls] = not _is_mapping(cls)
        if fields is None or not is_plain:  # dict messages (and objects without fields): no memo
            append(_hex_digest(_message(message, ids)))
            continue
        get = fields.get
        content = get("content")
        tool_calls, invalid, extra = get("tool_calls"), get("invalid_tool_calls"), get("additional_kwargs")
        text = type(content) is str
        containers = (None if text else content, (tool_calls, invalid, extra))
        mutable = None
        if tool_calls or invalid or extra or not text:
            mutable = _mutable_json(*containers)
            if mutable is None:
                append(_hex_digest(_message(message, ids)))
                continue
        role = get("role")
        key = (cls, content if text else type(content), get("type"), get("name"), get("tool_call_id"),
               get("status"), role if type(role) is str else None, mutable)
        try:
            entry = memo_get(key)
        except TypeError:  # a field assigned an unhashable value (no validation on assignment): no memo
            append(_hex_digest(_message(message, ids)))
            continue
        if entry is not None:
            append(_entry_digest(entry, message, ids))
        else:
            recorder = _RecordingIds(ids)
            digest = _hex_digest(_message(message, recorder))
            entry = _remember(key, recorder.seen, tuple(recorder.ordinals), digest)
            append(digest)
        _see(message, fields, containers, mutable, entry)
    return out


def _entry_digest(entry: _Entry, message: Any, ids: _ToolIds) -> bytes:
    """The digest of a memoised message at this position: its raw ids are numbered as ``_message`` would."""
    raw_ids, by_ordinals = entry
    if not raw_ids:
        ordinals: tuple[Any, ...] = ()
    else:
        numbered = ids.ids.get  # ids(raw), skipping the call for ids already numbered (a result's id was its call's)
        ordinals = tuple([numbered(raw) or ids(raw) for raw in raw_ids])
    digest = by_ordinals.get(ordinals)
    if digest is None:  # the same message at another position: the ids above already numbered its ids
        digest = by_ordinals[ordinals] = _hex_digest(_message(message, ids))
    return digest


def prompt_digest_json(messages: Iterable[Any]) -> bytes:
    """``canonical_json([d.decode() for d in message_digests(messages)])``, written without a JSON encoder."""
    digests = message_digests(messages)
    if not digests:
        return b"[]"
    return b'["' + b'","'.join(digests) + b'"]'

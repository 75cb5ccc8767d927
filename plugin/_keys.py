"""Canonical JSON and hashing: the one way every promptcache cache turns data into a key.

Canonical JSON here means: ``orjson`` with sorted keys at every level, non-string dict keys as strings, ``bytes``
replaced by ``{"$bytes": <length>, "sha256": <hex>}`` (an image or document block keys by its content, not by the
megabytes themselves), pydantic models by their ``model_dump()``, dataclasses/sets/tuples as JSON values, and a
str holding a lone surrogate (which UTF-8 cannot encode, but botocore sends as a ``\\ud800`` JSON escape) by
``{"$surrogates": <its json.dumps>}``. The same input always gives the same bytes, across processes and machines.

Prompt canonicalisation (`canonical_messages`; tools in `promptcache._tool_keys`) turns LangChain messages and tool
definitions into the plain values that decide what a provider sees: role, content, name, tool calls and tool
results. Message ids, ``response_metadata``, ``usage_metadata`` and other run metadata are left out, and tool-call
ids (random per provider call) are replaced by their order of first appearance in the conversation, so the same
conversation rebuilt with new ids gives the same key while which result answers which call is kept.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, cast

import orjson

if TYPE_CHECKING:
    pass

__all__ = [
    "canonical_json",
    "canonical_messages",
    "hash_tag",
    "stable_hash",
]

_OPTS = orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS | orjson.OPT_SERIALIZE_NUMPY


def _default(value: object) -> object:
    if isinstance(value, (bytes, bytearray, memoryview)):
        data = bytes(value)
        return {"$bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()}
    if isinstance(value, (set, frozenset)):
        return sorted(value, key=repr)
    if isinstance(value, tuple):
        return list(value)
    if isinstance(value, type):  # a class (e.g. a pydantic schema bound by with_structured_output): its path
        return f"{value.__module__}.{value.__qualname__}"
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        return dump(mode="json")
    return repr(value)


_MAX_DEPTH = 200  # orjson stops at 254 levels; deeper values are replaced by a hash of their repr


def _portable(value: object, depth: int = 0) -> object:
    """``value`` with what orjson cannot write faithfully made explicit (the slow path of `canonical_json`).

    Integers beyond 64 bits become ``{"$int": "<decimal>"}``, NaN and infinities ``{"$float": "nan" | "inf" |
    "-inf"}`` (orjson would write ``null``, the same as ``None``), a str holding a lone surrogate (U+D800..U+DFFF,
    which orjson refuses and UTF-8 cannot encode) ``{"$surrogates": <its json.dumps, surrogates as \\uXXXX>}``,
    non-string dict keys (and such str keys) their canonical JSON text, and nesting past 200 levels
    ``{"$deep": <sha256 of repr>}``. Everything else is left as it is.
    """
    if depth > _MAX_DEPTH:
        return {"$deep": _deep_digest(value)}
    if isinstance(value, str):
        return {"$surrogates": json.dumps(value)} if _has_lone_surrogate(value) else value
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, int):
        return value if -(2**63) <= value < 2**64 else {"$int": str(value)}
    if isinstance(value, float):
        return value if math.isfinite(value) else {"$float": repr(value)}
    if isinstance(value, dict):
        return {
            k if isinstance(k, str) and not _has_lone_surrogate(k) else canonical_json(k).decode(): _portable(
                v, depth + 1
            )
            for k, v in value.items()
        }
    if isinstance(value, (list, tuple)):
        return [_portable(v, depth + 1) for v in value]
    if isinstance(value, (set, frozenset)):
        return [_portable(v, depth + 1) for v in sorted(value, key=repr)]
    dump = getattr(value, "model_dump", None)
    if callable(dump) and not isinstance(value, type):
        return _portable(dump(mode="json"), depth + 1)
    return value


def _has_lone_surrogate(text: str) -> bool:
    """Whether ``text`` holds a code point in U+D800..U+DFFF (not UTF-8 encodable; orjson refuses it)."""
    if text.isascii():
        return False
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def _deep_digest(value: object) -> str:
    """SHA-256 of ``value``'s structure and leaves, walked with an explicit stack (a value nested thousands of
    levels deep has no recursion limit to hit): containers as their kind and length, leaves as their ``repr``."""
    digest = hashlib.sha256()
    stack: list[object] = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            digest.update(b"{%d\x00" % len(item))
            for key, child in reversed(list(item.items())):
                stack.append(child)
                stack.append(_Leaf(key))
        elif isinstance(item, (list, tuple)):
            digest.update(b"[%d\x00" % len(item))
            stack.extend(reversed(item))
        elif isinstance(item, (set, frozenset)):
            digest.update(b"<%d\x00" % len(item))
            stack.extend(sorted(item, key=repr))
        else:
            leaf = item.value if isinstance(item, _Leaf) else item
            digest.update(repr(leaf).encode("utf-8", "surrogatepass") + b"\x00")
    return digest.hexdigest()


class _Leaf:
    """A dict key on `_deep_digest`'s stack (hashed by its ``repr``, never walked)."""

    __slots__ = ("value",)

    def __init__(self, value: object) -> None:
        self.value = value


def canonical_json(value: object, *, exact_floats: bool = True) -> bytes:
    """``value`` as canonical JSON bytes (see the module docstring). Never raises for odd types: they use ``repr``.

    Fast path: one ``orjson.dumps``. When orjson refuses the value (an int beyond 64 bits, a tuple as a dict key,
    nesting past its limit) or its output holds ``null`` (which could be a NaN it wrote as ``null``), the value is
    rewritten by `_portable` first, so ``None`` and NaN, ``2**70`` and an error, never share a key. Values
    without those cases give the same bytes either way. ``exact_floats=False`` skips the NaN re-walk (used for
    message lists: JSON has no NaN, so a provider receives one as ``null`` too, and the walk would cost more than
    the serialisation on every prompt holding a ``null``).
    """
    try:
        data = orjson.dumps(value, default=_default, option=_OPTS)
    except (TypeError, orjson.JSONEncodeError):
        return orjson.dumps(_portable(value), default=_default, option=_OPTS)
    if exact_floats and b"null" in data and _has_non_finite(value):
        return orjson.dumps(_portable(value), default=_default, option=_OPTS)
    return data


_LEAVES = frozenset({str, int, bool, type(None), bytes})  # exact types that hold no float


def _has_non_finite(value: object, depth: int = 0) -> bool:
    """Whether ``value`` holds a NaN or an infinity (which orjson writes as ``null``); checked only on ``null``."""
    if type(value) in _LEAVES:  # most of a value; the getattr(..., "model_dump") below is slow on a str
        return False
    if isinstance(value, float):
        return not math.isfinite(value)
    if depth > _MAX_DEPTH:
        return False
    if isinstance(value, dict):
        return any(_has_non_finite(v, depth + 1) for v in value.values())
    if isinstance(value, (list, tuple, set, frozenset)):
        return any(_has_non_finite(v, depth + 1) for v in value)
    dump = getattr(value, "model_dump", None)
    if callable(dump) and not isinstance(value, type):
        return _has_non_finite(dump(mode="json"), depth + 1)
    return False


def stable_hash(value: object, length: int = 64) -> str:
    """Hex SHA-256 of ``canonical_json(value)`` (``bytes``/``str`` are hashed as they are), cut to ``length``."""
    if isinstance(value, str):
        data = value.encode()
    elif isinstance(value, (bytes, bytearray)):
        data = bytes(value)
    else:
        data = canonical_json(value)
    return hashlib.sha256(data).hexdigest()[:length]


_HASHED_TAG_MARK = "#"
"""First character of a hashed hash tag. A plain value starting with it is hashed too, so a hashed tag can never
equal the tag of a value kept as is (see `hash_tag`)."""


def hash_tag(value: str) -> str:
    """A Redis Cluster hash tag for ``value``: ``{...}`` around ``str(value)``, injective over strings.

    A value is kept as is when it is non-empty, holds no brace (Redis takes the tag to the first ``}``) and does
    not start with ``#``; any other value becomes ``#`` + the first 32 hex digits (128 bits) of its SHA-256. Kept
    values never start with ``#``, so two different strings never share a tag: ``"{alice}"`` gets
    ``{#<hash>}``, never the tag of a user whose id is that hash. Rule source: Redis Cluster specification, "Hash
    tags" (only the part between the first ``{`` and the next ``}`` is hashed to pick the slot).
    """
    text = str(value)
    if not text or "{" in text or "}" in text or text.startswith(_HASHED_TAG_MARK):
        text = _HASHED_TAG_MARK + stable_hash(text, 32)
    return "{" + text + "}"


# ---------------------------------------------------------------------------------------------------------------
# prompts: messages and tools
# ---------------------------------------------------------------------------------------------------------------
# Content-block keys holding a tool-call id (Anthropic ``tool_use``/``tool_result``, LangChain v1 ``tool_call``,
# OpenAI Responses ``function_call``); renamed to the call's ordinal like message-level ids.
_BLOCK_ID_TYPES = frozenset({"tool_use", "tool_call", "function_call", "server_tool_call", "server_tool_use"})
_BLOCK_REF_KEYS = ("tool_use_id", "tool_call_id", "call_id")
# additional_kwargs entries that repeat a message's tool calls (with provider ids): already in ``tool_calls``.
_DUPLICATE_KWARGS = frozenset({"tool_calls"})
_NO_FIELDS: dict[str, object] = {}
IdNumbering = Callable[[object], object]  # a raw tool-call id -> its ordinal (``"#0"``, ...; ``None`` stays ``None``)


class _ToolIds:
    """Maps provider tool-call ids to their order of first appearance (``"#0"``, ``"#1"``, ...)."""

    __slots__ = ("ids",)

    def __init__(self) -> None:
        self.ids: dict[object, str] = {}

    def __call__(self, value: object) -> str | None:
        if value is None:
            return None
        found = self.ids.get(value)
        if found is None:
            found = self.ids[value] = f"#{len(self.ids)}"
        return found


def _block(block: object, ids: IdNumbering) -> object:
    if not isinstance(block, Mapping):
        return block
    out = dict(block)
    if out.get("type") in _BLOCK_ID_TYPES and "id" in out:
        out["id"] = ids(out["id"])
    elif "id" in out:
        out.pop("id")  # other content-block ids (v1 text/reasoning/image blocks) are run metadata
    for ref in _BLOCK_REF_KEYS:
        if ref in out:
            out[ref] = ids(out[ref])
    return out


def _content(content: object, ids: IdNumbering) -> object:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return [_block(b, ids) for b in content]
    return content


_MAPPING_TYPES: dict[type, bool] = {}  # type -> is it a Mapping (an ABC isinstance check per message is slow)


def _is_mapping(cls: type) -> bool:
    found = _MAPPING_TYPES.get(cls)
    if found is None:
        found = _MAPPING_TYPES[cls] = issubclass(cls, Mapping)
    return found


def _calls(calls: object, ids: IdNumbering) -> list[dict[str, object]]:
    """Tool calls (a message's ``tool_calls`` / ``invalid_tool_calls``: pydantic-checked lists of dicts) as name,
    args and ordinal id."""
    return [
        {"name": tc.get("name"), "args": tc.get("args"), "id": ids(tc.get("id"))}
        for tc in cast("Iterable[Mapping[str, object]]", calls)
    ]


def _message(message: object, ids: IdNumbering) -> dict[str, object]:
    cls = type(message)
    if _is_mapping(cls):  # an OpenAI-style dict message: keep it, minus its id
        return {k: v for k, v in cast("Mapping[str, object]", message).items() if k != "id"}
    # Pydantic keeps fields in __dict__; reading it avoids pydantic's slow __getattr__ for absent attributes.
    fields: dict[str, object] = getattr(message, "__dict__", _NO_FIELDS)
    get = fields.get
    content = get("content")
    out: dict[str, object] = {
        "role": get("type", cls.__name__),
        "content": content if type(content) is str else _content(content, ids),
    }
    name = get("name")
    if name is not None:
        out["name"] = name
    tool_calls = get("tool_calls")
    if tool_calls:
        out["tool_calls"] = _calls(tool_calls, ids)
    invalid = get("invalid_tool_calls")
    if invalid:
        out["invalid_tool_calls"] = _calls(invalid, ids)
    call_id = get("tool_call_id")
    if call_id is not None:
        out["tool_call_id"] = ids(call_id)
        status = get("status", "success")
        if status != "success":
            out["status"] = status
    role = get("role")  # ChatMessage
    if isinstance(role, str):
        out["chat_role"] = role
    extra = get("additional_kwargs")
    if extra:
        kept = {k: v for k, v in cast("Mapping[str, object]", extra).items() if k not in _DUPLICATE_KWARGS}
        if kept:
            out["additional_kwargs"] = kept
    return out


def canonical_messages(messages: Iterable[object]) -> list[dict[str, object]]:
    """The provider-relevant part of ``messages``, as plain JSON-ready dicts, in order.

    Args:
        messages: LangChain ``BaseMessage`` objects (or OpenAI-style dicts, kept minus their ``id``).

    Returns:
        One dict per message: ``role`` (the message ``type``), ``content`` (string or blocks), and when present
        ``name``, ``tool_calls`` (name, args, ordinal id), ``invalid_tool_calls``, ``tool_call_id`` (ordinal),
        ``status`` (non-success tool results), ``chat_role`` and ``additional_kwargs`` (minus duplicated
        ``tool_calls``). Message ids, ``response_metadata`` and ``usage_metadata`` are left out; tool-call ids are
        replaced by ``"#<n>"``, their order of first appearance in ``messages``.
    """
    ids = _ToolIds()
    return [_message(m, ids) for m in messages]

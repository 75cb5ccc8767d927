"""Cache entries: a complete model response serialised to bytes, and the hit rebuilt from them.

An entry is orjson bytes of ``{"v": 1, "created_at": <unix seconds>, "messages": [...], "structured": ...}``
where ``messages`` is ``langchain_core.messages.messages_to_dict`` of the response's messages (the ``AIMessage``
with its content blocks, tool calls, ``usage_metadata`` and ``response_metadata``, plus the ``ToolMessage`` a
structured-output tool adds), written by orjson straight from the message fields (the same JSON, without
pydantic's ``model_dump``). Never a pickled live object: an entry written by one process (or version) can be
read, or rejected as corrupt, by another.
"""

from __future__ import annotations

import dataclasses
import os
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Final, cast

import orjson
from langchain.agents.middleware import ModelResponse
from langchain_core.messages import AIMessage, BaseMessage, messages_from_dict
from langchain_core.messages.ai import UsageMetadata

from promptcache._errors import PromptCacheError
from promptcache._types import JSONObject, JSONValue

__all__ = ["ZERO_USAGE", "CorruptEntry", "decode_entry", "decode_hit", "encode_entry", "is_storable", "with_metadata"]

_VERSION: Final = 1
ZERO_USAGE: Final = {"input_tokens": 0, "output_tokens": 0, "total_tokens": 0}
"""``usage_metadata`` of a hit: nothing was billed."""


class CorruptEntry(PromptCacheError, ValueError):
    """A stored value that is not a readable entry (treated as a miss)."""


def _jsonable(value: object) -> object:
    dump = getattr(value, "model_dump", None)
    if callable(dump) and not isinstance(value, type):
        return dump(mode="json")
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.asdict(value)
    return value


def is_storable(response: ModelResponse) -> bool:
    """A complete reply worth caching: an ``AIMessage`` with content or tool calls, and not itself a cache hit."""
    ai = next((m for m in response.result if isinstance(m, AIMessage)), None)
    if ai is None or (not ai.content and not ai.tool_calls):
        return False
    marker = ai.response_metadata.get("promptcache") if isinstance(ai.response_metadata, dict) else None
    return not (isinstance(marker, dict) and marker.get("cache") == "hit")


def _message_dict(message: BaseMessage) -> dict[str, object]:
    """``message_to_dict(message)`` without pydantic's ``model_dump``: the fields as stored (plus extras).

    Message fields are plain JSON values (str, lists, dicts, numbers), so orjson writes them as they are; the
    result reads back with ``messages_from_dict``. Our own ``promptcache`` marker is never stored.
    """
    data: dict[str, object] = dict(message.__dict__)
    extra = getattr(message, "__pydantic_extra__", None)
    if extra:
        data.update(extra)
    meta = data.get("response_metadata")
    if isinstance(meta, dict) and "promptcache" in meta:
        data["response_metadata"] = {k: v for k, v in meta.items() if k != "promptcache"}
    return {"type": message.type, "data": data}


def _encode_default(value: object) -> object:
    dump = getattr(value, "model_dump", None)  # a pydantic value in a free-form field (e.g. ToolMessage.artifact)
    if callable(dump) and not isinstance(value, type):
        return dump()
    raise TypeError(f"Type is not JSON serializable: {type(value).__name__}")


def encode_entry(response: ModelResponse, now: float | None = None) -> bytes:
    """Serialise ``response`` (see the module docstring) with orjson, straight from the message fields.

    Raises:
        TypeError: a value orjson cannot encode (e.g. a live object in ``additional_kwargs``).
    """
    structured = None
    if response.structured_response is not None:
        value = response.structured_response
        structured = {"type": type(value).__qualname__, "data": _jsonable(value)}
    entry = {
        "v": _VERSION,
        "created_at": time.time() if now is None else now,
        "messages": [_message_dict(m) for m in response.result],
        "structured": structured,
    }
    return orjson.dumps(entry, default=_encode_default)


def _parse(raw: bytes) -> JSONObject:
    try:
        entry: JSONValue = orjson.loads(raw)
    except (orjson.JSONDecodeError, TypeError) as exc:
        raise CorruptEntry(f"not JSON: {exc}") from exc
    if not isinstance(entry, dict) or entry.get("v") != _VERSION:
        raise CorruptEntry(f"unknown entry layout (v={entry.get('v') if isinstance(entry, dict) else None!r})")
    if not isinstance(entry.get("messages"), list) or not isinstance(entry.get("created_at"), (int, float)):
        raise CorruptEntry("entry lacks messages/created_at")
    return entry


_AI_FIELDS: Final = frozenset(AIMessage.model_fields)
_TOOL_CALL_KEYS: Final = frozenset({"name", "args", "id", "type"})
_USAGE_COUNTS: Final = ("input_tokens", "output_tokens", "total_tokens")
_USAGE_DETAILS: Final = ("input_token_details", "output_token_details")


def _plain_tool_calls(calls: JSONValue) -> list[JSONObject] | None:
    """``calls`` as AIMessage's validator would leave them (``{"name", "args", "id", "type": "tool_call"}``, in
    that order), when each one already has exactly that shape; else ``None``."""
    if type(calls) is not list:
        return None
    out: list[JSONObject] = []
    for call in calls:
        if (
            type(call) is not dict
            or call.keys() != _TOOL_CALL_KEYS
            or call["type"] != "tool_call"
            or type(call["name"]) is not str
            or type(call["args"]) is not dict
            or (call["id"] is not None and type(call["id"]) is not str)
        ):
            return None
        out.append({"name": call["name"], "args": call["args"], "id": call["id"], "type": "tool_call"})
    return out


def _plain_usage(usage: JSONValue) -> bool:
    """Whether ``usage`` is ``None`` or a ``UsageMetadata`` whose counts are all ``int`` (validation keeps it)."""
    if usage is None:
        return True
    if type(usage) is not dict or not all(type(usage.get(k)) is int for k in _USAGE_COUNTS):
        return False
    for name in _USAGE_DETAILS:
        details = usage.get(name)
        if details is not None and (type(details) is not dict or any(type(v) is not int for v in details.values())):
            return False
    return all(k in _USAGE_COUNTS or k in _USAGE_DETAILS for k in usage)


def _plain_fields(data: JSONObject) -> dict[str, JSONValue] | None:
    """The fields of an ``AIMessage`` built from a stored dict without pydantic validation, equal to
    ``AIMessage(**data)``'s, when every field already holds what validation would leave there: all nine fields and
    no others, ``type`` ``"ai"``, text or a list of text/dict blocks, dict kwargs and metadata, tool calls of the
    shape above, no invalid tool calls, usage as `_plain_usage`. ``None`` otherwise (the caller validates; an entry
    `encode_entry` wrote from a validated message passes). Validating was most of a hit's decode."""
    content = data.get("content")
    if (
        data.keys() != _AI_FIELDS
        or data["type"] != "ai"
        or not (type(content) is str or (type(content) is list and all(type(b) in (str, dict) for b in content)))
        or type(data["additional_kwargs"]) is not dict
        or type(data["response_metadata"]) is not dict
        or not (data["name"] is None or type(data["name"]) is str)
        or not (data["id"] is None or type(data["id"]) is str)
        or data["invalid_tool_calls"] != []
        or not _plain_usage(data["usage_metadata"])
    ):
        return None
    calls = _plain_tool_calls(data["tool_calls"])
    if calls is None or (not calls and not content):
        return None  # an empty reply: refused by _build's check, with its message
    return {**data, "tool_calls": cast("JSONValue", calls)}


def _plain_ai(data: JSONObject) -> AIMessage | None:
    """``AIMessage(**data)`` without validation when `_plain_fields` accepts ``data``, else ``None``."""
    fields = _plain_fields(data)
    return None if fields is None else _construct(fields)


_set = object.__setattr__


def _direct(fields: Mapping[str, object]) -> AIMessage:
    """``AIMessage.model_construct(**fields)`` for a dict holding exactly its fields: what pydantic's
    ``model_construct`` sets (``__dict__`` in field order, ``__pydantic_fields_set__``, empty extras as validation
    leaves them under ``extra="allow"``, no private attributes), without its per-field alias loop."""
    message = AIMessage.__new__(AIMessage)
    _set(message, "__dict__", {name: fields[name] for name in _FIELD_ORDER})
    _set(message, "__pydantic_fields_set__", set(_FIELD_ORDER))
    _set(message, "__pydantic_extra__", {})
    _set(message, "__pydantic_private__", None)
    return message


def _same(a: AIMessage, b: AIMessage) -> bool:
    return (
        a == b
        and list(a.__dict__) == list(b.__dict__)
        and a.model_fields_set == b.model_fields_set
        and a.__pydantic_extra__ == b.__pydantic_extra__
        and a.__pydantic_private__ == b.__pydantic_private__
    )


_FIELD_ORDER: Final = tuple(AIMessage.model_fields)
_SAMPLE: Final[JSONObject] = {
    "content": "x",
    "additional_kwargs": {},
    "response_metadata": {},
    "type": "ai",
    "name": None,
    "id": "i",
    "tool_calls": [{"name": "f", "args": {}, "id": "c", "type": "tool_call"}],
    "invalid_tool_calls": [],
    "usage_metadata": None,
}
# Checked once against validation: a pydantic or LangChain release that builds messages otherwise gets
# model_construct (validation's fields without the validators), or validation itself.
_construct: Callable[..., AIMessage] = (
    _direct
    if _same(_direct(_SAMPLE), AIMessage(**_SAMPLE))  # type: ignore[arg-type]  # a JSON dict as field values
    else (lambda f: AIMessage.model_construct(**f))
    if _same(AIMessage.model_construct(**_SAMPLE), AIMessage(**_SAMPLE))  # type: ignore[arg-type]
    else (lambda f: AIMessage(**f))
)


def _copy_with_metadata(message: AIMessage, metadata: dict[str, object]) -> AIMessage:
    """``message.model_copy(update={"response_metadata": metadata})`` for an exact ``AIMessage`` without private
    attributes: what pydantic's ``__copy__`` and ``model_copy`` set (``__dict__`` copied with the one field
    replaced, extras and the fields-set copied, the field added to it), without their Python steps."""
    copied = AIMessage.__new__(AIMessage)
    fields = dict(message.__dict__)
    fields["response_metadata"] = metadata
    extra = message.__pydantic_extra__
    _set(copied, "__dict__", fields)
    _set(copied, "__pydantic_extra__", None if extra is None else dict(extra))
    _set(copied, "__pydantic_fields_set__", {*message.__pydantic_fields_set__, "response_metadata"})
    _set(copied, "__pydantic_private__", None)
    return copied


def with_metadata(message: AIMessage, metadata: dict[str, object]) -> AIMessage:
    """A copy of ``message`` whose ``response_metadata`` is ``metadata`` (``model_copy(update=...)``: the same
    object state; a direct copy for an exact ``AIMessage`` without private attributes when that gives what
    ``model_copy`` gives on this pydantic release, checked once at import)."""
    if _COPY_DIRECT and type(message) is AIMessage and message.__pydantic_private__ is None:
        return _copy_with_metadata(message, metadata)
    return message.model_copy(update={"response_metadata": metadata})


# Checked once against pydantic's own copy, like _construct above.
_COPY_SAMPLE: Final = AIMessage(**_SAMPLE, extra_field=1)  # type: ignore[arg-type]  # a JSON dict as field values
_COPY_DIRECT: Final = _same(
    _copy_with_metadata(_COPY_SAMPLE, {"m": 1}), _COPY_SAMPLE.model_copy(update={"response_metadata": {"m": 1}})
)


def _fresh_id() -> str:
    """``f"lc_run--{uuid.uuid4()}"`` (the form LangChain gives run ids), formatted from ``os.urandom`` directly: a
    version-4 UUID string, without ``uuid.UUID``'s Python constructor and ``__str__`` (a quarter of the time)."""
    h = os.urandom(16).hex()
    return f"lc_run--{h[:8]}-{h[8:12]}-4{h[13:16]}-{_VARIANT[int(h[16], 16) & 3]}{h[17:20]}-{h[20:]}"


_VARIANT: Final = "89ab"  # RFC 4122 variant bits (10xx) in the first hex digit of the fourth group


def _message(stored: JSONValue) -> BaseMessage:
    data = stored.get("data") if type(stored) is dict and stored.get("type") == "ai" else None
    message = _plain_ai(data) if type(data) is dict else None
    # anything else: LangChain validates it (and raises on a value that is no message dict)
    return message if message is not None else messages_from_dict([cast("dict[str, object]", stored)])[0]


def _build(dicts: Sequence[JSONValue]) -> list[BaseMessage]:
    try:
        messages = [_message(d) for d in dicts]
    except Exception as exc:  # any malformed message dict
        raise CorruptEntry(f"bad messages: {type(exc).__name__}: {exc}") from exc
    ai = next((m for m in messages if isinstance(m, AIMessage)), None)
    if ai is None:
        raise CorruptEntry("entry holds no AIMessage")
    if not ai.content and not ai.tool_calls:  # never written (is_storable): a foreign or damaged entry
        raise CorruptEntry("entry holds an empty reply")
    return messages


def decode_entry(raw: bytes) -> dict[str, object]:
    """Parse and check an entry: the stored dict with ``messages`` rebuilt as LangChain messages.

    Raises:
        CorruptEntry: not JSON, wrong version, or missing fields (the message says which).
    """
    entry: dict[str, object] = dict(_parse(raw))
    entry["messages"] = _build(cast("list[JSONValue]", entry["messages"]))  # _parse checked it is a list
    return entry


def _restore_structured(stored: JSONValue, response_format: object) -> object:
    if not isinstance(stored, dict):
        return None
    data = stored.get("data")
    name = stored.get("type")
    single = getattr(response_format, "schema_spec", None)
    specs = getattr(response_format, "schema_specs", None) or ([single] if single is not None else [])
    schemas = [s.schema for s in specs] or [getattr(response_format, "schema", None)]
    for schema in schemas:
        if isinstance(schema, type) and schema.__qualname__ == name:
            if hasattr(schema, "model_validate"):
                return schema.model_validate(data)
            if dataclasses.is_dataclass(schema):
                return schema(**cast("dict[str, object]", data))  # not a dict: raises, the entry is corrupt
    return data


def decode_hit(raw: bytes, key: str, response_format: object = None, now: float | None = None) -> ModelResponse:
    """The ``ModelResponse`` of a hit, read from a stored entry: fresh message ids, zero billed usage, a marker.

    ``response_metadata["promptcache"] = {"cache": "hit", "key": key, "age_s": <seconds since stored>,
    "usage": <the original usage_metadata>}`` on the first ``AIMessage``; its ``usage_metadata`` is
    ``ZERO_USAGE``. Each message is built once, from its stored dict with the new id already in place.

    Raises:
        CorruptEntry: as `decode_entry`.
    """
    entry = _parse(raw)
    stored_messages = cast("list[JSONValue]", entry["messages"])  # _parse checked both
    created_at = cast("float", entry["created_at"])
    age = round(max(0.0, (time.time() if now is None else now) - float(created_at)), 3)
    if len(stored_messages) == 1:  # the usual entry, one AIMessage: built once, marked as it is built
        stored = stored_messages[0]
        data = stored.get("data") if type(stored) is dict and stored.get("type") == "ai" else None
        fields = _plain_fields(data) if type(data) is dict else None
        if fields is not None:
            fields["id"] = _fresh_id()
            marked = cast("dict[str, JSONValue]", fields["response_metadata"])  # parsed for this hit alone
            marked["promptcache"] = {"cache": "hit", "key": key, "age_s": age, "usage": fields["usage_metadata"]}
            fields["usage_metadata"] = dict(ZERO_USAGE)
            return ModelResponse(
                result=[_construct(fields)],
                structured_response=_restore_structured(entry.get("structured"), response_format),
            )
    for stored in stored_messages:
        data = stored.get("data") if isinstance(stored, dict) else None
        if isinstance(data, dict):
            data["id"] = _fresh_id()
    messages = _build(stored_messages)
    ai = next(m for m in messages if isinstance(m, AIMessage))
    # ``ai`` was just built from the entry and belongs to this hit alone: mark it in place (no second copy).
    meta = dict(ai.response_metadata)
    meta["promptcache"] = {"cache": "hit", "key": key, "age_s": age, "usage": ai.usage_metadata}
    ai.response_metadata = meta
    ai.usage_metadata = cast("UsageMetadata", dict(ZERO_USAGE))
    return ModelResponse(
        result=messages, structured_response=_restore_structured(entry.get("structured"), response_format)
    )

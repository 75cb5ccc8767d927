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
import time
import uuid
from typing import Any, Final, cast

import orjson
from langchain.agents.middleware import ModelResponse
from langchain_core.messages import AIMessage, BaseMessage, messages_from_dict
from langchain_core.messages.ai import UsageMetadata

from promptcache._errors import PromptCacheError

__all__ = ["ZERO_USAGE", "CorruptEntry", "decode_entry", "decode_hit", "encode_entry", "is_storable"]

_VERSION: Final = 1
ZERO_USAGE: Final = {"input_tokens": 0, "output_tokens": 0, "total_tokens": 0}
"""``usage_metadata`` of a hit: nothing was billed."""


class CorruptEntry(PromptCacheError, ValueError):
    """A stored value that is not a readable entry (treated as a miss)."""


def _jsonable(value: Any) -> Any:
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


def _message_dict(message: BaseMessage) -> dict[str, Any]:
    """``message_to_dict(message)`` without pydantic's ``model_dump``: the fields as stored (plus extras).

    Message fields are plain JSON values (str, lists, dicts, numbers), so orjson writes them as they are; the
    result reads back with ``messages_from_dict``. Our own ``promptcache`` marker is never stored.
    """
    data = dict(message.__dict__)
    extra = getattr(message, "__pydantic_extra__", None)
    if extra:
        data.update(extra)
    meta = data.get("response_metadata")
    if isinstance(meta, dict) and "promptcache" in meta:
        data["response_metadata"] = {k: v for k, v in meta.items() if k != "promptcache"}
    return {"type": message.type, "data": data}


def _encode_default(value: Any) -> Any:
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


def _parse(raw: bytes) -> dict[str, Any]:
    try:
        entry = orjson.loads(raw)
    except (orjson.JSONDecodeError, TypeError) as exc:
        raise CorruptEntry(f"not JSON: {exc}") from exc
    if not isinstance(entry, dict) or entry.get("v") != _VERSION:
        raise CorruptEntry(f"unknown entry layout (v={entry.get('v') if isinstance(entry, dict) else None!r})")
    if not isinstance(entry.get("messages"), list) or not isinstance(entry.get("created_at"), (int, float)):
        raise CorruptEntry("entry lacks messages/created_at")
    return entry


def _build(dicts: list[Any]) -> list[BaseMessage]:
    try:
        messages = messages_from_dict(dicts)
    except Exception as exc:  # any malformed message dict
        raise CorruptEntry(f"bad messages: {type(exc).__name__}: {exc}") from exc
    ai = next((m for m in messages if isinstance(m, AIMessage)), None)
    if ai is None:
        raise CorruptEntry("entry holds no AIMessage")
    if not ai.content and not ai.tool_calls:  # never written (is_storable): a foreign or damaged entry
        raise CorruptEntry("entry holds an empty reply")
    return messages


def decode_entry(raw: bytes) -> dict[str, Any]:
    """Parse and check an entry: the stored dict with ``messages`` rebuilt as LangChain messages.

    Raises:
        CorruptEntry: not JSON, wrong version, or missing fields (the message says which).
    """
    entry = _parse(raw)
    entry["messages"] = _build(entry["messages"])
    return entry


def _restore_structured(stored: Any, response_format: Any) -> Any:
    if not isinstance(stored, dict):
        return None
    data: Any = stored.get("data")
    name = stored.get("type")
    schemas: list[Any] = []
    specs = getattr(response_format, "schema_specs", None) or (
        [response_format.schema_spec] if getattr(response_format, "schema_spec", None) is not None else []
    )
    schemas = [s.schema for s in specs] or [getattr(response_format, "schema", None)]
    for schema in schemas:
        if isinstance(schema, type) and schema.__qualname__ == name:
            if hasattr(schema, "model_validate"):
                return schema.model_validate(data)
            if dataclasses.is_dataclass(schema):
                return schema(**data)
    return data


def decode_hit(raw: bytes, key: str, response_format: Any = None, now: float | None = None) -> ModelResponse:
    """The ``ModelResponse`` of a hit, read from a stored entry: fresh message ids, zero billed usage, a marker.

    ``response_metadata["promptcache"] = {"cache": "hit", "key": key, "age_s": <seconds since stored>,
    "usage": <the original usage_metadata>}`` on the first ``AIMessage``; its ``usage_metadata`` is
    ``ZERO_USAGE``. Each message is built once, from its stored dict with the new id already in place.

    Raises:
        CorruptEntry: as :func:`decode_entry`.
    """
    entry = _parse(raw)
    for stored in entry["messages"]:
        data = stored.get("data") if isinstance(stored, dict) else None
        if isinstance(data, dict):
            data["id"] = f"lc_run--{uuid.uuid4()}"
    messages = _build(entry["messages"])
    age = max(0.0, (time.time() if now is None else now) - float(entry["created_at"]))
    ai = next(m for m in messages if isinstance(m, AIMessage))
    # ``ai`` was just built from the entry and belongs to this hit alone: mark it in place (no second copy).
    meta = dict(ai.response_metadata)
    meta["promptcache"] = {"cache": "hit", "key": key, "age_s": round(age, 3), "usage": ai.usage_metadata}
    ai.response_metadata = meta
    ai.usage_metadata = cast("UsageMetadata", dict(ZERO_USAGE))
    return ModelResponse(
        result=messages, structured_response=_restore_structured(entry.get("structured"), response_format)
    )

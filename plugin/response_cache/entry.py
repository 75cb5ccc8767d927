"""Cache entries: a complete model response serialised to bytes, and the hit rebuilt from them.

An entry is orjson bytes of ``{"v": 1, "created_at": <unix seconds>, "messages": [...], "structured": ...}``
where ``messages`` is ``langchain_core.messages.messages_to_dict`` of the response's messages (the ``AIMessage``
with its content blocks, tool calls, ``usage_metadata`` and ``response_metadata``, plus the ``ToolMessage`` a
structured-output tool adds). Never a pickled live object: an entry written by one process (or version) can be
read, or rejected as corrupt, by another.
"""

from __future__ import annotations

import dataclasses
import time
import uuid
from typing import Any, Final

import orjson
from langchain.agents.middleware import ModelResponse
from langchain_core.messages import AIMessage, BaseMessage, messages_from_dict, messages_to_dict

__all__ = ["CorruptEntry", "ZERO_USAGE", "decode_entry", "encode_entry", "hit_response", "is_storable"]

_VERSION: Final = 1
ZERO_USAGE: Final = {"input_tokens": 0, "output_tokens": 0, "total_tokens": 0}
"""``usage_metadata`` of a hit: nothing was billed."""


class CorruptEntry(ValueError):
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


def encode_entry(response: ModelResponse, now: float | None = None) -> bytes:
    """Serialise ``response`` (see the module docstring).

    Raises:
        TypeError: a value orjson cannot encode (e.g. a live object in ``additional_kwargs``).
    """
    messages = []
    for m in messages_to_dict(response.result):
        meta = m["data"].get("response_metadata")
        if isinstance(meta, dict) and "promptcache" in meta:  # never store our own miss/bust marker
            m["data"]["response_metadata"] = {k: v for k, v in meta.items() if k != "promptcache"}
        messages.append(m)
    structured = None
    if response.structured_response is not None:
        value = response.structured_response
        structured = {"type": type(value).__qualname__, "data": _jsonable(value)}
    entry = {"v": _VERSION, "created_at": time.time() if now is None else now, "messages": messages,
             "structured": structured}
    return orjson.dumps(entry)


def decode_entry(raw: bytes) -> dict[str, Any]:
    """Parse and check an entry.

    Raises:
        CorruptEntry: not JSON, wrong version, or missing fields (the message says which).
    """
    try:
        entry = orjson.loads(raw)
    except (orjson.JSONDecodeError, TypeError) as exc:
        raise CorruptEntry(f"not JSON: {exc}") from exc
    if not isinstance(entry, dict) or entry.get("v") != _VERSION:
        raise CorruptEntry(f"unknown entry layout (v={entry.get('v') if isinstance(entry, dict) else None!r})")
    if not isinstance(entry.get("messages"), list) or not isinstance(entry.get("created_at"), (int, float)):
        raise CorruptEntry("entry lacks messages/created_at")
    try:
        entry["messages"] = messages_from_dict(entry["messages"])
    except Exception as exc:  # noqa: BLE001 - any malformed message dict
        raise CorruptEntry(f"bad messages: {type(exc).__name__}: {exc}") from exc
    if not any(isinstance(m, AIMessage) for m in entry["messages"]):
        raise CorruptEntry("entry holds no AIMessage")
    return entry


def _restore_structured(stored: Any, response_format: Any) -> Any:
    if not isinstance(stored, dict):
        return None
    data, name = stored.get("data"), stored.get("type")
    schemas: list[Any] = []
    specs = getattr(response_format, "schema_specs", None) or (
        [response_format.schema_spec] if getattr(response_format, "schema_spec", None) is not None else [])
    schemas = [s.schema for s in specs] or [getattr(response_format, "schema", None)]
    for schema in schemas:
        if isinstance(schema, type) and schema.__qualname__ == name:
            if hasattr(schema, "model_validate"):
                return schema.model_validate(data)
            if dataclasses.is_dataclass(schema):
                return schema(**data)
    return data


def hit_response(entry: dict[str, Any], key: str, response_format: Any = None,
                 now: float | None = None) -> ModelResponse:
    """The ``ModelResponse`` of a hit: fresh message ids, zero billed usage, a ``promptcache`` marker.

    ``response_metadata["promptcache"] = {"cache": "hit", "key": key, "age_s": <seconds since stored>,
    "usage": <the original usage_metadata>}`` on the ``AIMessage``.
    """
    age = max(0.0, (time.time() if now is None else now) - float(entry["created_at"]))
    out: list[BaseMessage] = []
    marked = False
    for message in entry["messages"]:
        update: dict[str, Any] = {"id": f"lc_run--{uuid.uuid4()}"}
        if isinstance(message, AIMessage) and not marked:
            marked = True
            meta = dict(message.response_metadata)
            meta["promptcache"] = {"cache": "hit", "key": key, "age_s": round(age, 3),
                                   "usage": message.usage_metadata}
            update.update(response_metadata=meta, usage_metadata=dict(ZERO_USAGE))
        out.append(message.model_copy(update=update))
    structured = _restore_structured(entry.get("structured"), response_format)
    return ModelResponse(result=out, structured_response=structured)

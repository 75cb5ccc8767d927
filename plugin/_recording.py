"""The recording format ``TrafficRecorder`` writes and ``promptcache replay`` reads: one JSON object per model call.

A line (``version`` 1)::

    {"promptcache": "call", "version": 1, "id": "<call uuid>",
     "started": <epoch s>, "ended": <epoch s>, "thread_id": "..." | null, "user": "..." | null,
     "model": "<model id>", "model_class": "ChatBedrockConverse",
     "request": {"messages": [<messages_to_dict form>], "tools": [<OpenAI tool schema>], "settings": {...}},
     "sent": {"api": "bedrock-converse", "operation": "Converse", "body": {<Converse request as boto3 sent it>}},
     "response": {"message": <messages_to_dict form>, "usage_metadata": {...}},
     "text": "kept" | "dropped"}

``request`` is the request as the innermost middleware passed it to the model: ``messages`` includes the system
message first; ``cache_control`` content blocks are kept. ``sent`` is present when the model is a Bedrock Converse
model: the request body boto3 sent (``system``, ``messages``, ``toolConfig``, ``inferenceConfig``, ...), with the
``cachePoint`` blocks ``CachePointChatBedrockConverse`` placed on the final request.

With ``text="dropped"`` every text of the system prompt and the messages — text fields, string contents, tool-call
arguments, tool-result JSON — is replaced by ``{"promptcache_redacted": {"chars": <length>, "sha256": "<hex>"}}``
(SHA-256 of the UTF-8 text; non-string values as canonical JSON). Tool schemas are kept. ``restore`` turns each one
back into a stand-in text of the same length that starts with the digest, so equal texts stay equal and sizes stay
in proportion.

A line holding a lone surrogate (U+D800..U+DFFF, which UTF-8 cannot encode) is written as canonical JSON
(`promptcache._keys.canonical_json`: such a text is ``{"$surrogates": <its json.dumps>}``) instead of being lost.
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any

import orjson

from promptcache._errors import PromptCacheError
from promptcache._types import JSONObject

__all__ = ["FORMAT_TAG", "REDACTED", "VERSION", "RedactedTooLong", "is_recording", "redact", "restore", "stand_in"]

#: ``promptcache`` field of every recorded line.
FORMAT_TAG = "call"
#: Version of the line layout above.
VERSION = 1
#: Key of a redacted text.
REDACTED = "promptcache_redacted"

_STRING_KEYS = frozenset({"text", "content"})
_VALUE_KEYS = frozenset({"args", "input", "arguments", "json"})
_SKIP_KEYS = frozenset({"toolConfig", "toolSpec", "inputSchema", "usage_metadata", "response_metadata"})


def is_recording(rec: object) -> bool:
    """True for one recorded line (a dict with ``"promptcache": "call"``)."""
    return isinstance(rec, dict) and rec.get("promptcache") == FORMAT_TAG


def _digest(value: object) -> JSONObject:
    text = value if isinstance(value, str) else orjson.dumps(value, option=orjson.OPT_SORT_KEYS, default=repr).decode()
    return {REDACTED: {"chars": len(text), "sha256": hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()}}


def redact(value: Any, key: str = "") -> Any:
    """A copy of ``value`` with every message text replaced by its size and digest (module docstring): strings
    under ``text`` / ``content``, and any non-empty value under ``args`` / ``input`` / ``arguments`` / ``json``."""
    if key in _STRING_KEYS and isinstance(value, str):
        return _digest(value)
    if key in _VALUE_KEYS and value not in ({}, [], "", None) and not (isinstance(value, dict) and REDACTED in value):
        return _digest(value)
    if isinstance(value, dict):
        return {k: v if k in _SKIP_KEYS else redact(v, k) for k, v in value.items()}
    if isinstance(value, list):
        return [redact(v, key) for v in value]
    return value


def stand_in(chars: int, sha256: str) -> str:
    """The text a redacted one is replayed as: its digest's first 16 hex digits, then ``" the"`` words up to
    ``chars`` characters (one ``cl100k_base`` token per 4 characters, about what English prose averages)."""
    head = sha256[:16]
    return head + " the" * max((chars - len(head)) // 4, 0)


def _read_surrogates(dumped: str, mark: dict[str, Any]) -> Any:
    """The text of a ``{"$surrogates": <json.dumps>}`` mark, each lone surrogate as U+FFFD (``mark`` if malformed)."""
    try:
        text = json.loads(dumped)
    except (ValueError, RecursionError):
        return mark
    return re.sub("[\ud800-\udfff]", "\ufffd", text) if isinstance(text, str) else mark


class RedactedTooLong(PromptCacheError, ValueError):
    """`restore` met redacted texts of more characters in all than its ``max_chars``: ``chars`` is their total."""

    def __init__(self, chars: int, max_chars: int) -> None:
        super().__init__(f"redacted texts of {chars:,} characters, over {max_chars:,}")
        self.chars = chars


def restore(value: Any, max_chars: int | None = None) -> Any:
    """``value`` with every redacted text replaced by its ``stand_in``, and every text canonical JSON marked for
    its lone surrogates (``{"$surrogates": ...}``, `promptcache._keys.canonical_json`) read back with each one as
    U+FFFD (other values as they are).

    Raises:
        RedactedTooLong: the redacted texts stand for more than ``max_chars`` characters in all (checked before
            a stand-in that would pass it is built).
    """
    budget = [max_chars if max_chars is not None else -1, 0]  # [bound or -1, characters restored so far]
    return _restore(value, budget)


def _restore(value: Any, budget: list[int]) -> Any:
    if isinstance(value, dict):
        mark = value.get(REDACTED)
        if len(value) == 1 and isinstance(mark, dict):
            chars, sha = mark.get("chars"), mark.get("sha256")
            size = max(chars, 0) if isinstance(chars, int) else 0
            budget[1] += size
            if 0 <= budget[0] < budget[1]:
                raise RedactedTooLong(budget[1], budget[0])
            return stand_in(size, sha if isinstance(sha, str) else "")
        if len(value) == 1 and isinstance(value.get("$surrogates"), str):  # promptcache._keys.canonical_json
            return _read_surrogates(value["$surrogates"], value)
        return {k: _restore(v, budget) for k, v in value.items()}
    if isinstance(value, list):
        return [_restore(v, budget) for v in value]
    return value

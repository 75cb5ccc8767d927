"""Which conversation a Bedrock request belongs to: ``conversation_id``.

The call's ``configurable["thread_id"]`` when there is one, else a SHA-256 of the system prompt and the first
message (every request of a conversation repeats both). The hash is over the canonical JSON of the two
(`promptcache._keys.canonical_json`), several kilobytes with a long system prompt, and SHA-256 is the slowest step
of it: the ids of the last `MEMO_ENTRIES` such JSON texts are kept (keyed by the text itself, so a hit is exact),
and a conversation's later requests skip the digest.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Mapping, Sequence

from langchain_core.runnables import RunnableConfig
from langchain_core.runnables.config import ensure_config, var_child_runnable_config

from promptcache._keys import canonical_json, stable_hash

__all__ = ["MEMO_ENTRIES", "MEMO_MAX_TEXT_BYTES", "conversation_id"]

#: Conversation ids kept (least recently used dropped first).
MEMO_ENTRIES = 512
#: Longer JSON texts are hashed every time, never kept (so the memo holds at most 16 MiB).
MEMO_MAX_TEXT_BYTES = 32 << 10

_memo: OrderedDict[bytes | tuple[object, ...], str] = (
    OrderedDict()
)  # canonical JSON bytes, or the texts (`_texts_key`) -> id
_lock = threading.Lock()


def conversation_id(
    system: Sequence[object], messages: Sequence[Mapping[str, object]], config: RunnableConfig | None = None
) -> str:
    """``thread:<thread_id>`` from the call's config, else ``hash:<sha256 of system + first message>`` (the first
    32 hex digits of `promptcache._keys.stable_hash` of ``{"system": system, "first": messages[:1]}``)."""
    thread = _thread_id(config)
    if thread not in (None, ""):
        return f"thread:{thread}"
    texts = _texts_key(system, messages)
    key = canonical_json({"system": system, "first": messages[:1]}) if texts is None else texts
    with _lock:
        known = _memo.get(key)
        if known is not None:
            _memo.move_to_end(key)
            return known
    text = key if isinstance(key, bytes) else canonical_json({"system": system, "first": messages[:1]})
    found = "hash:" + stable_hash(text, 32)
    if len(text) <= MEMO_MAX_TEXT_BYTES:
        with _lock:
            _memo[key] = found
            while len(_memo) > MEMO_ENTRIES:
                _memo.popitem(last=False)
    return found


def _thread_id(config: RunnableConfig | None) -> object:
    """``configurable["thread_id"]`` of ``ensure_config(config)``. Without a ``config``, that is the current run's
    config (langchain-core's ``var_child_runnable_config``), read directly: ``ensure_config`` copies it whole (tags,
    metadata, callbacks) on every request, and only this one value is needed."""
    if config is None:
        current = var_child_runnable_config.get()
        configurable = current.get("configurable") if current else None
        return configurable.get("thread_id") if isinstance(configurable, Mapping) else None
    return (ensure_config(config).get("configurable") or {}).get("thread_id")


def _texts_key(system: object, messages: object) -> tuple[object, ...] | None:
    """For the usual shape -- every system block ``{"text": str}``, a first message ``{"role", "content"}`` whose
    content is a str or ``{"text": str}`` blocks -- the texts themselves: they decide the canonical JSON, and a
    tuple of them is hashed from each str's cached hash (no serialisation). ``None`` for any other shape."""
    if type(system) is not list or type(messages) is not list:
        return None
    key: list[object] = []
    for block in system:
        if type(block) is not dict or len(block) != 1 or type(block.get("text")) is not str:
            return None
        key.append(block["text"])
    if not messages:
        return (*key, None)
    first = messages[0]
    if type(first) is not dict or len(first) != 2 or type(first.get("role")) is not str:
        return None
    content = first.get("content")
    key.append(first["role"])
    if type(content) is str:
        key.append(content)
        return (*key, "str", len(system))
    if type(content) is not list:
        return None
    for block in content:
        if type(block) is not dict or len(block) != 1 or type(block.get("text")) is not str:
            return None
        key.append(block["text"])
    return (*key, len(content), len(system))

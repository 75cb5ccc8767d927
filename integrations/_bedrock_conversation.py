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
from typing import Any

from langchain_core.runnables import RunnableConfig
from langchain_core.runnables.config import ensure_config

from promptcache._keys import canonical_json, stable_hash

__all__ = ["MEMO_ENTRIES", "MEMO_MAX_TEXT_BYTES", "conversation_id"]

#: Conversation ids kept (least recently used dropped first).
MEMO_ENTRIES = 512
#: Longer JSON texts are hashed every time, never kept (so the memo holds at most 16 MiB).
MEMO_MAX_TEXT_BYTES = 32 << 10

_memo: OrderedDict[bytes, str] = OrderedDict()
_lock = threading.Lock()


def conversation_id(system: list[Any], messages: list[dict[str, Any]], config: RunnableConfig | None = None) -> str:
    """``thread:<thread_id>`` from the call's config, else ``hash:<sha256 of system + first message>`` (the first
    32 hex digits of `promptcache._keys.stable_hash` of ``{"system": system, "first": messages[:1]}``)."""
    thread = (ensure_config(config).get("configurable") or {}).get("thread_id")
    if thread not in (None, ""):
        return f"thread:{thread}"
    text = canonical_json({"system": system, "first": messages[:1]})
    with _lock:
        known = _memo.get(text)
        if known is not None:
            _memo.move_to_end(text)
            return known
    found = "hash:" + stable_hash(text, 32)
    if len(text) <= MEMO_MAX_TEXT_BYTES:
        with _lock:
            _memo[text] = found
            while len(_memo) > MEMO_ENTRIES:
                _memo.popitem(last=False)
    return found

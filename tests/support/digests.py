"""The definition the message-digest tests compare against: SHA-256 of each canonical message."""

from __future__ import annotations

import hashlib
from typing import Any

from promptcache._keys import canonical_json, canonical_messages


def reference(messages: list[Any]) -> list[bytes]:
    """The definition: SHA-256 of each canonical message's JSON (128 bits), tool-call ids numbered across the list."""
    return [
        hashlib.sha256(canonical_json(m, exact_floats=False)).hexdigest()[:32].encode()
        for m in canonical_messages(messages)
    ]

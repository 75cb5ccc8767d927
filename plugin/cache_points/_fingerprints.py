"""Message fingerprints, memoised: `message_fingerprint`.

A placement stores the fingerprint of the message it follows (``CachePointPlacement.fingerprint``), the first 16 hex
digits of `promptcache._keys.stable_hash` of ``{"role", "content"}``, so that a later request finds the same message
after its history was cut. A conversation's next request checks the previous request's points against its own
messages, i.e. fingerprints the same messages again; the SHA-256 is most of a fingerprint's cost, so the last
`MEMO_ENTRIES` fingerprints are kept, keyed by the canonical JSON they were hashed from (the exact input of the
hash, so a hit is the value `stable_hash` would return).
"""

from __future__ import annotations

import hashlib
import itertools
import threading

from promptcache._keys import canonical_json

__all__ = ["MEMO_ENTRIES", "MEMO_MAX_JSON_BYTES", "message_fingerprint"]

#: Fingerprints kept (the oldest half is dropped when full); a capacity, not measured on data: a request looks up
#: a few of its previous request's.
MEMO_ENTRIES = 1_024
#: A message whose canonical JSON is longer is hashed every time, never kept (so the memo holds at most 8 MiB); a
#: capacity, not measured.
MEMO_MAX_JSON_BYTES = 8 << 10

_memo: dict[bytes, str] = {}
_lock = threading.Lock()


def message_fingerprint(role: object, content: object) -> str:
    """``stable_hash({"role": role, "content": content}, 16)`` (``content`` without cache points), memoised."""
    data = canonical_json({"role": role, "content": content})
    known = _memo.get(data)
    if known is not None:
        return known
    found = hashlib.sha256(data).hexdigest()[:16]
    if len(data) <= MEMO_MAX_JSON_BYTES:
        with _lock:
            if len(_memo) >= MEMO_ENTRIES:
                for key in list(itertools.islice(_memo, len(_memo) // 2)):
                    del _memo[key]
            _memo[data] = found
    return found

"""The arguments of a store or lookup of `IntentionMemory`, checked before anything is read or written, and the
record a store writes."""

from __future__ import annotations

from dataclasses import replace
from typing import cast

from promptcache._keys import stable_hash
from promptcache._types import JSONValue
from promptcache.intention._checks import check_call, check_user
from promptcache.intention._meaning import signature
from promptcache.intention._normalize import normalize_intention
from promptcache.intention._record import MemoryRecord
from promptcache.intention._results import serialise_json
from promptcache.intention._vetoes import exact_key

__all__ = ["check_lookup", "check_suggest", "new_record", "prefetched", "with_features"]


def new_record(
    user_id: object,
    intention: str,
    result: object,
    tool: str | None,
    args: object,
    now: float,
    ttl_s: float,
    similarity: str,
) -> tuple[str, MemoryRecord, bytes]:
    """``(user, record, serialised result)`` of a store at ``now`` (epoch seconds) living ``ttl_s`` seconds, its
    features to come from the `Similarity` named ``similarity``; raises what `IntentionMemory.store` documents."""
    user = check_user(user_id)
    normalized = normalize_intention(intention)
    check_call(tool, args)
    data = serialise_json(result, "result")
    record = MemoryRecord(
        id=stable_hash([exact_key(intention), tool, args], 32),
        intention=intention,
        normalized=normalized,
        tool=tool,
        args=args,
        result_hash=stable_hash(data),
        created_at=now,
        expires_at=now + ttl_s,
        similarity=similarity,
        signature=signature(intention),
    )
    return user, record, data


def check_suggest(user_id: object, intention: str, count: object) -> str:
    """The user id of a `IntentionMemory.suggest` whose arguments are all valid."""
    if isinstance(count, bool) or not isinstance(count, int) or count < 1:
        raise ValueError(f"count must be an int >= 1, got {count!r}")
    return check_lookup(user_id, intention, None, None)[0]


def check_lookup(user_id: object, intention: str, tool: str | None, args: object) -> tuple[str, JSONValue]:
    """The user id of a lookup whose arguments are all valid (the checks ``store`` makes), and ``args``, now known
    to be a JSON value (a tuple in it compares as a list)."""
    user = check_user(user_id)
    normalize_intention(intention)
    check_call(tool, args)
    return user, cast(JSONValue, args)


def prefetched(group: list[MemoryRecord], results: dict[str, bytes | None] | None) -> list[bytes | None] | None:
    """The group's results when the backend already read them all with the candidates, else ``None``."""
    if not results or any(r.result_hash not in results for r in group):
        return None
    return [results[r.result_hash] for r in group]


def with_features(record: MemoryRecord, features: JSONValue) -> MemoryRecord:
    return record if features is None else replace(record, features=features)

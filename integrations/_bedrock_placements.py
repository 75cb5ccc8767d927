"""``PlacementStore``: a Bedrock conversation's cache-point placements in a ``ServerCache``, under the store's own
``placements:`` namespace (`namespaced`), one Redis Cluster hash tag per
conversation. Fail-open: a backend that fails is a miss or a skipped write, logged at most once a minute."""

from __future__ import annotations

import functools
import logging

import orjson

from promptcache._keys import hash_tag, stable_hash
from promptcache._log import ThrottledWarning
from promptcache._metrics import PluginMetrics
from promptcache.backends import InMemoryServerCache, ServerCache
from promptcache.backends._base import validate_ttl
from promptcache.cache_points import CachePointPlacement

__all__ = ["DEFAULT_PLACEMENT_TTL_SECONDS", "PlacementStore"]

# The Bedrock integration's logger: its warnings are the model's, wherever the code lives.
_store_warning = ThrottledWarning(logging.getLogger("promptcache.integrations.bedrock"))

#: How long a conversation's placements are kept (seconds): a day; a conversation idle longer starts afresh.
DEFAULT_PLACEMENT_TTL_SECONDS = 86_400.0


@functools.lru_cache(maxsize=256)
def _model_hash(model_id: str) -> str:
    """The 12 hex digits of ``model_id`` in a key (a few model ids per process, hashed once each)."""
    return stable_hash(model_id, 12)


class PlacementStore:
    """Per-conversation placements in a ``ServerCache`` (JSON list of placements; fail-open).

    Args:
        cache: the backend (``InMemoryServerCache`` by default; ``RedisCache`` to share between workers). The store
            keeps its entries in the backend's `NAMESPACE` (``cache.namespaced("placements:")``, held as
            ``self.cache``), so the backend's own ``clear()`` spares them when it is a ``RedisCache``.
        ttl_s: seconds a conversation's placements live (``None``: no expiry).

    ``metrics`` (set by the model that owns the store) counts a failed read or write as an error.
    """

    NAMESPACE = "placements:"
    """The placements' namespace in the backend."""

    metrics: PluginMetrics | None = None

    def __init__(self, cache: ServerCache | None = None, ttl_s: float | None = DEFAULT_PLACEMENT_TTL_SECONDS) -> None:
        if cache is not None and not isinstance(cache, ServerCache):
            raise TypeError(f"placement store must be a ServerCache, got {type(cache).__name__}")
        self.ttl_s = validate_ttl(ttl_s, what="placement_ttl_s")
        self.backend = cache if cache is not None else InMemoryServerCache(max_entries=10_000)
        self.cache = self.backend.namespaced(self.NAMESPACE)

    @staticmethod
    def key(conversation_id: str, model_id: str) -> str:
        """``{<conversation>}:<12-hex model hash>`` (within `NAMESPACE`)."""
        return f"{hash_tag(conversation_id)}:{_model_hash(model_id)}"

    _last_key: tuple[str, str, str] = ("", "", "")  # (conversation, model, key): a request loads, then saves

    def _key(self, conversation_id: str, model_id: str) -> str:
        """`key`, kept for the last conversation and model (a request's save uses its load's key)."""
        last = self._last_key
        if last[0] == conversation_id and last[1] == model_id:
            return last[2]
        found = self.key(conversation_id, model_id)
        self._last_key = (conversation_id, model_id, found)
        return found

    _last: tuple[bytes, list[CachePointPlacement]] = (b"", [])  # the last entry decoded, and its placements

    def _decode(self, raw: bytes | None) -> list[CachePointPlacement]:
        if raw is None:
            return []
        last = self._last
        if raw == last[0]:  # a conversation's next request reads what its previous one wrote
            return list(last[1])
        try:
            placements = [CachePointPlacement.from_value(v) for v in orjson.loads(raw)]
        except Exception as exc:  # noqa: BLE001 - a corrupt entry is a miss
            _store_warning.warn("promptcache: ignoring a corrupt cache-point placement entry", exc=exc)
            return []
        self._last = (raw, placements)
        return list(placements)

    def load(self, conversation_id: str, model_id: str) -> list[CachePointPlacement]:
        """The stored placements, ``[]`` when none (or the backend failed)."""
        try:
            raw = self.cache.get(self._key(conversation_id, model_id))
        except Exception as exc:  # noqa: BLE001
            if self.metrics is not None:
                self.metrics.error()
            _store_warning.warn("promptcache: cache-point placement store read failed", exc=exc)
            return []
        return self._decode(raw)

    def save(self, conversation_id: str, model_id: str, placements: list[CachePointPlacement]) -> None:
        """Store the placements (errors are logged, never raised)."""
        raw = orjson.dumps([p.to_dict() for p in placements])
        try:
            self.cache.set(self._key(conversation_id, model_id), raw, self.ttl_s)
            self._last = (raw, list(placements))
        except Exception as exc:  # noqa: BLE001
            if self.metrics is not None:
                self.metrics.error()
            _store_warning.warn("promptcache: cache-point placement store write failed", exc=exc)

"""Cache backends: the ``ServerCache`` contract and the in-memory default (Redis: ``promptcache.integrations.redis``)."""

from promptcache.backends.base import ServerCache, validate_clear_prefix, validate_key, validate_ttl, validate_value
from promptcache.backends.memory import InMemoryServerCache
from promptcache.backends.namespaced import NamespacedServerCache, validate_namespace

__all__ = [
    "InMemoryServerCache",
    "NamespacedServerCache",
    "ServerCache",
    "validate_clear_prefix",
    "validate_key",
    "validate_namespace",
    "validate_ttl",
    "validate_value",
]

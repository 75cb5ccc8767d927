"""Cache backends: the ``ServerCache`` contract and the in-memory default (Redis: ``promptcache.integrations.redis``)."""

from promptcache.backends.base import ServerCache, validate_key, validate_ttl, validate_value
from promptcache.backends.memory import InMemoryServerCache

__all__ = ["InMemoryServerCache", "ServerCache", "validate_key", "validate_ttl", "validate_value"]

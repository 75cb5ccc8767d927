"""Cache backends: the ``ServerCache`` contract and the in-memory default (Redis: ``promptcache.integrations.redis``)."""

from promptcache.backends._base import ServerCache
from promptcache.backends._memory import InMemoryServerCache

__all__ = [
    "InMemoryServerCache",
    "ServerCache",
]

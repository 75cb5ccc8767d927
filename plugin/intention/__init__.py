"""Intention cache: tool results stored per user under the user's intention, and the ``retrieve_memory`` tool.

- `IntentionMemory` — ``store(user_id, intention, result, tool=None, args=None)``,
  ``retrieve(user_id, intention, *, tool=None, args=None) -> IntentionMatch | None`` and ``retrieve_all(...) ->
  list[IntentionMatch]`` (one memory per tool call of the intention; + async); exact, then similar matching.
- `make_retrieve_memory_tool` — the agent's ``retrieve_memory(intention)`` tool (user id from the config); it
  returns every result of the matched intention, each labelled with its tool call when there are several.
- `IntentionCache` — a processor for ``create_agent`` that stores tool results as they come back and, with
  ``serve_repeats=True``, answers a repeated call (same intention, tool and arguments) from memory.
- Judges of a similar match: `LexicalVerifier` (default: every difference an equivalence,
  `promptcache.intention._meaning`) and `ChatModelVerifier` (asks a chat model; more hits).
- Backends: `InMemoryIntentionBackend` (default) and, on Redis,
  ``promptcache.integrations._redis_intention.RedisIntentionBackend``.
"""

from promptcache.intention._backends import IntentionBackend
from promptcache.intention._judges import ChatModelVerifier, LexicalVerifier
from promptcache.intention._local import local_embeddings
from promptcache.intention._memory import (
    DEFAULT_INTENTION_THRESHOLD,
    DEFAULT_INTENTION_TTL_SECONDS,
    IntentionMatch,
    IntentionMemory,
)
from promptcache.intention._memory_backend import InMemoryIntentionBackend
from promptcache.intention._middleware import IntentionCache
from promptcache.intention._similarity import EmbeddingsSimilarity, LexicalSimilarity
from promptcache.intention._tool import make_retrieve_memory_tool

__all__ = [
    "DEFAULT_INTENTION_THRESHOLD",
    "DEFAULT_INTENTION_TTL_SECONDS",
    "ChatModelVerifier",
    "EmbeddingsSimilarity",
    "InMemoryIntentionBackend",
    "IntentionBackend",
    "IntentionCache",
    "IntentionMatch",
    "IntentionMemory",
    "LexicalSimilarity",
    "LexicalVerifier",
    "local_embeddings",
    "make_retrieve_memory_tool",
]

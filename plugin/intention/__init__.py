"""Intention cache: tool results stored per user under the user's intention, and the ``retrieve_memory`` tool.

- :class:`IntentionMemory` — ``store(user_id, intention, result, tool=None, args=None)``,
  ``retrieve(user_id, intention, *, tool=None, args=None) -> IntentionMatch | None`` and ``retrieve_all(...) ->
  list[IntentionMatch]`` (one memory per tool call of the intention; + async); exact, then similar matching.
- :func:`make_retrieve_memory_tool` — the agent's ``retrieve_memory(intention)`` tool (user id from the config); it
  returns every result of the matched intention, each labelled with its tool call when there are several.
- :class:`IntentionCache` — a processor for ``create_agent`` that stores tool results as they come back and, with
  ``serve_repeats=True``, answers a repeated call (same intention, tool and arguments) from memory.
- Judges of a similar match: :class:`LexicalVerifier` (default: every difference an equivalence,
  :mod:`promptcache.intention.meaning`) and :class:`ChatModelVerifier` (asks a chat model; more hits).
- Backends: :class:`InMemoryIntentionBackend` (default) and, on Redis,
  ``promptcache.integrations.redis_intention.RedisIntentionBackend``.
"""

from promptcache.intention.backends import (
    DEFAULT_MAX_MEMORIES_PER_USER,
    InMemoryIntentionBackend,
    IntentionBackend,
    IntentionBackendError,
    MemoryRecord,
)
from promptcache.intention.judges import ChatModelVerifier, LexicalVerifier, Verifier
from promptcache.intention.memory import (
    DEFAULT_INTENTION_MARGIN,
    DEFAULT_INTENTION_THRESHOLD,
    DEFAULT_INTENTION_TTL_SECONDS,
    IntentionMatch,
    IntentionMemory,
)
from promptcache.intention.middleware import (
    DEFAULT_DENY_TOOLS,
    DEFAULT_SIDE_EFFECT_PREFIXES,
    DEFAULT_VOLATILE_ARGS,
    SIDE_EFFECT_METADATA_KEY,
    IntentionCache,
    current_intention,
    served_message,
)
from promptcache.intention.normalize import anchors, anchors_agree, normalize_intention
from promptcache.intention.similarity import EmbeddingsSimilarity, LexicalSimilarity, Similarity
from promptcache.intention.tool import (
    DEFAULT_MAX_RESULTS,
    MEMORY_ERROR,
    MEMORY_NOT_FOUND,
    RETRIEVE_MEMORY_DESCRIPTION,
    RETRIEVE_MEMORY_TOOL_NAME,
    format_match,
    format_matches,
    make_retrieve_memory_tool,
)

__all__ = [
    "DEFAULT_INTENTION_MARGIN",
    "DEFAULT_INTENTION_THRESHOLD",
    "DEFAULT_INTENTION_TTL_SECONDS",
    "DEFAULT_MAX_MEMORIES_PER_USER",
    "DEFAULT_DENY_TOOLS",
    "DEFAULT_MAX_RESULTS",
    "DEFAULT_SIDE_EFFECT_PREFIXES",
    "DEFAULT_VOLATILE_ARGS",
    "MEMORY_ERROR",
    "MEMORY_NOT_FOUND",
    "RETRIEVE_MEMORY_DESCRIPTION",
    "RETRIEVE_MEMORY_TOOL_NAME",
    "SIDE_EFFECT_METADATA_KEY",
    "ChatModelVerifier",
    "EmbeddingsSimilarity",
    "InMemoryIntentionBackend",
    "IntentionBackend",
    "IntentionBackendError",
    "IntentionCache",
    "IntentionMatch",
    "IntentionMemory",
    "LexicalSimilarity",
    "LexicalVerifier",
    "MemoryRecord",
    "Similarity",
    "Verifier",
    "anchors",
    "anchors_agree",
    "current_intention",
    "format_match",
    "format_matches",
    "make_retrieve_memory_tool",
    "normalize_intention",
    "served_message",
]

"""promptcache: middleware plugins that make LangChain / LangGraph agents cheaper and faster.

The public API is re-exported here (lazily, so ``import promptcache`` stays cheap and optional parts load only
when used). Adapters to outside systems live in ``promptcache.integrations`` (Redis, Bedrock, LangGraph).
"""

from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"

# name -> module that defines it. One block per capability.
_EXPORTS: dict[str, str] = {
    # core
    "PromptCacheError": "promptcache._errors",
    "PluginStats": "promptcache._metrics",
    "set_meter_provider": "promptcache._metrics",
    "Processor": "promptcache._processor",
    "with_processors": "promptcache._wrapped_model",
    "ServerCache": "promptcache.backends",
    "InMemoryServerCache": "promptcache.backends",
    # recording traffic for the replay
    "TrafficRecorder": "promptcache._recorder",
    # response cache
    "ResponseCache": "promptcache.response_cache",
    "ResponseCacheKeyInputs": "promptcache.response_cache",
    "build_response_cache_key": "promptcache.response_cache",
    "DEFAULT_RESPONSE_CACHE_TTL_SECONDS": "promptcache.response_cache",
    "RESPONSE_CACHE_CONTEXT_KEY": "promptcache.response_cache",
    # cache points
    "CacheStrategy": "promptcache.cache_points",
    "MultiPointStrategy": "promptcache.cache_points",
    "AnchoredTailStrategy": "promptcache.cache_points",
    "CacheStrategyConfig": "promptcache.cache_points",
    "ModelInfo": "promptcache.cache_points",
    "CacheResult": "promptcache.cache_points",
    "CachePointPlacement": "promptcache.cache_points",
    "get_model_info": "promptcache.cache_points",
    "default_count_tokens": "promptcache.cache_points",
    # typed memory
    "MemoryKind": "promptcache.memory",
    "TypedMemory": "promptcache.memory",
    "TypedMemoryStore": "promptcache.memory",
    "TypedMemoryMiddleware": "promptcache.memory",
    "make_remember_tool": "promptcache.memory",
    "make_reference_tool": "promptcache.memory",
    "MemoryLoader": "promptcache.memory",
    "is_conceptual_question": "promptcache.memory",
    "render_memory_block": "promptcache.memory",
    "DEFAULT_PROJECT_STATE_TTL_S": "promptcache.memory",
    # intention cache
    "IntentionMemory": "promptcache.intention",
    "IntentionMatch": "promptcache.intention",
    "IntentionCache": "promptcache.intention",
    "make_retrieve_memory_tool": "promptcache.intention",
    "IntentionBackend": "promptcache.intention",
    "InMemoryIntentionBackend": "promptcache.intention",
    "LexicalSimilarity": "promptcache.intention",
    "EmbeddingsSimilarity": "promptcache.intention",
    "DEFAULT_INTENTION_TTL_SECONDS": "promptcache.intention",
    "DEFAULT_INTENTION_THRESHOLD": "promptcache.intention",
    "LexicalVerifier": "promptcache.intention",
    "ChatModelVerifier": "promptcache.intention",
}

__all__ = sorted(_EXPORTS) + ["__version__"]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'promptcache' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return __all__

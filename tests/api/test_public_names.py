"""The public API is a short, fixed list: each public module's ``__all__`` is exactly the documented set, and every
other module of the package is private (``_name.py``)."""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

PUBLIC: dict[str, set[str]] = {
    "promptcache": {
        "__version__",
        "PromptCacheError",
        "PluginStats",
        "set_meter_provider",
        "Processor",
        "with_processors",
        "ServerCache",
        "InMemoryServerCache",
        "TrafficRecorder",
        "ResponseCache",
        "ResponseCacheKeyInputs",
        "build_response_cache_key",
        "DEFAULT_RESPONSE_CACHE_TTL_SECONDS",
        "RESPONSE_CACHE_CONTEXT_KEY",
        "CacheStrategy",
        "MultiPointStrategy",
        "AnchoredTailStrategy",
        "CacheStrategyConfig",
        "ModelInfo",
        "CacheResult",
        "CachePointPlacement",
        "get_model_info",
        "default_count_tokens",
        "MemoryKind",
        "TypedMemory",
        "TypedMemoryStore",
        "TypedMemoryMiddleware",
        "make_remember_tool",
        "make_reference_tool",
        "MemoryLoader",
        "is_conceptual_question",
        "render_memory_block",
        "DEFAULT_PROJECT_STATE_TTL_S",
        "IntentionMemory",
        "IntentionMatch",
        "IntentionCache",
        "make_retrieve_memory_tool",
        "IntentionBackend",
        "InMemoryIntentionBackend",
        "LexicalSimilarity",
        "EmbeddingsSimilarity",
        "DEFAULT_INTENTION_TTL_SECONDS",
        "DEFAULT_INTENTION_THRESHOLD",
        "LexicalVerifier",
        "ChatModelVerifier",
    },
    "promptcache.backends": {"InMemoryServerCache", "ServerCache"},
    "promptcache.response_cache": {
        "DEFAULT_RESPONSE_CACHE_TTL_SECONDS",
        "RESPONSE_CACHE_CONTEXT_KEY",
        "ResponseCache",
        "ResponseCacheKeyInputs",
        "build_response_cache_key",
    },
    "promptcache.cache_points": {
        "AnchoredTailStrategy",
        "CachePointPlacement",
        "CacheResult",
        "CacheStrategy",
        "CacheStrategyConfig",
        "ModelInfo",
        "MultiPointStrategy",
        "default_count_tokens",
        "get_model_info",
    },
    "promptcache.memory": {
        "DEFAULT_PROJECT_STATE_TTL_S",
        "MemoryKind",
        "MemoryLoader",
        "MemoryState",
        "TypedMemory",
        "TypedMemoryMiddleware",
        "TypedMemoryStore",
        "is_conceptual_question",
        "make_reference_tool",
        "make_remember_tool",
        "render_memory_block",
    },
    "promptcache.intention": {
        "ChatModelVerifier",
        "DEFAULT_INTENTION_THRESHOLD",
        "DEFAULT_INTENTION_TTL_SECONDS",
        "EmbeddingsSimilarity",
        "InMemoryIntentionBackend",
        "IntentionBackend",
        "IntentionCache",
        "IntentionMatch",
        "IntentionMemory",
        "LexicalSimilarity",
        "LexicalVerifier",
        "make_retrieve_memory_tool",
        "local_embeddings",
    },
    "promptcache.replay": {
        "DEFAULT_STRATEGIES",
        "STRATEGIES",
        "Block",
        "Conversation",
        "Message",
        "ModelPrice",
        "PromptCacheSimulator",
        "ReplayResult",
        "StrategyTotals",
        "TranscriptError",
        "TranscriptWarning",
        "Usage",
        "price_for",
        "read_conversations",
        "read_file",
        "run_replay",
    },
    "promptcache.integrations": set(),
    "promptcache.integrations.redis": {
        "DEFAULT_NAMESPACE",
        "DEFAULT_REDIS_URL",
        "RedisCache",
        "RedisConnection",
        "RedisIntentionBackend",
    },
    "promptcache.integrations.bedrock": {
        "DEFAULT_PLACEMENT_TTL_SECONDS",
        "BedrockCachePoints",
        "CachePointChatBedrockConverse",
        "PlacementStore",
        "StrategyName",
    },
    "promptcache.integrations.langgraph": {"MemoryNode", "MemoryState", "MemoryStateError", "with_memory_prompt"},
    "promptcache.testing": {"ScriptedChatModel"},
}

# Public modules as files in the repository (packages by their __init__.py).
PUBLIC_FILES = {
    "plugin/__init__.py",
    "plugin/__main__.py",
    "plugin/testing.py",
    "integrations/__init__.py",
    "integrations/redis.py",
    "integrations/bedrock.py",
    "integrations/langgraph.py",
}


@pytest.mark.parametrize("module", sorted(PUBLIC))
def test_public_module_exports_exactly_the_documented_names(module: str) -> None:
    mod = importlib.import_module(module)
    assert set(mod.__all__) == PUBLIC[module]
    for name in mod.__all__:
        getattr(mod, name)  # every listed name resolves


def test_every_other_module_is_private() -> None:
    public = []
    for base in ("plugin", "integrations"):
        for path in sorted((ROOT / base).rglob("*.py")):
            rel = path.relative_to(ROOT).as_posix()
            if rel in PUBLIC_FILES or path.name == "__init__.py":
                continue
            if not any(part.startswith("_") for part in path.relative_to(ROOT / base).parts):
                public.append(rel)
    assert public == []


def test_public_names_total_stays_short() -> None:
    names = set().union(*PUBLIC.values()) - {"__version__"}
    assert len(names) == 76


def test_the_api_page_lists_exactly_the_public_names() -> None:
    page = (ROOT / "docs" / "api" / "index.md").read_text(encoding="utf-8")
    listed: dict[str, set[str]] = {}
    module = None
    for line in page.splitlines():
        if line.startswith("## `"):
            module = line[4:].rstrip("`")
            listed[module] = set()
        elif line.startswith("- `") and module is not None:
            listed[module].add(line[3:].split("`", 1)[0])
    assert listed == {name: names for name, names in PUBLIC.items() if name != "promptcache.integrations"}

"""The replay report: what promptcache would save on recorded agent traffic (``promptcache replay``).

- ``readers``: OpenAI / Anthropic / LangChain transcripts (JSON, JSONL) -> ``Conversation``; errors name file:line.
  Claude Code session logs (``claude_code``, ``claude_code_calls``) and Bedrock model invocation logs
  (``bedrock_logs``, ``bedrock_bodies``) are detected and read as one request per logged API call, with the logged
  ``Usage`` (``logged_usage``) and model on each reply.
- ``prepare``: conversations -> requests (flat blocks, cumulative tokens and prefix hashes, counted once).
- ``simulator``: ``PromptCacheSimulator`` — Bedrock's prompt-cache rules, per-model prices (``pricing``, ``models``).
- ``strategies`` / ``ours`` / ``multipoint``: placements compared side by side.
- ``repeats``: ResponseCache hits (the real key); ``intentions``: the real ``IntentionMemory`` / ``IntentionCache``
  replayed call by call (answers, wrong answers).
- ``engine.run_replay`` -> ``ReplayResult``; ``report`` (rich table, JSON) and ``chart`` (PNG) render it.
"""

from __future__ import annotations

import importlib
from typing import Any

# Names are loaded on first use (PEP 562), so importing one name does not load the simulator, the readers and numpy.
_SOURCES = {
    "DEFAULT_STRATEGIES": "promptcache.replay._engine",
    "ReplayResult": "promptcache.replay._engine",
    "StrategyTotals": "promptcache.replay._totals",
    "run_replay": "promptcache.replay._engine",
    "ModelPrice": "promptcache._pricing",
    "price_for": "promptcache._pricing",
    "read_conversations": "promptcache.replay._readers",
    "read_file": "promptcache.replay._readers",
    "PromptCacheSimulator": "promptcache.replay._simulator",
    "STRATEGIES": "promptcache.replay._registry",
    "Block": "promptcache.replay._transcript",
    "Conversation": "promptcache.replay._transcript",
    "Message": "promptcache.replay._transcript",
    "TranscriptError": "promptcache.replay._transcript",
    "TranscriptWarning": "promptcache.replay._transcript",
    "Usage": "promptcache.replay._transcript",
}

__all__ = [
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
]


def __getattr__(name: str) -> Any:
    module = _SOURCES.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_SOURCES])

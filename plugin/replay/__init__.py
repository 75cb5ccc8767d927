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

from promptcache.replay.engine import DEFAULT_STRATEGIES, ReplayResult, StrategyTotals, run_replay
from promptcache.replay.models import CacheRules, cache_rules
from promptcache.replay.pricing import ModelPrice, price_for
from promptcache.replay.readers import read_conversations, read_file
from promptcache.replay.simulator import Checkpoint, PromptCacheSimulator, RequestCost
from promptcache.replay.strategies import STRATEGIES, Strategy, make_strategy
from promptcache.replay.transcript import Block, Conversation, Message, TranscriptError, TranscriptWarning, Usage

__all__ = [
    "DEFAULT_STRATEGIES",
    "STRATEGIES",
    "Block",
    "CacheRules",
    "Checkpoint",
    "Conversation",
    "Message",
    "ModelPrice",
    "PromptCacheSimulator",
    "ReplayResult",
    "RequestCost",
    "Strategy",
    "StrategyTotals",
    "TranscriptError",
    "TranscriptWarning",
    "Usage",
    "cache_rules",
    "make_strategy",
    "price_for",
    "read_conversations",
    "read_file",
    "run_replay",
]

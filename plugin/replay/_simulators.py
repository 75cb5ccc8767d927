"""Which prompt-cache simulator bills a model's calls: Bedrock's and Anthropic's explicit cache points
(``promptcache.replay._simulator``) or OpenAI's automatic prefix cache (``promptcache.replay._openai_cache``)."""

from __future__ import annotations

from promptcache._pricing import ModelPrice

from ._models import CacheRules
from ._openai_cache import OpenAIPrefixCache
from ._simulator import PromptCacheSimulator

__all__ = ["make_simulator"]


def make_simulator(rules: CacheRules, price: ModelPrice) -> PromptCacheSimulator | OpenAIPrefixCache:
    """The simulator for a model: ``OpenAIPrefixCache`` for an OpenAI model (``rules.family == "openai"``), else
    ``PromptCacheSimulator``; both bill with ``simulate(cum, hashes, n_blocks, checkpoints, now_s)``."""
    if rules.family == "openai":
        return OpenAIPrefixCache(rules, price)
    return PromptCacheSimulator(rules, price)

"""Per-model prompt-cache rules for the simulator: minimum tokens, maximum points, TTLs, cachable fields.

``cache_rules(model_id)`` is the one place the replay learns them: it reads the project's model table
(``promptcache.cache_points.get_model_info``; values from the Amazon Bedrock user guide, "Prompt caching for faster
model inference", table "Supported models, regions, and limits"), so the replay and the real placement agree.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from promptcache._pricing import base_model_id, price_key

__all__ = [
    "CacheRules",
    "cache_rules",
    "in_model_table",
    "model_info",
    "provider_rules",
    "LOOKBACK_BLOCKS",
    "TTL_SECONDS",
]

#: How far back from a cache point a cache read is looked for, in content blocks. Anthropic: "the system
#: automatically checks for cache hits at all previous content block boundaries (up to approximately 20 blocks
#: before your explicit breakpoint)" (docs.anthropic.com, "Prompt caching"; Bedrock's "simplified cache management"
#: for Claude describes the same ~20-block window).
LOOKBACK_BLOCKS = 20
#: TTL names -> seconds.
TTL_SECONDS = {"5m": 300.0, "1h": 3600.0}


@dataclass(frozen=True, slots=True)
class CacheRules:
    """What the simulator needs to know about a model.

    Attributes:
        model_id: the id as given.
        min_tokens: a cache point caches only if the prompt prefix up to it has at least this many tokens.
        max_points: most cache points in one request (system, tools and messages together).
        ttls_s: TTLs the model accepts, in seconds (300 always; 3600 where 1-hour caching is offered).
        cachable: which fields may carry a cache point (``"system"``, ``"messages"``, ``"tools"``).
        supports_cache: whether the model caches at all.
        family: ``"claude"`` or ``"nova"`` (placement rules differ).
        lookback_blocks: the cache-read window in blocks before a cache point.
    """

    model_id: str
    min_tokens: int
    max_points: int
    ttls_s: tuple[float, ...]
    cachable: frozenset[str]
    supports_cache: bool = True
    family: str = "claude"
    lookback_blocks: int = LOOKBACK_BLOCKS


def _ttl_seconds(value: object) -> float:
    if isinstance(value, (int, float)):
        return float(value)
    return TTL_SECONDS[str(value)]


def cache_rules(model_id: str) -> CacheRules:
    """The prompt-cache rules of ``model_id`` (regional prefixes, ARNs and version suffixes resolve).

    Read from the project's model table, ``promptcache.cache_points.get_model_info`` (which gives unknown models a
    conservative default and a warning), so the replay and the real placement use the same numbers.
    """
    from promptcache.cache_points import get_model_info

    info = get_model_info(model_id)
    ttls = tuple(sorted({_ttl_seconds(t) for t in (info.allowed_ttls or ("5m",))}))
    family = "nova" if info.provider == "amazon" or "nova" in base_model_id(model_id) else "claude"
    return CacheRules(
        model_id,
        int(info.min_tokens_per_cache_point),
        int(info.max_cache_points),
        ttls,
        frozenset(info.cachable_fields),
        bool(info.supports_prompt_cache),
        family,
    )


def in_model_table(model_id: str) -> bool:
    """Whether ``promptcache.cache_points`` knows ``model_id`` (exact base id or model stem), asked without its
    unknown-model warning."""
    from promptcache.cache_points import _model_info as table

    base = table.canonical_model_id(model_id)
    return base in table.MODEL_INFO or any(base.startswith(stem) for stem, _ in table._STEMS)


def model_info(rules: CacheRules) -> Any:
    """The ``promptcache.cache_points.ModelInfo`` the placement strategies need, carrying ``rules`` (minimum, points,
    cachable fields, TTLs, family): the table entry with those values for a known model, else built from ``rules``
    alone (a model of the user's ``--models`` file: no unknown-model warning)."""
    from promptcache.cache_points import ModelInfo, get_model_info

    values: dict[str, Any] = {
        "min_tokens_per_cache_point": rules.min_tokens,
        "max_cache_points": rules.max_points,
        "cachable_fields": tuple(sorted(rules.cachable)),
        "allowed_ttls": tuple("1h" if t >= 3600 else "5m" for t in rules.ttls_s),
        "supports_prompt_cache": rules.supports_cache,
        "provider": "amazon" if rules.family == "nova" else "anthropic",
    }
    if in_model_table(rules.model_id):
        return get_model_info(rules.model_id).with_overrides(**values)
    return ModelInfo(max_tokens=4_096, context_window=200_000, source="the replay's model table", **values)


def provider_rules(model_id: str) -> CacheRules | None:
    """The cache rules of a model served outside Bedrock, or ``None`` for a Bedrock id (``cache_rules`` then).

    - Anthropic API ids (``claude-...``) with a minimum in ``promptcache._price_tables.ANTHROPIC_MIN_TOKENS``:
      that minimum (the Anthropic "Prompt caching" page; it differs from Bedrock's for some models, e.g. Opus 4.7:
      2,048 on the API, 4,096 on Bedrock), 5-minute and 1-hour TTLs (sold for every model on the API), 4 points,
      system / messages / tools.
    OpenAI ids (automatic prefix caching) take their rules from ``promptcache.replay._openai_cache.openai_rules``
    (``ModelTable.rules`` asks it first): ``None`` here.
    """
    from promptcache._price_tables import ANTHROPIC_MIN_TOKENS

    provider, stem = price_key(model_id)
    if provider != "anthropic" or stem not in ANTHROPIC_MIN_TOKENS:
        return None
    base = (
        cache_rules(model_id)
        if in_model_table(model_id)
        else CacheRules(model_id, 0, 4, (300.0,), frozenset({"system", "messages", "tools"}))
    )
    return CacheRules(
        model_id,
        ANTHROPIC_MIN_TOKENS[stem],
        base.max_points or 4,
        (300.0, 3600.0),
        base.cachable or frozenset({"system", "messages", "tools"}),
        True,
        "claude",
        base.lookback_blocks,
    )

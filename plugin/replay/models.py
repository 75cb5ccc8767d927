"""Per-model prompt-cache rules for the simulator: minimum tokens, maximum points, TTLs, cachable fields.

``cache_rules(model_id)`` is the one place the replay learns them. It reads the project's model table
(``promptcache.cache_points.get_model_info``) when that is installed, so the replay and the real placement use the
same numbers; the small table below is the fallback (ADAPTER POINT: remove it once ``get_model_info`` is always
present). Values from the Amazon Bedrock user guide, "Prompt caching for faster model inference", table "Supported
models, regions, and limits" (https://docs.aws.amazon.com/bedrock/latest/userguide/prompt-caching.html).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

from .pricing import base_model_id

__all__ = ["CacheRules", "cache_rules", "LOOKBACK_BLOCKS", "TTL_SECONDS"]

#: How far back from a checkpoint a cache read is looked for, in content blocks. Anthropic: "the system
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
        min_tokens: a checkpoint caches only if the prompt prefix up to it has at least this many tokens.
        max_points: most cache checkpoints in one request (system, tools and messages together).
        ttls_s: TTLs the model accepts, in seconds (300 always; 3600 where 1-hour caching is offered).
        cachable: which fields may carry a checkpoint (``"system"``, ``"messages"``, ``"tools"``).
        supports_cache: whether the model caches at all.
        family: ``"claude"`` or ``"nova"`` (placement rules differ).
        lookback_blocks: the cache-read window in blocks before a checkpoint.
    """

    model_id: str
    min_tokens: int
    max_points: int
    ttls_s: tuple[float, ...]
    cachable: frozenset[str]
    supports_cache: bool = True
    family: str = "claude"
    lookback_blocks: int = LOOKBACK_BLOCKS


_CLAUDE = frozenset({"system", "messages", "tools"})
_NOVA = frozenset({"system", "messages"})
# base model id -> (min tokens per checkpoint, max checkpoints, TTLs, cachable fields). ADAPTER POINT (see above).
_FALLBACK: dict[str, tuple[int, int, tuple[float, ...], frozenset[str]]] = {
    "anthropic.claude-3-5-haiku-20241022": (2048, 4, (300.0,), _CLAUDE),
    "anthropic.claude-3-7-sonnet-20250219": (1024, 4, (300.0,), _CLAUDE),
    "anthropic.claude-sonnet-4-20250514": (1024, 4, (300.0,), _CLAUDE),
    "anthropic.claude-sonnet-4-5-20250929": (1024, 4, (300.0, 3600.0), _CLAUDE),
    "anthropic.claude-opus-4-20250514": (1024, 4, (300.0,), _CLAUDE),
    "anthropic.claude-opus-4-1-20250805": (1024, 4, (300.0,), _CLAUDE),
    "anthropic.claude-opus-4-5-20251101": (4096, 4, (300.0, 3600.0), _CLAUDE),
    "anthropic.claude-haiku-4-5-20251001": (4096, 4, (300.0, 3600.0), _CLAUDE),
    "amazon.nova-micro-v1": (1000, 4, (300.0,), _NOVA),
    "amazon.nova-lite-v1": (1000, 4, (300.0,), _NOVA),
    "amazon.nova-pro-v1": (1000, 4, (300.0,), _NOVA),
    "amazon.nova-premier-v1": (1000, 4, (300.0,), _NOVA),
}


def _ttl_seconds(value: object) -> float:
    if isinstance(value, (int, float)):
        return float(value)
    return TTL_SECONDS[str(value)]


def _from_model_info(model_id: str) -> CacheRules | None:
    try:
        from promptcache.cache_points import get_model_info  # the project's table, when installed
    except ImportError:
        return None
    info = get_model_info(model_id)
    ttls = tuple(sorted({_ttl_seconds(t) for t in (getattr(info, "allowed_ttls", None) or ("5m",))}))
    cachable = frozenset(getattr(info, "cachable_fields", None) or ("system", "messages"))
    provider = getattr(info, "provider", "")
    family = "nova" if provider == "amazon" or "nova" in base_model_id(model_id) else "claude"
    return CacheRules(model_id, int(info.min_tokens_per_cache_point), int(info.max_cache_points), ttls, cachable,
                      bool(info.supports_prompt_cache), family)


def cache_rules(model_id: str) -> CacheRules:
    """The prompt-cache rules of ``model_id`` (regional prefixes, ARNs and version suffixes resolve).

    Uses ``promptcache.cache_points.get_model_info`` when available; otherwise the fallback table. An unknown
    model gets a conservative default (4,096-token minimum, 4 points, 5-minute TTL) and a ``UserWarning``.
    """
    rules = _from_model_info(model_id)
    if rules is not None:
        return rules
    base = base_model_id(model_id)
    entry = _FALLBACK.get(base)
    if entry is None:
        warnings.warn(f"unknown model {model_id!r}: assuming a 4,096-token minimum and 4 cache points", stacklevel=2)
        entry = (4096, 4, (300.0,), _NOVA if "nova" in base else _CLAUDE)
    min_tokens, max_points, ttls, cachable = entry
    return CacheRules(model_id, min_tokens, max_points, ttls, cachable, True,
                      "nova" if "nova" in base else "claude")

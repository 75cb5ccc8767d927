"""Bedrock cache points: placement strategies (pure, no I/O), the ``ModelInfo`` table, and token counting.

- :class:`AnchoredTailStrategy` (anchor + moving tail + bridge; the wrappers' default, cheapest in the replay) and
  :class:`MultiPointStrategy`, which implements Roo-Code's multi-point strategy (its cache-strategy documentation) with extra guards;
  :class:`CacheStrategyConfig` is its input, :class:`CacheResult` / :class:`CachePointPlacement` its output.
- :func:`get_model_info` resolves Bedrock model ids, cross-region profiles and ARNs to a :class:`ModelInfo`.
- :func:`default_count_tokens` counts a message's tokens (tiktoken ``cl100k_base``, offline).
- :func:`place_cache_points` places points on a whole Converse request; :func:`check_manual_layout` refuses a
  caller's own points that Bedrock would reject (more than 4, a ``1h`` point after a ``5m`` one).

The request-time wrapper lives in :mod:`promptcache.integrations.bedrock`.
"""

from promptcache.cache_points.anchored_tail import LOOKBACK_BLOCKS, AnchoredTailPlan, AnchoredTailStrategy
from promptcache.cache_points.converse import ConversePlan, place_cache_points, tool_spec_tokens
from promptcache.cache_points.manual_points import check_manual_layout, count_manual_cache_points
from promptcache.cache_points.model_info import (
    BEDROCK_MAX_CACHE_POINTS,
    CACHABLE_FIELDS,
    MODEL_INFO,
    TTLS,
    ModelInfo,
    get_model_info,
    resolve_model_id,
)
from promptcache.cache_points.multi_point import REALLOCATION_INCREASE, MultiPointStrategy
from promptcache.cache_points.strategy import (
    CachePointPlacement,
    CacheResult,
    CacheStrategy,
    CacheStrategyConfig,
    cache_point_block,
    is_cache_point,
)
from promptcache.cache_points.tokens import IMAGE_TOKEN_ESTIMATE, count_text_tokens, default_count_tokens

__all__ = [
    "BEDROCK_MAX_CACHE_POINTS",
    "CACHABLE_FIELDS",
    "IMAGE_TOKEN_ESTIMATE",
    "LOOKBACK_BLOCKS",
    "MODEL_INFO",
    "REALLOCATION_INCREASE",
    "TTLS",
    "AnchoredTailPlan",
    "AnchoredTailStrategy",
    "CachePointPlacement",
    "ConversePlan",
    "CacheResult",
    "CacheStrategy",
    "CacheStrategyConfig",
    "ModelInfo",
    "MultiPointStrategy",
    "cache_point_block",
    "check_manual_layout",
    "count_manual_cache_points",
    "count_text_tokens",
    "default_count_tokens",
    "get_model_info",
    "is_cache_point",
    "place_cache_points",
    "resolve_model_id",
    "tool_spec_tokens",
]

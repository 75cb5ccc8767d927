"""Bedrock cache points: placement strategies (pure, no I/O), the ``ModelInfo`` table, and token counting.

- `AnchoredTailStrategy` (anchor + moving tail + bridge; the wrappers' default, cheapest in the replay) and
  `MultiPointStrategy`, which implements Roo-Code's multi-point strategy (its cache-strategy documentation) with extra guards;
  `CacheStrategyConfig` is its input, `CacheResult` / `CachePointPlacement` its output.
- `get_model_info` resolves Bedrock model ids, cross-region profiles and ARNs to a `ModelInfo`.
- `default_count_tokens` counts a message's tokens (tiktoken ``cl100k_base``, offline).
- ``place_cache_points`` places points on a whole Converse request and refuses a caller's own points that break a
  rule of Bedrock's placement table (``_rules.PLACEMENT_RULES``: one per model family, each with its source).

The request-time wrapper lives in `promptcache.integrations.bedrock`.
"""

from promptcache.cache_points._anchored_tail import AnchoredTailStrategy
from promptcache.cache_points._model_info import ModelInfo, get_model_info
from promptcache.cache_points._multi_point import MultiPointStrategy
from promptcache.cache_points._strategy import CachePointPlacement, CacheResult, CacheStrategy, CacheStrategyConfig
from promptcache.cache_points._tokens import default_count_tokens

__all__ = [
    "AnchoredTailStrategy",
    "CachePointPlacement",
    "CacheResult",
    "CacheStrategy",
    "CacheStrategyConfig",
    "ModelInfo",
    "MultiPointStrategy",
    "default_count_tokens",
    "get_model_info",
]

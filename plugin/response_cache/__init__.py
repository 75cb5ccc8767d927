"""Response cache: replay whole model replies when the resolved prompt repeats (Mastra's ResponseCache, and more).

- `_keys`: `ResponseCacheKeyInputs` and `build_response_cache_key`.
- `_entry`: the stored form of a reply and the hit rebuilt from it.
- `_processor`: `ResponseCache`, the processor.
"""

from promptcache.response_cache._keys import ResponseCacheKeyInputs, build_response_cache_key
from promptcache.response_cache._processor import (
    DEFAULT_RESPONSE_CACHE_TTL_SECONDS,
    RESPONSE_CACHE_CONTEXT_KEY,
    ResponseCache,
)

__all__ = [
    "DEFAULT_RESPONSE_CACHE_TTL_SECONDS",
    "RESPONSE_CACHE_CONTEXT_KEY",
    "ResponseCache",
    "ResponseCacheKeyInputs",
    "build_response_cache_key",
]

"""The decision sentence on an OpenAI log (``promptcache.replay._decision``): keep, with the cost against the no-cache
counterfactual and what raises the cached share."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ._decision import Decision
    from ._engine import ReplayResult

__all__ = ["openai_sentence"]


def openai_sentence(result: ReplayResult, d: Decision, logged: bool) -> str:
    """OpenAI: keep (module docstring), with the cost against the no-cache counterfactual; where no request
    reaches OpenAI's minimum, that is the reason nothing is read."""
    minimum = result.rules.min_tokens
    if result.largest_request_tokens < minimum:
        largest = result.largest_request_tokens
        return (
            f"Keep what you have: nothing here reaches the {minimum:,} tokens OpenAI caches from (the largest "
            f"request has {largest:,} token{'' if largest == 1 else 's'}), so OpenAI's automatic cache reads nothing "
            "and there is nothing to place or turn off; caching starts to pay on longer prompts (a long system "
            "prompt, many tools, long histories) kept byte-identical at the front."
        )
    base = result.no_cache_logged_usd if logged else result.no_cache_usd
    row = result.strategies.get(d.current)
    share = ""
    if row is not None and row.read_tokens + row.input_tokens:
        share = f", {row.read_tokens / (row.read_tokens + row.input_tokens):.1%} of prompt tokens read from the cache"
    against = (
        f"{d.current_usd / base:.1%} of the same prompts without caching (a counterfactual{share})" if base else ""
    )
    return (
        f"Keep what you have: OpenAI caches prompt prefixes by itself, charges nothing to write them and cannot be "
        f"told not to, so there is no cache point to place and nothing to turn off; here it bills {against}. What "
        "raises the cached share is the prompt's layout: keep the system prompt, tools and earlier messages "
        "byte-identical at the front, put what changes at the end, and set prompt_cache_key per conversation or "
        "user so related requests reach the same cache."
    )

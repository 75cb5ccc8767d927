"""OpenAI's automatic prompt caching, as a simulator with the replay's interface, and the price of one request.

Rules (OpenAI, "Prompt caching", https://developers.openai.com/api/docs/guides/prompt-caching, read 2026-12-01):

1. Caching is automatic: no cache points. A request reads the longest prefix of its prompt that an earlier request
   (of the same organisation) already sent, when that prefix is at least ``OPENAI_MIN_TOKENS`` (1,024) tokens.
2. Hits come in increments of ``OPENAI_INCREMENT`` (128) tokens: the cached count is 1,024 + 128 k, the largest
   such number not above the matched prefix (``cached_tokens``).
3. There is no write charge: uncached tokens are plain input, cached tokens are billed at the model's cached-input
   price (``promptcache._price_tables.OPENAI``).
4. Routing: requests go to a machine by a hash of the prompt's first tokens, combined with the ``prompt_cache_key``
   when the request sets one. Requests with different keys do not share cache entries here (each key is its own
   namespace; no key is one namespace). OpenAI also notes that above roughly 15 requests per minute for one
   prefix + key, requests overflow to other machines and hit less often: the simulator does not model that loss,
   so on such traffic its as-logged figure is a lower bound on cost.
5. A cached prefix stays alive ``OPENAI_TTL_S`` seconds after its last use: "5 to 10 minutes of inactivity, up to
   a maximum of one hour"; the simulator takes the low end, 5 minutes.

Prefixes are matched at content-block boundaries (the replay's unit), which is exact for chat traffic where each
request repeats the previous messages unchanged.
"""

from __future__ import annotations

from collections.abc import Sequence

from promptcache._pricing import ModelPrice

from ._models import CacheRules
from ._simulator import Checkpoint, RequestCost

__all__ = [
    "OPENAI_INCREMENT",
    "OPENAI_MIN_TOKENS",
    "OPENAI_TTL_S",
    "OpenAIPrefixCache",
    "cached_tokens",
    "openai_request_cost",
    "openai_rules",
]

#: Smallest prompt prefix OpenAI caches (tokens).
OPENAI_MIN_TOKENS = 1_024
#: Granularity of a cache hit beyond the minimum (tokens).
OPENAI_INCREMENT = 128
#: Lifetime of a cached prefix after its last use (seconds; the low end of "5 to 10 minutes").
OPENAI_TTL_S = 300.0


def openai_rules(model_id: str) -> CacheRules:
    """The ``CacheRules`` of an OpenAI model: automatic caching (family ``"openai"``; ``max_points`` and
    ``cachable`` only keep placement strategies running, the OpenAI simulator ignores their points)."""
    return CacheRules(
        model_id,
        OPENAI_MIN_TOKENS,
        4,
        (OPENAI_TTL_S,),
        frozenset({"system", "messages", "tools"}),
        True,
        "openai",
        0,
    )


def cached_tokens(matched_prefix: int) -> int:
    """Tokens OpenAI reports cached for a request whose prompt matches ``matched_prefix`` tokens of a cached
    prompt: 0 below 1,024, else 1,024 + 128 k (rule 2)."""
    if matched_prefix < OPENAI_MIN_TOKENS:
        return 0
    return OPENAI_MIN_TOKENS + (matched_prefix - OPENAI_MIN_TOKENS) // OPENAI_INCREMENT * OPENAI_INCREMENT


def openai_request_cost(prompt_tokens: int, cached: int, output_tokens: int, price: ModelPrice) -> float:
    """USD of one OpenAI request: ``prompt_tokens`` (the whole prompt, as ``usage.prompt_tokens`` counts it),
    ``cached`` of them read from the cache, and ``output_tokens``, at ``price`` (USD per 1M tokens).

    Raises:
        ValueError: a negative count, or ``cached`` above ``prompt_tokens``.
    """
    if min(prompt_tokens, cached, output_tokens) < 0 or cached > prompt_tokens:
        raise ValueError(
            f"token counts must be >= 0 with cached <= prompt, got prompt={prompt_tokens}, cached={cached}, "
            f"output={output_tokens}"
        )
    tier = price.at(prompt_tokens)
    return ((prompt_tokens - cached) * tier.input + cached * tier.read + output_tokens * tier.output) / 1_000_000


class OpenAIPrefixCache:
    """Bills requests under OpenAI's automatic prefix caching (module docstring), with the interface of
    ``promptcache.replay._simulator.PromptCacheSimulator`` (cache points are accepted and ignored).

    Args:
        rules: the model's rules (``openai_rules``); ``min_tokens`` is the caching minimum.
        price: the model's prices (``price_for``), USD per 1M tokens.
        ttl_s: lifetime of a cached prefix after its last use, seconds (> 0).

    Raises:
        ValueError: ``ttl_s`` not > 0.
    """

    def __init__(self, rules: CacheRules, price: ModelPrice, ttl_s: float = OPENAI_TTL_S) -> None:
        if not ttl_s > 0:
            raise ValueError(f"ttl_s must be > 0 seconds, got {ttl_s!r}")
        self.rules, self.price, self.ttl_s = rules, price, ttl_s
        self._entries: dict[tuple[str | None, bytes], float] = {}  # (prompt_cache_key, prefix hash) -> expires

    def reset(self) -> None:
        """Forget every cached prefix."""
        self._entries.clear()

    def seed(self, prefix_hash: bytes, now_s: float, ttl_s: float, cache_key: str | None = None) -> None:
        """Record that ``prefix_hash`` is cached at ``now_s`` by traffic outside the replay, for ``ttl_s``
        seconds (at most this simulator's TTL)."""
        key = (cache_key, prefix_hash)
        if self._entries.get(key, 0.0) <= now_s:
            self._entries[key] = now_s + min(ttl_s, self.ttl_s)

    def longest_entry(
        self, hashes: Sequence[bytes], cum: Sequence[int], n_blocks: int, now_s: float, cache_key: str | None = None
    ) -> tuple[int, bool, float]:
        """What the cache held of a request's prefix before it was sent: ``(boundary, alive, idle_s)`` of the
        longest prefix with an entry, live or expired (0, False, 0.0: none); ``idle_s`` is the time since that
        prefix was last sent. For the miss causes (``promptcache.replay._causes``)."""
        for k in range(n_blocks, 0, -1):
            if cum[k] < self.rules.min_tokens:
                break
            expires = self._entries.get((cache_key, hashes[k]))
            if expires is not None:
                return k, expires > now_s, now_s - (expires - self.ttl_s)
        return 0, False, 0.0

    def live_entries(self, now_s: float) -> int:
        """Cached prefixes alive at ``now_s``."""
        return sum(1 for expires in self._entries.values() if expires > now_s)

    def simulate(
        self,
        cum: Sequence[int],
        hashes: Sequence[bytes],
        n_blocks: int,
        checkpoints: Sequence[Checkpoint],
        now_s: float,
        cache_key: str | None = None,
        *,
        done_s: float | None = None,
        start_s: float | None = None,
    ) -> RequestCost:
        """Bill one request and cache its prefixes.

        Args:
            cum: cumulative tokens per block boundary (``cum[k]``: tokens of blocks ``[0, k)``).
            hashes: prefix hash per boundary.
            n_blocks: blocks in this request.
            checkpoints: ignored (OpenAI caches automatically).
            now_s: send time, seconds.
            cache_key: the request's ``prompt_cache_key`` (``None``: none set).
            done_s / start_s: when the reply was done / began (the Anthropic simulator's lifetime rules); ignored
                here, lifetimes run from the send time.
        """
        del checkpoints, done_s, start_s
        entries, minimum = self._entries, self.rules.min_tokens
        read_b = 0
        for k in range(n_blocks, 0, -1):
            if cum[k] < minimum:
                break
            if entries.get((cache_key, hashes[k]), 0.0) > now_s:
                read_b = k
                break
        prompt = cum[n_blocks]
        cached = min(cached_tokens(cum[read_b]) if read_b else 0, prompt)
        if minimum != OPENAI_MIN_TOKENS and read_b:  # a --min-tokens override: the same rounding from it
            cached = min(minimum + (cum[read_b] - minimum) // OPENAI_INCREMENT * OPENAI_INCREMENT, prompt)
        expires = now_s + self.ttl_s
        for k in range(n_blocks, 0, -1):  # every prefix of at least the minimum is cached (or refreshed)
            if cum[k] < minimum:
                break
            entries[(cache_key, hashes[k])] = expires
        if len(entries) > 200_000:
            self._entries = {k: v for k, v in entries.items() if v > now_s}
        tier = self.price.at(prompt)
        cost = ((prompt - cached) * tier.input + cached * tier.read) / 1_000_000
        return RequestCost(prompt - cached, cached, 0, 0, cost, read_b)

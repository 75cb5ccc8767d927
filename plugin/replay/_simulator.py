"""A prompt-cache simulator that follows Bedrock's documented behaviour, one request at a time.

Rules (Amazon Bedrock user guide, "Prompt caching for faster model inference"; Anthropic "Prompt caching", whose
mechanics Bedrock's Claude models share):

1. A request is a list of content blocks; a checkpoint sits at a block boundary ``b`` and names the prefix
   ``blocks[:b]``. At most ``rules.max_points`` checkpoints per request (Bedrock rejects more: ``ValueError``).
2. A checkpoint caches its prefix only if the prefix has at least ``rules.min_tokens`` tokens (the *cumulative*
   prefix, not the segment since the previous checkpoint). A smaller one is accepted but caches nothing, and so
   is one in a field (``Checkpoint.field``) the model does not cache (``rules.cachable``; ``[]``: none).
3. Read: for each checkpoint, the longest cached prefix ending at the checkpoint or at a block boundary up to
   ``rules.lookback_blocks`` (20) blocks before it; the request reads the longest such prefix over all its
   checkpoints. Cache entries exist only where an earlier request placed a (qualifying) checkpoint.
4. Write: the tokens from the read position to the last qualifying checkpoint are written; each segment is
   billed at the write price of the TTL of the checkpoint that ends it. Every qualifying checkpoint beyond the read
   position becomes a cache entry.
5. The remaining tokens (after the last qualifying checkpoint, or all when nothing is cached) are plain input.
6. Entries live their TTL (300 s, or 3,600 s where the model allows) from their last use: the entry read and any
   live entry at one of the request's own checkpoints inside the read prefix are refreshed ("the cache is
   refreshed each time the cached content is used"). The lifetime of what a request writes or refreshes runs from
   when its reply was done, where the log says (a Claude Code log stamps each line of the reply), else from its
   send time: on real logs a prefix is still read 294 s after the reply that wrote it ended, 307 s after that
   request was sent (bench/README.md, "Replay: cache timeline"). TTLs must not increase along the prompt (a
   longer-TTL checkpoint after a shorter one is a Bedrock validation error: ``ValueError``).
7. What a request writes can be read only once its reply has begun, where the log says when that was (Anthropic,
   "Prompt caching": "the cache entry only becomes available after the first response begins"), so parallel
   requests (sub-agents started together) each write the prefix they share.
8. Prices: where the model has a long-context tier (``ModelPrice.at``: Anthropic's Sonnet 4 / 4.5 above 200,000
   prompt tokens), a request whose whole prompt exceeds it is billed at that tier, every token of it.

OpenAI models cache automatically, under other rules: ``promptcache.replay._simulators.make_simulator`` gives them
``promptcache.replay._openai_cache.OpenAIPrefixCache`` (same interface).

The cache is keyed by prefix hash, so it is shared by every conversation replayed with the same simulator (as the
real cache is shared within an account and model).
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from dataclasses import dataclass

from promptcache._pricing import ModelPrice

from ._models import CacheRules

__all__ = ["Checkpoint", "PromptCacheSimulator", "RequestCost"]


@dataclass(frozen=True, slots=True)
class Checkpoint:
    """A cache point at block boundary ``boundary`` (1..n), with ``ttl_s`` seconds; ``field`` is where it sits
    (``"tools"``, ``"system"`` or ``"messages"``) — informational, used by placement checks."""

    boundary: int
    ttl_s: float = 300.0
    field: str = "messages"


@dataclass(frozen=True, slots=True)
class RequestCost:
    """What one request is billed.

    Attributes:
        input_tokens: plain input tokens (full price).
        read_tokens: cache-read tokens. write_tokens: cache-write tokens (all TTLs); write_1h_tokens: of those,
            written with the 1-hour TTL.
        cost_usd: input-side cost (input + read + write), USD.
        read_boundary: block boundary of the prefix read (0: no read).
    """

    input_tokens: int
    read_tokens: int
    write_tokens: int
    write_1h_tokens: int
    cost_usd: float
    read_boundary: int

    @property
    def cache_hit(self) -> bool:
        return self.read_tokens > 0


class PromptCacheSimulator:
    """Bills requests under the rules in the module docstring.

    Args:
        rules: the model's cache rules (``cache_rules(model_id)``).
        price: the model's prices (``price_for(model_id)``), USD per 1M tokens.
    """

    def __init__(self, rules: CacheRules, price: ModelPrice) -> None:
        self.rules = rules
        self.price = price
        # prefix hash -> (expires at, ttl, readable from)
        self._entries: dict[bytes, tuple[float, float, float]] = {}
        # every boundary (block count) an entry was written at, ascending: a prefix hash names one block count, so
        # the longest cached prefix of a request is found among these, not by scanning all its boundaries
        self._depths: list[int] = []
        self._depth_set: set[int] = set()
        self._indexed = True  # False once an entry was seeded without its boundary (``longest_entry`` then scans)

    def reset(self) -> None:
        """Forget every cache entry."""
        self._entries.clear()

    def seed(self, prefix_hash: bytes, now_s: float, ttl_s: float, boundary: int | None = None) -> None:
        """Record that the prefix ``prefix_hash`` is cached at ``now_s`` (by traffic outside the replay), living
        ``ttl_s`` seconds (clamped to the longest TTL the model offers). An entry already alive is left alone.
        ``boundary``: the prefix's block count, where the caller knows it (``longest_entry`` finds it faster)."""
        entry = self._entries.get(prefix_hash)
        if entry is None or entry[0] <= now_s:
            ttl = min(ttl_s, max(self.rules.ttls_s))
            self._entries[prefix_hash] = (now_s + ttl, ttl, now_s)
            if boundary is None:
                self._indexed = False
            else:
                self._note(boundary)

    def _note(self, boundary: int) -> None:
        if boundary not in self._depth_set:
            self._depth_set.add(boundary)
            bisect.insort(self._depths, boundary)

    def longest_entry(self, hashes: Sequence[bytes], n_blocks: int, floor: int = 0) -> int:
        """The longest boundary ``k`` in ``(floor, n_blocks]`` whose prefix ``hashes[k]`` has an entry, live or
        expired (0: none): what the miss causes (``promptcache.replay._causes``) start from."""
        entries = self._entries
        if not self._indexed:
            return next((k for k in range(n_blocks, floor, -1) if hashes[k] in entries), 0)
        depths = self._depths
        i = bisect.bisect_right(depths, n_blocks)
        while i:
            i -= 1
            k = depths[i]
            if k <= floor:
                break
            if hashes[k] in entries:
                return k
        return 0

    def entry(self, prefix_hash: bytes) -> tuple[float, float] | None:
        """The cache entry of the prefix ``prefix_hash`` as ``(expires at, ttl)`` in seconds, live or expired, or
        ``None`` (never cached, or pruned): what the miss causes (``promptcache.replay._causes``) read."""
        entry = self._entries.get(prefix_hash)
        return None if entry is None else (entry[0], entry[1])

    def live_entries(self, now_s: float) -> int:
        """Number of entries alive at ``now_s`` (for tests and diagnostics)."""
        return sum(1 for expires, _, _ in self._entries.values() if expires > now_s)

    def _validate(self, checkpoints: Sequence[Checkpoint], n_blocks: int) -> list[Checkpoint]:
        points = sorted(checkpoints, key=lambda c: c.boundary)
        if len(points) > self.rules.max_points:
            raise ValueError(
                f"{len(points)} cache points in one request; {self.rules.model_id} allows at most "
                f"{self.rules.max_points}"
            )
        seen: set[int] = set()
        for i, cp in enumerate(points):
            if not 1 <= cp.boundary <= n_blocks:
                raise ValueError(f"cache point boundary {cp.boundary} outside the request (1..{n_blocks} blocks)")
            if cp.boundary in seen:
                raise ValueError(f"two cache points at block boundary {cp.boundary}")
            seen.add(cp.boundary)
            if cp.ttl_s not in self.rules.ttls_s:
                raise ValueError(
                    f"TTL {cp.ttl_s:g} s is not offered for {self.rules.model_id} "
                    f"(allowed: {', '.join(f'{t:g}' for t in self.rules.ttls_s)})"
                )
            if i and cp.ttl_s > points[i - 1].ttl_s:
                raise ValueError(
                    f"cache point at {cp.boundary} has a longer TTL ({cp.ttl_s:g} s) than the one "
                    f"before it ({points[i - 1].ttl_s:g} s); Bedrock requires non-increasing TTLs"
                )
        return points

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
        """Bill one request and update the cache.

        Args:
            cum: cumulative tokens per boundary (``cum[k]`` = tokens of blocks ``[0, k)``); may be longer than the
                request (a conversation's array shared by its requests).
            hashes: prefix hash per boundary (same indexing as ``cum``).
            n_blocks: blocks in this request.
            checkpoints: the strategy's cache points for this request.
            now_s: the request's send time in seconds (what it reads must be alive then).
            done_s: when its reply was done, seconds (>= ``now_s``; ``None``: ``now_s``): what it writes or
                refreshes lives from then (rule 6).
            start_s: when its reply began, seconds (``None``: ``now_s``): what it writes can be read from then
                (rule 7).
            cache_key: an OpenAI ``prompt_cache_key``; ignored here (Anthropic and Bedrock route by prefix only).

        Raises:
            ValueError: more checkpoints than allowed, a boundary outside the request, two at one boundary, a TTL
                the model does not offer, or TTLs increasing along the prompt.
        """
        points = self._validate(checkpoints, n_blocks) if self.rules.supports_cache else []
        points = [cp for cp in points if cp.field in self.rules.cachable]  # a point elsewhere caches nothing
        entries = self._entries
        lookback = self.rules.lookback_blocks
        read_b = 0
        for cp in points:  # rule 3: longest live prefix within the lookback window of any checkpoint
            for k in range(cp.boundary, max(read_b, cp.boundary - lookback - 1, 0), -1):
                entry = entries.get(hashes[k])
                if entry is not None and entry[0] > now_s and entry[2] <= now_s:
                    read_b = k
                    break
        read_tokens = cum[read_b] if read_b else 0
        stamp = now_s if done_s is None or done_s < now_s else done_s
        ready_s = now_s if start_s is None or start_s < now_s else start_s
        if read_b:
            _, ttl, ready = entries[hashes[read_b]]
            entries[hashes[read_b]] = (stamp + ttl, ttl, ready)
        minimum = self.rules.min_tokens
        price = self.price.at(cum[n_blocks])  # rule 8: a long-context tier bills the whole request
        covered = read_tokens
        write = write_1h = 0
        cost = 0.0
        for cp in points:
            if cum[cp.boundary] < minimum:
                continue  # rule 2
            key = hashes[cp.boundary]
            if cp.boundary <= read_b:  # rule 6: a live entry at one of our checkpoints inside the read is used
                entry = entries.get(key)
                if entry is not None and entry[0] > now_s and entry[2] <= now_s:
                    entries[key] = (stamp + entry[1], entry[1], entry[2])
                continue
            segment = cum[cp.boundary] - covered  # rule 4
            covered = cum[cp.boundary]
            write += segment
            if cp.ttl_s > 300:
                write_1h += segment
            cost += segment * price.write(cp.ttl_s)
            old = entries.get(key)
            ready = old[2] if old is not None and old[0] > now_s and old[2] <= ready_s else ready_s
            entries[key] = (stamp + cp.ttl_s, cp.ttl_s, ready)
            if old is None:
                self._note(cp.boundary)
        plain = cum[n_blocks] - read_tokens - write  # rule 5
        cost += plain * price.input + read_tokens * price.read
        if len(entries) > 200_000:
            self._entries = {k: v for k, v in entries.items() if v[0] > now_s}
        return RequestCost(plain, read_tokens, write, write_1h, cost / 1_000_000, read_b)

"""Why the cache missed: a cause for every cache-write token and every uncached input token of a replayed row.

A request's tokens that were not read from the cache are, in prompt order, first the ones it wrote (from the read
position to its last qualifying cache point) and then the ones it sent as plain input. The two get different
questions:

- **written** tokens: why were they not read? The cache state just before the request says (``inspect``): the
  longest prefix of the request that any cache entry of this row's simulator covers, live or expired, and the
  longest one a simulator of the same row for another model covers.

  * ``ttl-expired``: an entry covered them but its TTL ran out during an idle gap (the gap since its last use is
    recorded);
  * ``lookback``: a live entry covered them but lies more than the lookback window (~20 blocks) before every
    cache point of the request, so Bedrock did not find it;
  * ``no-cache-point``: a live entry covered them but the request placed no cache point at or after it;
  * ``model-switch``: only another model's cache held them (models do not share a cache);
  * ``prefix-changed``: nothing held them, and the conversation starts where the log shows its prefix changed
    (``meta["context_start"] == "compact_boundary"``: a compaction; ``meta["epoch"]``: the unlogged system prompt
    or tools changed, ``promptcache.replay._sizes.split_on_prefix_change``; ``meta["edited"]``: a call log's
    thread re-sent an earlier prompt's start with a later message changed, ``promptcache.replay._calls``);
  * ``first-call``: nothing held them and no earlier request of the conversation sent them: new content, written
    once (the cost of caching, not a leak);
  * ``no-cache-point`` / ``cache-point-limit`` / ``below-minimum`` also apply to written tokens the conversation's
    previous request sent but did not cache (it placed no point after them; it used every point it may; its prefix
    was under the model's minimum).

- **uncached** (plain) tokens: why were they not cached at all? ``below-minimum`` when a cache point follows them
  but its prefix is under the model's minimum; otherwise no point follows them: ``cache-point-limit`` when the
  request used every point the model allows, else ``no-cache-point`` (``none`` places none at all).

On a model with automatic prefix caching (OpenAI: no cache points and no writes, ``add_automatic``) every token not
read is plain input, and the question is why the automatic cache did not hold it: ``hit-increment`` (the matched
prefix beyond the last 128-token step OpenAI counts hits in), ``ttl-expired`` (the prefix was cached but left the
cache during an idle gap), ``model-switch``, ``below-minimum`` (the prompt, or the previous request's prompt that
sent these tokens, was under the 1,024 tokens OpenAI caches from), then ``prefix-changed`` / ``first-call`` for
new content as above. ``no-cache-point``, ``lookback`` and ``cache-point-limit`` do not arise there.

``unexplained`` collects what none of this accounts for (an entry the simulator pruned, say). Each cause's
``cost_usd`` is what its tokens were billed: written tokens at the request's own write price, plain ones at the
input price.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from promptcache._pricing import ModelPrice

from ._openai_cache import OpenAIPrefixCache
from ._prepare import Request
from ._simulator import Checkpoint, PromptCacheSimulator, RequestCost

__all__ = ["CAUSES", "CauseTotals", "MissLedger", "Snapshot", "inspect", "inspect_automatic"]

#: Every cause, in the order reports list them.
CAUSES = (
    "first-call",
    "ttl-expired",
    "prefix-changed",
    "model-switch",
    "below-minimum",
    "hit-increment",
    "lookback",
    "cache-point-limit",
    "no-cache-point",
    "unexplained",
)


@dataclass
class CauseTotals:
    """One cause over a row: tokens, their billed USD, and (``ttl-expired``) the idle gaps, seconds."""

    cache_write_tokens: int = 0
    uncached_tokens: int = 0
    cost_usd: float = 0.0
    events: int = 0  # requests with tokens of this cause
    gaps_s: list[float] = field(default_factory=list)  # ttl-expired: the idle gap before each such request
    kinds: set[str] = field(default_factory=set)  # prefix-changed: "compaction" and/or "hidden" (module docstring)


@dataclass(frozen=True, slots=True)
class Snapshot:
    """The cache state a request met, taken before it is simulated (see ``inspect``).

    Attributes:
        own: the longest boundary of the request with an entry in the row's simulator (0: none).
        own_alive: whether that entry was alive at the request's time.
        own_idle_s: seconds since that entry was last used (written or read).
        other: the longest boundary with an entry in the row's simulator of another model (0: none).
    """

    own: int = 0
    own_alive: bool = False
    own_idle_s: float = 0.0
    other: int = 0


def inspect(
    simulator: PromptCacheSimulator,
    others: Sequence[PromptCacheSimulator],
    hashes: Sequence[bytes],
    n_blocks: int,
    now_s: float,
) -> Snapshot:
    """What the cache held of a request's prefix just before it was sent (``Snapshot``); scans from the request's
    end down to the first boundary any entry covers."""
    own, alive, idle = simulator.longest_entry(hashes, n_blocks), False, 0.0
    entry = simulator.entry(hashes[own]) if own else None
    if entry is not None:
        expires, ttl = entry
        alive, idle = expires > now_s, now_s - (expires - ttl)
    other = 0
    for sim in others:
        other = sim.longest_entry(hashes, n_blocks, max(own, other)) or other
    return Snapshot(own, alive, idle, other)


def inspect_automatic(
    cache: OpenAIPrefixCache,
    others: Sequence[OpenAIPrefixCache],
    request: Request,
    now_s: float,
    cache_key: str | None,
) -> Snapshot:
    """``inspect`` for a model with automatic prefix caching: the longest prefix of the request its cache held
    (live or expired) and the longest another model's cache of the same row held."""
    prepared, n = request.prepared, request.n_blocks
    own, alive, idle = cache.longest_entry(prepared.hashes, prepared.cum, n, now_s, cache_key)
    other = max((sim.longest_entry(prepared.hashes, prepared.cum, n, now_s, cache_key)[0] for sim in others), default=0)
    return Snapshot(own, alive, idle, other)


class MissLedger:
    """The causes of one row (see the module docstring), request by request."""

    def __init__(self) -> None:
        self.totals: dict[str, CauseTotals] = {}
        self._previous: dict[str, tuple[int, int]] = {}  # conversation id -> (blocks sent, points placed) last time

    def forget(self, conversation_id: str) -> None:
        """Drop what is kept for a finished conversation."""
        self._previous.pop(conversation_id, None)

    def _add(
        self,
        cause: str,
        written: int,
        plain: int,
        usd: float,
        gap_s: float | None = None,
        request: Request | None = None,
    ) -> None:
        if written <= 0 and plain <= 0:
            return
        row = self.totals.get(cause)
        if row is None:
            row = self.totals[cause] = CauseTotals()
        if cause == "prefix-changed" and request is not None:
            meta = request.prepared.conversation.meta
            start = meta.get("context_start")
            row.kinds.add("compaction" if start == "compact_boundary" else "edited" if meta.get("edited") else "hidden")
        row.cache_write_tokens += max(written, 0)
        row.uncached_tokens += max(plain, 0)
        row.cost_usd += usd
        row.events += 1
        if gap_s is not None:
            row.gaps_s.append(gap_s)

    def add(
        self,
        request: Request,
        points: Sequence[Checkpoint],
        cost: RequestCost,
        before: Snapshot,
        price: ModelPrice,
        max_points: int,
        min_tokens: int,
    ) -> None:
        """Account one simulated request of the row (``before``: its ``inspect`` snapshot)."""
        cum, n = request.prepared.cum, request.n_blocks
        price = price.at(cum[n])  # the tier that bills a request of this size
        cid = request.prepared.conversation.id
        read_end = cum[cost.read_boundary] if cost.read_boundary else 0
        write_end = read_end + cost.write_tokens
        write_usd = cost.cost_usd - (cost.input_tokens * price.input + cost.read_tokens * price.read) / 1_000_000
        per_write = write_usd / cost.write_tokens if cost.write_tokens else 0.0
        sent, placed = self._previous.get(cid, (0, 0))
        self._previous[cid] = (n, len(points))
        if cost.write_tokens:
            spans = _written_spans(
                request, points, before, (read_end, write_end), (sent, placed), (min_tokens, max_points)
            )
            for cause, lo, hi, gap in spans:
                self._add(cause, hi - lo, 0, (hi - lo) * per_write, gap, request)
        plain = cum[n] - write_end
        if plain > 0:
            after = [p for p in points if cum[p.boundary] > write_end]
            if any(cum[p.boundary] < min_tokens for p in after):
                cause = "below-minimum"
            elif points and len(points) >= max_points:
                cause = "cache-point-limit"
            else:
                cause = "no-cache-point"
            self._add(cause, 0, plain, plain * price.input / 1_000_000)

    def add_automatic(
        self, request: Request, cost: RequestCost, before: Snapshot, price: ModelPrice, min_tokens: int
    ) -> None:
        """Account one request of a row on a model with automatic prefix caching (module docstring; ``before``:
        the automatic cache's state, ``OpenAIPrefixCache.longest_entry``, with ``other`` from other models)."""
        cum, n = request.prepared.cum, request.n_blocks
        price = price.at(cum[n])
        cid = request.prepared.conversation.id
        sent, _ = self._previous.get(cid, (0, 0))
        self._previous[cid] = (n, 0)
        read = cost.read_boundary
        at, end = cost.read_tokens, cum[n]
        spans: list[tuple[str, int, float | None]] = []

        def cut(cause: str, upto: int, gap: float | None = None) -> None:
            nonlocal at
            upto = min(upto, end)
            if upto > at:
                spans.append((cause, upto - at, gap))
                at = upto

        cut("hit-increment", cum[read] if read else 0)
        if before.own > read and not before.own_alive:
            cut("ttl-expired", cum[before.own], before.own_idle_s)
        if before.other > max(before.own, read):
            cut("model-switch", cum[before.other])
        if end < min_tokens:
            cut("below-minimum", end)
        if sent and at < cum[sent]:
            cut("below-minimum" if cum[sent] < min_tokens else "unexplained", cum[sent])
        meta = request.prepared.conversation.meta
        changed = request.number == 0 and _prefix_changed(meta)
        cut("prefix-changed" if changed else "first-call", end)
        for cause, tokens, gap in spans:
            self._add(cause, 0, tokens, tokens * price.input / 1_000_000, gap, request)


def _prefix_changed(meta: Mapping[str, object]) -> bool:
    """Whether a conversation starts where the log shows its prefix changed (module docstring)."""
    return meta.get("context_start") == "compact_boundary" or bool(meta.get("epoch")) or bool(meta.get("edited"))


def _written_spans(
    request: Request,
    points: Sequence[Checkpoint],
    before: Snapshot,
    written: tuple[int, int],
    previous: tuple[int, int],
    limits: tuple[int, int],
) -> list[tuple[str, int, int, float | None]]:
    """``(cause, from token, to token, idle gap)`` spans covering the written tokens ``written`` (``[start,
    end)``); ``previous``: blocks the conversation's previous request sent and points it placed; ``limits``: the
    model's minimum tokens and maximum points."""
    cum = request.prepared.cum
    start, end = written
    sent, placed = previous
    min_tokens, max_points = limits
    spans: list[tuple[str, int, int, float | None]] = []
    at = start

    def cut(cause: str, upto: int, gap: float | None = None) -> None:
        nonlocal at
        upto = min(upto, end)
        if upto > at:
            spans.append((cause, at, upto, gap))
            at = upto

    if before.own:
        if not before.own_alive:
            cut("ttl-expired", cum[before.own], before.own_idle_s)
        elif any(p.boundary >= before.own for p in points):
            cut("lookback", cum[before.own])
        else:
            cut("no-cache-point", cum[before.own])
    if before.other > before.own:
        cut("model-switch", cum[before.other])
    if sent and at < cum[sent]:  # the previous request sent these tokens and did not cache them
        if cum[sent] < min_tokens:
            cut("below-minimum", cum[sent])
        cut("cache-point-limit" if placed >= max_points else "no-cache-point", cum[sent])
    meta = request.prepared.conversation.meta
    changed = request.number == 0 and _prefix_changed(meta)
    cut("prefix-changed" if changed else "first-call", end)
    return spans

"""What a change would save, priced by the same simulator: each row's placements with the 1-hour TTL, and with a
keep-alive.

For every placement row (and ``as-logged``) the replay also bills, on simulators of their own:

- ``NAME@1h``: the same cache points with the model's longest TTL (the wrapper's ``cache_ttl="1h"``); where the
  model offers only 5 minutes it equals the row and is left out.
- ``NAME+keep-alive``: the same points, plus a keep-alive call before the TTL of a conversation's last write ends:
  it re-sends the prefix up to the last cache point the request wrote (a cache read that refreshes the entry; its
  reply, a token or two, is not counted). A client cannot know whether the conversation will continue, so after
  each request it pings while the pings together still cost less than rewriting that prefix once would: at most
  ``floor((write - read) / read)`` pings (11 for Claude at 5 minutes), each ``KEEPALIVE_MARGIN_S`` before the
  entry would expire. Pings after a conversation's last request are paid for like the others.

Both are what the miss causes (``promptcache.replay._causes``) offer as the fix for ``ttl-expired`` tokens; the
recovered dollars are the row's cost minus the variant's.
"""

from __future__ import annotations

import heapq
import math
from dataclasses import dataclass, field

from ._model_table import ModelTable
from ._prepare import Request
from ._simulator import Checkpoint, PromptCacheSimulator, RequestCost
from ._totals import StrategyTotals, account

__all__ = ["KEEPALIVE_MARGIN_S", "ONE_HOUR", "KEEP_ALIVE", "Variants", "keepalive_pings"]

#: Seconds before expiry a keep-alive is sent: room for the call's own latency (Bedrock's TTL counts from the time
#: the cache was last used).
KEEPALIVE_MARGIN_S = 10.0
ONE_HOUR = "@1h"
KEEP_ALIVE = "+keep-alive"


def keepalive_pings(write_usd_per_mtok: float, read_usd_per_mtok: float) -> int:
    """Keep-alive calls after a request while they cost less than one rewrite: ``floor((write - read) / read)``
    (0 when reads are free or writes cost no more than reads)."""
    if read_usd_per_mtok <= 0 or write_usd_per_mtok <= read_usd_per_mtok:
        return 0
    return math.floor((write_usd_per_mtok - read_usd_per_mtok) / read_usd_per_mtok + 1e-9)


@dataclass(order=True)
class _Ping:
    time_s: float
    seq: int
    row: str = field(compare=False)
    model: str = field(compare=False)
    conversation: str = field(compare=False)
    generation: int = field(compare=False)
    request: Request = field(compare=False)
    boundary: int = field(compare=False)
    ttl_s: float = field(compare=False)
    left: int = field(compare=False)
    counted: bool = field(compare=False)  # the request that scheduled it counts in the row


class Variants:
    """The ``@1h`` and ``+keep-alive`` bills of the rows the engine feeds (see the module docstring)."""

    def __init__(self, table: ModelTable) -> None:
        self.table = table
        self.totals: dict[str, StrategyTotals] = {}
        self._sims: dict[tuple[str, str], PromptCacheSimulator] = {}
        self._pings: list[_Ping] = []
        self._generation: dict[tuple[str, str], int] = {}  # (row, conversation) -> requests seen
        self._seq = 0

    def _sim(self, name: str, model: str) -> PromptCacheSimulator:
        sim = self._sims.get((name, model))
        if sim is None:
            sim = self._sims[(name, model)] = PromptCacheSimulator(self.table.rules(model), self.table.price(model))
        return sim

    def _row(self, name: str, base: StrategyTotals) -> StrategyTotals:
        row = self.totals.get(name)
        if row is None:
            row = self.totals[name] = StrategyTotals(name, base.description, logged_only=base.logged_only)
        return row

    def seed(self, row: str, model: str, prefix_hash: bytes, now_s: float, ttl_s: float) -> None:
        """Start both variants of ``row`` with a prefix cached by traffic outside the replay (as the row's own)."""
        for suffix in (ONE_HOUR, KEEP_ALIVE):
            self._sim(row + suffix, model).seed(prefix_hash, now_s, ttl_s)

    def until(self, now_s: float) -> None:
        """Send every keep-alive due before ``now_s`` (in time order, so shared prefixes see the right state)."""
        while self._pings and self._pings[0].time_s < now_s:
            self._fire(heapq.heappop(self._pings))

    def drain(self) -> None:
        """Send the keep-alives still due after the last request."""
        self.until(math.inf)

    def _fire(self, ping: _Ping) -> None:
        if self._generation.get((ping.row, ping.conversation)) != ping.generation:
            return  # the conversation's next request came first
        name = ping.row + KEEP_ALIVE
        prepared = ping.request.prepared
        sim = self._sim(name, ping.model)
        cost = sim.simulate(
            prepared.cum, prepared.hashes, ping.boundary, [Checkpoint(ping.boundary, ping.ttl_s)], ping.time_s
        )
        row = self.totals[name]
        if ping.counted:
            row.cost_usd += cost.cost_usd
            row.read_tokens += cost.read_tokens
            row.write_tokens += cost.write_tokens
            row.input_tokens += cost.input_tokens
            if ping.request.usage is not None:
                row.logged_cost_usd += cost.cost_usd
            row.keepalive_calls += 1
        if ping.left > 1:
            self._push(ping, ping.time_s + ping.ttl_s - KEEPALIVE_MARGIN_S, ping.left - 1)

    def _push(self, ping: _Ping, at: float, left: int) -> None:
        self._seq += 1
        heapq.heappush(
            self._pings,
            _Ping(
                at,
                self._seq,
                ping.row,
                ping.model,
                ping.conversation,
                ping.generation,
                ping.request,
                ping.boundary,
                ping.ttl_s,
                left,
                ping.counted,
            ),
        )

    def add(
        self,
        row_name: str,
        base: StrategyTotals,
        model: str,
        request: Request,
        points: list[Checkpoint],
        out_cost: float,
        counted: bool,
    ) -> None:
        """Bill ``request`` with ``points`` on both variants of ``row_name`` (``counted``: it counts in the row; an
        ``as-logged`` request without logged usage only keeps the cache state right)."""
        rules = self.table.rules(model)
        prepared, now = request.prepared, request.time_s
        longest = max(rules.ttls_s)
        long_points = [Checkpoint(p.boundary, longest, p.field) for p in points]
        cost = self._sim(row_name + ONE_HOUR, model).simulate(
            prepared.cum,
            prepared.hashes,
            request.n_blocks,
            long_points,
            now,
            done_s=request.done_s,
            start_s=request.start_s,
        )
        if counted:
            account(self._row(row_name + ONE_HOUR, base), cost, out_cost, request.usage is not None)
        cost = self._sim(row_name + KEEP_ALIVE, model).simulate(
            prepared.cum, prepared.hashes, request.n_blocks, points, now, done_s=request.done_s, start_s=request.start_s
        )
        if counted:
            account(self._row(row_name + KEEP_ALIVE, base), cost, out_cost, request.usage is not None)
        else:
            self._row(row_name + KEEP_ALIVE, base)
        self._schedule(row_name, model, request, points, cost, counted)

    def _schedule(
        self, row: str, model: str, request: Request, points: list[Checkpoint], cost: RequestCost, counted: bool
    ) -> None:
        key = (row, request.prepared.conversation.id)
        generation = self._generation[key] = self._generation.get(key, 0) + 1
        rules, price = self.table.rules(model), self.table.price(model)
        cum = request.prepared.cum
        held = [p for p in points if cum[p.boundary] >= rules.min_tokens]
        if not held or not rules.supports_cache:
            return
        last = max(held, key=lambda p: p.boundary)
        pings = keepalive_pings(price.write(last.ttl_s), price.read)
        if pings <= 0:
            return
        seed = _Ping(0.0, 0, row, model, key[1], generation, request, last.boundary, last.ttl_s, pings, counted)
        self._push(seed, request.time_s + last.ttl_s - KEEPALIVE_MARGIN_S, pings)

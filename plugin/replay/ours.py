"""``anchored-tail``: our placement for growing agent conversations.

Why this shape. In an agent loop each request is the previous request plus the model's reply plus a tool result or
a user message. Under Bedrock's rules the cheapest a request can be is: read everything the previous request sent
(0.1x), write only what is new (1.25x), and never write what no later request will read (a write nobody reads
costs 0.25x more than plain input). The points that achieve it:

1. **anchor** — the end of the tools + system prefix, the part shared by every conversation of the same agent, so
   a new conversation starts with a read. Placed only when that prefix reaches the model's minimum (a point below
   it caches nothing and only uses up a slot).
2. **tail** — the end of the request, so the next request reads all of it.
3. **bridge** — the previous request's tail, when it lies more than the ~20-block lookback before the new tail
   (many parallel tool calls), so the read is still found. Spare slots go to the message ends just before the
   tail: free (the write is billed once, up to the tail), and they give conversations that share this history an
   entry at every message boundary they have in common.
4. **TTL or no write, from observed reuse** — for the tail (per signature of the request's last block: user text,
   or the result of tool X) and for the anchor (per anchor prefix), the strategy records how long after a write
   the next use came (from its own past requests only). With ``P(T)`` the observed share of uses within TTL ``T``,
   writing with TTL ``T`` instead of sending plain input gains ``(input - write_T) + P(T) * (write_5m - read)``
   per token (the next request reads instead of writing). It picks the best of: no write (gain 0), 5 minutes,
   1 hour (where the model offers it). For Claude: write at 5 m when ``P(5m) > 0.22``, at 1 h when
   ``P(1h) > 0.87`` and better. Until 10 outcomes are known, it writes at 5 minutes like everyone else. Nova
   writes cost the same as input, so there it always writes.

TTLs stay non-increasing along the prompt (the anchor takes at least the tail's TTL). Nova: no tool points, and no
point directly after a ``toolResult`` or an image (the tail moves back to the last message end where one is
allowed).
"""

from __future__ import annotations

import heapq
from collections import defaultdict

from .models import CacheRules
from .prepare import Request
from .pricing import ModelPrice
from .simulator import Checkpoint
from .strategies import Strategy, last_allowed_boundary, point_allowed_after

__all__ = ["AnchoredTailStrategy"]

_MIN_OBSERVATIONS = 10  # a signature acts on what it learned only after this many resolved outcomes


class _ReuseStats:
    """Observed delays between a write and the next use, as counts: uses within 5 min, within 1 h, total."""

    __slots__ = ("within_5m", "within_1h", "total")

    def __init__(self) -> None:
        self.within_5m = self.within_1h = self.total = 0

    def add(self, delay_s: float | None) -> None:
        self.total += 1
        if delay_s is not None:
            self.within_5m += delay_s <= 300.0
            self.within_1h += delay_s <= 3600.0


class AnchoredTailStrategy(Strategy):
    """See the module docstring.

    Args:
        rules: the model's cache rules.
        price: the model's prices (rule 4 weighs them); ``None`` means always write at 5 minutes.
        ttl_s: ignored beyond the default TTL of 300 s (rule 4 chooses TTLs).
    """

    name = "anchored-tail"
    description = "ours: shared anchor + moving tail, bridge past the lookback, TTL/no-write from observed reuse"

    def __init__(self, rules: CacheRules, price: ModelPrice | None = None, ttl_s: float = 300.0) -> None:
        super().__init__(rules, price, ttl_s)
        self._horizon = max(rules.ttls_s)  # how long an outcome stays open
        self._prev_tail: dict[str, int] = {}  # conversation id -> boundary of its last written tail
        self._pending: dict[object, tuple[float, object]] = {}  # key -> (time of write, stats key)
        self._deadlines: list[tuple[float, int, object]] = []
        self._seq = 0
        self._stats: dict[object, _ReuseStats] = defaultdict(_ReuseStats)

    # -- learning (past only) -------------------------------------------------------------------------------
    def _observe(self, now_s: float, key: object) -> None:
        """Close outcomes whose horizon passed, then the pending outcome of ``key`` (it is being used now)."""
        while self._deadlines and self._deadlines[0][0] < now_s:
            deadline, _, k = heapq.heappop(self._deadlines)
            pending = self._pending.get(k)
            if pending is not None and pending[0] + self._horizon == deadline:
                self._stats[pending[1]].add(None)  # no use within the horizon
                del self._pending[k]
        pending = self._pending.pop(key, None)
        if pending is not None:
            self._stats[pending[1]].add(now_s - pending[0])

    def _expect_use(self, now_s: float, key: object, stats_key: object) -> None:
        self._pending[key] = (now_s, stats_key)
        self._seq += 1
        heapq.heappush(self._deadlines, (now_s + self._horizon, self._seq, key))

    def choose_ttl(self, stats_key: object) -> float | None:
        """The TTL (seconds) to write with for ``stats_key``, or ``None`` for no write (rule 4)."""
        stats = self._stats.get(stats_key)
        price = self.price
        if price is None or stats is None or stats.total < _MIN_OBSERVATIONS:
            return 300.0
        saved_on_reuse = price.write_5m - price.read
        best_ttl, best_gain = None, 0.0
        for ttl in self.rules.ttls_s:
            # Laplace's rule of succession: one pseudo-use and one pseudo-miss, so a handful of outcomes does not
            # swing the decision.
            share = ((stats.within_5m if ttl <= 300 else stats.within_1h) + 1) / (stats.total + 2)
            gain = price.input - price.write(ttl) + share * saved_on_reuse
            if gain > best_gain + 1e-12:
                best_ttl, best_gain = ttl, gain
        return best_ttl

    @staticmethod
    def _signature(request: Request) -> tuple[str, str]:
        blocks = request.prepared.conversation.messages[request.cut - 1].blocks
        last = blocks[-1] if blocks else None
        if last is None:
            return ("empty", "")
        return (last.kind, last.name if last.kind == "tool_result" else "")

    # -- placement -------------------------------------------------------------------------------------------
    def _allowed_after(self, kind: str) -> bool:
        return point_allowed_after(self.rules, kind)

    def _tail_boundary(self, request: Request) -> int:
        return last_allowed_boundary(request, self.rules)  # Nova: never directly after a toolResult or an image

    def _anchor_boundary(self, request: Request) -> tuple[int, str]:
        prepared, rules = request.prepared, self.rules
        end, field = (prepared.system_end, "system") if "system" in rules.cachable else (0, "")
        if end == prepared.tools_end:  # no system prompt: the tools alone, where allowed
            end, field = (prepared.tools_end, "tools") if "tools" in rules.cachable else (0, "")
        if not end or prepared.cum[end] < rules.min_tokens:
            return 0, ""
        return end, field

    def place(self, request: Request) -> list[Checkpoint]:
        prepared = request.prepared
        conv_id = prepared.conversation.id
        now = request.time_s
        anchor_b, anchor_field = self._anchor_boundary(request)
        anchor_key = ("anchor", prepared.hashes[anchor_b]) if anchor_b else None
        if anchor_key is not None:
            self._observe(now, anchor_key)
        self._observe(now, ("tail", conv_id))

        tail = self._tail_boundary(request)
        if tail <= anchor_b:
            tail = 0
        prev = self._prev_tail.get(conv_id, 0)
        signature = self._signature(request)
        tail_ttl = self.choose_ttl(signature) if tail and tail != prev else None
        anchor_ttl = self.choose_ttl(anchor_key) if anchor_key is not None else None
        if anchor_key is not None and tail_ttl is not None:
            anchor_ttl = max(anchor_ttl or 0.0, tail_ttl)  # TTLs non-increasing along the prompt

        points: list[Checkpoint] = []
        if anchor_ttl is not None:
            points.append(Checkpoint(anchor_b, anchor_ttl, anchor_field))
        msg_ttl = tail_ttl if tail_ttl is not None else min(self.rules.ttls_s)
        if anchor_ttl is not None:
            msg_ttl = min(msg_ttl, anchor_ttl)
        if prev > anchor_b and prev <= tail and (tail_ttl is None or tail - prev > self.rules.lookback_blocks):
            points.append(Checkpoint(prev, msg_ttl))  # bridge / read-only point
        if tail_ttl is not None:
            points.append(Checkpoint(tail, msg_ttl))
            self._prev_tail[conv_id] = tail
            floor = max(prev, anchor_b)
            taken = {p.boundary for p in points}
            for group in reversed(request.groups[:-1]):  # spare slots (rule 3)
                if len(points) >= self.rules.max_points or group.end <= floor:
                    break
                if group.end not in taken and self._allowed_after(group.last_kind):
                    points.append(Checkpoint(group.end, msg_ttl))
        if anchor_key is not None:
            self._expect_use(now, anchor_key, anchor_key)
        self._expect_use(now, ("tail", conv_id), signature)
        return sorted(points[: self.rules.max_points], key=lambda p: p.boundary)

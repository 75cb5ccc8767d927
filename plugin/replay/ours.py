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
4. **no wasted writes** — the strategy learns, from its own past requests only, how often a request whose last
   block has a given signature (user text, or the result of tool X) was *not* followed within the TTL. When that
   probability ``p`` exceeds the break-even ``(input - read) / (write - read)`` (0.78 for Claude: skipping saves
   0.25x on a final request but costs 0.9x when a follow-up comes), the tail is not written; the previous tail is
   still read. Nova writes cost the same as input, so it never skips there.
5. **TTL** — the anchor takes the 1-hour TTL when the model offers it and the anchor's recent reuse intervals
   (between conversation starts) exceed 5 minutes; all other points take 5 minutes (TTLs stay non-increasing).

Nova: no tool points, and no point directly after a ``toolResult`` or an image (the tail moves back to the last
message end where one is allowed).
"""

from __future__ import annotations

import heapq
from collections import defaultdict, deque

from .models import CacheRules
from .prepare import Request
from .pricing import ModelPrice
from .simulator import Checkpoint
from .strategies import Strategy

__all__ = ["AnchoredTailStrategy"]

_MIN_OBSERVATIONS = 10  # a signature acts only after this many resolved outcomes


class AnchoredTailStrategy(Strategy):
    """See the module docstring.

    Args:
        rules: the model's cache rules.
        price: the model's prices (the break-even of rule 4 comes from them); ``None`` disables rule 4.
        ttl_s: the TTL of tail and bridge points (300).
    """

    name = "anchored-tail"
    description = "ours: shared anchor + moving tail, bridge past the lookback, learned skip of wasted writes"

    def __init__(self, rules: CacheRules, price: ModelPrice | None = None, ttl_s: float = 300.0) -> None:
        super().__init__(rules, ttl_s)
        if price is not None and price.write_5m > price.read:
            self.skip_threshold = (price.input - price.read) / (price.write_5m - price.read)
        else:
            self.skip_threshold = 1.0
        self._prev_tail: dict[str, int] = {}  # conversation id -> boundary of its last written tail
        self._pending: dict[str, tuple[float, tuple[str, str]]] = {}  # conv -> (time, signature) awaiting outcome
        self._deadlines: list[tuple[float, str]] = []
        self._stats: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0])  # sig -> [followed, not]
        self._anchor_last_use: float | None = None
        self._anchor_gaps: deque[float] = deque(maxlen=5)

    # -- learning (past only) -------------------------------------------------------------------------------
    def _resolve(self, now_s: float, conv_id: str) -> None:
        while self._deadlines and self._deadlines[0][0] < now_s:
            deadline, cid = heapq.heappop(self._deadlines)
            pending = self._pending.get(cid)
            if pending is not None and pending[0] + self.ttl_s == deadline:
                self._stats[pending[1]][1] += 1  # no follow-up within the TTL: that write was wasted
                del self._pending[cid]
        pending = self._pending.pop(conv_id, None)
        if pending is not None:
            followed = now_s - pending[0] <= self.ttl_s
            self._stats[pending[1]][0 if followed else 1] += 1

    def waste_probability(self, signature: tuple[str, str]) -> float | None:
        """Observed share of requests with ``signature`` not followed within the TTL (``None``: too few seen)."""
        followed, wasted = self._stats.get(signature, (0, 0))
        n = followed + wasted
        return None if n < _MIN_OBSERVATIONS else (wasted + 1) / (n + 2)

    @staticmethod
    def _signature(request: Request) -> tuple[str, str]:
        blocks = request.prepared.conversation.messages[request.cut - 1].blocks
        last = blocks[-1] if blocks else None
        if last is None:
            return ("empty", "")
        return (last.kind, last.name if last.kind == "tool_result" else "")

    # -- placement -------------------------------------------------------------------------------------------
    def _tail_boundary(self, request: Request) -> int:
        groups = request.groups
        if self.rules.family != "nova":
            return groups[-1].end
        for group in reversed(groups):  # Nova: never directly after a toolResult or an image
            if self._allowed_after(group.last_kind):
                return group.end
        return 0

    def _allowed_after(self, kind: str) -> bool:
        return self.rules.family != "nova" or kind not in ("tool_result", "image")

    def _anchor(self, request: Request) -> Checkpoint | None:
        prepared, rules = request.prepared, self.rules
        end = prepared.system_end if "system" in rules.cachable else 0
        field = "system"
        if end == prepared.tools_end:  # no system prompt: the tools alone, where allowed
            end, field = (prepared.tools_end, "tools") if "tools" in rules.cachable else (0, "")
        if not end or prepared.cum[end] < rules.min_tokens:
            return None
        ttl = self.ttl_s
        if 3600.0 in rules.ttls_s and len(self._anchor_gaps) >= 3:
            gaps = sorted(self._anchor_gaps)
            if gaps[len(gaps) // 2] > 300.0:
                ttl = 3600.0
        return Checkpoint(end, ttl, field)

    def place(self, request: Request) -> list[Checkpoint]:
        conv_id = request.prepared.conversation.id
        now = request.time_s
        self._resolve(now, conv_id)
        if request.number == 0:
            if self._anchor_last_use is not None:
                self._anchor_gaps.append(now - self._anchor_last_use)
            self._anchor_last_use = now
        points: list[Checkpoint] = []
        anchor = self._anchor(request)
        if anchor is not None:
            points.append(anchor)
        tail = self._tail_boundary(request)
        prev = self._prev_tail.get(conv_id, 0)
        signature = self._signature(request)
        p_waste = self.waste_probability(signature)
        write_tail = p_waste is None or p_waste <= self.skip_threshold
        if prev and prev <= tail and (not write_tail or tail - prev > self.rules.lookback_blocks):
            if anchor is None or prev > anchor.boundary:
                points.append(Checkpoint(prev, self.ttl_s))  # bridge / read-only point
        if write_tail and tail and (anchor is None or tail > anchor.boundary) and tail != prev:
            points.append(Checkpoint(tail, self.ttl_s))
            self._prev_tail[conv_id] = tail
            # Spare slots: the message ends just before the tail (newest first). They cost nothing — the write is
            # billed once, up to the tail — and give conversations that share this history an entry at each
            # message boundary they have in common (rule 3's lookback only finds boundaries that hold an entry).
            floor = max(prev, anchor.boundary if anchor is not None else 0)
            taken = {p.boundary for p in points}
            for group in reversed(request.groups[:-1]):
                if len(points) >= self.rules.max_points or group.end <= floor:
                    break
                if group.end not in taken and self._allowed_after(group.last_kind):
                    points.append(Checkpoint(group.end, self.ttl_s))
        points = sorted(points[: self.rules.max_points], key=lambda p: p.boundary)
        # Outcome of this request's tail write is learned when the conversation's next request comes (or not).
        self._pending[conv_id] = (now, signature)
        heapq.heappush(self._deadlines, (now + self.ttl_s, conv_id))
        return points

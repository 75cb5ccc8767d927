"""``hindsight``: a reference placement that knows when each conversation's next request comes (no real client can).

It shows how much room is left above a strategy: the same points as a careful placement, but every write decided
with the future known (the idea of the "foresight" bound in bench/last_request.py, extended to TTLs):

- **anchor** at the end of the tools + system prefix when that prefix reaches the model's minimum and the tail
  is written, with the tail's TTL;
- **tail** at the end of the request's last message (the last one a point may follow), written only when the
  conversation's next request comes within a TTL the model offers: 5 minutes when it comes within 300 s, else
  1 hour when it comes within 3,600 s; the final request of a conversation, or one whose successor comes later,
  writes nothing (a write nobody reads costs more than plain input);
- **bridge**: the previous request's tail as a read-only point when it lies beyond the ~20-block lookback, or
  when the tail writes nothing; a conversation's only call keeps its tail point (at 5 minutes) so it can read a
  prefix other conversations cached.

It is a reference row, not an exact optimum (an exact one is a search over every point set of every request); on
the sweep it is the cheapest row (bench/README.md, "Replay sweep").
"""

from __future__ import annotations

from promptcache._pricing import ModelPrice

from ._models import CacheRules
from ._prepare import Request
from ._simulator import Checkpoint
from ._strategies import Strategy, last_allowed_boundary

__all__ = ["HindsightStrategy"]


class HindsightStrategy(Strategy):
    """See the module docstring. Uses ``Request.next_time_s`` (set by the scheduler) and ``Request.is_last``."""

    name = "hindsight"
    description = "reference: knows each conversation's next request time (no real client can)"

    def __init__(self, rules: CacheRules, price: ModelPrice | None = None, ttl_s: float = 300.0) -> None:
        super().__init__(rules, price, ttl_s)
        self._prev: dict[str, int] = {}  # conversation id -> boundary of its last written tail

    def forget(self, conversation_id: str) -> None:
        """Drop what is kept for a finished conversation."""
        self._prev.pop(conversation_id, None)

    def _tail_ttl(self, request: Request) -> float | None:
        if request.is_last or request.next_time_s is None:
            return None
        gap = request.next_time_s - request.time_s
        for ttl in sorted(self.rules.ttls_s):
            if gap <= ttl:
                return ttl
        return None

    def place(self, request: Request) -> list[Checkpoint]:
        rules = self.rules
        if not rules.supports_cache:
            return []
        prepared, cid = request.prepared, request.prepared.conversation.id
        points: dict[int, Checkpoint] = {}
        longest = max(rules.ttls_s)
        anchor = prepared.system_end if prepared.system_end > prepared.tools_end else prepared.tools_end
        nova = rules.family == "nova"
        if anchor == prepared.tools_end and (nova or "tools" not in rules.cachable):
            anchor = 0
        ttl = self._tail_ttl(request)
        if ttl is not None and anchor and prepared.cum[anchor] >= rules.min_tokens and anchor < request.n_blocks:
            anchor_ttl = ttl
            points[anchor] = Checkpoint(anchor, anchor_ttl, "system" if anchor == prepared.system_end else "tools")
        tail = last_allowed_boundary(request, rules)
        prev = self._prev.get(cid, 0)
        if prev and prev <= request.n_blocks and prev not in points:
            if ttl is None or tail - prev > rules.lookback_blocks:
                points[prev] = Checkpoint(prev, min(ttl or longest, longest))
        if ttl is not None and tail and tail not in points:
            points[tail] = Checkpoint(tail, ttl)
            self._prev[cid] = tail
        elif ttl is None and request.number == 0 and request.is_last and tail and tail not in points:
            points[tail] = Checkpoint(tail, min(rules.ttls_s))  # a one-call conversation: reads what others cached
        ordered = sorted(points.values(), key=lambda p: p.boundary)
        if len(ordered) > rules.max_points:  # keep the first (the anchor) and the last ones; one point: the tail
            keep_tail = rules.max_points - 1
            ordered = ordered[-1:] if keep_tail == 0 else ordered[:1] + ordered[-keep_tail:]
        for i in range(len(ordered) - 2, -1, -1):  # TTLs non-increasing along the prompt
            if ordered[i].ttl_s < ordered[i + 1].ttl_s:
                ordered[i] = Checkpoint(ordered[i].boundary, ordered[i + 1].ttl_s, ordered[i].field)
        return ordered

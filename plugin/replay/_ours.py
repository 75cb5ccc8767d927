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
   writing with TTL ``T`` instead of sending plain input gains ``(input - write_T) + P(T) * (write_X - read)``
   per token, ``X`` being the TTL the traffic as a whole is written with (the same rule on every outcome pooled;
   5 minutes until that is known): on reuse the next request reads instead of writing those tokens itself. It
   picks the best of: no write (gain 0), 5 minutes, 1 hour (where the model offers it). For Claude with ``X`` = 5
   minutes: write at 5 m when ``P(5m) > 0.22``, at 1 h when ``P(1h) > 0.87`` and better; with ``X`` = 1 hour
   (reuse mostly comes after 5 minutes), at 1 h when ``P(1h) > 0.53``. Until a signature has 10 outcomes of its own it follows the outcomes of all
   signatures pooled (once those are 10), and before that it writes at 5 minutes like everyone else. Nova
   writes cost the same as input, so there it always writes.

TTLs stay non-increasing along the prompt (the anchor takes at least the tail's TTL). Nova: no tool points, and no
point directly after a ``toolResult`` or an image (the tail moves back to the last message end where one is
allowed).

Rules 1-3 are not re-implemented here: each request's Converse messages go to the real
``promptcache.cache_points.AnchoredTailStrategy`` (what ``CachePointChatBedrockConverse`` places by default), as
``{"role", "content"}`` dicts with one placeholder block per content block (the lookback counts blocks) ending in a
block of the message's last kind (its placement rules see how the message ends), token counts injected. This
module adds rule 4 on top: when it decides not to write, only the anchor and the previous tail (read-only) remain.
"""

from __future__ import annotations

import heapq
from collections import defaultdict
from typing import Any, cast

from promptcache._pricing import ModelPrice
from promptcache.cache_points import AnchoredTailStrategy as _Placement
from promptcache.cache_points import CachePointPlacement, CacheStrategyConfig
from promptcache.cache_points._anchored_tail import AnchoredTailPlan

from ._models import CacheRules, model_info
from ._prepare import Group, Request
from ._simulator import Checkpoint
from ._strategies import Strategy

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
        self._prev_tail: dict[str, tuple[int, int]] = {}  # conversation id -> (message, boundary) of its last tail
        self._info = model_info(rules)  # the table entry with the replay's rules (no warning for a user model)
        self._messages: dict[str, list[dict[str, Any]]] = {}
        self._tokens: dict[int, int] = {}  # id(message dict) -> tokens
        self._system_tokens = 0
        self._pending: dict[object, tuple[float, object]] = {}  # key -> (time of write, stats key)
        self._deadlines: list[tuple[float, int, object]] = []
        self._seq = 0
        self._stats: dict[object, _ReuseStats] = defaultdict(_ReuseStats)
        self._pooled = _ReuseStats()  # every outcome of every signature: the prior of a signature still learning

    def forget(self, conversation_id: str) -> None:
        """Drop the placeholder messages kept for a finished conversation (its learned reuse stays)."""
        for message in self._messages.pop(conversation_id, ()):
            self._tokens.pop(id(message), None)
        self._prev_tail.pop(conversation_id, None)

    # -- learning (past only) -------------------------------------------------------------------------------
    def _observe(self, now_s: float, key: object) -> None:
        """Close outcomes whose horizon passed, then the pending outcome of ``key`` (it is being used now)."""
        while self._deadlines and self._deadlines[0][0] < now_s:
            deadline, _, k = heapq.heappop(self._deadlines)
            pending = self._pending.get(k)
            if pending is not None and pending[0] + self._horizon == deadline:
                self._stats[pending[1]].add(None)  # no use within the horizon
                self._pooled.add(None)
                del self._pending[k]
        pending = self._pending.pop(key, None)
        if pending is not None:
            self._stats[pending[1]].add(now_s - pending[0])
            self._pooled.add(now_s - pending[0])

    def _expect_use(self, now_s: float, key: object, stats_key: object) -> None:
        self._pending[key] = (now_s, stats_key)
        self._seq += 1
        heapq.heappush(self._deadlines, (now_s + self._horizon, self._seq, key))

    def choose_ttl(self, stats_key: object) -> float | None:
        """The TTL (seconds) to write with for ``stats_key``, or ``None`` for no write (rule 4)."""
        stats = self._stats.get(stats_key)
        price = self.price
        if stats is None or stats.total < _MIN_OBSERVATIONS:
            stats = self._pooled
        if price is None or stats.total < _MIN_OBSERVATIONS:
            return 300.0
        # what a reuse saves: the next request reads instead of writing those tokens itself, at the TTL the
        # traffic as a whole is written with (the pooled choice; 5 minutes until that is known)
        pooled = (
            self._best_ttl(self._pooled, price.write_5m - price.read)
            if self._pooled.total >= _MIN_OBSERVATIONS
            else None
        )
        return self._best_ttl(stats, price.write(pooled or 300.0) - price.read)

    def _best_ttl(self, stats: _ReuseStats, saved_on_reuse: float) -> float | None:
        price = self.price
        assert price is not None
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

    # -- placement (rules 1-3: promptcache.cache_points.AnchoredTailStrategy) --------------------------------------
    def _message(self, group: Group, tokens: int) -> dict[str, Any]:
        last = _LAST_BLOCK.get(group.last_kind, _TEXT)
        message = {"role": group.role, "content": [_TEXT] * (group.end - group.start - 1) + [last]}
        self._tokens[id(message)] = tokens
        return message

    def _count(self, message: Any) -> int:
        if message.get("role") == "system":
            return self._system_tokens
        return self._tokens[id(message)]

    def _plan(self, request: Request) -> tuple[AnchoredTailPlan, bool]:
        """The placement for ``request`` and whether the anchor goes on the tools (no system prompt)."""
        prepared, rules = request.prepared, self.rules
        cid = prepared.conversation.id
        messages = self._messages.get(cid)
        if messages is None:
            messages = self._messages[cid] = [
                self._message(g, t) for g, t in zip(prepared.groups, prepared.group_tokens)
            ]
        messages = messages[: len(request.groups)]
        last = request.groups[-1]
        if last.end != prepared.groups[len(request.groups) - 1].end:  # a group this request cuts
            messages[-1] = self._message(last, prepared.cum[last.end] - prepared.cum[last.start])
        has_system = prepared.system_end > prepared.tools_end
        tool_tokens = prepared.cum[prepared.tools_end]
        tools_anchor = (
            not has_system
            and prepared.tools_end > 0
            and _Placement.tools_point_wanted(self._info, tool_tokens, False, rules.max_points)
        )
        self._system_tokens = prepared.cum[prepared.system_end] - tool_tokens
        prev = self._prev_tail.get(cid)
        previous = (
            [CachePointPlacement(prev[0])]
            if prev is not None and prev[0] < len(request.groups) and request.groups[prev[0]].end == prev[1]
            else None
        )
        config = CacheStrategyConfig(
            self._info,
            (prepared.system_text or "system") if has_system else None,
            messages,
            previous_placements=previous,
            count_tokens=self._count,
            max_points=rules.max_points - int(tools_anchor),
            prefix_tokens=tool_tokens,
        )
        try:
            return _Placement(config).plan(), tools_anchor
        finally:
            if messages[-1] is not self._messages[cid][len(messages) - 1]:
                del self._tokens[id(messages[-1])]  # a one-off message: its id may be reused once it is freed

    def place(self, request: Request) -> list[Checkpoint]:
        prepared, groups = request.prepared, request.groups
        conv_id = prepared.conversation.id
        now = request.time_s
        plan, tools_anchor = self._plan(request)
        anchor_b, anchor_field = (
            (prepared.system_end, "system")
            if plan.system_point
            else (prepared.tools_end, "tools")
            if tools_anchor
            else (0, "")
        )
        anchor_key = ("anchor", prepared.hashes[anchor_b]) if anchor_b else None
        if anchor_key is not None:
            self._observe(now, anchor_key)
        self._observe(now, ("tail", conv_id))

        tail = groups[plan.tail].end if plan.tail is not None else 0
        prev = groups[plan.previous_tail].end if plan.previous_tail is not None else 0
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
        if tail_ttl is None:
            if prev:
                points.append(Checkpoint(prev, msg_ttl))  # no write (rule 4) or nothing new: read-only point
        else:
            points.extend(Checkpoint(groups[i].end, msg_ttl) for i in plan.indices)  # bridge, spares, tail
            self._prev_tail[conv_id] = (cast(int, plan.tail), tail)  # a tail TTL is chosen only when there is a tail
        if anchor_key is not None:
            self._expect_use(now, anchor_key, anchor_key)
        self._expect_use(now, ("tail", conv_id), signature)
        return sorted(points[: self.rules.max_points], key=lambda p: p.boundary)


_TEXT: dict[str, Any] = {"text": "."}  # a non-blank stand-in (tokens are injected): no point follows blank text
# The last block of a placeholder message, by the replay's block kind: what the placement rules look at.
_LAST_BLOCK: dict[str, dict[str, Any]] = {
    "tool_result": {"toolResult": {}},
    "image": {"image": {}},
    "reasoning": {"reasoningContent": {}},
    "tool_use": {"toolUse": {}},
}

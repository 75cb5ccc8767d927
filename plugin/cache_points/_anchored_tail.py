"""``AnchoredTailStrategy``: the placement for growing agent conversations that the replay measured cheapest.

In an agent loop each request is the previous request plus the model's reply plus a tool result or a user message.
Under Bedrock's rules the cheapest a request can be is: read everything the previous request sent (0.1x input for
Claude), write only what is new (1.25x), and write nothing that no later request reads. The points that do it:

1. **anchor** -- a point at the end of the system prompt (or, with no system prompt, of the tool specs: decided by
   `AnchoredTailStrategy.tools_point_wanted`, since the tools sit outside the messages), the prefix shared
   by every conversation of the same agent, so a new conversation starts with a read. Only when that whole prefix
   (tools + system, ``prefix_tokens`` + the system prompt's tokens) reaches the model's minimum: a smaller point
   caches nothing and spends a slot.
2. **tail** -- a point at the end of the request, so the next request reads all of it. Where Bedrock forbids a
   point there (Nova after a ``toolResult`` or an image; any model after a reasoning block), the tail moves back to
   the last message end that allows one -- an assistant message too (after a ``toolUse`` on Nova): unlike Roo-Code's
   multi-point rule, points are not limited to user messages. Placed even while the prefix up to it is under the
   minimum: Bedrock accepts such a point and caches nothing, and every other point would sit on a shorter prefix,
   so it takes no slot that could cache (the replay places it the same way).
3. **bridge** -- a point at the previous request's tail when the new tail lies more than `LOOKBACK_BLOCKS`
   content blocks after it (many parallel tool calls): Bedrock looks for a cached prefix only ~20 blocks back from
   each point, so without it the previous write would not be found.
4. **spare slots** go to the message ends just before the tail (newest first, never before the previous tail):
   they cost nothing extra (the write is billed once, up to the tail) and give conversations that share this
   history an entry at every message boundary they have in common.

With fewer slots than needed (the caller's own points count), the priority is tail, bridge, anchor, spares; a
message that already ends with the caller's point is placed on without spending a slot.

Not here: the replay's rule 4 (choose the TTL, or no write at all, from observed reuse delays per kind of request).
It needs timing statistics gathered across requests and conversations (when each write was next used), i.e. a
shared read-modify-write on every call that several workers would race on; the wrapper always writes with the
configured TTL. The replay (``promptcache replay``, strategy ``anchored-tail``) runs this class for the placement
and layers rule 4 on top; on tau-bench with 10-120 s between requests rule 4 never changes a decision (every
request reads), it matters only when requests come more than 5 minutes apart (see bench/README.md "## Replay").

The replay's figures on tau-bench airline (200 conversations, 2,454 requests, Claude Sonnet 4, 10 s apart): this
placement costs 17.5% of no caching, ``MultiPointStrategy`` 29.1%; on Nova Pro 32.7% against 46.2%.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from promptcache.cache_points._model_info import ModelInfo
from promptcache.cache_points._strategy import CachePointPlacement, CacheResult, CacheStrategy, is_cache_point

__all__ = ["LOOKBACK_BLOCKS", "AnchoredTailPlan", "AnchoredTailStrategy"]

#: How far back from a point Bedrock looks for a cached prefix, in content blocks. Anthropic "Prompt caching": "the
#: system automatically checks for cache hits at all previous content block boundaries (up to approximately 20
#: blocks before your explicit breakpoint)"; Bedrock's Claude models share the mechanism. Same value as the replay's.
LOOKBACK_BLOCKS = 20


@dataclass(frozen=True)
class AnchoredTailPlan:
    """What `AnchoredTailStrategy.plan` decided (message indices into ``config.messages``).

    Attributes:
        system_point: the anchor follows the system prompt.
        tail: the tail's message, or ``None`` (no message allows a point).
        previous_tail: the previous request's tail found in this history (rebased by fingerprint), or ``None``.
        bridge: ``previous_tail`` when it needs its own point (more than the lookback before ``tail``), else ``None``.
        spares: extra points just before the tail, newest first.
    """

    system_point: bool = False
    tail: int | None = None
    previous_tail: int | None = None
    bridge: int | None = None
    spares: tuple[int, ...] = field(default_factory=tuple)

    @property
    def indices(self) -> list[int]:
        """All message points, ascending."""
        points = {i for i in (self.tail, self.bridge, *self.spares) if i is not None}
        return sorted(points)


class AnchoredTailStrategy(CacheStrategy):
    """Anchor + moving tail + bridge + spare slots (see the module docstring).

    Usage::

        result = AnchoredTailStrategy(CacheStrategyConfig(model_info, system, messages, previous_placements=stored,
                                                          prefix_tokens=tool_tokens)).determine_optimal_cache_points()
        stored = result.placements   # the tail is the last one

    ``previous_placements`` are read only for the previous tail (the highest index): it is used where its
    fingerprint still matches, else at the latest earlier message with that fingerprint (history truncated or
    summarised), else forgotten.
    """

    lookback_blocks = LOOKBACK_BLOCKS

    @classmethod
    def tools_point_wanted(cls, model_info: ModelInfo, tool_tokens: int, has_system_prompt: bool, budget: int) -> bool:
        """The anchor on the tools: only without a system prompt (else the system point covers the tools), where
        tools are cachable (never Nova), when the specs reach the minimum and a slot stays free for the tail."""
        return (
            not has_system_prompt
            and budget >= 2
            and "tools" in model_info.cachable_fields
            and not model_info.is_nova
            and tool_tokens >= model_info.min_tokens_per_cache_point
        )

    def determine_optimal_cache_points(self) -> CacheResult:
        """The `CacheResult` of `plan` (placements ascending; ``tokens_covered`` as Roo-Code's documentation defines it)."""
        plan = self.plan()
        return self.format_result(plan.system_point, self.placements_for(plan.indices))

    def plan(self) -> AnchoredTailPlan:
        """Decide anchor, tail, bridge and spares (no copies made; the replay calls this directly)."""
        config, info = self.config, self.model_info
        if not config.use_prompt_cache or not info.supports_prompt_cache or not config.messages:
            return AnchoredTailPlan()
        left = self.point_budget()
        base = config.prefix_tokens + self.system_token_count
        minimum = info.min_tokens_per_cache_point
        want_anchor = bool(config.system_prompt) and "system" in info.cachable_fields and base >= minimum
        tail = None
        if "messages" in info.cachable_fields:
            tail = next((i for i in range(len(config.messages) - 1, -1, -1) if self.point_allowed_after(i)), None)
        if tail is None or left == 0:
            return AnchoredTailPlan(system_point=want_anchor and left > 0)
        left -= self._slot_cost(tail)
        previous = self._previous_tail(tail)
        bridge = None
        if (
            previous is not None
            and previous != tail
            and left >= self._slot_cost(previous)
            and self.blocks_between(previous + 1, tail) > self.lookback_blocks
        ):
            bridge, left = previous, left - self._slot_cost(previous)
        anchor = want_anchor and left > 0
        left -= int(anchor)
        spares: list[int] = []
        if previous != tail:
            floor = -1 if previous is None else previous
            for index in range(tail - 1, floor, -1):
                if self.point_allowed_after(index) and left >= self._slot_cost(index):
                    spares.append(index)
                    left -= self._slot_cost(index)
                if left <= 0:
                    break
        return AnchoredTailPlan(anchor, tail, previous, bridge, tuple(spares))

    # -- helpers -------------------------------------------------------------------------------------------
    def blocks_between(self, start: int, end: int) -> int:
        """Content blocks of messages ``start..end`` inclusive (cache points excluded; a string is one block)."""
        total = 0
        for message in self.config.messages[start : end + 1]:
            content = message.get("content")
            if isinstance(content, str):
                total += 1 if content else 0
            elif type(content) is list or isinstance(content, Sequence):
                for b in content:  # a plain dict without the key is no point: no call for it
                    if (type(b) is dict and "cachePoint" not in b) or not is_cache_point(b):
                        total += 1
        return total

    def _slot_cost(self, index: int) -> int:
        """0 when message ``index`` already ends with the caller's own point (no block is added), else 1."""
        content = self.config.messages[index].get("content")
        if type(content) is not list and not isinstance(content, Sequence):
            return 1
        return 0 if content and is_cache_point(content[-1]) else 1

    def placements_for(self, indices: Sequence[int]) -> list[CachePointPlacement]:
        """Placements for ascending ``indices``, ``tokens_covered`` from the previous point (Roo-Code's rule)."""
        out, start = [], 0
        for index in indices:
            out.append(CachePointPlacement._message(index, self.tokens_between(start, index), self.fingerprint(index)))
            start = index + 1
        return out

    def _previous_tail(self, tail: int) -> int | None:
        previous = [p for p in self.stored_placements if p.type == "message"]
        if not previous:
            return None
        last = max(previous, key=lambda p: p.index)
        index: int = last.index
        if (
            index <= tail
            and self.point_allowed_after(index)
            and (last.fingerprint is None or self.fingerprint(index) == last.fingerprint)
        ):
            return index
        if last.fingerprint is None:
            return None
        for i in range(min(index, tail), -1, -1):  # messages only shift left when history is cut
            if self.point_allowed_after(i) and self.fingerprint(i) == last.fingerprint:
                return i
        return None

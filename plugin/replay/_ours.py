"""The plugin's own placements in the replay: ``anchored-tail`` and ``multi-point`` run the shipped strategy objects.

Each request's Converse messages go to the class ``CachePointChatBedrockConverse`` and ``BedrockCachePoints`` use
(``promptcache.cache_points.AnchoredTailStrategy`` by default, ``MultiPointStrategy`` with
``strategy="multi-point"``), set up the way ``promptcache.cache_points.place_cache_points`` sets it up for the
wrapper:

- the tool specs get a point when the strategy's own ``tools_point_wanted`` says so (it takes one slot first);
- the strategy gets the remaining slots, the tools' tokens as ``prefix_tokens``, the TTL as ``ttl``, and the
  placements it returned for the conversation's previous request as ``previous_placements`` (the wrapper keeps
  them per conversation in its ``PlacementStore``; a replayed conversation is one LangGraph thread);
- its ``system_cache_point`` and message ``placements`` become checkpoints at the end of the system prompt and of
  those messages, all with the configured TTL (``cache_ttl``: 5 minutes unless ``ttl_s`` is 3,600).

Messages are ``{"role", "content"}`` dicts with one placeholder block per content block (the lookback counts
blocks), the last one of the message's last kind (the placement rules see how a message ends: no point after
reasoning, on Nova none after a tool result or an image), with the replay's token counts. Nothing is added on
top: the rows price the code that ships (tests/replay/test_shipped_placements.py compares them with the wrapper's
own placements on the same requests).

Per request, nothing walks or copies the conversation in Python: each message's placeholder is made once per
conversation, and one ``ScannedMessages`` per conversation holds the current request's first ones (a request is a
prefix of its conversation: the next request only appends its new messages); they go over as ``ScannedMessages``,
with their token counts on it, the way ``place_cache_points`` hands over the messages its one walk checked and
counted; and the strategy class runs without building the result's message copies
(``_placer``), which the replay does not read.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

from promptcache._pricing import ModelPrice
from promptcache.cache_points import AnchoredTailStrategy as _AnchoredTail
from promptcache.cache_points import CachePointPlacement, CacheStrategy, CacheStrategyConfig, MultiPointStrategy
from promptcache.cache_points._request_scan import ScannedMessages

from ._models import CacheRules, model_info
from ._prepare import Group, PreparedConversation, Request
from ._simulator import Checkpoint
from ._strategies import Strategy

__all__ = ["AnchoredTailStrategy", "MultiPointAdapter", "ShippedPlacement"]


class ShippedPlacement(Strategy):
    """Runs the plugin strategy class ``strategy_cls`` per request (see the module docstring).

    Args:
        rules: the model's cache rules.
        price: unused (the shipped strategies do not weigh prices).
        ttl_s: TTL of every point placed, seconds (300, or 3,600 where the model offers it).
    """

    strategy_cls: type[CacheStrategy] = _AnchoredTail

    def __init__(self, rules: CacheRules, price: ModelPrice | None = None, ttl_s: float = 300.0) -> None:
        super().__init__(rules, price, ttl_s)
        self._info = model_info(rules)  # the table entry with the replay's rules (no warning for a user model)
        self._ttl = "1h" if ttl_s >= 3600 else None
        self._previous: dict[str, list[CachePointPlacement]] = {}  # conversation id -> its stored placements
        self._messages: dict[str, list[dict[str, Any]]] = {}  # conversation id -> a placeholder per group
        # conversation id -> the previous request's messages and their token counts (the list on ``tokens``)
        self._held: dict[str, tuple[ScannedMessages, list[int]]] = {}
        self._placer = _placer(self.strategy_cls)

    def forget(self, conversation_id: str) -> None:
        """Drop the placeholder messages and placements kept for a finished conversation."""
        self._messages.pop(conversation_id, None)
        self._held.pop(conversation_id, None)
        self._previous.pop(conversation_id, None)

    @staticmethod
    def _message(group: Group) -> dict[str, Any]:
        return _placeholder(group.role, group.end - group.start, group.last_kind)

    def _request_messages(self, cid: str, prepared: PreparedConversation, n: int) -> tuple[ScannedMessages, list[int]]:
        """The placeholders of the conversation's first ``n`` groups, with their token counts, as the
        ``ScannedMessages`` the strategy reads: the previous request's, trimmed or extended (a request is a prefix
        of its conversation, so only the groups after the previous request's last one are added; that last one is
        put back, as the previous request may have cut it)."""
        every = self._messages.get(cid)
        if every is None:
            every = self._messages[cid] = [self._message(g) for g in prepared.groups]
        held = self._held.get(cid)
        if held is None:
            messages = ScannedMessages((), 0)  # the replay's own placeholders: valid, no point of a caller's
            tokens: list[int] = []
            messages.tokens = tokens
            held = self._held[cid] = (messages, tokens)
        messages, tokens = held
        keep = max(min(len(messages), n) - 1, 0)
        messages[keep:] = every[keep:n]
        tokens[keep:] = prepared.group_tokens[keep:n]
        return messages, tokens

    def place(self, request: Request) -> list[Checkpoint]:
        prepared, rules, info = request.prepared, self.rules, self._info
        if not rules.supports_cache or not request.groups:
            return []
        cid = prepared.conversation.id
        n = len(request.groups)
        messages, tokens = self._request_messages(cid, prepared, n)
        last = request.groups[-1]
        if last.end != prepared.groups[n - 1].end:  # a group this request cuts
            messages[-1] = self._message(last)
            tokens[-1] = prepared.cum[last.end] - prepared.cum[last.start]
        has_system = prepared.system_end > prepared.tools_end
        tool_tokens = prepared.cum[prepared.tools_end]
        budget = min(rules.max_points, 4)
        tools_point = prepared.tools_end > 0 and self.strategy_cls.tools_point_wanted(
            info, tool_tokens, has_system, budget
        )
        config = CacheStrategyConfig(
            info,
            (prepared.system_text or "system") if has_system else None,
            messages,
            previous_placements=self._previous.get(cid),
            max_points=budget - int(tools_point),
            ttl=self._ttl,
            prefix_tokens=tool_tokens,
        )
        result = self._placer(config, prepared.cum[prepared.system_end] - tool_tokens).determine_optimal_cache_points()
        self._previous[cid] = list(result.placements)
        points: dict[int, Checkpoint] = {}
        if tools_point:
            points[prepared.tools_end] = Checkpoint(prepared.tools_end, self.ttl_s, "tools")
        if result.system_cache_point and has_system:
            points[prepared.system_end] = Checkpoint(prepared.system_end, self.ttl_s, "system")
        for placement in result.placements:
            if 0 <= placement.index < n:
                boundary = request.groups[placement.index].end
                points[boundary] = Checkpoint(boundary, self.ttl_s)
        return sorted(points.values(), key=lambda p: p.boundary)


@functools.lru_cache(maxsize=4096)
def _placeholder(role: str, blocks: int, last_kind: str) -> dict[str, Any]:
    """The placeholder message of a group of ``blocks`` blocks ending with a block of ``last_kind``: one object per
    shape, shared by every message of that shape (the strategies only read the messages; the conversations of a
    session, such as those a log in reverse order starts, each need one per message). Up to 4,096 shapes are kept
    (a capacity, not measured: a shape is a role, a block count and a kind)."""
    last = _LAST_BLOCK.get(last_kind, _TEXT)
    return {"role": role, "content": [_TEXT] * (blocks - 1) + [last]}


def _placer(cls: type[CacheStrategy]) -> Callable[[CacheStrategyConfig, int], CacheStrategy]:
    """``cls`` as the replay runs it: its own placement decisions, on the replay's token counts (the messages'
    counts ride on the ``ScannedMessages``, as ``place_cache_points`` hands them over; the system prompt's is the
    replay's, not a count of its placeholder text), and without the result's message copies (the replay reads
    only the placements)."""

    class Replayed(cls):  # type: ignore[valid-type, misc]
        def __init__(self, config: CacheStrategyConfig, system_tokens: int) -> None:
            self._replay_system_tokens = system_tokens
            super().__init__(config)

        def _calculate_system_tokens(self) -> int:
            return self._replay_system_tokens if self.config.system_prompt else 0

        def apply_cache_points(self, placements: Sequence[CachePointPlacement]) -> list[dict[str, Any]]:
            return []

    Replayed.__name__ = Replayed.__qualname__ = cls.__name__
    return Replayed


class AnchoredTailStrategy(ShippedPlacement):
    """``anchored-tail``: ``promptcache.cache_points.AnchoredTailStrategy``, the wrappers' default."""

    name = "anchored-tail"
    description = "ours: shared anchor + moving tail, bridge past the lookback (the wrapper's default)"
    strategy_cls = _AnchoredTail


class MultiPointAdapter(ShippedPlacement):
    """``multi-point``: ``promptcache.cache_points.MultiPointStrategy`` (``strategy="multi-point"``)."""

    name = "multi-point"
    description = "MultiPointStrategy (Roo-Code's strategy, ported in promptcache.cache_points)"
    strategy_cls = MultiPointStrategy


_TEXT: dict[str, Any] = {"text": "."}  # a non-blank stand-in (tokens are injected): no point follows blank text
# The last block of a placeholder message, by the replay's block kind: what the placement rules look at.
_LAST_BLOCK: dict[str, dict[str, Any]] = {
    "tool_result": {"toolResult": {}},
    "image": {"image": {}},
    "reasoning": {"reasoningContent": {}},
    "tool_use": {"toolUse": {}},
}

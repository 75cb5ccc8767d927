"""``multi-point``: the project's ``MultiPointStrategy`` (``promptcache.cache_points``) driven by the replay.

This is an adapter, not a re-implementation: each request's Converse messages are handed to the real
``MultiPointStrategy`` as ``{"role", "content"}`` dicts (tool results travel in ``user`` messages, as Converse and
Roo-Code send them), with the token counts the replay already made (injected ``count_tokens``) and the placements
it returned for the previous request of the same conversation. Each message's content is its text as one block,
plus an empty marker block of the last block's type when that is a tool result, image or reasoning, so the
strategy's own placement rules (Nova: no point after a tool result) see how the message ends. Its placements
(message indices) and its ``system_cache_point`` become checkpoints at the end of that message or of the system
prompt.
"""

from __future__ import annotations

from typing import Any

from promptcache._pricing import ModelPrice

from ._models import CacheRules, model_info
from ._prepare import PreparedConversation, Request
from ._simulator import Checkpoint
from ._strategies import Strategy, StrategyUnavailable
from ._tokens import TokenCounter
from ._transcript import Block

__all__ = ["MultiPointAdapter"]


class MultiPointAdapter(Strategy):
    """Runs ``promptcache.cache_points.MultiPointStrategy`` per request (see the module docstring).

    Raises:
        StrategyUnavailable: ``promptcache.cache_points`` does not provide ``MultiPointStrategy`` yet.
    """

    name = "multi-point"
    description = "MultiPointStrategy (Roo-Code's strategy, ported in promptcache.cache_points)"

    def __init__(self, rules: CacheRules, price: ModelPrice | None = None, ttl_s: float = 300.0) -> None:
        super().__init__(rules, price, ttl_s)
        try:
            from promptcache.cache_points import CacheStrategyConfig, MultiPointStrategy
        except ImportError as exc:
            raise StrategyUnavailable(
                f"promptcache.cache_points.MultiPointStrategy is not installed in this build ({exc})"
            ) from None
        self._config_cls, self._strategy_cls = CacheStrategyConfig, MultiPointStrategy
        self._info = model_info(rules)  # the table entry with the replay's rules (no warning for a user model)
        self._previous: dict[str, Any] = {}
        self._messages: dict[str, list[dict[str, Any]]] = {}
        self._tokens: dict[int, int] = {}  # id(message dict) -> tokens
        self._by_text: dict[str, int] = {}
        self._counter: TokenCounter | None = None

    def _conversation_messages(self, prepared: PreparedConversation) -> list[dict[str, Any]]:
        cid = prepared.conversation.id
        cached = self._messages.get(cid)
        if cached is None:
            cached = []
            blocks = [b for m in prepared.conversation.messages for b in m.blocks]
            first = prepared.system_end
            for group, tokens in zip(prepared.groups, prepared.group_tokens):
                text = "\n".join(_block_text(b) for b in blocks[group.start - first : group.end - first])
                content: list[dict[str, Any]] = [{"type": "text", "text": text}]
                if group.last_kind in _MARKER_TYPES:  # let its placement rules see what the message ends with
                    content.append({"type": _MARKER_TYPES[group.last_kind]})
                message = {"role": group.role, "content": content}
                self._tokens[id(message)] = tokens
                self._by_text.setdefault(text, tokens)
                cached.append(message)
            self._by_text.setdefault(
                prepared.system_text, prepared.cum[prepared.system_end] - prepared.cum[prepared.tools_end]
            )
            self._messages[cid] = cached
        return cached

    def forget(self, conversation_id: str) -> None:
        """Drop the messages kept for a finished conversation."""
        for message in self._messages.pop(conversation_id, ()):
            self._tokens.pop(id(message), None)
            content = message.get("content") or [{}]
            self._by_text.pop(content[0].get("text", ""), None)
        self._previous.pop(conversation_id, None)

    def count_tokens(self, message: Any) -> int:
        """Tokens of a message dict the adapter built (or of any text / ``{"content": ...}``, counted afresh)."""
        known = self._tokens.get(id(message))
        if known is not None:
            return known
        text = message if isinstance(message, str) else (message or {}).get("content", "")
        if isinstance(text, list):
            text = "\n".join(str(b.get("text", "")) for b in text if isinstance(b, dict))
        elif not isinstance(text, str):
            text = str(text)
        if text in self._by_text:
            return self._by_text[text]
        if self._counter is None:
            self._counter = TokenCounter()
        return self._counter.text(text)

    def place(self, request: Request) -> list[Checkpoint]:
        prepared = request.prepared
        cid = prepared.conversation.id
        messages = list(self._conversation_messages(prepared)[: len(request.groups)])
        if request.groups[-1].end != prepared.groups[len(request.groups) - 1].end:  # a cut group: count afresh
            messages[-1] = dict(messages[-1])
        config = self._config_cls(
            model_info=self._info,
            system_prompt=prepared.system_text or None,
            messages=messages,
            use_prompt_cache=True,
            previous_placements=self._previous.get(cid),
            count_tokens=self.count_tokens,
        )
        result = self._strategy_cls(config).determine_optimal_cache_points()
        placements = list(getattr(result, "placements", None) or [])
        self._previous[cid] = placements
        points: dict[int, Checkpoint] = {}
        if getattr(result, "system_cache_point", False) and prepared.system_end > prepared.tools_end:
            points[prepared.system_end] = Checkpoint(prepared.system_end, self.ttl_s, "system")
        for placement in placements:
            kind = getattr(placement, "type", "message")
            if kind == "system":
                boundary, field = prepared.system_end, "system"
            elif kind == "tools":
                boundary, field = prepared.tools_end, "tools"
            else:
                index = int(placement.index)
                if not 0 <= index < len(request.groups):
                    continue  # a stale placement beyond this request: the real client would drop it too
                boundary, field = request.groups[index].end, "messages"
            if boundary > 0:
                points[boundary] = Checkpoint(boundary, self.ttl_s, field)
        return sorted(points.values(), key=lambda p: p.boundary)[: self.rules.max_points]


_MARKER_TYPES = {"tool_result": "tool_result", "image": "image", "reasoning": "thinking"}


def _block_text(block: Block) -> str:
    if block.kind == "tool_use":
        return f"{block.name}({block.text})"
    return block.text

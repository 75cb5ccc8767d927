"""Placing cache points on a whole Converse request (tools, system, messages), following Bedrock's rules.

Pure: takes the request's ``system`` blocks, ``messages`` and ``toolConfig.tools`` and returns copies with points
added. The rules (each one a documented Bedrock ``ValidationException`` or a silently wasted point):

- at most ``min(model max, 4)`` points in the request, counting the caller's own (manual) points;
  a request that already holds 4 gets none; one with 3 gets at most 1;
- a point is its own block, appended after a message's content (so never the first block, never inside a
  ``toolResult``), only after user messages, never directly after a reasoning block;
- tools get a point only when ``tools`` is a cachable field (never on Nova) and the tool specs alone reach the
  minimum; the system gets one when it alone reaches the minimum and holds no manual point;
- Nova: no point after a ``toolResult`` or an image (see ``CacheStrategy.is_placement_target``);
- TTLs never increase along tools -> system -> messages: an added ``1h`` point after a manual ``5m`` one becomes
  ``5m``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from promptcache.cache_points.model_info import BEDROCK_MAX_CACHE_POINTS, TTLS, ModelInfo
from promptcache.cache_points.multi_point import MultiPointStrategy
from promptcache.cache_points.strategy import (
    CachePointPlacement,
    CacheStrategy,
    CacheStrategyConfig,
    cache_point_block,
    is_cache_point,
)
from promptcache.cache_points.tokens import count_text_tokens, default_count_tokens

__all__ = ["ConversePlan", "count_manual_cache_points", "place_cache_points", "tool_spec_tokens"]


@dataclass
class ConversePlan:
    """The request with points placed (copies), and what was decided.

    Attributes:
        system / messages / tools: the new request parts (``tools`` is ``None`` when the request had none).
        placements: message placements (store them for the conversation's next request).
        system_point / tools_point: whether those got a point. manual_points: points the caller already had.
    """

    system: list[Any]
    messages: list[dict[str, Any]]
    tools: list[Any] | None
    placements: list[CachePointPlacement] = field(default_factory=list)
    system_point: bool = False
    tools_point: bool = False
    manual_points: int = 0

    @property
    def points_added(self) -> int:
        """Points this plan added (tools + system + messages)."""
        return len(self.placements) + int(self.system_point) + int(self.tools_point)


def count_manual_cache_points(system: Sequence[Any], messages: Sequence[Mapping[str, Any]],
                              tools: Sequence[Any] | None) -> int:
    """``cachePoint`` blocks already present in the request."""
    count = sum(map(is_cache_point, system)) + sum(map(is_cache_point, tools or []))
    for message in messages:
        content = message.get("content")
        if isinstance(content, list):
            count += sum(map(is_cache_point, content))
    return count


def tool_spec_tokens(tools: Sequence[Any]) -> int:
    """Estimated tokens of the tool specs (their JSON, tiktoken ``cl100k_base``)."""
    import orjson

    specs = [t for t in tools if not is_cache_point(t)]
    return count_text_tokens(orjson.dumps(specs, default=str, option=orjson.OPT_SORT_KEYS).decode()) if specs else 0


def place_cache_points(
    model_info: ModelInfo,
    system: Sequence[Any],
    messages: Sequence[Mapping[str, Any]],
    tools: Sequence[Any] | None = None,
    *,
    previous_placements: Sequence[Any] | None = None,
    ttl: str | None = None,
    count_tokens: Callable[[Any], int] | None = None,
    cache_tools: bool = True,
    strategy: type[CacheStrategy] = MultiPointStrategy,
) -> ConversePlan:
    """Add cache points to a Converse request (see the module docstring for the rules).

    Args:
        model_info: the model's limits.
        system: the request's ``system`` blocks. messages: its ``messages``. tools: ``toolConfig["tools"]`` or None.
        previous_placements: this conversation's stored placements (see ``MultiPointStrategy``).
        ttl: ``None``/``"5m"`` or ``"1h"``. count_tokens: per-message counter (default tiktoken, offline).
        cache_tools: ``False`` never adds a tools point.
        strategy: the :class:`CacheStrategy` subclass placing system + message points (``MultiPointStrategy`` by
            default here; the wrappers default to ``AnchoredTailStrategy``). Its ``tools_point_wanted`` decides the
            tools point; the tool specs' tokens (plus a system prompt that holds a manual point) reach it as
            ``prefix_tokens``.

    Returns:
        A :class:`ConversePlan`; the inputs are not modified.

    Raises:
        ValueError: ``ttl`` not allowed for the model; a malformed message (from ``CacheStrategyConfig``).
        TypeError: ``strategy`` is not a ``CacheStrategy`` subclass.
    """
    model_info.check_ttl(ttl)
    manual = count_manual_cache_points(system, messages, tools)
    budget = min(model_info.max_cache_points, BEDROCK_MAX_CACHE_POINTS) - manual
    new_tools = list(tools) if tools is not None else None
    if not model_info.supports_prompt_cache or budget <= 0 or not messages:
        return ConversePlan(list(system), [dict(m) for m in messages], new_tools, manual_points=manual)

    if not (isinstance(strategy, type) and issubclass(strategy, CacheStrategy)):
        raise TypeError(f"strategy must be a CacheStrategy subclass, got {strategy!r}")
    tools_point = False
    tool_tokens = tool_spec_tokens(new_tools) if new_tools else 0
    system_has_manual = any(map(is_cache_point, system))
    if (cache_tools and new_tools and not any(map(is_cache_point, new_tools))
            and strategy.tools_point_wanted(model_info, tool_tokens, bool(system), budget)):
        new_tools.append(cache_point_block(ttl))
        tools_point = True
        budget -= 1

    prefix_tokens = tool_tokens
    if system_has_manual:
        counter = count_tokens or default_count_tokens
        prefix_tokens += counter({"role": "system", "content": [b for b in system if not is_cache_point(b)]})
    config = CacheStrategyConfig(model_info, None if system_has_manual else (list(system) or None), list(messages),
                                 previous_placements=previous_placements, count_tokens=count_tokens,
                                 max_points=budget, ttl=ttl, prefix_tokens=prefix_tokens)
    result = strategy(config).determine_optimal_cache_points()
    new_system = list(system) if system_has_manual else result.system
    plan = ConversePlan(new_system, result.messages, new_tools, result.placements, result.system_cache_point,
                        tools_point, manual)
    if manual and ttl == "1h":
        _cap_ttls(plan, ours=_added_point_ids(plan, system, messages, tools))
    return plan


def _added_point_ids(plan: ConversePlan, system: Sequence[Any], messages: Sequence[Mapping[str, Any]],
                     tools: Sequence[Any] | None) -> set[int]:
    before = {id(b) for b in [*system, *(tools or [])] if is_cache_point(b)}
    for message in messages:
        content = message.get("content")
        if isinstance(content, list):
            before.update(id(b) for b in content if is_cache_point(b))
    after = [*(plan.tools or []), *plan.system, *(b for m in plan.messages for b in m["content"])]
    return {id(b) for b in after if is_cache_point(b) and id(b) not in before}


def _cap_ttls(plan: ConversePlan, ours: set[int]) -> None:
    """Lower added points' TTL where a manual point earlier in tools -> system -> messages has a shorter one."""
    cap = len(TTLS) - 1

    def visit(blocks: list[Any]) -> None:
        nonlocal cap
        for i, block in enumerate(blocks):
            if not is_cache_point(block):
                continue
            rank = TTLS.index(block["cachePoint"].get("ttl", "5m")) if block["cachePoint"].get("ttl", "5m") in TTLS else 0
            if id(block) in ours:
                if rank > cap:
                    blocks[i] = cache_point_block(TTLS[cap])
            else:
                cap = min(cap, rank)

    visit(plan.tools or [])
    visit(plan.system)
    for message in plan.messages:
        visit(message["content"])

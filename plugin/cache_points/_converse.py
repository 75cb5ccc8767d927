"""Placing cache points on a whole Converse request (tools, system, messages), following Bedrock's rules.

Pure: takes the request's ``system`` blocks, ``messages`` and ``toolConfig.tools`` and returns copies with points
added. The rules are those of `promptcache.cache_points._rules.PLACEMENT_RULES` (one table per model family,
each rule with its source); here they mean:

- the request is walked once (``scan_request``): shapes checked, a caller's ``cachePoint`` inside a
  ``toolResult``'s content moved right after the ``toolResult`` (where Bedrock takes it, as langchain-aws does for
  a ``ToolMessage``), every caller's point checked against the table, and the default counter's counts taken;
- at most ``min(model max, 4)`` points in the request, counting the caller's own (manual) points;
  a request that already holds 4 gets none; one with 3 gets at most 1;
- a point is its own block, appended after a message's content (so never the first block, never inside a
  ``toolResult``), never directly after a blocker of the model's family (reasoning; on Claude a non-PDF document;
  on Nova a ``toolResult`` or an image; see ``CacheStrategy.point_allowed_after``) nor after a blank text block;
- tools get a point only when ``tools`` is a cachable field (never on Nova) and the tool specs alone reach the
  minimum; the system gets one when it alone reaches the minimum and holds no manual point;
- TTLs never increase along tools -> system -> messages: an added ``1h`` point after a manual ``5m`` one becomes
  ``5m``, and an added point before a manual ``1h`` one becomes ``1h`` (see
  `promptcache.cache_points._manual_points.fit_added_ttls` for why raising beats dropping it);
- a caller's layout that already breaks a rule is refused with a ``ValueError`` naming the position and the rule:
  placement only adds blocks, so it cannot repair the caller's own.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import orjson

from promptcache.cache_points._manual_points import (
    check_points,
    count_manual_cache_points,
    fit_added_ttls,
    iter_cache_points,
)
from promptcache.cache_points._model_info import BEDROCK_MAX_CACHE_POINTS, ModelInfo
from promptcache.cache_points._multi_point import MultiPointStrategy
from promptcache.cache_points._prefix_counts import CountedMessages, Unkept, freeze
from promptcache.cache_points._request_scan import Point, scan_request
from promptcache.cache_points._strategy import (
    CachePointPlacement,
    CacheStrategy,
    CacheStrategyConfig,
    cache_point_block,
    is_cache_point,
)
from promptcache.cache_points._tokens import CountTokens, count_text_tokens, default_count_tokens

__all__ = ["ConversePlan", "count_manual_cache_points", "place_cache_points", "tool_spec_tokens"]


@dataclass
class ConversePlan:
    """The request with points placed (copies), and what was decided.

    Attributes:
        system / messages / tools: the new request parts (``tools`` is ``None`` when the request had none).
        placements: message placements (store them for the conversation's next request).
        system_point / tools_point: whether those got a point. manual_points: points the caller already had.
        counted: the kept messages and counts, for the conversation's next request (``previous_counts``); ``None``
            when not kept (a custom counter, a caller's point in the messages, a value orjson refuses).
    """

    system: list[object]
    messages: list[dict[str, object]]
    tools: list[object] | None
    placements: list[CachePointPlacement] = field(default_factory=list)
    system_point: bool = False
    tools_point: bool = False
    manual_points: int = 0
    counted: CountedMessages | None = None

    @property
    def points_added(self) -> int:
        """Points this plan added (tools + system + messages)."""
        return len(self.placements) + int(self.system_point) + int(self.tools_point)


def tool_spec_tokens(tools: Sequence[object]) -> int:
    """Estimated tokens of the tool specs (their JSON, tiktoken ``cl100k_base``)."""
    return _specs_tokens([t for t in tools if not is_cache_point(t)])


#: Tool lists whose counts `_specs_tokens` keeps (the most recent first): an agent sends the same tools on every
#: request, and a process serves a few agents. A capacity, not measured.
SPECS_MEMO_ENTRIES = 8

_specs_memo: list[tuple[object, int]] = []  # (a kept copy of the specs, `freeze`; their tokens)


def _specs_tokens(specs: Sequence[object]) -> int:
    """`tool_spec_tokens` of specs that hold no cache point.

    The counts of the last `SPECS_MEMO_ENTRIES` tool lists are kept with a copy of each list that this module owns
    (`promptcache.cache_points._prefix_counts.freeze`: compared strictly, so a spec changed in place since is
    counted again); specs that are compared equal to a kept copy take its count instead of their JSON being
    written and counted again.
    """
    if not specs:
        return 0
    memo = _specs_memo
    for kept, tokens in memo:
        try:
            if kept == specs:
                return tokens
        except Exception:  # noqa: BLE001, S112 - a value whose own __eq__ raises is counted
            continue
    try:
        text = orjson.dumps(specs, option=orjson.OPT_SORT_KEYS)
    except TypeError:  # a value JSON has no type for (bytes, ...): written by ``str``, counted every time
        return count_text_tokens(orjson.dumps(specs, default=str, option=orjson.OPT_SORT_KEYS).decode())
    tokens = count_text_tokens(text.decode())
    try:
        kept = freeze(list(specs))
    except Unkept:  # a subclass, a dataclass, ...: counted every time
        return tokens
    _specs_memo[:] = [(kept, tokens), *memo[: SPECS_MEMO_ENTRIES - 1]]
    return tokens


def place_cache_points(
    model_info: ModelInfo,
    system: Sequence[object] | str | None,
    messages: Sequence[Mapping[str, object]],
    tools: Sequence[object] | None = None,
    *,
    previous_placements: Sequence[CachePointPlacement | Mapping[str, object]] | None = None,
    ttl: str | None = None,
    count_tokens: CountTokens | None = None,
    cache_tools: bool = True,
    strategy: type[CacheStrategy] = MultiPointStrategy,
    previous_counts: CountedMessages | None = None,
) -> ConversePlan:
    """Add cache points to a Converse request (see the module docstring for the rules).

    Args:
        model_info: the model's limits.
        system: the request's ``system`` blocks (a list of dicts); a non-empty str is taken as one text block
            ``[{"text": system}]``, ``None`` or ``""`` as no system prompt (as ``CacheStrategyConfig.system_prompt``).
        messages: the request's ``messages``, a list of ``{"role", "content"}`` dicts.
        tools: ``toolConfig["tools"]`` (a list of dicts) or ``None``.
        previous_placements: this conversation's stored placements (see ``MultiPointStrategy``).
        ttl: ``None``/``"5m"`` or ``"1h"``. count_tokens: per-message counter (default tiktoken, offline).
        cache_tools: ``False`` never adds a tools point.
        strategy: the `CacheStrategy` subclass placing system + message points (``MultiPointStrategy`` by
            default here; the wrappers default to ``AnchoredTailStrategy``). Its ``tools_point_wanted`` decides the
            tools point; the tool specs' tokens (plus a system prompt that holds a manual point) reach it as
            ``prefix_tokens``.
        previous_counts: ``plan.counted`` of this conversation's previous request: with the default counter, the
            leading messages equal to that request's kept copy take its counts
            (`promptcache.cache_points._prefix_counts`); the placements are the same either way.

    Returns:
        A `ConversePlan`; the inputs are not modified. ``plan.system`` is always a list of blocks.

    Raises:
        ValueError: ``ttl`` not allowed for the model; a caller's layout Bedrock rejects (see
            `promptcache.cache_points._manual_points.check_manual_layout`); ``count_tokens`` returned something
            other than an int >= 0 (``count_tokens(system_prompt)`` / ``count_tokens(messages[i])`` named); a
            malformed message (from ``CacheStrategyConfig``).
        TypeError: ``system`` / ``tools`` / ``messages`` of the wrong shape (a str ``tools``, a dict ``system``, a
            non-dict block; the argument is named); ``strategy`` is not a ``CacheStrategy`` subclass.
    """
    model_info.check_ttl(ttl)
    system, tools = _system_blocks(system), _tool_list(tools)
    # the one walk: shapes, hoisting, point positions, and (default counter) each message's tokens
    scan = scan_request(
        model_info, system, messages, tools, count_tokens=count_tokens is None, previous=previous_counts
    )
    messages = scan.messages
    manual = check_points(model_info, scan.points)
    budget = min(model_info.max_cache_points, BEDROCK_MAX_CACHE_POINTS) - manual
    new_tools = list(tools) if tools is not None else None
    if not model_info.supports_prompt_cache or budget <= 0 or not messages:
        plan = ConversePlan(list(system), [dict(m) for m in messages], new_tools, manual_points=manual)
        plan.counted = scan.counted
        return plan

    if strategy not in _STRATEGIES_CHECKED:  # a class, once a subclass, stays one: checked once per class
        if not (isinstance(strategy, type) and issubclass(strategy, CacheStrategy)):
            raise TypeError(f"strategy must be a CacheStrategy subclass, got {strategy!r}")
        if len(_STRATEGIES_CHECKED) < _STRATEGIES_CHECKED_LIMIT:
            _STRATEGIES_CHECKED.add(strategy)
    tools_point = False
    # the scan found every caller's point: which parts hold one needs no second look at the blocks
    points = scan.points
    tools_have_manual = bool(points) and any(where.startswith("tools[") for where, _, _ in points)
    system_has_manual = bool(points) and any(where.startswith("system[") for where, _, _ in points)
    tool_tokens = 0
    if new_tools:
        tool_tokens = tool_spec_tokens(new_tools) if tools_have_manual else _specs_tokens(new_tools)
    if (
        cache_tools
        and new_tools
        and not tools_have_manual
        and strategy.tools_point_wanted(model_info, tool_tokens, bool(system), budget)
    ):
        new_tools.append(cache_point_block(ttl))
        tools_point = True
        budget -= 1

    prefix_tokens = tool_tokens
    if system_has_manual:
        counter = count_tokens or default_count_tokens
        counted = counter({"role": "system", "content": [b for b in system if not is_cache_point(b)]})
        prefix_tokens += CacheStrategy.checked_count(counted, "system_prompt")
    config = CacheStrategyConfig(
        model_info,
        None if system_has_manual else (list(system) or None),
        messages,
        previous_placements=previous_placements,
        count_tokens=count_tokens,
        max_points=budget,
        ttl=ttl,
        prefix_tokens=prefix_tokens,
    )
    result = strategy(config).determine_optimal_cache_points()
    new_system = list(system) if system_has_manual else result.system
    plan = ConversePlan(
        new_system,
        result.messages,
        new_tools,
        result.placements,
        result.system_cache_point,
        tools_point,
        manual,
        scan.counted,
    )
    if manual:
        fit_added_ttls(plan.system, plan.messages, plan.tools, _added_point_ids(plan, scan.points), ttl)
    return plan


#: Strategy classes `place_cache_points` found to be `CacheStrategy` subclasses, and how many it keeps at most (a
#: process uses one or two: a bound, not measured).
_STRATEGIES_CHECKED: set[type] = set()
_STRATEGIES_CHECKED_LIMIT = 64


def _short(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _dict_list(value: object, name: str, expected: str) -> list[object]:
    """``value`` as a list (not a str, bytes or a single dict); its entries are checked by ``scan_request``.

    Raises:
        TypeError: naming ``name`` (e.g. ``tools``) with what was ``expected``.
    """
    if type(value) is list:
        return list(value)
    if isinstance(value, (str, bytes, bytearray, Mapping)) or not isinstance(value, Sequence):
        raise TypeError(f"{name} must be {expected}, got {type(value).__name__}: {_short(value)}")
    return list(value)


def _system_blocks(system: object) -> list[object]:
    """``system`` as a list of blocks: ``None`` or ``""`` -> ``[]``, a non-empty str -> ``[{"text": system}]``."""
    if system is None:
        return []
    if isinstance(system, str):
        return [{"text": system}] if system else []
    return _dict_list(system, "system", "a list of Converse system blocks, a str or None")


def _tool_list(tools: object) -> list[object] | None:
    """``tools`` as a list (``None`` stays ``None``)."""
    if tools is None:
        return None
    return _dict_list(tools, "tools", "a list of Converse tool entries (toolConfig['tools']) or None")


def _added_point_ids(plan: ConversePlan, callers: Sequence[Point]) -> set[int]:
    """``id()`` of every cachePoint block in ``plan`` that is not one of the ``callers`` points (the inputs' blocks
    are shared with the plan, not copied, so identity tells them apart)."""
    before = {id(blocks[i]) for _, blocks, i in callers}
    return {
        id(blocks[i])
        for _, blocks, i in iter_cache_points(plan.system, plan.messages, plan.tools)
        if id(blocks[i]) not in before
    }

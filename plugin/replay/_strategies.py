"""Cache-point placement strategies compared by the replay, all on the same requests and the same simulator.

A strategy sees one ``Request`` at a time (its blocks, Converse messages and token counts, and — for stateful
strategies — what it placed earlier in the same conversation) and returns ``Checkpoint``s. Strategies never see the
future of a conversation.

- ``none``: no cache points (the baseline every cost is compared with).
- ``last-message``: one point at the end of the last message, moved forward each request — what
  langchain-anthropic's ``AnthropicPromptCachingMiddleware`` does (``cache_control`` on the last message).
- ``langchain-aws``: the placement ``ChatBedrockConverse`` applies when a call carries ``cache_control`` (set by
  langchain-aws' ``BedrockPromptCachingMiddleware``); see ``LangChainAwsStrategy``.
- ``multi-point``: the project's port of Roo-Code's ``MultiPointStrategy`` (``promptcache.cache_points``).
- ``anchored-tail``: ours (see ``AnchoredTailStrategy``).
- ``as-logged``: the log's own layout (``promptcache.replay._as_logged``), shown when the log records usage.
- ``hindsight``: a reference that knows each conversation's next request time (``promptcache.replay._hindsight``).
"""

from __future__ import annotations

from collections.abc import Iterable

from promptcache._errors import PromptCacheError
from promptcache._pricing import ModelPrice

from ._models import CacheRules
from ._prepare import Request
from ._simulator import Checkpoint

__all__ = [
    "Strategy",
    "last_allowed_boundary",
    "point_allowed_after",
    "NoCacheStrategy",
    "LastMessageStrategy",
    "LangChainAwsStrategy",
    "STRATEGIES",
    "check_strategy_names",
    "make_strategy",
    "StrategyUnavailable",
]


class StrategyUnavailable(PromptCacheError, RuntimeError):
    """A strategy whose implementation is not installed (the replay reports it as unavailable)."""


class Strategy:
    """Base: ``place(request) -> list[Checkpoint]``. Subclasses set ``name`` and ``description``.

    Args:
        rules: the model's cache rules (``promptcache.replay._models.cache_rules``).
        price: the model's prices (only strategies that weigh costs use it).
        ttl_s: TTL of the points it places, seconds (300 or, where the model allows, 3600).
    """

    name = "base"
    description = ""

    def __init__(self, rules: CacheRules, price: ModelPrice | None = None, ttl_s: float = 300.0) -> None:
        self.rules = rules
        self.price = price
        self.ttl_s = ttl_s

    def place(self, request: Request) -> list[Checkpoint]:
        raise NotImplementedError

    def forget(self, conversation_id: str) -> None:
        """Drop any state kept for a conversation that has ended (the replay streams; default: nothing kept)."""


class NoCacheStrategy(Strategy):
    """No cache points: every token is plain input."""

    name = "none"
    description = "no cache points"

    def place(self, request: Request) -> list[Checkpoint]:
        return []


def point_allowed_after(rules: CacheRules, kind: str) -> bool:
    """Whether a cache point may directly follow a block of ``kind``: never after reasoning; on Nova never after a
    tool result or an image (each a Bedrock validation error; docs/architecture.md "Bedrock cache points")."""
    if kind == "reasoning":
        return False
    return rules.family != "nova" or kind not in ("tool_result", "image")


def last_allowed_boundary(request: Request, rules: CacheRules) -> int:
    """The end of the last message of ``request`` after which a point is allowed (0: none)."""
    for group in reversed(request.groups):
        if point_allowed_after(rules, group.last_kind):
            return group.end
    return 0


class LastMessageStrategy(Strategy):
    """One point at the end of the last message (langchain-anthropic's prompt-caching middleware).

    Where Bedrock forbids a point there (Nova after a tool result), it goes after the last message that allows one.
    """

    name = "last-message"
    description = "one point at the end of the last message"

    def place(self, request: Request) -> list[Checkpoint]:
        boundary = last_allowed_boundary(request, self.rules)
        return [Checkpoint(boundary, self.ttl_s)] if boundary else []


class LangChainAwsStrategy(Strategy):
    """What ``ChatBedrockConverse._apply_cache_points`` (langchain-aws 1.9.1) does with ``cache_control``.

    Read from the installed source (``langchain_aws/chat_models/bedrock_converse.py``): with a budget of
    ``4 - (cachePoint blocks already in the request)`` it appends a ``{"cachePoint": {"type": "default"}}`` block,
    in this order and while budget remains:

    1. at the end of ``system`` (whenever there is a system prompt — even one below the model's minimum);
    2. at the end of the last message (skipped for Nova when that message holds ``toolUse``/``toolResult``);
    3. at the end of ``toolConfig.tools`` (not for Nova);
    4. for Anthropic models with no manual points and at least two messages, at the end of the penultimate
       message (unless it ends with a reasoning block) — the "simplified cache management" end-of-history point.

    The TTL is the middleware's ``ttl`` (``"5m"`` by default; ``"1h"`` is passed through except for Nova). The
    middleware (``BedrockPromptCachingMiddleware``) only sets ``model_settings["cache_control"]``; the placement
    above is all of it. No token counting: points below the minimum simply cache nothing.
    """

    name = "langchain-aws"
    description = "system, last message, tools, penultimate message"

    def place(self, request: Request) -> list[Checkpoint]:
        prepared, groups = request.prepared, request.groups
        nova = self.rules.family == "nova"
        budget = self.rules.max_points
        points: list[Checkpoint] = []
        if budget and prepared.system_end > prepared.tools_end:
            points.append(Checkpoint(prepared.system_end, self.ttl_s, "system"))
            budget -= 1
        if budget and groups and not (nova and groups[-1].has_tool_blocks):
            points.append(Checkpoint(groups[-1].end, self.ttl_s))
            budget -= 1
        if budget and prepared.tools_end and not nova:
            points.append(Checkpoint(prepared.tools_end, self.ttl_s, "tools"))
            budget -= 1
        if budget and not nova and len(groups) >= 2 and not groups[-2].ends_with_reasoning:
            points.append(Checkpoint(groups[-2].end, self.ttl_s))
        # Converse orders tools -> system -> messages; TTLs are all equal here, so any order is valid.
        return points


STRATEGIES: dict[str, type[Strategy]] = {
    NoCacheStrategy.name: NoCacheStrategy,
    LastMessageStrategy.name: LastMessageStrategy,
    LangChainAwsStrategy.name: LangChainAwsStrategy,
}


def _register_modules() -> None:
    """Add the strategies defined in their own modules (imported lazily: they import this one)."""
    from ._as_logged import AsLoggedStrategy
    from ._hindsight import HindsightStrategy
    from ._multipoint import MultiPointAdapter
    from ._ours import AnchoredTailStrategy

    STRATEGIES.setdefault(MultiPointAdapter.name, MultiPointAdapter)
    STRATEGIES.setdefault(AnchoredTailStrategy.name, AnchoredTailStrategy)
    STRATEGIES.setdefault(AsLoggedStrategy.name, AsLoggedStrategy)
    STRATEGIES.setdefault(HindsightStrategy.name, HindsightStrategy)


def check_strategy_names(names: Iterable[str]) -> None:
    """Check that every name is in ``STRATEGIES`` (after loading ours).

    Raises:
        KeyError: the first unknown name (the message lists the known ones).
    """
    if "anchored-tail" not in STRATEGIES:
        _register_modules()
    for name in names:
        if name not in STRATEGIES:
            raise KeyError(f"unknown strategy {name!r}; known: {', '.join(STRATEGIES)}")


def make_strategy(name: str, rules: CacheRules, price: ModelPrice | None = None, ttl_s: float = 300.0) -> Strategy:
    """A strategy by name (``STRATEGIES`` keys; add a ``Strategy`` subclass there to compare your own).

    Raises:
        KeyError: unknown name (the message lists the known ones).
        StrategyUnavailable: its implementation is not installed.
    """
    if "anchored-tail" not in STRATEGIES:
        _register_modules()
    try:
        cls = STRATEGIES[name]
    except KeyError:
        raise KeyError(f"unknown strategy {name!r}; known: {', '.join(STRATEGIES)}") from None
    return cls(rules, price, ttl_s)

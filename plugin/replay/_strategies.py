"""Cache-point placement strategies compared by the replay, all on the same requests and the same simulator.

A strategy sees one ``Request`` at a time (its blocks, Converse messages and token counts, and — for stateful
strategies — what it placed earlier in the same conversation) and returns ``Checkpoint``s. Strategies never see the
future of a conversation.

- ``none``: no cache points (the baseline every cost is compared with).
- ``last-message``: one point at the end of the last message, moved forward each request — what
  langchain-anthropic's ``AnthropicPromptCachingMiddleware`` does (``cache_control`` on the last message).
- ``langchain-aws``: the placement ``ChatBedrockConverse`` applies when a call carries ``cache_control`` (set by
  langchain-aws' ``BedrockPromptCachingMiddleware``), run from the installed langchain-aws; see
  ``LangChainAwsStrategy``.
- ``multi-point`` and ``anchored-tail``: the plugin's own ``MultiPointStrategy`` and ``AnchoredTailStrategy``
  (``promptcache.cache_points``), run as the wrapper runs them (``promptcache.replay._ours``).
- ``as-logged``: the log's own layout (``promptcache.replay._as_logged``), shown when the log records usage.
- ``hindsight``: a reference that knows each conversation's next request time (``promptcache.replay._hindsight``).

Every strategy by name: ``promptcache.replay._registry``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeAlias, TypedDict, cast

from promptcache._compat import LANGCHAIN_AWS_CACHE_POINT_HOOK
from promptcache._errors import PromptCacheError
from promptcache._pricing import ModelPrice
from promptcache._types import JSONObject, JSONValue

from ._models import CacheRules
from ._prepare import PreparedConversation, Request
from ._simulator import Checkpoint

__all__ = [
    "Strategy",
    "last_allowed_boundary",
    "point_allowed_after",
    "NoCacheStrategy",
    "LastMessageStrategy",
    "LangChainAwsStrategy",
    "StrategyUnavailable",
]


class StrategyUnavailable(PromptCacheError, RuntimeError):
    """A strategy whose implementation is not installed (the replay reports it as unavailable)."""


#: Cache points ``ChatBedrockConverse._apply_cache_points`` may add to one request (langchain-aws 1.9.1's
#: budget; Bedrock's own limit for Claude models).
_LANGCHAIN_AWS_BUDGET = 4


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
    """``langchain-aws``: the installed ``ChatBedrockConverse._apply_cache_points`` itself, run on each request.

    ``BedrockPromptCachingMiddleware`` only sets ``model_settings["cache_control"]``; the placement is all in that
    method, which appends a ``{"cachePoint": {"type": "default"}}`` block (with the TTL unless it is ``"5m"``) at
    the end of the system prompt, of the last message, of ``toolConfig.tools`` and, for Anthropic models, of the
    penultimate message, while its budget of 4 lasts (langchain-aws 1.9.1). The replay hands it placeholder
    Converse dicts of the request's shape (one block per system block and tool schema; per message one block per
    content block, ``toolUse``/``toolResult``/``reasoningContent`` where the message holds or ends with one) and reads
    back where the points landed. The method is called unbound with a stand-in for the model that answers the two
    things it asks (``_get_base_model()`` and ``provider``).

    Without langchain-aws installed (a core ``pip install promptcache``), the same four rules, transcribed from that
    method, place the points (``transcribed``; tests/replay/test_shipped_placements.py checks both against the
    installed method on the same requests).
    """

    name = "langchain-aws"
    description = "langchain-aws's own ChatBedrockConverse placement (system, last message, tools, penultimate)"

    def __init__(self, rules: CacheRules, price: ModelPrice | None = None, ttl_s: float = 300.0) -> None:
        """Raises ``StrategyUnavailable`` for a model that allows fewer cache points per request than the method's
        budget of 4: the method does not read the model's limit, so the provider would refuse its requests."""
        if rules.supports_cache and rules.max_points < _LANGCHAIN_AWS_BUDGET:
            raise StrategyUnavailable(
                f"langchain-aws places up to {_LANGCHAIN_AWS_BUDGET} cache points per request whatever the model; "
                f"{rules.model_id} allows {rules.max_points}, so its requests would be refused"
            )
        super().__init__(rules, price, ttl_s)
        self._apply: _ApplyCachePoints | None = None
        try:
            from langchain_aws.chat_models.bedrock_converse import ChatBedrockConverse
        except ImportError:
            pass
        else:
            self._apply = getattr(ChatBedrockConverse, LANGCHAIN_AWS_CACHE_POINT_HOOK)
        self._host = _ConverseHost(rules.model_id, "amazon" if rules.family == "nova" else "anthropic")
        self._control = {"type": "default", "ttl": "1h" if ttl_s >= 3600 else "5m"}
        self._kinds: dict[str, list[str]] = {}  # conversation id -> its block kinds (``_block_kinds``)

    def transcribed(self, request: Request) -> list[Checkpoint]:
        """The method's four rules without langchain-aws (budget 4; Nova: no tools point, no last-message point
        on a message with tool blocks; the penultimate point only for Anthropic models, not after reasoning)."""
        prepared, groups = request.prepared, request.groups
        nova, budget = self.rules.family == "nova", _LANGCHAIN_AWS_BUDGET
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
        return points

    def place(self, request: Request) -> list[Checkpoint]:
        if self._apply is None:
            return self.transcribed(request)
        prepared, groups = request.prepared, request.groups
        kinds = self._kinds.get(prepared.conversation.id)
        if kinds is None:
            kinds = self._kinds[prepared.conversation.id] = _block_kinds(prepared)
        system: list[JSONObject] = [dict(_TEXT) for _ in range(prepared.system_end - prepared.tools_end)]
        tools: list[JSONObject] = [{"toolSpec": {}} for _ in range(prepared.tools_end)]
        params: JSONObject = {"toolConfig": {"tools": cast("list[JSONValue]", tools)}} if tools else {}  # the same list
        # the last two messages: the method reads no other message of a request that holds no point of its own
        # (it counts the caller's points first; these placeholders hold none)
        messages: list[_Message] = [
            {"role": g.role, "content": [dict(_KIND_BLOCK.get(k, _TEXT)) for k in kinds[g.start : g.end]]}
            for g in groups[-2:]
        ]
        self._apply(self._host, self._control, system, messages, params)
        # in the order the method adds them: system, last message, tools, penultimate message
        points: list[Checkpoint] = []
        if system and _is_point(system[-1]):
            points.append(Checkpoint(prepared.system_end, self.ttl_s, "system"))
        if _is_point(messages[-1]["content"][-1]):
            points.append(Checkpoint(groups[-1].end, self.ttl_s))
        if tools and _is_point(tools[-1]):
            points.append(Checkpoint(prepared.tools_end, self.ttl_s, "tools"))
        if len(messages) >= 2 and _is_point(messages[-2]["content"][-1]):
            points.append(Checkpoint(groups[-2].end, self.ttl_s))
        return points

    def forget(self, conversation_id: str) -> None:
        """Drop the block kinds kept for a finished conversation."""
        self._kinds.pop(conversation_id, None)


class _ConverseHost:
    """What ``ChatBedrockConverse._apply_cache_points`` reads from its model: the base model id and the provider."""

    def __init__(self, model_id: str, provider: str) -> None:
        self.model_id, self.provider = model_id, provider

    def _get_base_model(self) -> str:
        return self.model_id


class _Message(TypedDict):
    """A Converse message as ``_apply_cache_points`` reads it (``role``, ``content`` blocks)."""

    role: str
    content: list[JSONObject]


#: ``ChatBedrockConverse._apply_cache_points(model, cache_control, system, messages, params)``: adds ``cachePoint``
#: blocks to ``system``, ``messages`` and ``params["toolConfig"]["tools"]`` in place.
_ApplyCachePoints: TypeAlias = Callable[[object, dict[str, str], list[JSONObject], list[_Message], JSONObject], object]

_TEXT: JSONObject = {"text": "."}
_KIND_BLOCK: dict[str, JSONObject] = {
    "tool_use": {"toolUse": {}},
    "tool_result": {"toolResult": {}},
    "reasoning": {"reasoningContent": {}},
    "image": {"image": {}},
}


def _is_point(block: object) -> bool:
    return isinstance(block, dict) and "cachePoint" in block


def _block_kinds(prepared: PreparedConversation) -> list[str]:
    """The kind of every block of a prepared conversation, indexed by flat block position (tools and system blocks
    are ``""``)."""
    kinds = [""] * prepared.system_end
    for message in prepared.conversation.messages:
        kinds.extend(b.kind for b in message.blocks or (_EMPTY,))
    return kinds


class _Empty:
    kind = "text"


_EMPTY = _Empty()

"""``IntentionCache``: a processor for ``create_agent`` that stores tool results under the user's intention.

It wraps every tool call (``wrap_tool_call`` / ``awrap_tool_call``, LangChain's ``AgentMiddleware`` API), lets the
tool run, and stores a successful result in an :class:`~promptcache.intention.memory.IntentionMemory` under the
current intention: the tool call's ``intention`` argument when it has one, else the latest human message. Later, the
agent's ``retrieve_memory`` tool (:func:`~promptcache.intention.tool.make_retrieve_memory_tool`) finds it.

Not stored: tool errors (``ToolMessage.status == "error"`` or an exception), ``Command`` results, the
``retrieve_memory`` tool itself, and side-effecting tools (a deny list: by default names starting with ``send_``,
``delete_``, ``create_``, ``update_``, ``write_``). Volatile arguments (by default time stamps and request ids) are
left out of the stored arguments, so they do not split one intention's result into many memories.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from langchain_core.messages import HumanMessage, ToolMessage
from promptcache._log import ThrottledWarning, get_logger
from promptcache.config import DEFAULT_SCOPE_FIELDS, UNSET, resolve_scope
from promptcache.intention.memory import IntentionMemory
from promptcache.intention.tool import RETRIEVE_MEMORY_TOOL_NAME
from promptcache.processor import Processor

__all__ = ["DEFAULT_SIDE_EFFECT_PREFIXES", "DEFAULT_VOLATILE_ARGS", "IntentionCache", "current_intention"]

DEFAULT_SIDE_EFFECT_PREFIXES: tuple[str, ...] = ("send_", "delete_", "create_", "update_", "write_")
"""Tool-name prefixes treated as side-effecting (never stored), from the issue's default deny list."""
DEFAULT_VOLATILE_ARGS: frozenset[str] = frozenset(
    {"timestamp", "ts", "time", "now", "current_time", "datetime", "request_id", "trace_id", "nonce"}
)
"""Argument names left out of the stored arguments (values that change on every call)."""

_log = get_logger("promptcache.intention.middleware")


def _message_text(message: Any) -> str:
    content = getattr(message, "content", "")
    if isinstance(content, str):
        return content
    parts = []
    for block in content or []:
        if isinstance(block, str):
            parts.append(block)
        elif isinstance(block, Mapping) and block.get("type") == "text":
            parts.append(str(block.get("text", "")))
    return " ".join(p for p in parts if p)


def current_intention(args: Mapping[str, Any] | None, messages: Sequence[Any],
                      intention_arg: str = "intention") -> str | None:
    """The intention :class:`IntentionCache` files a tool call under (also used by ``promptcache replay``).

    Args:
        args: the tool call's arguments (``tool_call["args"]``).
        messages: the agent state's messages up to the call (LangChain messages, oldest first).
        intention_arg: the argument that carries the intention when a tool has one.

    Returns:
        ``args[intention_arg]`` when it is a non-blank string, else the text of the latest ``HumanMessage`` (its
        string content, or its text blocks joined by spaces); ``None`` when that is blank or there is none.
    """
    intention = (args or {}).get(intention_arg)
    if not isinstance(intention, str) or not intention.strip():
        intention = ""
        for message in reversed(messages):
            if isinstance(message, HumanMessage):
                intention = _message_text(message)
                break
    return intention if intention.strip() else None


def _messages(state: Any) -> list[Any]:
    if isinstance(state, Mapping):
        return list(state.get("messages") or [])
    return list(getattr(state, "messages", None) or [])


class IntentionCache(Processor):
    """Stores tool results as they come back, under the current user's intention.

    Args:
        memory: the :class:`~promptcache.intention.memory.IntentionMemory` to write.
        scope: a fixed user id; default: from the call's config (the shared scope rule).
        scope_fields: ``configurable`` fields tried for the user id.
        deny_prefixes: tool-name prefixes never stored (default :data:`DEFAULT_SIDE_EFFECT_PREFIXES`).
        deny_tools: tool names never stored (in addition to the prefixes).
        allow_tools: when given, only these tools are stored.
        volatile_args: argument names left out of the stored arguments (default :data:`DEFAULT_VOLATILE_ARGS`).
        intention_arg: the tool argument that carries the intention, when a tool has one (default
            ``"intention"``).
        retrieve_tool_name: the ``retrieve_memory`` tool's name (its results are never stored again).

    Raises:
        TypeError: ``memory`` is not an ``IntentionMemory``, or a name list holds a non-string.
    """

    def __init__(
        self,
        memory: IntentionMemory,
        *,
        scope: Any = UNSET,
        scope_fields: Iterable[str] = DEFAULT_SCOPE_FIELDS,
        deny_prefixes: Iterable[str] = DEFAULT_SIDE_EFFECT_PREFIXES,
        deny_tools: Iterable[str] = (),
        allow_tools: Iterable[str] | None = None,
        volatile_args: Iterable[str] = DEFAULT_VOLATILE_ARGS,
        intention_arg: str = "intention",
        retrieve_tool_name: str = RETRIEVE_MEMORY_TOOL_NAME,
    ) -> None:
        super().__init__()
        if not isinstance(memory, IntentionMemory):
            raise TypeError(f"memory must be an IntentionMemory, got {type(memory).__name__}")
        self.memory = memory
        self._scope = scope
        self.scope_fields = tuple(scope_fields)
        self.deny_prefixes = _names(deny_prefixes, "deny_prefixes")
        self.deny_tools = frozenset(_names(deny_tools, "deny_tools"))
        self.allow_tools = None if allow_tools is None else frozenset(_names(allow_tools, "allow_tools"))
        self.volatile_args = frozenset(_names(volatile_args, "volatile_args"))
        self.intention_arg = intention_arg
        self.retrieve_tool_name = retrieve_tool_name
        self._warning = ThrottledWarning(_log)

    def should_store(self, tool_name: str) -> bool:
        """Whether results of ``tool_name`` may be stored (not denied, allowed, not ``retrieve_memory``)."""
        if tool_name == self.retrieve_tool_name or tool_name in self.deny_tools:
            return False
        if any(tool_name.startswith(p) for p in self.deny_prefixes):
            return False
        return self.allow_tools is None or tool_name in self.allow_tools

    def _plan(self, request: Any, result: Any) -> tuple[str, str, str, Any, Any] | None:
        """(user, intention, tool, args, value) to store, or None when this result is not stored."""
        if not isinstance(result, ToolMessage) or result.status == "error":
            return None
        call = request.tool_call
        name = call.get("name") or ""
        if not self.should_store(name):
            return None
        config = getattr(getattr(request, "runtime", None), "config", None)
        user = resolve_scope(None, self._scope, config, self.scope_fields)
        if user is None:
            self._warning.warn("promptcache: IntentionCache saw a tool call without a user id; not stored")
            return None
        args = dict(call.get("args") or {})
        intention = current_intention(args, _messages(request.state), self.intention_arg)
        if intention is None:
            return None
        kept = {k: v for k, v in args.items() if k not in self.volatile_args}
        return user, intention, name, kept, result.content

    def _store_sync(self, plan: tuple[str, str, str, Any, Any]) -> None:
        user, intention, tool, args, value = plan
        self.memory.store(user, intention, value, tool=tool, args=args)

    def _skip(self, exc: Exception) -> None:
        self._warning.warn("promptcache: IntentionCache could not store a tool result", exc=exc)

    def wrap_tool_call(self, request: Any, handler: Any) -> Any:
        """Run the tool, then store its result (see the module docstring). Never changes the result."""
        result = handler(request)
        plan = self._plan(request, result)
        if plan is not None:
            try:
                self._store_sync(plan)
            except (TypeError, ValueError) as exc:  # e.g. a result that is not JSON
                self._skip(exc)
        return result

    async def awrap_tool_call(self, request: Any, handler: Any) -> Any:
        """Async :meth:`wrap_tool_call`."""
        result = await handler(request)
        plan = self._plan(request, result)
        if plan is not None:
            try:
                u, i, t, a, v = plan
                await self.memory.astore(u, i, v, tool=t, args=a)
            except (TypeError, ValueError) as exc:
                self._skip(exc)
        return result


def _names(values: Iterable[str], what: str) -> tuple[str, ...]:
    if isinstance(values, str):
        values = (values,)
    out = tuple(values)
    for v in out:
        if not isinstance(v, str):
            raise TypeError(f"{what} must hold strings, got {v!r}")
    return out

"""``IntentionCache``: a processor for ``create_agent`` that stores tool results under the user's intention.

It wraps every tool call (``wrap_tool_call`` / ``awrap_tool_call``, LangChain's ``AgentMiddleware`` API), lets the
tool run, and stores a successful result in an `IntentionMemory` under the
current intention: the tool call's ``intention`` argument when it has one, else the latest human message. One
intention holds one memory per tool call (tool + arguments). Later, the agent's ``retrieve_memory`` tool
(`make_retrieve_memory_tool`) finds them.

With ``serve_repeats=True`` it also answers a *repeated* tool call from memory, without running the tool: the same
user, the same current intention (exact match only), the same tool and arguments (volatile ones left out), stored
and not expired. The answer is a ``ToolMessage`` with the call's ``tool_call_id``, the stored content, and
``response_metadata["promptcache"]`` marking it as a hit (``{"intention_cache": "hit", ...}``).

Not stored (and never served): tool errors (``ToolMessage.status == "error"`` or an exception), ``Command``
results, the ``retrieve_memory`` tool itself, side-effecting tools (a deny list of name prefixes,
`DEFAULT_SIDE_EFFECT_PREFIXES`; of names, `DEFAULT_DENY_TOOLS`, which holds promptcache's own
``remember``; and tools marked ``metadata={SIDE_EFFECT_METADATA_KEY: True}``, as ``make_remember_tool`` does), and
results that carry an artifact (``response_format="content_and_artifact"`` tools, or a ``ToolMessage`` with an
``artifact``): the artifact is for the application and is often not JSON (documents, ``datetime``), so a repeat
answered from memory could not hand it back; such tools always run. Volatile arguments (by default time stamps and
request ids) are left out of the stored arguments, so they do not split one call's result into many memories.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Mapping
from typing import Any, TypeAlias, TypedDict, TypeGuard, cast

from langchain.agents.middleware import ToolCallRequest
from langchain_core.messages import ToolCall, ToolMessage
from langchain_core.tools import BaseTool
from langgraph.types import Command

from promptcache._config import DEFAULT_SCOPE_FIELDS, UNSET, resolve_scope, validate_scope
from promptcache._log import ThrottledWarning, get_logger
from promptcache._metrics import PluginMetrics, PluginStats
from promptcache._option_checks import check_bool, check_name, check_names, check_scope_fields, check_tool_name
from promptcache._processor import Processor
from promptcache._types import JSONValue
from promptcache.intention._checks import check_user
from promptcache.intention._current import current_intention, state_messages
from promptcache.intention._memory import IntentionMatch, IntentionMemory
from promptcache.intention._tool import RETRIEVE_MEMORY_TOOL_NAME
from promptcache.intention._tool_policy import (
    DEFAULT_DENY_TOOLS,
    DEFAULT_SIDE_EFFECT_PREFIXES,
    DEFAULT_VOLATILE_ARGS,
    SIDE_EFFECT_METADATA_KEY,
    tool_words,
)

__all__ = [
    "DEFAULT_DENY_TOOLS",
    "DEFAULT_SIDE_EFFECT_PREFIXES",
    "DEFAULT_VOLATILE_ARGS",
    "IntentionCache",
    "SIDE_EFFECT_METADATA_KEY",
    "current_intention",
    "served_message",
    "tool_words",
]

_log = get_logger("promptcache.intention._middleware")

ToolResult: TypeAlias = "ToolMessage | Command[Any]"
"""What a tool call gives back, as LangChain's ``AgentMiddleware.wrap_tool_call`` types it (a ``Command``'s resume
value is the graph's own, unknown here)."""


class _LookupArgs(TypedDict):
    user_id: str
    intention: str
    tool: str
    args: dict[str, object]
    exact_only: bool


class IntentionCache(Processor):
    """Stores tool results as they come back, under the current user's intention; optionally serves repeats.

    Args:
        memory: the `IntentionMemory` to write (and read, with
            ``serve_repeats``).
        scope: a fixed user id; default: from the call's config (the shared scope rule).
        scope_fields: ``configurable`` fields tried for the user id.
        deny_prefixes: tool-name prefixes never stored nor served (default `DEFAULT_SIDE_EFFECT_PREFIXES`;
            prefixes and tool names are compared in snake_case, `tool_words`: ``sendEmail`` and
            ``send-email`` match ``send_``).
        deny_tools: tool names never stored nor served, in addition to the prefixes (default
            `DEFAULT_DENY_TOOLS`: ``remember``; given names replace it). Tools marked
            ``metadata={SIDE_EFFECT_METADATA_KEY: True}`` are denied too, and so are tools whose results carry an
            artifact (``response_format="content_and_artifact"``; see the module docstring).
        allow_tools: when given, only these tools are stored and served.
        volatile_args: argument names left out of the stored arguments (default `DEFAULT_VOLATILE_ARGS`).
        intention_arg: the tool argument that carries the intention, when a tool has one (default
            ``"intention"``).
        retrieve_tool_name: the ``retrieve_memory`` tool's name (its results are never stored again; 1 to 64
            ASCII letters, digits, ``_`` or ``-``: `promptcache._option_checks.TOOL_NAME_PATTERN`).
        serve_repeats: when True, a call whose (user, current intention, tool, arguments without the volatile ones)
            is stored and not expired is answered from memory without running the tool (see the module
            docstring). Default False: every tool runs.
        serve_similar: with ``serve_repeats``, also serve when the current intention is a verified similar match
            of the stored one (the memory's verifier found every difference an equivalence, or its chat model said
            yes). Default False: only an exact intention match short-circuits a tool (a read after a write within
            one request is the risk, whatever the wording).
        allow_scope_override: let ``configurable["user_id"]`` differ from the authenticated
            ``configurable["langgraph_auth_user_id"]`` (default False: such a call raises ``PermissionError``
            before the tool runs); only for deployments whose configs come from trusted code.

    Raises:
        TypeError: ``memory`` is not an ``IntentionMemory``; a name list is a single ``str`` or holds a
            non-string; ``serve_repeats``, ``serve_similar`` or ``allow_scope_override`` is not a bool; ``scope``
            is neither a string, an int nor ``None``.
        ValueError: ``scope``, a listed name, ``intention_arg`` or ``retrieve_tool_name`` is empty or blank.

    A call's user id that is not a usable string (``configurable["user_id"]`` a dict, a bool, blank, holding a lone
    surrogate) raises ``TypeError``/``ValueError`` naming it *before* the tool runs (for tools whose results are
    stored), never after the tool's side effects happened.
    """

    def __init__(
        self,
        memory: IntentionMemory,
        *,
        scope: object = UNSET,
        scope_fields: Iterable[str] = DEFAULT_SCOPE_FIELDS,
        deny_prefixes: Iterable[str] = DEFAULT_SIDE_EFFECT_PREFIXES,
        deny_tools: Iterable[str] = DEFAULT_DENY_TOOLS,
        allow_tools: Iterable[str] | None = None,
        volatile_args: Iterable[str] = DEFAULT_VOLATILE_ARGS,
        intention_arg: str = "intention",
        retrieve_tool_name: str = RETRIEVE_MEMORY_TOOL_NAME,
        serve_repeats: bool = False,
        serve_similar: bool = False,
        allow_scope_override: bool = False,
    ) -> None:
        super().__init__()
        if not isinstance(memory, IntentionMemory):
            raise TypeError(f"memory must be an IntentionMemory, got {type(memory).__name__}")
        self.memory = memory
        self._scope = scope if scope is UNSET else validate_scope(scope)
        self.scope_fields = check_scope_fields(scope_fields)
        self.allow_scope_override = check_bool(allow_scope_override, "allow_scope_override")
        self.deny_prefixes = tuple(tool_words(p) for p in check_names(deny_prefixes, "deny_prefixes"))
        self.deny_tools = frozenset(check_names(deny_tools, "deny_tools"))
        self.allow_tools = None if allow_tools is None else frozenset(check_names(allow_tools, "allow_tools"))
        self.volatile_args = frozenset(check_names(volatile_args, "volatile_args"))
        self.intention_arg = check_name(intention_arg, "intention_arg")
        self.retrieve_tool_name = check_tool_name(retrieve_tool_name, "retrieve_tool_name")
        self.serve_repeats = check_bool(serve_repeats, "serve_repeats")
        self.serve_similar = check_bool(serve_similar, "serve_similar")
        self._warning = ThrottledWarning(_log)
        self.metrics = PluginMetrics("intention_cache")

    def stats(self, reset: bool = False) -> PluginStats:
        """Counts of tool calls: ``hits`` (answered from memory without running the tool, ``serve_repeats``),
        ``misses`` (looked up, not found: the tool ran), ``writes`` (results stored), ``errors`` (a result that
        could not be stored). The memory's own counts are ``memory.stats()``. Tokens and dollars are not known here
        (a served repeat saves a tool run, not model tokens). Also sent to OpenTelemetry
        (`promptcache._metrics`)."""
        return self.metrics.snapshot(reset)

    def should_store(self, tool_name: str) -> bool:
        """Whether results of ``tool_name`` may be stored and served (not denied, allowed, not
        ``retrieve_memory``)."""
        if tool_name == self.retrieve_tool_name or tool_name in self.deny_tools:
            return False
        words = tool_words(tool_name)
        if any(words.startswith(p) for p in self.deny_prefixes):
            return False
        return self.allow_tools is None or tool_name in self.allow_tools

    def kept_args(self, args: Mapping[str, object] | None) -> dict[str, object]:
        """``args`` without the volatile arguments: what a memory's ``args`` hold."""
        return {k: v for k, v in (args or {}).items() if k not in self.volatile_args}

    def _key(self, request: ToolCallRequest, warn: bool) -> tuple[str, str, str, dict[str, object]] | None:
        """(user, intention, tool, kept args) of a storable call, or None."""
        call = request.tool_call
        name = call.get("name") or ""
        if not self.should_store(name) or _never_stored(getattr(request, "tool", None)):
            return None
        config = getattr(getattr(request, "runtime", None), "config", None)
        user = resolve_scope(None, self._scope, config, self.scope_fields, self.allow_scope_override)
        if user is None:
            if warn:
                self._warning.warn("promptcache: IntentionCache saw a tool call without a user id; not stored")
            return None
        check_user(user)  # a user id no backend can store (a lone surrogate) raises before the tool runs
        args = dict(call.get("args") or {})
        intention = current_intention(args, state_messages(request.state), self.intention_arg)
        if intention is None:
            return None
        return user, intention, name, self.kept_args(args)

    @staticmethod
    def _storable(result: ToolResult) -> TypeGuard[ToolMessage]:
        # A result with an artifact is not stored: a served repeat could not give the application the artifact.
        return isinstance(result, ToolMessage) and result.status != "error" and result.artifact is None

    def _lookup_kwargs(self, key: tuple[str, str, str, dict[str, object]]) -> _LookupArgs:
        user, intention, tool, args = key
        return {
            "user_id": user,
            "intention": intention,
            "tool": tool,
            "args": args,
            "exact_only": not self.serve_similar,
        }

    def _skip(self, exc: Exception) -> None:
        self.metrics.error()
        self._warning.warn("promptcache: IntentionCache could not store a tool result", exc=exc)

    def wrap_tool_call(self, request: ToolCallRequest, handler: Callable[[ToolCallRequest], ToolResult]) -> ToolResult:
        """Serve a stored repeat (``serve_repeats``), else run the tool and store its result (see the module
        docstring). Never changes a result the tool returned."""
        key = self._key(request, warn=True)  # before the tool runs: a bad user id raises here
        if key is not None and self.serve_repeats:
            try:
                match = self.metrics.lookup(self.memory.retrieve(**self._lookup_kwargs(key)))
            except (TypeError, ValueError) as exc:  # e.g. an intention that normalises to nothing
                match = None
                self._skip(exc)
            if match is not None:
                return served_message(request.tool_call, match)
        result = handler(request)
        if key is not None and self._storable(result):
            try:
                u, i, t, a = key
                self.metrics.stored(self.memory.store(u, i, result.content, tool=t, args=a))
            except (TypeError, ValueError) as exc:  # e.g. a result that is not JSON
                self._skip(exc)
        return result

    async def awrap_tool_call(
        self, request: ToolCallRequest, handler: Callable[[ToolCallRequest], Awaitable[ToolResult]]
    ) -> ToolResult:
        """Async `wrap_tool_call`."""
        key = self._key(request, warn=True)
        if key is not None and self.serve_repeats:
            try:
                match = self.metrics.lookup(await self.memory.aretrieve(**self._lookup_kwargs(key)))
            except (TypeError, ValueError) as exc:
                match = None
                self._skip(exc)
            if match is not None:
                return served_message(request.tool_call, match)
        result = await handler(request)
        if key is not None and self._storable(result):
            try:
                u, i, t, a = key
                self.metrics.stored(await self.memory.astore(u, i, result.content, tool=t, args=a))
            except (TypeError, ValueError) as exc:
                self._skip(exc)
        return result


def served_message(tool_call: ToolCall, match: IntentionMatch) -> ToolMessage:
    """The ``ToolMessage`` that answers ``tool_call`` from memory.

    Its content is the stored content (a string or a list of content blocks as the tool returned it; any other JSON
    value as JSON text), ``tool_call_id``/``name`` those of the call, and ``response_metadata["promptcache"]``
    ``{"intention_cache": "hit", "kind", "intention", "memory_id", "age_s"}`` (age in seconds) marks the hit.
    """
    result = match.result
    ok_list = isinstance(result, list) and all(isinstance(b, (str, dict)) for b in result)
    blocks = cast("str | list[str | dict[str, JSONValue]]", result)  # a string, or a list of str/dict blocks
    content = blocks if isinstance(result, str) or ok_list else match.result_text()
    meta = {
        "intention_cache": "hit",
        "kind": match.kind,
        "intention": match.intention,
        "memory_id": match.memory_id,
        "age_s": round(match.age_s, 3),
    }
    return ToolMessage(
        content=content,
        tool_call_id=tool_call.get("id") or "",
        name=tool_call.get("name"),
        status="success",
        response_metadata={"promptcache": meta},
    )


def _never_stored(tool: BaseTool | None) -> bool:
    """Whether the tool object itself rules storing out: marked side-effecting (`SIDE_EFFECT_METADATA_KEY`)
    or returning ``(content, artifact)`` (``response_format="content_and_artifact"``)."""
    if tool is None:
        return False
    metadata = getattr(tool, "metadata", None)
    if isinstance(metadata, Mapping) and metadata.get(SIDE_EFFECT_METADATA_KEY) is True:
        return True
    return getattr(tool, "response_format", None) == "content_and_artifact"

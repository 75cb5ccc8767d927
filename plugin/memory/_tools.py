"""The agent-facing tools: ``remember`` saves typed memories for the current user; ``read_reference`` fetches the
contents of a reference the memory block shows only as a pointer (``[short id] description``).

For both, the user comes from the call's config (the shared scope rule: the per-call memory ``scope`` option, then
a fixed scope given to the factory, then ``configurable["user_id"]``, then ``configurable["langgraph_auth_user_id"]``)
-- never from the model's arguments, so a prompt-injected "remember this for user 7" cannot write into (or read
from) someone else's memory.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal

from langchain_core.runnables import RunnableConfig
from langchain_core.tools import StructuredTool, ToolException
from langgraph.store.base import BaseStore

from promptcache._config import DEFAULT_SCOPE_FIELDS, UNSET, resolve_scope
from promptcache._option_checks import check_bool, check_scope_fields, check_tool_name
from promptcache.memory._kinds import MemoryKind
from promptcache.memory._namespaces import check_fixed_scope, memory_call_options
from promptcache.memory._records import TypedMemory
from promptcache.memory._references import find_reference, short_reference_id
from promptcache.memory._store import TypedMemoryStore

__all__ = ["make_reference_tool", "make_remember_tool"]

_DESCRIPTION = (
    "Save a memory about the current user for later turns and sessions. kind: 'user_fact' (stable facts about the "
    "user: role, preferences), 'feedback' (a rule the user wants you to follow), 'project_state' (fast-changing "
    "status such as an ETA or task progress; it expires), 'reference' (a pointer: URL, document id, endpoint). "
    "subject: optional short label; a newer memory with the same subject replaces the older one. ttl_s: optional "
    "lifetime in seconds."
)

Kind = Literal["user_fact", "feedback", "project_state", "reference"]
_SIDE_EFFECT_METADATA_KEY = "promptcache_side_effect"
"""= `promptcache.intention.SIDE_EFFECT_METADATA_KEY` (not imported: memory does not load the intention
cache). ``remember`` writes, so ``IntentionCache`` never stores nor serves it, whatever its ``name``."""


def make_remember_tool(
    memory: TypedMemoryStore | BaseStore | None = None,
    *,
    scope: object = UNSET,
    scope_fields: tuple[str, ...] = DEFAULT_SCOPE_FIELDS,
    name: str = "remember",
    allow_scope_override: bool = False,
) -> StructuredTool:
    """Build the ``remember(kind, content, subject=None, ttl_s=None)`` tool (sync and async).

    Args:
        memory: where to write: a `TypedMemoryStore`, a ``BaseStore`` (wrapped), or ``None`` for the
            graph's store at run time (``langgraph.config.get_store()``).
        scope: a fixed scope, ``None`` for unscoped memories (default: resolved from the call's config with the
            shared rule).
        scope_fields: ``configurable`` fields tried for the scope.
        name: the tool name (1 to 64 ASCII letters, digits, ``_`` or ``-``:
            `promptcache._option_checks.TOOL_NAME_PATTERN`). Whatever it is, the tool is marked side-effecting
            (``metadata``), so ``IntentionCache`` never stores nor serves its replies.
        allow_scope_override: let a per-call scope or ``configurable["user_id"]`` differ from the authenticated
            ``configurable["langgraph_auth_user_id"]`` (default False: such a call raises ``PermissionError``,
            nothing is read or written); only for deployments whose configs come from trusted code.

    Returns:
        A ``StructuredTool``. A bad argument from the model (unknown kind, empty content, ``ttl_s <= 0``) or a call
        without a user in the config comes back to the model as a tool error message; nothing is written.

    Raises:
        TypeError: ``memory`` of another type.
        TypeError / ValueError: a bad fixed ``scope`` (empty, containing ``"."``).
        RuntimeError (when called): ``memory=None`` and no graph store (called outside a graph, or in an agent
            built without ``store=``); the message names the missing store. Nothing is written.
    """
    _target = _target_resolver(
        memory, scope, scope_fields, "memory not saved", "make_remember_tool", allow_scope_override, name
    )

    def _reply(record: TypedMemory) -> str:
        if record.kind is MemoryKind.REFERENCE:
            return f"saved reference memory {record.id} (read it back with id {short_reference_id(record)})"
        return f"saved {record.kind.value} memory {record.id}"

    def remember(
        kind: Kind, content: str, config: RunnableConfig, subject: str | None = None, ttl_s: float | None = None
    ) -> str:
        target, user = _target(config)
        try:
            return _reply(target.put(user, kind, content, subject=subject, ttl_s=ttl_s))
        except (TypeError, ValueError) as exc:
            raise ToolException(f"memory not saved: {exc}") from exc

    async def aremember(
        kind: Kind, content: str, config: RunnableConfig, subject: str | None = None, ttl_s: float | None = None
    ) -> str:
        target, user = _target(config)
        try:
            return _reply(await target.aput(user, kind, content, subject=subject, ttl_s=ttl_s))
        except (TypeError, ValueError) as exc:
            raise ToolException(f"memory not saved: {exc}") from exc

    return StructuredTool.from_function(
        func=remember,
        coroutine=aremember,
        name=name,
        description=_DESCRIPTION,
        handle_tool_error=True,
        handle_validation_error=_validation_message,
        metadata={_SIDE_EFFECT_METADATA_KEY: True},
    )


def _target_resolver(
    memory: object,
    scope: object,
    scope_fields: object,
    failure: str,
    factory: str,
    allow_scope_override: object = False,
    name: object = "tool",
) -> Callable[[RunnableConfig], tuple[TypedMemoryStore, str | None]]:
    """Check ``memory`` now; return ``config -> (store, user)``. The store: ``memory``, or (``None``) the graph's
    store of the running call. The user: the per-call ``configurable["promptcache.memory"]["scope"]`` (as for the
    node and the middleware), then ``scope``, then the ``scope_fields`` of ``configurable`` (the shared rule,
    `promptcache._config.resolve_scope`). An explicit ``None`` scope (per call or fixed) means the unscoped
    memories; no scope at all is a tool error.

    Raises:
        TypeError: ``memory`` is not a ``TypedMemoryStore``, a ``BaseStore`` or ``None``.
        TypeError / ValueError: a bad fixed ``scope`` (e.g. ``""``), ``scope_fields``, ``allow_scope_override`` or
            ``name`` (`promptcache._option_checks`).
        RuntimeError (per call, not a tool error): ``memory=None`` and no graph store (``factory`` names the tool
            factory in the message).
    """
    check_fixed_scope(scope)
    fields = check_scope_fields(scope_fields)
    override = check_bool(allow_scope_override, "allow_scope_override")
    check_tool_name(name, "name")
    fixed = TypedMemoryStore.coerce(memory)

    def target(config: RunnableConfig) -> tuple[TypedMemoryStore, str | None]:
        store = fixed if fixed is not None else _graph_store(factory)  # a missing store is the deployer's error
        options = memory_call_options(config)
        user = resolve_scope(options, scope, config, fields, override)
        if user is None and "scope" not in options and scope is UNSET:  # an explicit None = unscoped memories
            raise ToolException(f"no user in the call's config (configurable['user_id']); {failure}")
        return store, user

    return target


def _graph_store(factory: str) -> TypedMemoryStore:
    """The running graph's store (``langgraph.config.get_store()``) as a `TypedMemoryStore`.

    Raises:
        RuntimeError: no store: the tool is called outside a LangGraph run, or in a graph/agent built without
            ``store=``. The message says how to give one.
    """
    from langgraph.config import get_store

    try:
        store = get_store()
    except (KeyError, RuntimeError):  # outside a graph run: no runtime in the config
        store = None
    if store is None:
        raise RuntimeError(
            f"{factory}(memory=None) needs a store: pass one (a TypedMemoryStore or a LangGraph BaseStore) as "
            f"{factory}(memory), or run the tool in an agent/graph with a store: create_agent(..., store=...) / "
            "graph.compile(store=...)"
        )
    return TypedMemoryStore.for_store(store)


_READ_DESCRIPTION = (
    "Fetch the contents of one of the user's saved references (a URL, document id, endpoint or note). The memory "
    "block lists references as '[id] description'; pass that id (e.g. '3fa9e1'). Use it when you need the "
    "reference itself, not just to know that it exists."
)


def make_reference_tool(
    memory: TypedMemoryStore | BaseStore | None = None,
    *,
    scope: object = UNSET,
    scope_fields: tuple[str, ...] = DEFAULT_SCOPE_FIELDS,
    name: str = "read_reference",
    allow_scope_override: bool = False,
) -> StructuredTool:
    """Build the ``read_reference(ref_id)`` tool (sync and async): the contents of the current user's reference.

    ``ref_id`` is the short id shown in the memory block (``[3fa9e1] description``), the full memory id, or the
    reference's subject (`promptcache.memory._references.find_reference`). The reply is
    ``"<description>: <contents>"`` (just the contents when the reference has no description). Only live references
    of the user resolved from the config are searched (one ``list`` of that user's references per call).

    Args:
        memory: where to read: a `TypedMemoryStore`, a ``BaseStore`` (wrapped), or ``None`` for the graph's
            store at run time (``langgraph.config.get_store()``).
        scope: a fixed scope, ``None`` for unscoped memories (default: resolved from the call's config with the
            shared rule).
        scope_fields: ``configurable`` fields tried for the scope.
        name: the tool name (1 to 64 ASCII letters, digits, ``_`` or ``-``:
            `promptcache._option_checks.TOOL_NAME_PATTERN`).
        allow_scope_override: let a per-call scope or ``configurable["user_id"]`` differ from the authenticated
            ``configurable["langgraph_auth_user_id"]`` (default False: such a call raises ``PermissionError``,
            nothing is read or written); only for deployments whose configs come from trusted code.

    Returns:
        A ``StructuredTool``. An unknown id or a call without a user in the config comes back to the model as a tool
        error message (``handle_tool_error``); store errors propagate.

    Raises:
        TypeError: ``memory`` of another type.
        TypeError / ValueError: a bad fixed ``scope`` (empty, containing ``"."``).
        RuntimeError (when called): ``memory=None`` and no graph store; the message names the missing store.
    """
    target = _target_resolver(
        memory, scope, scope_fields, "cannot read references", "make_reference_tool", allow_scope_override, name
    )

    def _answer(references: list[TypedMemory], ref_id: str) -> str:
        found = find_reference(references, ref_id)
        if found is None:
            raise ToolException(f"no reference {ref_id!r} for this user; use an id from the References section")
        desc = found.metadata.get("description") if found.metadata else None
        return f"{desc}: {found.content}" if desc else found.content

    def read_reference(ref_id: str, config: RunnableConfig) -> str:
        store, user = target(config)
        return _answer(store.list(user, MemoryKind.REFERENCE), ref_id)

    async def aread_reference(ref_id: str, config: RunnableConfig) -> str:
        store, user = target(config)
        return _answer(await store.alist(user, MemoryKind.REFERENCE), ref_id)

    return StructuredTool.from_function(
        func=read_reference,
        coroutine=aread_reference,
        name=name,
        description=_READ_DESCRIPTION,
        handle_tool_error=True,
    )


def _validation_message(exc: Exception) -> str:
    """Tool-argument validation errors go back to the model as text (e.g. an unknown kind), not as exceptions."""
    errors = getattr(exc, "errors", None)
    if callable(errors):
        parts = [
            f"{'.'.join(str(x) for x in e.get('loc', ()))}: {e.get('msg')} (got {e.get('input')!r})" for e in errors()
        ]
        return "memory not saved: " + "; ".join(parts)
    return f"memory not saved: {exc}"

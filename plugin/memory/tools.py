"""The agent-facing write path: a ``remember`` tool that saves typed memories for the current user.

The user comes from the call's config (the shared scope rule: ``configurable["user_id"]``, then
``configurable["langgraph_auth_user_id"]``, or a fixed scope given to the factory) -- never from the model's
arguments, so a prompt-injected "remember this for user 7" cannot write into someone else's memory.
"""

from __future__ import annotations

from typing import Any, Literal

from langchain_core.runnables import RunnableConfig
from langchain_core.tools import StructuredTool, ToolException
from langgraph.store.base import BaseStore

from promptcache.config import DEFAULT_SCOPE_FIELDS, UNSET, resolve_scope
from promptcache.memory.store import TypedMemoryStore

__all__ = ["make_remember_tool"]

_DESCRIPTION = (
    "Save a memory about the current user for later turns and sessions. kind: 'user_fact' (stable facts about the "
    "user: role, preferences), 'feedback' (a rule the user wants you to follow), 'project_state' (fast-changing "
    "status such as an ETA or task progress; it expires), 'reference' (a pointer: URL, document id, endpoint). "
    "subject: optional short label; a newer memory with the same subject replaces the older one. ttl_s: optional "
    "lifetime in seconds."
)

Kind = Literal["user_fact", "feedback", "project_state", "reference"]


def make_remember_tool(
    memory: TypedMemoryStore | BaseStore | None = None,
    *,
    scope: Any = UNSET,
    scope_fields: tuple[str, ...] = DEFAULT_SCOPE_FIELDS,
    name: str = "remember",
) -> StructuredTool:
    """Build the ``remember(kind, content, subject=None, ttl_s=None)`` tool (sync and async).

    Args:
        memory: where to write: a :class:`TypedMemoryStore`, a ``BaseStore`` (wrapped), or ``None`` for the
            graph's store at run time (``langgraph.config.get_store()``).
        scope: a fixed scope (default: resolved from the call's config with the shared rule).
        scope_fields: ``configurable`` fields tried for the scope.
        name: the tool name.

    Returns:
        A ``StructuredTool``. A bad argument from the model (unknown kind, empty content, ``ttl_s <= 0``) or a call
        without a user in the config comes back to the model as a tool error message; nothing is written.

    Raises:
        TypeError: ``memory`` of another type.
    """
    if isinstance(memory, BaseStore):
        memory = TypedMemoryStore.for_store(memory)
    if memory is not None and not isinstance(memory, TypedMemoryStore):
        raise TypeError(f"memory must be a TypedMemoryStore, a BaseStore or None, got {type(memory).__name__}")
    fixed = memory

    def _target(config: RunnableConfig) -> tuple[TypedMemoryStore, str]:
        user = resolve_scope(None, scope, config, scope_fields)
        if user is None:
            raise ToolException("no user in the call's config (configurable['user_id']); memory not saved")
        if fixed is not None:
            return fixed, user
        from langgraph.config import get_store

        return TypedMemoryStore.for_store(get_store()), user

    def _reply(record: Any) -> str:
        return f"saved {record.kind.value} memory {record.id}"

    def remember(kind: Kind, content: str, config: RunnableConfig, subject: str | None = None,
                 ttl_s: float | None = None) -> str:
        target, user = _target(config)
        try:
            return _reply(target.put(user, kind, content, subject=subject, ttl_s=ttl_s))
        except (TypeError, ValueError) as exc:
            raise ToolException(f"memory not saved: {exc}") from exc

    async def aremember(kind: Kind, content: str, config: RunnableConfig, subject: str | None = None,
                        ttl_s: float | None = None) -> str:
        target, user = _target(config)
        try:
            return _reply(await target.aput(user, kind, content, subject=subject, ttl_s=ttl_s))
        except (TypeError, ValueError) as exc:
            raise ToolException(f"memory not saved: {exc}") from exc

    return StructuredTool.from_function(
        func=remember, coroutine=aremember, name=name, description=_DESCRIPTION, handle_tool_error=True,
        handle_validation_error=_validation_message,
    )


def _validation_message(exc: Exception) -> str:
    """Tool-argument validation errors go back to the model as text (e.g. an unknown kind), not as exceptions."""
    errors = getattr(exc, "errors", None)
    if callable(errors):
        parts = [f"{'.'.join(str(x) for x in e.get('loc', ()))}: {e.get('msg')} (got {e.get('input')!r})"
                 for e in errors()]
        return "memory not saved: " + "; ".join(parts)
    return f"memory not saved: {exc}"

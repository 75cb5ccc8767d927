"""The ``retrieve_memory`` tool: the agent asks for an earlier tool result by the user's intention (seed ``000_*``).

The model supplies one argument, ``intention``. The user comes from the call's ``RunnableConfig`` (the shared
scope rule, :func:`promptcache.config.resolve_scope`: ``configurable["user_id"]``, then
``configurable["langgraph_auth_user_id"]``), never from the model, so a prompt cannot read another user's memories.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import orjson
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool, StructuredTool
from promptcache._log import ThrottledWarning, get_logger
from promptcache.config import DEFAULT_SCOPE_FIELDS, UNSET, resolve_scope
from promptcache.intention.memory import IntentionMatch, IntentionMemory
from pydantic import BaseModel, Field

__all__ = [
    "MEMORY_ERROR",
    "MEMORY_NOT_FOUND",
    "RETRIEVE_MEMORY_DESCRIPTION",
    "RETRIEVE_MEMORY_TOOL_NAME",
    "RetrieveMemoryInput",
    "format_match",
    "make_retrieve_memory_tool",
]

RETRIEVE_MEMORY_TOOL_NAME = "retrieve_memory"
RETRIEVE_MEMORY_DESCRIPTION = "Retrieve a tool call result from the previous user conversation by the user intention."
"""The seed's tool description, verbatim."""
MEMORY_NOT_FOUND = "Memory not found"
"""What the tool returns on a miss (the seed's string)."""
MEMORY_ERROR = "Error retrieving memory"
"""What the tool returns when the backend fails (the seed's string)."""

_log = get_logger("promptcache.intention.tool")


class RetrieveMemoryInput(BaseModel):
    """The tool's only argument, as in the seed's schema."""

    intention: str = Field(description="The intention of the user.")


def format_match(match: IntentionMatch) -> str:
    """The tool's text for a match: the result as is for an exact match; for a similar one, a line naming the
    matched intention, its similarity (0..1, higher is closer) and the tool call, then the result, so the model can
    judge whether it answers the question."""
    text = match.result_text()
    if match.kind == "exact":
        return text
    call = ""
    if match.tool:
        args = "" if match.args is None else orjson.dumps(match.args, option=orjson.OPT_SORT_KEYS).decode()
        call = f" from {match.tool}({args})"
    return (
        f"No exact memory. Similar earlier intention: {match.intention!r} (similarity {match.similarity:.2f}); "
        f"its result{call}, {match.age_s:.0f}s old:\n{text}"
    )


def make_retrieve_memory_tool(
    memory: IntentionMemory,
    *,
    scope: Any = UNSET,
    scope_fields: Iterable[str] = DEFAULT_SCOPE_FIELDS,
    name: str = RETRIEVE_MEMORY_TOOL_NAME,
    description: str = RETRIEVE_MEMORY_DESCRIPTION,
) -> BaseTool:
    """A LangChain tool ``retrieve_memory(intention: str) -> str`` over ``memory``.

    Args:
        memory: the :class:`~promptcache.intention.memory.IntentionMemory` to read.
        scope: a fixed user id for every call (e.g. a single-user app); default: resolved from the call's config.
        scope_fields: ``configurable`` fields tried for the user id (default ``("user_id",
            "langgraph_auth_user_id")``).
        name / description: the tool's name and description (defaults: the seed's).

    Returns:
        A ``StructuredTool`` (sync and async) whose schema has the single string parameter ``intention``. It returns
        the result text (see :func:`format_match`), ``"Memory not found"`` on a miss or when the call carries no
        user id, ``"Error retrieving memory"`` when the backend fails (logged at most once a minute).

    Raises:
        TypeError: ``memory`` is not an ``IntentionMemory``.
    """
    if not isinstance(memory, IntentionMemory):
        raise TypeError(f"memory must be an IntentionMemory, got {type(memory).__name__}")
    fields = tuple(scope_fields)
    warning = ThrottledWarning(_log)

    def _user(config: RunnableConfig | None) -> str | None:
        user = resolve_scope(None, scope, config, fields)
        if user is None:
            warning.warn("promptcache: retrieve_memory called without a user id in the config (%s)", fields)
        return user

    def _answer(match: IntentionMatch | None) -> str:
        return MEMORY_NOT_FOUND if match is None else format_match(match)

    def retrieve_memory(intention: str, config: RunnableConfig) -> str:
        user = _user(config)
        if user is None or not intention or not intention.strip():
            return MEMORY_NOT_FOUND
        try:
            return _answer(memory.retrieve(user, intention, fail_open=False))
        except ValueError:
            return MEMORY_NOT_FOUND  # nothing usable in the intention (only punctuation)
        except Exception:  # noqa: BLE001 - logged by the memory; the model gets the seed's error string
            return MEMORY_ERROR

    async def aretrieve_memory(intention: str, config: RunnableConfig) -> str:
        user = _user(config)
        if user is None or not intention or not intention.strip():
            return MEMORY_NOT_FOUND
        try:
            return _answer(await memory.aretrieve(user, intention, fail_open=False))
        except ValueError:
            return MEMORY_NOT_FOUND
        except Exception:  # noqa: BLE001
            return MEMORY_ERROR

    return StructuredTool.from_function(
        func=retrieve_memory,
        coroutine=aretrieve_memory,
        name=name,
        description=description,
        args_schema=RetrieveMemoryInput,
    )

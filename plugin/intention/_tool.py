"""The ``retrieve_memory`` tool: the agent asks for an earlier tool result by the user's intention.

The model supplies one argument, ``intention``. The user comes from the call's ``RunnableConfig`` (the shared
scope rule, `promptcache._config.resolve_scope`: ``configurable["user_id"]``, then
``configurable["langgraph_auth_user_id"]``), never from the model, so a prompt cannot read another user's memories.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import orjson
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool, StructuredTool
from pydantic import BaseModel, Field

from promptcache._config import DEFAULT_SCOPE_FIELDS, UNSET, resolve_scope, validate_scope
from promptcache._keys import canonical_json
from promptcache._log import ThrottledWarning, get_logger
from promptcache._option_checks import check_bool, check_scope_fields, check_text, check_tool_name
from promptcache.intention._defaults import DEFAULT_SUGGESTIONS
from promptcache.intention._memory import IntentionMatch, IntentionMemory

__all__ = [
    "MEMORY_ERROR",
    "MEMORY_NOT_FOUND",
    "RETRIEVE_MEMORY_DESCRIPTION",
    "RETRIEVE_MEMORY_TOOL_NAME",
    "DEFAULT_MAX_RESULTS",
    "RetrieveMemoryInput",
    "format_match",
    "format_matches",
    "format_suggestions",
    "make_retrieve_memory_tool",
]

RETRIEVE_MEMORY_TOOL_NAME = "retrieve_memory"
RETRIEVE_MEMORY_DESCRIPTION = "Retrieve a tool call result from the previous user conversation by the user intention."
"""The tool description of the intention-based caching pattern this cache follows (docs/architecture.md)."""
MEMORY_NOT_FOUND = "Memory not found"
"""What the tool returns on a miss (the pattern's string)."""
MEMORY_ERROR = "Error retrieving memory"
"""What the tool returns when the backend fails (the pattern's string)."""

_log = get_logger("promptcache.intention._tool")


class RetrieveMemoryInput(BaseModel):
    """The tool's only argument, as in the pattern's schema."""

    intention: str = Field(description="The intention of the user.")


DEFAULT_MAX_RESULTS = 10
"""Results ``retrieve_memory`` shows for one intention (the most recent ones), so a busy intention cannot flood the
context. On the tau-bench airline replay (bench/README.md "Replay"), 526 of 549 answers held at most 10 results;
the largest intention held 21."""


def _call_label(match: IntentionMatch) -> str:
    if not match.tool:
        return "(no tool recorded)"
    args = "" if match.args is None else orjson.dumps(match.args, option=orjson.OPT_SORT_KEYS).decode()
    return f"{match.tool}({args})"


def _order_key(match: IntentionMatch) -> tuple[str, bytes]:
    return match.tool or "", canonical_json(match.args)


def format_match(match: IntentionMatch) -> str:
    """The tool's text for one match: the result as is for an exact match; for a similar one, a line naming the
    earlier intention it answers ("earlier: 'flights from Paris to London'"), its similarity (0..1, higher is
    closer), how it differs from the intention asked (`IntentionMatch.note`) and the tool call, then the
    result, so the model can reject it."""
    text = match.result_text()
    if match.kind == "exact":
        return text
    call = f" from {_call_label(match)}" if match.tool else ""
    return f"{_similar_head(match)}; its result{call}, {match.age_s:.0f}s old:\n{text}"


def _similar_head(match: IntentionMatch) -> str:
    """The line that says which earlier intention a similar match answers and how it differs from the one asked."""
    note = f"; {match.note}" if match.note else ""
    return (
        f"No exact memory. It answers an earlier intention, earlier: {match.intention!r} (similarity "
        f"{match.similarity:.2f}{note}). Use it only if that is what is asked now"
    )


def format_matches(matches: Sequence[IntentionMatch], max_results: int = DEFAULT_MAX_RESULTS) -> str:
    """The tool's text for the memories of the matched intention (as `IntentionMemory.retrieve_all` gives
    them, most recent first), so the model can pick the tool call it needs, or see that it is not there.

    - no memory: ``"Memory not found"``;
    - one memory without a recorded tool, or one similar memory: `format_match` (an exact one is the stored
      result as is, the pattern's contract);
    - otherwise a header line (how many results; for a similar match the matched intention and its similarity),
      then per memory a line ``[i] tool({"arg":...}):`` and its result. At most ``max_results`` (the most recent
      ones) are listed, in a stable order: by tool name, then canonical arguments.
    """
    if not matches:
        return MEMORY_NOT_FOUND
    first = matches[0]
    if len(matches) == 1 and (first.kind != "exact" or not first.tool):
        return format_match(first)
    shown = sorted(matches[:max_results], key=_order_key)
    count = "1 result" if len(matches) == 1 else f"{len(matches)} results"
    if first.kind == "exact":
        head = f"{count} stored for this intention" + ("" if len(matches) == 1 else ", one per tool call")
    else:
        head = f"{_similar_head(first)}; its {count}, one per tool call"
    left = len(matches) - len(shown)
    head += f" ({left} older left out):" if left else ":"
    lines = [head]
    for i, match in enumerate(shown, 1):
        lines.append(f"[{i}] {_call_label(match)}:")
        lines.append(match.result_text())
    return "\n".join(lines)


def format_suggestions(matches: Sequence[IntentionMatch]) -> str:
    """The tool's text when no earlier intention is known to mean the same (a memory with embeddings,
    `IntentionMemory.suggest`): the best few earlier results, each with its stored intention, similarity
    (0..1, higher is closer), age, and the difference a check found, for the model to judge; partial matches are
    shown too. ``"Memory not found"`` when there is none."""
    if not matches:
        return MEMORY_NOT_FOUND
    lines = [
        "No memory is known to answer exactly this intention. Earlier results that may help; use one only if it "
        "answers what is asked now:"
    ]
    for i, m in enumerate(matches, 1):
        if m.kind == "exact":
            how = "same intention"
        elif m.note:
            how = f"similarity {m.similarity:.2f}, {m.note}"
        else:
            how = f"similarity {m.similarity:.2f}"
        call = f" from {_call_label(m)}" if m.tool else ""
        lines.append(f"[{i}] earlier intention {m.intention!r} ({how}; {m.age_s:.0f}s old){call}:")
        lines.append(m.result_text())
    return "\n".join(lines)


def make_retrieve_memory_tool(
    memory: IntentionMemory,
    *,
    scope: Any = UNSET,
    scope_fields: Iterable[str] = DEFAULT_SCOPE_FIELDS,
    name: str = RETRIEVE_MEMORY_TOOL_NAME,
    description: str = RETRIEVE_MEMORY_DESCRIPTION,
    max_results: int = DEFAULT_MAX_RESULTS,
    allow_scope_override: bool = False,
    suggestions: int = DEFAULT_SUGGESTIONS,
) -> BaseTool:
    """A LangChain tool ``retrieve_memory(intention: str) -> str`` over ``memory``.

    Args:
        memory: the `IntentionMemory` to read.
        scope: a fixed user id for every call (e.g. a single-user app); default: resolved from the call's config.
        scope_fields: ``configurable`` fields tried for the user id (default ``("user_id",
            "langgraph_auth_user_id")``).
        name: the tool's name (default `RETRIEVE_MEMORY_TOOL_NAME`): 1 to 64 ASCII letters, digits, ``_`` or ``-``,
            what Amazon Bedrock (Converse ``ToolSpecification.name``) and OpenAI (``tools[].function.name``) accept
            (`promptcache._option_checks.TOOL_NAME_PATTERN`, which names the sources).
        description: the tool's description, a non-blank ``str`` (default `RETRIEVE_MEMORY_DESCRIPTION`).
        max_results: most memories of one intention shown (an int >= 1, default `DEFAULT_MAX_RESULTS`).
        suggestions: with a memory that has embeddings, how many earlier results are shown when no stored
            intention is the same (an int >= 1, default 3; `format_suggestions`).
        allow_scope_override: let ``configurable["user_id"]`` differ from the authenticated
            ``configurable["langgraph_auth_user_id"]`` (default False: such a call raises ``PermissionError``,
            nothing is read); only for deployments whose configs come from trusted code.

    Returns:
        A ``StructuredTool`` (sync and async) whose schema has the single string parameter ``intention``. With
        embeddings, any lookup without an exact match returns the best few earlier results for the model to judge
        (`format_suggestions`: partial matches welcome). Otherwise it returns
        every memory of the matched intention (`IntentionMemory.retrieve_all`, formatted by
        `format_matches`: each result labelled with its tool call; a bare result as is),
        ``"Memory not found"`` on a miss or when the call carries no user id, ``"Error retrieving memory"`` when
        the backend fails (logged at most once a minute).

    Raises:
        TypeError: ``memory`` is not an ``IntentionMemory``; ``scope`` is neither a string, an int nor ``None``;
            ``name`` or ``description`` is not a ``str``; ``scope_fields`` is a single ``str`` or not a list of names.
        ValueError: ``max_results`` is not an int >= 1; ``scope`` is an empty or blank string; ``name`` is not a
            tool name the providers accept; ``description`` is blank; ``scope_fields`` is empty.
    """
    if not isinstance(memory, IntentionMemory):
        raise TypeError(f"memory must be an IntentionMemory, got {type(memory).__name__}")
    if isinstance(max_results, bool) or not isinstance(max_results, int) or max_results < 1:
        raise ValueError(f"max_results must be an int >= 1, got {max_results!r}")
    if isinstance(suggestions, bool) or not isinstance(suggestions, int) or suggestions < 1:
        raise ValueError(f"suggestions must be an int >= 1, got {suggestions!r}")
    if scope is not UNSET:
        scope = validate_scope(scope)
    fields = check_scope_fields(scope_fields)
    check_tool_name(name, "name")
    check_text(description, "description")
    override = check_bool(allow_scope_override, "allow_scope_override")
    warning = ThrottledWarning(_log)

    def _user(config: RunnableConfig | None) -> str | None:
        user = resolve_scope(None, scope, config, fields, override)
        if user is None:
            warning.warn("promptcache: retrieve_memory called without a user id in the config (%s)", fields)
        return user

    def _answer(matches: list[IntentionMatch]) -> str:
        return format_matches(matches, max_results)

    def retrieve_memory(intention: str, config: RunnableConfig) -> str:
        user = _user(config)
        if user is None or not intention or not intention.strip():
            return MEMORY_NOT_FOUND
        try:
            found = memory.retrieve_all(user, intention, fail_open=False)
            if memory.recall and (not found or found[0].kind != "exact"):
                return format_suggestions(memory.suggest(user, intention, count=suggestions))
            return _answer(found)
        except ValueError:
            return MEMORY_NOT_FOUND  # nothing usable in the intention (only punctuation)
        except Exception:  # noqa: BLE001 - logged by the memory; the model gets MEMORY_ERROR
            return MEMORY_ERROR

    async def aretrieve_memory(intention: str, config: RunnableConfig) -> str:
        user = _user(config)
        if user is None or not intention or not intention.strip():
            return MEMORY_NOT_FOUND
        try:
            found = await memory.aretrieve_all(user, intention, fail_open=False)
            if memory.recall and (not found or found[0].kind != "exact"):
                return format_suggestions(await memory.asuggest(user, intention, count=suggestions))
            return _answer(found)
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

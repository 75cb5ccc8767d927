"""Tool definitions as the provider sees them, for keys: the OpenAI function schema of each tool, remembered per tool.

`canonical_tools` is the tools part of `promptcache._keys`' prompt canonicalisation: a ``BaseTool``, function or
pydantic class becomes its OpenAI function schema (name, description, parameters), a dict is used as given, and
the schema is remembered per tool object while the objects it was built from stay the same (`tool_state`).
"""

from __future__ import annotations

import inspect
import operator
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, cast

from promptcache._keys import _is_mapping

if TYPE_CHECKING:
    from langchain_core.tools import BaseTool

__all__ = ["canonical_tool", "canonical_tools", "same_state", "tool_state"]


# id(tool) -> (tool, its tool_state, schema). A plain dict (atomic get/set under the GIL, no lock, no Python LRU
# bookkeeping: a first key converts every tool), emptied when full; agents hold a handful of tools.
_TOOL_MEMO: dict[int, tuple[object, tuple[object, ...], object]] = {}
_TOOL_MEMO_MAX = 1024  # tools
_FUNCTION_PARTS = (
    "__name__",
    "__qualname__",
    "__doc__",
    "__annotations__",
    "__defaults__",
    "__kwdefaults__",
    "__code__",
)


def tool_state(tool: object) -> tuple[object, ...]:
    """What a tool's schema is built from, as the objects themselves (compare with `same_state`).

    A ``BaseTool`` (pydantic) or any object with fields: its field names and values; a function: its name, doc,
    annotations, defaults and code; a class: its name, doc and pydantic ``model_fields``. A field reassigned
    (``tool.description = ...``) gives another object, so the remembered schema is rebuilt. Edits made in place
    inside a field's value (a schema dict mutated) are not seen: tools are treated as built once.
    """
    if isinstance(tool, type):
        return (tool.__name__, tool.__doc__, tool.__dict__.get("model_fields"))
    if inspect.isfunction(tool):
        return tuple(getattr(tool, name, None) for name in _FUNCTION_PARTS)
    fields = getattr(tool, "__dict__", None)
    return (*fields, *fields.values()) if fields is not None else ()


def same_state(a: tuple[object, ...], b: tuple[object, ...]) -> bool:
    """Whether two `tool_state` tuples hold the very same objects."""
    return len(a) == len(b) and all(map(operator.is_, a, b))


def _first_fast_schema(tool: object) -> object:
    """`promptcache._tool_schema.openai_tool_schema`, imported on first use (LangChain's tools load only when tools
    are keyed) and then called directly: an import statement per tool costs a failed ``__path__`` lookup."""
    global _fast_schema
    from promptcache._tool_schema import openai_tool_schema

    _fast_schema = openai_tool_schema
    return openai_tool_schema(tool)


_fast_schema: Callable[[object], object] = _first_fast_schema


def canonical_tool(tool: object) -> object:
    """A tool definition as the provider sees it: the OpenAI function schema (name, description, parameters).

    ``BaseTool`` objects, functions and pydantic classes are converted with LangChain's
    ``convert_to_openai_tool``; the result is remembered per object while its `tool_state` holds (tools are
    long-lived; building a JSON schema from pydantic costs far more than checking it). Dicts are used as given
    (they already are a schema). A tool that cannot be converted is described by its ``repr``.
    """
    if _is_mapping(type(tool)):
        return tool
    key = id(tool)
    state = tool_state(tool)
    hit = _TOOL_MEMO.get(key)
    if hit is not None and hit[0] is tool and same_state(hit[1], state):
        return hit[2]
    schema: object = _fast_schema(tool)  # the same value, without LangChain's Python copy of the schema
    if schema is None:
        from langchain_core.utils.function_calling import convert_to_openai_tool

        try:
            schema = convert_to_openai_tool(cast("BaseTool", tool))  # any tool-like object: LangChain checks it
        except Exception:  # noqa: BLE001 - an exotic tool still needs a stable description
            schema = {"repr": repr(tool)}
    if len(_TOOL_MEMO) >= _TOOL_MEMO_MAX:
        _TOOL_MEMO.clear()
    _TOOL_MEMO[key] = (tool, state, schema)  # the references keep ids from being reused while memoised
    return schema


def canonical_tools(tools: Iterable[object] | None) -> list[object]:
    """`canonical_tool` of each tool, in the given order (order is part of what the provider sees)."""
    return [canonical_tool(t) for t in tools or ()]

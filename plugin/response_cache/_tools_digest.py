"""The tool list's part of a response-cache key: the SHA-256 of the tool schemas' canonical JSON, remembered per
list of tool objects (`tools_digest`)."""

from __future__ import annotations

import hashlib
import operator
from collections.abc import Sequence
from itertools import chain
from operator import attrgetter
from typing import Final

from langchain_core.tools import BaseTool

from promptcache._keys import _is_mapping, canonical_json
from promptcache._tool_keys import canonical_tools, same_state, tool_state

__all__ = ["tools_digest"]

# ("tools", per BaseTool its schema parts) or ("states", per tool its `tool_state`)
_ToolsState = tuple[str, "list[tuple[object, ...]] | tuple[tuple[object, ...], ...]"]
_TOOLS_MEMO: dict[tuple[int, ...], tuple[tuple[object, ...], _ToolsState, bytes]] = {}  # ids -> (tools, states, digest)
_TOOLS_MEMO_MAX = 256  # tool lists; the memo is emptied when full (agents reuse a handful)


def tools_digest(tools: Sequence[object]) -> bytes:
    """``canonical_json`` of the payload's ``"tools"`` value: the quoted first 32 hex digits of SHA-256 over
    ``canonical_json(canonical_tools(tools))``, remembered per list of tool objects.

    The schemas of ten tools are ~10 KB of JSON; hashing them into the key on every call cost more than the rest of
    the key. ``canonical_tool`` already reads each tool object's schema once; an agent offers the same tool objects
    on every call, so their digest is remembered too (keyed by the objects themselves, held while memoised, and
    checked against each tool's `promptcache._tool_keys.tool_state`: a reassigned description misses). Dict
    schemas are mutable values, not long-lived objects: a list holding one is hashed every time. A plain dict
    (atomic ``get``/set under the GIL) rather than an LRU: this runs on every model call.
    """
    tools = tuple(tools or ())
    key = tuple(map(id, tools))
    hit = _TOOLS_MEMO.get(key)
    if hit is not None and all(map(operator.is_, hit[0], tools)) and _tools_unchanged(tools, hit[1]):
        return hit[2]
    data = b'"' + hashlib.sha256(canonical_json(canonical_tools(tools))).hexdigest()[:32].encode() + b'"'
    if not any(map(_is_mapping, map(type, tools))):
        if len(_TOOLS_MEMO) >= _TOOLS_MEMO_MAX:
            _TOOLS_MEMO.clear()
        _TOOLS_MEMO[key] = (tools, _tools_state(tools), data)
    return data


_SCHEMA_PARTS: Final = attrgetter("name", "description", "args_schema", "extras")  # what a BaseTool's schema reads


def _tools_state(tools: tuple[object, ...]) -> _ToolsState:
    """What `_tools_unchanged` compares: for ``BaseTool`` objects the fields their OpenAI schema is built from
    (name, description, args schema, extras; one C-level pass), else each tool's
    `promptcache._tool_keys.tool_state` (functions, classes, other objects)."""
    if all(isinstance(t, BaseTool) for t in tools):
        return ("tools", list(map(_SCHEMA_PARTS, tools)))
    return ("states", tuple(map(tool_state, tools)))


def _tools_unchanged(tools: tuple[object, ...], state: _ToolsState) -> bool:
    """Whether every tool still holds the very parts it had when its digest was remembered (identity)."""
    if state[0] == "tools":
        return all(map(operator.is_, chain.from_iterable(map(_SCHEMA_PARTS, tools)), chain.from_iterable(state[1])))
    return all(map(same_state, state[1], map(tool_state, tools)))

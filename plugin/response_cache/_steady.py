"""Steady-state memos of the default key, per object an agent hands every model call (its tool list): what the
next call of a thread pays is a check that those objects are the ones seen, unchanged, instead of the general
path's work. Each memo holds the objects it was computed from (their ids stay theirs) and a snapshot of what the
general path reads, taken before computing, compared by identity."""

from __future__ import annotations

import inspect
from collections.abc import Sequence
from itertools import chain
from operator import attrgetter, is_, itemgetter
from typing import Final

from langchain_core.tools import BaseTool

from promptcache.response_cache._tools_digest import tools_digest

__all__ = ["tools_part"]

_SCHEMA_NAMES: Final = ("name", "description", "args_schema", "extras")  # what `tools_digest` compares per BaseTool
_SCHEMA_PARTS: Final = itemgetter(*_SCHEMA_NAMES)
_FIELDS: Final = attrgetter("__dict__")
_MISSING: Final = object()
_PARTS_IN_DICT: dict[type, bool] = {}  # tool class -> are its schema parts plain pydantic fields (in __dict__)
_TOOLS_SEEN: dict[int, tuple[Sequence[object], tuple[object, ...], tuple[object, ...], bytes]] = {}
_TOOLS_SEEN_MAX: Final = 256  # tool lists; emptied when full (an agent offers one list object on every call)


def _parts_in_dict(cls: type) -> bool:
    """Whether ``getattr(tool, name)`` is ``tool.__dict__[name]`` for each schema part of a ``cls`` instance: a
    ``BaseTool`` whose parts are pydantic fields that no class attribute (a property, say) shadows."""
    found = _PARTS_IN_DICT.get(cls)
    if found is None:
        fields = getattr(cls, "model_fields", None) or {}
        found = issubclass(cls, BaseTool) and all(
            name in fields and inspect.getattr_static(cls, name, _MISSING) is _MISSING for name in _SCHEMA_NAMES
        )
        _PARTS_IN_DICT[cls] = found
    return found


def _parts(tools: tuple[object, ...]) -> tuple[object, ...]:
    """Every tool's schema parts, read from ``__dict__`` (one getter call per tool), flat."""
    return tuple(chain.from_iterable(map(_SCHEMA_PARTS, map(_FIELDS, tools))))


def tools_part(tools: Sequence[object]) -> bytes:
    """`tools_digest(tools)`, remembered per tool list object: the same list, holding the same tool objects, each
    holding the very schema parts `tools_digest` compares (identity, read from ``__dict__``; a snapshot taken
    before the digest), returns the digest without `tools_digest`'s own check (a tuple of ids to hash and four
    attribute reads per tool)."""
    seen = _TOOLS_SEEN.get(id(tools))
    if seen is not None and seen[0] is tools:
        held = seen[1]
        try:
            if len(tools) == len(held) and all(map(is_, tools, held)) and all(map(is_, _parts(held), seen[2])):
                return seen[3]
        except KeyError:  # a field removed from a tool's __dict__
            pass
    held = tuple(tools)
    parts = None
    if held and all(_parts_in_dict(type(t)) for t in held):
        try:
            parts = _parts(held)
        except KeyError:
            parts = None
    data = tools_digest(held)
    if parts is not None:
        if len(_TOOLS_SEEN) >= _TOOLS_SEEN_MAX:
            _TOOLS_SEEN.clear()
        _TOOLS_SEEN[id(tools)] = (tools, held, parts, data)  # the list held: its id stays its own
    return data

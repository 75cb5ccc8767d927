"""Steady-state memos of the default key, per object an agent hands every model call (its tool list, its model): what the
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

from promptcache.response_cache import _model_identity
from promptcache.response_cache._tools_digest import tools_digest

__all__ = ["identity_parts", "tools_part"]

_SCHEMA_NAMES: Final = ("name", "description", "args_schema", "extras")  # what `tools_digest` compares per BaseTool
_SCHEMA_PARTS: Final = itemgetter(*_SCHEMA_NAMES)
_FIELDS: Final = attrgetter("__dict__")
_MISSING: Final = object()
_PARTS_IN_DICT: dict[type, bool] = {}  # tool class -> are its schema parts plain pydantic fields (in __dict__)
# id(list) -> (list, its tools, their schema parts, digest); tools None: seen once, nothing remembered yet
_TOOLS_SEEN: dict[int, tuple[Sequence[object], tuple[object, ...] | None, tuple[object, ...], bytes]] = {}
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
    attribute reads per tool). A list is remembered from its second call: one seen once (the first key of a
    process, a list built for one call) pays no snapshot."""
    seen = _TOOLS_SEEN.get(id(tools))
    if seen is None or seen[0] is not tools:
        if len(_TOOLS_SEEN) >= _TOOLS_SEEN_MAX:
            _TOOLS_SEEN.clear()
        _TOOLS_SEEN[id(tools)] = (tools, None, (), b"")  # seen once (the list held: its id stays its own)
        return tools_digest(tools)
    held = seen[1]
    if held is not None:
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
        _TOOLS_SEEN[id(tools)] = (tools, held, parts, data)
    return data


_IMMUTABLE: Final = frozenset({str, int, float, bool, type(None)})  # exact types: the same object, the same repr
_IDENTITY_SEEN: dict[int, tuple[object, tuple[object, ...], str]] = {}  # id(model) -> (model, parts, llm string)
_IDENTITY_SEEN_MAX: Final = 256  # models; emptied when full


def identity_parts(model: object) -> tuple[object, str | None, str, dict[str, object]]:
    """`promptcache.response_cache._model_identity.identity_parts`, its LangChain string remembered per model
    for a model whose string is built from ``_identifying_params`` (non-serialisable, LangChain's own
    ``_get_llm_string``): both properties are read on every call, as there, and when they return the very same
    keys and values as when the string was built (identity; values of exact immutable types only), the string
    is not formatted again (the repr of its floats was most of the model part's cost)."""
    if _model_identity._path(type(model)) != _model_identity._FAST:
        return _model_identity.identity_parts(model)
    try:
        params = model._identifying_params  # type: ignore[attr-defined]  # a BaseChatModel: _path checked it
        llm_type = model._llm_type  # type: ignore[attr-defined]
        parts = (llm_type, *chain.from_iterable(params.items()))
    except Exception:  # noqa: BLE001 - the general path decides what an odd model's identity is
        return _model_identity.identity_parts(model)
    seen = _IDENTITY_SEEN.get(id(model))
    if seen is not None and seen[0] is model and len(seen[1]) == len(parts) and all(map(is_, parts, seen[1])):
        identity = seen[2]
    else:
        try:
            identity = _model_identity.fast_llm_string(params, llm_type)
        except Exception:  # noqa: BLE001
            return _model_identity.identity_parts(model)
        if all(type(part) in _IMMUTABLE for part in parts):
            if len(_IDENTITY_SEEN) >= _IDENTITY_SEEN_MAX:
                _IDENTITY_SEEN.clear()
            _IDENTITY_SEEN[id(model)] = (model, parts, identity)  # the model held: its id stays its own
    return llm_type, _model_identity._model_id(model), identity, {}

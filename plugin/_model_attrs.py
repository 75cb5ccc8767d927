"""Reading a chat model's identifying attributes without pydantic's raising ``__getattr__``.

``getattr(model, name, None)`` on a pydantic model that lacks ``name`` goes through pydantic's ``__getattr__``,
which raises ``AttributeError`` (about 1 us each). For a pydantic model whose ``__getattr__`` is pydantic's own, a
name that is no class attribute (no property, no descriptor) can only be in ``__dict__`` or the extra fields, so it
is read from there; anything else (a property, a class with a ``__getattr__`` of its own such as a
``RunnableBinding``, a plain object) is asked with ``getattr``. Same answers as ``getattr`` either way.
"""

from __future__ import annotations

import inspect
from typing import Final

from pydantic import BaseModel

__all__ = ["first_str_attr", "lookup_plan"]

_MISSING: Final = object()
_PYDANTIC_GETATTR: Final = getattr(BaseModel, "__getattr__", None)
_PLANS: dict[tuple[type, tuple[str, ...]], tuple[bool, ...]] = {}  # (class, names) -> per name: ask getattr
_PLANS_MAX: Final = 1024  # (class, names) pairs; emptied when full


def lookup_plan(cls: type, names: tuple[str, ...]) -> tuple[bool, ...]:
    """Per name of ``names``: whether a ``cls`` instance must be asked with ``getattr`` (module docstring)."""
    plan = _PLANS.get((cls, names))
    if plan is None:
        pydantic = hasattr(cls, "__pydantic_fields__") and getattr(cls, "__getattr__", None) is _PYDANTIC_GETATTR
        plan = tuple(not pydantic or inspect.getattr_static(cls, n, _MISSING) is not _MISSING for n in names)
        if len(_PLANS) >= _PLANS_MAX:
            _PLANS.clear()
        _PLANS[(cls, names)] = plan
    return plan


def first_str_attr(model: object, names: tuple[str, ...], *, non_empty: bool = False) -> str | None:
    """The first of ``getattr(model, name, None)`` for ``names``, in order, that is a ``str`` (a non-empty one with
    ``non_empty``), else ``None``; read as the module docstring says."""
    fields: dict[str, object] = getattr(model, "__dict__", None) or {}
    for name, use_getattr in zip(names, lookup_plan(type(model), names), strict=True):
        if name in fields:
            value = fields[name]
        elif use_getattr:
            value = getattr(model, name, None)
        else:
            value = (getattr(model, "__pydantic_extra__", None) or {}).get(name)
        if isinstance(value, str) and (value or not non_empty):
            return value
    return None

"""Type checks of constructor options and method arguments at the public boundary, shared by every plugin.

Python accepts many wrong values silently: a string is truthy (``serve_repeats="no"`` would mean yes) and iterable
(``scope_fields="user_id"`` would be seven one-letter fields), an empty name matches everything as a prefix
(``deny_prefixes=[""]`` would deny every tool), a non-callable ``clock`` fails on the first call, long after
construction. These helpers refuse such values where they enter, with a ``TypeError`` / ``ValueError`` naming the
option and showing the value.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import TypeVar

__all__ = [
    "TOOL_NAME_PATTERN",
    "check_bool",
    "check_callable",
    "check_key_list",
    "check_name",
    "check_names",
    "check_scope_fields",
    "check_text",
    "check_tool_name",
]

_T = TypeVar("_T")

TOOL_NAME_PATTERN = re.compile(r"[A-Za-z0-9_-]{1,64}")
"""What a tool name may be: 1 to 64 ASCII letters, digits, ``_`` or ``-``. Sources: Amazon Bedrock Converse
``ToolSpecification.name`` (botocore service model ``bedrock-runtime`` 2023-09-30, shape ``ToolName``: pattern
``[a-zA-Z0-9_-]+``, length 1..64) and the OpenAI Chat Completions API reference (``tools[].function.name``: "a-z,
A-Z, 0-9, or contain underscores and dashes, with a maximum length of 64"). A name outside it is accepted by
LangChain but refused by the provider on the first call that lists the tool."""


def check_bool(value: object, what: str) -> bool:
    """``value`` when it is a ``bool``.

    Raises:
        TypeError: anything else (``"no"``, ``1``, ``None``); the message names ``what`` and the value.
    """
    if not isinstance(value, bool):
        raise TypeError(f"{what} must be True or False, got {type(value).__name__}: {value!r:.80}")
    return value


def check_name(value: object, what: str) -> str:
    """``value`` when it is a non-blank ``str`` (a tool name, an argument name, a ``configurable`` field).

    Raises:
        TypeError: not a ``str``. ValueError: empty or only whitespace. The message names ``what`` and the value.
    """
    return _non_blank(value, what, "name")


def _non_blank(value: object, what: str, noun: str) -> str:
    if not isinstance(value, str):
        raise TypeError(f"{what} must be a str, got {type(value).__name__}: {value!r:.80}")
    if not value.strip():
        raise ValueError(f"{what} must be a non-empty {noun}, got {value!r}")
    return value


def check_tool_name(value: object, what: str) -> str:
    """``value`` when it is a tool name the providers accept (`TOOL_NAME_PATTERN`).

    Raises:
        TypeError: not a ``str``. ValueError: empty, longer than 64 characters, or a character other than an ASCII
            letter, digit, ``_`` or ``-`` (``"bad name"``). The message names ``what`` and the value.
    """
    if not isinstance(value, str):
        raise TypeError(f"{what} must be a str, got {type(value).__name__}: {value!r:.80}")
    if not TOOL_NAME_PATTERN.fullmatch(value):
        raise ValueError(
            f"{what} must be 1 to 64 ASCII letters, digits, '_' or '-' (what Bedrock and OpenAI accept as a tool "
            f"name), got {value!r:.80}"
        )
    return value


def check_text(value: object, what: str) -> str:
    """``value`` when it is a non-blank ``str`` (a tool description shown to the model).

    Raises:
        TypeError: not a ``str``. ValueError: empty or only whitespace. The message names ``what`` and the value.
    """
    return _non_blank(value, what, "text")


def check_names(values: object, what: str) -> tuple[str, ...]:
    """``values`` as a tuple of names, each checked by `check_name`; an empty collection is allowed.

    Args:
        values: a list, tuple, set or other iterable of strings; not a single ``str`` (it would be iterated as
            its characters), ``bytes`` or a mapping.
        what: the option's name, for messages.

    Raises:
        TypeError: ``values`` is a ``str``, ``bytes``, a mapping or not iterable, or holds a non-string.
        ValueError: an empty or blank name (``[""]``).
    """
    if isinstance(values, (str, bytes, bytearray, Mapping)) or not isinstance(values, Iterable):
        hint = f" (write [{values!r}] for one name)" if isinstance(values, str) else ""
        raise TypeError(f"{what} must be a list of names, got {type(values).__name__}: {values!r:.80}{hint}")
    return tuple(check_name(v, f"{what} item") for v in values)


def check_scope_fields(values: object, what: str = "scope_fields") -> tuple[str, ...]:
    """``values`` as a non-empty tuple of ``configurable`` field names (`check_names`).

    An empty list would leave no field to read a user id from, so every call would be unscoped (or refused) while
    the option looked set.

    Raises:
        TypeError: as `check_names`. ValueError: an empty collection, or an empty or blank name.
    """
    fields = check_names(values, what)
    if not fields:
        raise ValueError(f"{what} must name at least one configurable field, got {values!r}")
    return fields


def check_callable(value: _T, what: str) -> _T:
    """``value`` when it is callable (a ``clock``: ``() -> float`` epoch seconds).

    Raises:
        TypeError: not callable; the message names ``what`` and the value.
    """
    if not callable(value):
        raise TypeError(f"{what} must be callable, got {type(value).__name__}: {value!r:.80}")
    return value


def check_key_list(keys: Sequence[_T], what: str = "keys") -> Sequence[_T]:
    """``keys`` when it is a sequence of keys (a list or tuple; each key is checked by the backend).

    Raises:
        TypeError: a ``str`` (it would be read as one key per character), ``bytes``, a mapping, or not a sequence;
            the message names ``what`` and the value.
    """
    if isinstance(keys, (str, bytes, bytearray, Mapping)) or not isinstance(keys, Sequence):
        hint = f" (write [{keys!r}] for one key)" if isinstance(keys, str) else ""
        raise TypeError(f"{what} must be a list of keys, got {type(keys).__name__}: {keys!r:.80}{hint}")
    return keys

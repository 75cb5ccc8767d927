"""Type checks of constructor options and method arguments at the public boundary, shared by every plugin.

Python accepts many wrong values silently: a string is truthy (``serve_repeats="no"`` would mean yes) and iterable
(``scope_fields="user_id"`` would be seven one-letter fields), an empty name matches everything as a prefix
(``deny_prefixes=[""]`` would deny every tool), a non-callable ``clock`` fails on the first call, long after
construction. These helpers refuse such values where they enter, with a ``TypeError`` / ``ValueError`` naming the
option and showing the value.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

__all__ = ["check_bool", "check_callable", "check_key_list", "check_name", "check_names"]


def check_bool(value: Any, what: str) -> bool:
    """``value`` when it is a ``bool``.

    Raises:
        TypeError: anything else (``"no"``, ``1``, ``None``); the message names ``what`` and the value.
    """
    if not isinstance(value, bool):
        raise TypeError(f"{what} must be True or False, got {type(value).__name__}: {value!r:.80}")
    return value


def check_name(value: Any, what: str) -> str:
    """``value`` when it is a non-blank ``str`` (a tool name, an argument name, a ``configurable`` field).

    Raises:
        TypeError: not a ``str``. ValueError: empty or only whitespace. The message names ``what`` and the value.
    """
    if not isinstance(value, str):
        raise TypeError(f"{what} must be a str, got {type(value).__name__}: {value!r:.80}")
    if not value.strip():
        raise ValueError(f"{what} must be a non-empty name, got {value!r}")
    return value


def check_names(values: Any, what: str) -> tuple[str, ...]:
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


def check_callable(value: Any, what: str) -> Any:
    """``value`` when it is callable (a ``clock``: ``() -> float`` epoch seconds).

    Raises:
        TypeError: not callable; the message names ``what`` and the value.
    """
    if not callable(value):
        raise TypeError(f"{what} must be callable, got {type(value).__name__}: {value!r:.80}")
    return value


def check_key_list(keys: Any, what: str = "keys") -> Sequence[Any]:
    """``keys`` when it is a sequence of keys (a list or tuple; each key is checked by the backend).

    Raises:
        TypeError: a ``str`` (it would be read as one key per character), ``bytes``, a mapping, or not a sequence;
            the message names ``what`` and the value.
    """
    if isinstance(keys, (str, bytes, bytearray, Mapping)) or not isinstance(keys, Sequence):
        hint = f" (write [{keys!r}] for one key)" if isinstance(keys, str) else ""
        raise TypeError(f"{what} must be a list of keys, got {type(keys).__name__}: {keys!r:.80}{hint}")
    return keys
